"""The table API: ``HudiTable`` and its builder, with the names engines use
from the packages below it (options, plans, readers, incremental ranges)."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.incremental import (
        DEFAULT_LEASE_SECONDS,
        Checkpoint,
        CheckpointStore,
        IncrementalRange,
        Lease,
        checked_max_instants,
        latest_position,
        next_range,
        position,
        resolve_start,
    )
    from hudi_ray.core.meta_client import TableContext
    from hudi_ray.core.planning import PlanExplain, SliceEstimate
    from hudi_ray.core.query import (
        COMMIT_TIME,
        READ_ARGS,
        HudiQueryType,
        HudiReadOptions,
        ReadArgs,
        ReadSelection,
        ReadSpec,
        options_key,
    )
    from hudi_ray.core.reading import (
        HudiFileGroupReader,
        HudiReadPlan,
        HudiRecordBatchStream,
        SlicePrefetcher,
        SliceReader,
    )
    from hudi_ray.core.table.builder import HudiTableBuilder
    from hudi_ray.core.table.table import HudiTable

__all__ = [
    "COMMIT_TIME",
    "DEFAULT_LEASE_SECONDS",
    "Checkpoint",
    "CheckpointStore",
    "HudiFileGroupReader",
    "HudiQueryType",
    "HudiReadOptions",
    "HudiReadPlan",
    "HudiRecordBatchStream",
    "HudiTable",
    "HudiTableBuilder",
    "IncrementalRange",
    "READ_ARGS",
    "ReadArgs",
    "Lease",
    "PlanExplain",
    "ReadSelection",
    "ReadSpec",
    "SliceEstimate",
    "SlicePrefetcher",
    "SliceReader",
    "TableContext",
    "checked_max_instants",
    "latest_position",
    "next_range",
    "options_key",
    "position",
    "resolve_start",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.incremental": (
            "DEFAULT_LEASE_SECONDS",
            "Checkpoint",
            "CheckpointStore",
            "IncrementalRange",
            "Lease",
            "checked_max_instants",
            "latest_position",
            "next_range",
            "position",
            "resolve_start",
        ),
        "hudi_ray.core.meta_client": ("TableContext",),
        "hudi_ray.core.planning": ("PlanExplain", "SliceEstimate"),
        "hudi_ray.core.query": (
            "COMMIT_TIME",
            "READ_ARGS",
            "HudiQueryType",
            "HudiReadOptions",
            "ReadArgs",
            "ReadSelection",
            "ReadSpec",
            "options_key",
        ),
        "hudi_ray.core.reading": (
            "HudiFileGroupReader",
            "HudiReadPlan",
            "HudiRecordBatchStream",
            "SlicePrefetcher",
            "SliceReader",
        ),
        "hudi_ray.core.table.builder": ("HudiTableBuilder",),
        "hudi_ray.core.table.table": ("HudiTable",),
    },
)
