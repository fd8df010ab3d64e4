"""When the record index may prune a key lookup.

The record index keeps one location per record key. A table can still hold a key in
two file groups: an INSERT or BULK_INSERT writes without looking the key up, so a key
the table already holds gets a second copy (the index then names only one of them),
and so can an upsert under a non-global write index when a key's partition value
changes (that write counts the record as an insert). Writes that update or delete
records in place, compaction and clustering (which moves records and their index
entries together) put no key anywhere twice.

So every second copy of a key starts in a file some write reported inserting into:
a suspect file. Only the table's first write is not suspect: the table was empty,
and while the record index is maintained Hudi refuses a commit that gives one key
two locations. A key lookup may use the record index only when no suspect file can
hold the key by its column stats; a suspect file without stats (cleaned, or never
indexed) may hold anything. Suspect files are known only from the commit metadata
of the active timeline: once instants were archived the record index is not used.
"""

from __future__ import annotations

from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.keys import HudiTableConfig as K
from hudi_ray.core.metadata import RECORD_INDEX, MetadataTable
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline import HudiInstant, HudiTimeline
from hudi_ray.core.timeline.instant import DELTA_COMMIT

# Indexed writes: only files that report inserts are suspect. Any other write
# (INSERT, BULK_INSERT, INSERT_OVERWRITE, an unknown one) places records without
# an index lookup: every file it wrote is suspect.
_INDEXED = frozenset({"UPSERT", "UPSERT_PREPPED", "DELETE", "DELETE_PREPPED", "DELETE_PARTITION"})
# Table services: they rewrite records that are already in the table, and the
# record index follows records clustering moves.
_RELOCATING = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER"})


def _archived_history(storage: Storage, config: TableConfig) -> bool:
    """True when instants may have moved off the active timeline (LSM history or the
    archive folder)."""
    if config.table_version >= 8:
        sub = (config.get(K.TIMELINE_HISTORY_PATH) or "history").strip("/")
        folder = f"{config.timeline_path}/{sub}"
    else:
        sub = (config.get(K.ARCHIVE_LOG_FOLDER) or "archived").strip("/")
        folder = f".hoodie/{sub}"
    if any(part in ("", ".", "..") for part in sub.split("/")) or ":" in sub:
        return True  # a folder that may lie outside .hoodie is not listed; its instants stay unknown
    if not storage.exists(folder):
        return False
    return any(not info.is_dir for info in storage.list_dir(folder))


def _maintained_record_index(first: HudiInstant, mdt: MetadataTable) -> bool:
    """True when the metadata table's commit of the table's first write updated the
    record index, i.e. the write went through the index's one-location-per-key check."""
    for instant in mdt.timeline.instants:
        if instant.timestamp == first.timestamp and instant.action == DELTA_COMMIT:
            return RECORD_INDEX in (mdt.timeline.get_instant_metadata(instant).get("partitionToWriteStats") or {})
    return False


def suspect_files(
    storage: Storage, config: TableConfig, timeline: HudiTimeline, mdt: MetadataTable
) -> dict[str, set[str]] | None:
    """partition -> names of files that may hold a copy of a key the record index does
    not point at; None when not every write of the table is known."""
    if _archived_history(storage, config):
        return None
    instants = timeline.data_instants
    if instants and _maintained_record_index(instants[0], mdt):
        instants = instants[1:]
    out: dict[str, set[str]] = {}
    for instant in instants:
        op = str(timeline.get_instant_metadata(instant).get("operationType") or "").upper()
        if op in _RELOCATING:
            continue
        every_file = op not in _INDEXED
        for stat in timeline.write_stats(instant):
            if every_file or stat.get("numInserts") != 0:
                name = (stat.get("path") or "").rsplit("/", 1)[-1]
                out.setdefault(stat.get("partitionPath") or "", set()).add(name)
    return out
