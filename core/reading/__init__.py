"""Reading planned file slices: the read plan engines ship (``read_plan``),
the pipeline that fetches ahead and decodes on threads (``prefetch``), and
the file group reader that reads one slice (base file, merged with its logs)."""

from hudi_ray.core.reading.file_group_reader import HudiFileGroupReader, split_options
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
    "split_options",
]
