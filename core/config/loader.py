"""Load a table's configs from ``.hoodie/hoodie.properties``."""

from __future__ import annotations

from hudi_ray.core.config.properties import parse_properties
from hudi_ray.core.config.table_config import TableConfig
from hudi_ray.core.exceptions import (
    HudiConfigError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiTableNotFoundError,
)
from hudi_ray.core.storage import Storage

PROPERTIES = ".hoodie/hoodie.properties"
PROPERTIES_BACKUP = ".hoodie/hoodie.properties.backup"


def load_table_config(storage: Storage, overrides: dict[str, str]) -> TableConfig:
    """Read ``hoodie.properties`` (or its backup, as Hudi does mid-update)."""
    path = PROPERTIES
    try:
        # Read first, asked about only when missing: on an object store each question is a round trip.
        raw = storage.read_bytes(path)
    except HudiFileNotFoundError:
        if not storage.exists(".hoodie"):
            raise HudiTableNotFoundError(f"Not a Hudi table: {storage.uri('.hoodie')} does not exist") from None
        path = PROPERTIES_BACKUP
        try:
            raw = storage.read_bytes(path)
        except HudiFileNotFoundError as exc:
            raise HudiTableNotFoundError(f"Not a Hudi table: {storage.uri(PROPERTIES)} does not exist") from exc
    where = storage.uri(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HudiCorruptFileError(f"Corrupt table properties {where}: not UTF-8 text ({exc})") from exc
    if "\x00" in text:
        raise HudiCorruptFileError(f"Corrupt table properties {where}: contains binary data")
    props = parse_properties(text)
    for key in ("hoodie.table.name", "hoodie.table.type"):
        if not props.get(key):
            raise HudiConfigError(f"Missing required config {key} in {where}")
    props.update(overrides)
    config = TableConfig.from_mapping(props, where)
    config.validate()
    return config
