"""Table API: ``HudiTable``, its builder, read options and the file group reader."""

from hudi_ray.core.table.builder import HudiTableBuilder
from hudi_ray.core.table.checkpoint import DEFAULT_LEASE_SECONDS, Checkpoint, CheckpointStore, Lease
from hudi_ray.core.table.context import TableContext
from hudi_ray.core.table.estimate import SliceEstimate
from hudi_ray.core.table.explain import PlanExplain
from hudi_ray.core.table.file_group_reader import HudiFileGroupReader
from hudi_ray.core.table.incremental import IncrementalRange, latest_position, next_range, position, resolve_start
from hudi_ray.core.table.prefetch import SlicePrefetcher
from hudi_ray.core.table.read_options import HudiQueryType, HudiReadOptions, options_key
from hudi_ray.core.table.read_plan import HudiReadPlan
from hudi_ray.core.table.read_spec import ReadSpec
from hudi_ray.core.table.selection import COMMIT_TIME, ReadSelection
from hudi_ray.core.table.stream import HudiRecordBatchStream
from hudi_ray.core.table.table import HudiTable

__all__ = [
    "COMMIT_TIME",
    "DEFAULT_LEASE_SECONDS",
    "Checkpoint",
    "CheckpointStore",
    "HudiFileGroupReader",
    "HudiQueryType",
    "HudiReadPlan",
    "HudiReadOptions",
    "HudiRecordBatchStream",
    "HudiTable",
    "HudiTableBuilder",
    "IncrementalRange",
    "Lease",
    "PlanExplain",
    "ReadSelection",
    "ReadSpec",
    "SliceEstimate",
    "SlicePrefetcher",
    "TableContext",
    "latest_position",
    "next_range",
    "options_key",
    "position",
    "resolve_start",
]
