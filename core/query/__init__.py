"""What a read asks for: the caller's options (``HudiReadOptions``), the
request resolved against one timeline (``ReadRequest``), what it selects of
each slice (``ReadSelection``) and the engines' description of it (``ReadSpec``)."""

from hudi_ray.core.query.read_options import DEFAULT_BATCH_SIZE, HudiQueryType, HudiReadOptions, options_key
from hudi_ray.core.query.read_spec import READ_ARGS, ReadArgs, ReadSpec
from hudi_ray.core.query.request import CommitRange, ReadRequest
from hudi_ray.core.query.selection import COMMIT_TIME, ReadSelection

__all__ = [
    "COMMIT_TIME",
    "CommitRange",
    "DEFAULT_BATCH_SIZE",
    "HudiQueryType",
    "HudiReadOptions",
    "READ_ARGS",
    "ReadArgs",
    "ReadRequest",
    "ReadSelection",
    "ReadSpec",
    "options_key",
]
