"""Config: ``hoodie.properties`` parsing and the table / read config keys."""

from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_package

if TYPE_CHECKING:  # what static tools see; each name loads its module on first use
    from hudi_ray.core.config.keys import (
        HudiIOConfig,
        HudiPlanConfig,
        HudiReadConfig,
        HudiTableConfig,
        is_read_config,
        warn_unknown_keys,
    )
    from hudi_ray.core.config.loader import load_table_config
    from hudi_ray.core.config.properties import parse_properties
    from hudi_ray.core.config.table_config import TableConfig
    from hudi_ray.core.config.tunables import (
        ENGINE_TUNABLES,
        PLANNING_TUNABLES,
        POOL_TUNABLES,
        EngineTunables,
        PlanningTunables,
        PoolTunables,
        ReadTunables,
        io_tunables,
    )
    from hudi_ray.core.config.values import int_option

__all__ = [
    "ENGINE_TUNABLES",
    "EngineTunables",
    "HudiIOConfig",
    "PLANNING_TUNABLES",
    "POOL_TUNABLES",
    "PlanningTunables",
    "PoolTunables",
    "ReadTunables",
    "HudiPlanConfig",
    "HudiReadConfig",
    "HudiTableConfig",
    "TableConfig",
    "is_read_config",
    "load_table_config",
    "parse_properties",
    "int_option",
    "io_tunables",
    "warn_unknown_keys",
]

__getattr__, __dir__ = lazy_package(
    globals(),
    {
        "hudi_ray.core.config.keys": (
            "HudiIOConfig",
            "HudiPlanConfig",
            "HudiReadConfig",
            "HudiTableConfig",
            "is_read_config",
            "warn_unknown_keys",
        ),
        "hudi_ray.core.config.loader": ("load_table_config",),
        "hudi_ray.core.config.properties": ("parse_properties",),
        "hudi_ray.core.config.table_config": ("TableConfig",),
        "hudi_ray.core.config.tunables": (
            "ENGINE_TUNABLES",
            "PLANNING_TUNABLES",
            "POOL_TUNABLES",
            "EngineTunables",
            "PlanningTunables",
            "PoolTunables",
            "ReadTunables",
            "io_tunables",
        ),
        "hudi_ray.core.config.values": ("int_option",),
    },
)
