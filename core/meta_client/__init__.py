"""The table's meta client (Hudi's ``HoodieTableMetaClient``): its storage,
configs, timeline and schema, loaded once and shared by planning and reading."""

from hudi_ray.core.meta_client.context import TableContext

__all__ = ["TableContext"]
