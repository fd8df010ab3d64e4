"""What a read asks for: the caller's options (``HudiReadOptions``), the
request resolved against one timeline (``ReadRequest``), what it selects of
each slice (``ReadSelection``) and the engines' description of it (``ReadSpec``)."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
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

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.query.read_options": ("DEFAULT_BATCH_SIZE", "HudiQueryType", "HudiReadOptions", "options_key"),
        "hudi_ray.core.query.read_spec": ("READ_ARGS", "ReadArgs", "ReadSpec"),
        "hudi_ray.core.query.request": ("CommitRange", "ReadRequest"),
        "hudi_ray.core.query.selection": ("COMMIT_TIME", "ReadSelection"),
    },
)
