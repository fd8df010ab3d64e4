"""``HudiTableBuilder``: collect Hudi and storage options, then load the table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from hudi_ray.core.config.keys import key_str, split_options
from hudi_ray.core.storage.paths import redact_options, redact_text
from hudi_ray.core.table.table import HudiTable


@dataclass
class HudiTableBuilder:
    """Builds a :class:`HudiTable`; generic options route by key prefix."""

    base_uri: str
    hudi_options: dict[str, str] = field(default_factory=dict)
    storage_options: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        # Builders end up in logs and tracebacks; their options hold credentials.
        return (
            f"HudiTableBuilder(base_uri={redact_text(str(self.base_uri))!r}, "
            f"hudi_options={redact_options(self.hudi_options)!r}, "
            f"storage_options={redact_options(self.storage_options)!r}, "
            f"options={redact_options(self.options)!r})"
        )

    @classmethod
    def from_base_uri(cls, base_uri: str) -> HudiTableBuilder:
        return cls(base_uri)

    def with_hudi_option(self, k: str | Enum, v: str) -> HudiTableBuilder:
        self.hudi_options[key_str(k)] = str(v)
        return self

    def with_hudi_options(self, hudi_options: Mapping[str, str]) -> HudiTableBuilder:
        self.hudi_options.update({key_str(k): str(v) for k, v in hudi_options.items()})
        return self

    def with_storage_option(self, k: str, v: str) -> HudiTableBuilder:
        self.storage_options[str(k)] = str(v)
        return self

    def with_storage_options(self, storage_options: Mapping[str, str]) -> HudiTableBuilder:
        self.storage_options.update({str(k): str(v) for k, v in storage_options.items()})
        return self

    def with_option(self, k: str | Enum, v: str) -> HudiTableBuilder:
        self.options[key_str(k)] = str(v)
        return self

    def with_options(self, options: Mapping[str, str]) -> HudiTableBuilder:
        self.options.update({key_str(k): str(v) for k, v in options.items()})
        return self

    def build(self) -> HudiTable:
        hudi, storage = split_options(self.options)
        hudi.update(self.hudi_options)
        storage.update(self.storage_options)
        return HudiTable(self.base_uri, hudi_options=hudi, storage_options=storage)
