"""Reading planned file slices: the read plan engines ship (``read_plan``),
the pipeline that fetches ahead and decodes on threads (``prefetch``), and
the file group reader that reads one slice (base file, merged with its logs)."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.reading.file_group_reader import HudiFileGroupReader
    from hudi_ray.core.reading.prefetch import SlicePrefetcher, pipeline_reader, read_pipelined
    from hudi_ray.core.reading.prepare import prepare_reader
    from hudi_ray.core.reading.read_plan import HudiReadPlan
    from hudi_ray.core.reading.slice_reader import SliceReader
    from hudi_ray.core.reading.stream import HudiRecordBatchStream

__all__ = [
    "HudiFileGroupReader",
    "HudiReadPlan",
    "HudiRecordBatchStream",
    "SlicePrefetcher",
    "SliceReader",
    "pipeline_reader",
    "prepare_reader",
    "read_pipelined",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.reading.file_group_reader": ("HudiFileGroupReader",),
        "hudi_ray.core.reading.prefetch": ("SlicePrefetcher", "pipeline_reader", "read_pipelined"),
        "hudi_ray.core.reading.prepare": ("prepare_reader",),
        "hudi_ray.core.reading.read_plan": ("HudiReadPlan",),
        "hudi_ray.core.reading.slice_reader": ("SliceReader",),
        "hudi_ray.core.reading.stream": ("HudiRecordBatchStream",),
    },
)
