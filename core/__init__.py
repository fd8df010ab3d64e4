"""hudi_ray.core: the engine-agnostic Hudi reader (pyarrow, fastavro, fsspec; no Ray).

The life of one read, record by record:

1. ``HudiReadOptions`` (``query``): what the caller asks, as hudi-rs takes it;
   an engine's entry point checks its own arguments into a ``ReadSpec`` first
   (``ReadArgs`` names them once), which holds the options.
2. ``ReadRequest`` (``query``): the options resolved against one timeline;
   timestamps become instant times once, kept typed (``CommitRange``) to the
   slice reader and never written back as option strings.
3. ``ScanFiles`` (``planning``): the slices the scan and its pruners keep, with
   the commit times and visibility the read applies.
4. ``HudiReadPlan`` (``reading``): request and scan together, picklable; the
   one driver of every read, here (``batches``, ``stream``) or in an engine's
   tasks (``read_units``).
5. ``SliceReader`` and ``ReadSelection`` (``reading``, ``query``): per read,
   what each slice decodes and which rows it keeps.

Engines add their own records on top, each holding the plan or its parts:
the Ray planner's ``PlannerSnapshot`` and ``SliceChunks``, a reader task's
``ChunkRead``, the Spark 4 source's ``SourceOptions``.
"""

from typing import TYPE_CHECKING, Any

from hudi_ray.core.util import exported
from hudi_ray.core.util.arrow_pool import configure_jemalloc

configure_jemalloc()  # before anything loads pyarrow

if TYPE_CHECKING:  # what static tools see; at run time each name loads on first use
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

# Where each public name lives. ``import hudi_ray`` loads none of them: a name's
# module (and pyarrow's, fsspec's) loads when it is first used.
_EXPORTS = {
    "col": "hudi_ray.core.expr",
    "ExprOperator": "hudi_ray.core.expr",
    "Filter": "hudi_ray.core.expr",
    "from_str_tuples": "hudi_ray.core.expr",
    "HudiCheckpointError": "hudi_ray.core.exceptions",
    "HudiConcurrentRunError": "hudi_ray.core.exceptions",
    "HudiConfigError": "hudi_ray.core.exceptions",
    "HudiCoreError": "hudi_ray.core.exceptions",
    "HudiCorruptFileError": "hudi_ray.core.exceptions",
    "HudiFileGroupReader": "hudi_ray.core.table",
    "HudiFileNotFoundError": "hudi_ray.core.exceptions",
    "HudiFileSlice": "hudi_ray.core.file_group",
    "HudiFilterError": "hudi_ray.core.exceptions",
    "HudiHistoryError": "hudi_ray.core.exceptions",
    "HudiInstant": "hudi_ray.core.timeline",
    "HudiPlanConfig": "hudi_ray.core.config",
    "HudiQueryType": "hudi_ray.core.table",
    "HudiReadConfig": "hudi_ray.core.config",
    "HudiReadOptions": "hudi_ray.core.table",
    "HudiRecordBatchStream": "hudi_ray.core.table",
    "HudiSchemaError": "hudi_ray.core.exceptions",
    "HudiStorageError": "hudi_ray.core.exceptions",
    "HudiTable": "hudi_ray.core.table",
    "HudiTableBuilder": "hudi_ray.core.table",
    "HudiTableConfig": "hudi_ray.core.config",
    "HudiTableNotFoundError": "hudi_ray.core.exceptions",
    "HudiTimeline": "hudi_ray.core.timeline",
    "HudiTimelineError": "hudi_ray.core.exceptions",
    "HudiTimestampError": "hudi_ray.core.exceptions",
    "HudiUnsafePathError": "hudi_ray.core.exceptions",
    "HudiUnsupportedError": "hudi_ray.core.exceptions",
    "split_into_chunks": "hudi_ray.core.util",
}

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


def __getattr__(name: str) -> Any:
    return exported(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
