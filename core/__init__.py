"""hudi_ray.core: the engine-agnostic Hudi reader (pyarrow, fastavro, fsspec; no Ray)."""

from hudi_ray.core.config import HudiPlanConfig, HudiReadConfig, HudiTableConfig
from hudi_ray.core.exceptions import (
    HudiCheckpointError,
    HudiConcurrentRunError,
    HudiConfigError,
    HudiCoreError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiFilterError,
    HudiHistoryError,
    HudiSchemaError,
    HudiStorageError,
    HudiTableNotFoundError,
    HudiTimelineError,
    HudiTimestampError,
    HudiUnsafePathError,
    HudiUnsupportedError,
)
from hudi_ray.core.expr import ExprOperator, Filter, col, from_str_tuples
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.table import (
    HudiFileGroupReader,
    HudiQueryType,
    HudiReadOptions,
    HudiRecordBatchStream,
    HudiTable,
    HudiTableBuilder,
)
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.util import split_into_chunks

__all__ = [
    "ExprOperator",
    "Filter",
    "HudiCheckpointError",
    "HudiConcurrentRunError",
    "HudiConfigError",
    "HudiCoreError",
    "HudiCorruptFileError",
    "HudiFileGroupReader",
    "HudiFileNotFoundError",
    "HudiFileSlice",
    "HudiFilterError",
    "HudiHistoryError",
    "HudiInstant",
    "HudiPlanConfig",
    "HudiQueryType",
    "HudiReadConfig",
    "HudiReadOptions",
    "HudiRecordBatchStream",
    "HudiSchemaError",
    "HudiStorageError",
    "HudiTable",
    "HudiTableBuilder",
    "HudiTableConfig",
    "HudiTableNotFoundError",
    "HudiTimeline",
    "HudiTimelineError",
    "HudiTimestampError",
    "HudiUnsafePathError",
    "HudiUnsupportedError",
    "col",
    "from_str_tuples",
    "split_into_chunks",
]
