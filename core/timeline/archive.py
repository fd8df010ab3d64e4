"""Archived history: instants moved off the active timeline (the archive folder
of table versions 6 and below, the LSM history of version 8 and up)."""

from __future__ import annotations

from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.keys import HudiTableConfig as K
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import metadata_path_problem


def has_archived_history(storage: Storage, config: TableConfig) -> bool:
    """True when instants may have moved off the active timeline (LSM history or the
    archive folder)."""
    if config.table_version >= 8:
        sub = config.get(K.TIMELINE_HISTORY_PATH)
        sub = "history" if sub is None else sub.strip()
        root = config.timeline_path
    else:
        sub = config.get(K.ARCHIVE_LOG_FOLDER)
        sub = "archived" if sub is None else sub.strip()
        root = ".hoodie"
    if sub and metadata_path_problem(sub) is not None:
        return True  # a folder that may lie outside the table is not listed; its instants stay unknown
    folder = f"{root}/{sub.strip('/')}" if sub.strip("/") else root
    if not storage.exists(folder):
        return False
    files = [info.name for info in storage.list_dir(folder) if not info.is_dir]
    if folder != root:
        return bool(files)
    # The history shares its folder with the instants: only its own files count.
    if config.table_version >= 8:
        return any(n.startswith("manifest_") or n == "_version_" or n.endswith(".parquet") for n in files)
    return any(n.startswith(".commits_.archive") for n in files)
