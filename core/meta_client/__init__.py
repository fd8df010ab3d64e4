"""The table's meta client (Hudi's ``HoodieTableMetaClient``): its storage,
configs, timeline and schema, loaded once and shared by planning and reading."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.meta_client.context import TableContext

__all__ = ["TableContext"]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.meta_client.context": ("TableContext",),
    },
)
