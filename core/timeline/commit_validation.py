"""What a commit's or clean's metadata must hold before the reader trusts it:
every field a read uses present and of the right type, or the instant is
named as corrupt."""

from __future__ import annotations

from typing import Any, NoReturn

from hudi_ray.core.base_file import base_file_id
from hudi_ray.core.exceptions import HudiTimelineError
from hudi_ray.core.log_file import parse_log_file_name
from hudi_ray.core.storage.paths import check_metadata_path
from hudi_ray.core.timeline.instant import REPLACE_COMMIT

STAT_COUNTS = ("numWrites", "numDeletes", "numUpdateWrites", "numInserts", "totalWriteBytes", "fileSizeInBytes")


def stat_file_id(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    file_id = base_file_id(name)
    if file_id is not None:
        return file_id
    log_file = parse_log_file_name(name, 0)
    return log_file.file_id if log_file is not None else None


def validate_commit_metadata(
    meta: dict[str, Any], action: str, where: str, *, paths_where: str | None = None, base: str = "the table"
) -> list[dict[str, Any]]:
    """Check the parts of a data instant's metadata that planning trusts; return its
    write stats, each with its partition set.

    Reads use the write stats to find the files an instant wrote and the
    replaced file ids to hide file groups; read leniently, damage there would
    drop or resurrect rows without a word. Stats with no fileId or no path name
    no file and are left out, as Hudi does. Paths are opened (footers,
    existence checks): one leading outside the table fails here, naming
    ``paths_where`` (default ``where``) and ``base``.
    """
    stats_by_partition = meta.get("partitionToWriteStats")
    if not isinstance(stats_by_partition, dict):
        got = "nothing" if stats_by_partition is None else type(stats_by_partition).__name__
        raise HudiTimelineError(f"Malformed commit metadata in {where}: partitionToWriteStats must be a map, got {got}")
    paths_where = paths_where or where
    out: list[dict[str, Any]] = []
    for partition, stats in stats_by_partition.items():
        if not isinstance(stats, list):
            raise HudiTimelineError(
                f"Malformed commit metadata in {where}: write stats of partition {partition!r} "
                f"must be a list, got {type(stats).__name__}"
            )
        if partition:
            check_metadata_path(partition, "Partition", paths_where, base)
        for stat in stats:
            named = stat if _plain_write_stat(stat, partition) else _validate_write_stat(stat, partition, where)
            if named is None:
                continue
            check_metadata_path(named["path"], "Write stat path", paths_where, base)
            out.append(named)
    _validate_extra_metadata(meta.get("extraMetadata"), where)
    if action == REPLACE_COMMIT:
        replaced = meta.get("partitionToReplaceFileIds")
        ok = isinstance(replaced, dict) and all(
            isinstance(ids, list) and all(isinstance(i, str) and i for i in ids) for ids in replaced.values()
        )
        if not ok:
            raise HudiTimelineError(
                f"Malformed replace commit metadata in {where}: partitionToReplaceFileIds must map "
                "partitions to lists of file ids"
            )
    return out


def validate_clean_metadata(meta: dict[str, Any], where: str) -> None:
    """Check the parts of a clean's metadata that reads trust: the files it
    deleted, per partition. A missing file that a clean deleted is not damage,
    so a misread clean could hide a missing file."""

    def refuse(what: str, value: Any) -> NoReturn:
        raise HudiTimelineError(f"Malformed clean metadata in {where}: {what}, got {type(value).__name__}")

    partitions = meta.get("partitionMetadata")
    if partitions is not None and not isinstance(partitions, dict):
        refuse("partitionMetadata must be a map", partitions)
    for partition, part in (partitions or {}).items():
        if part is None:
            continue
        if not isinstance(part, dict):
            refuse(f"the metadata of partition {partition!r} must be a record", part)
        deleted = part.get("successDeleteFiles")
        if deleted is not None and not (isinstance(deleted, list) and all(isinstance(f, str) for f in deleted)):
            refuse(f"successDeleteFiles of partition {partition!r} must be a list of file paths", deleted)
        whole = part.get("isPartitionDeleted")
        if whole is not None and not isinstance(whole, bool):
            refuse(f"isPartitionDeleted of partition {partition!r} must be a boolean", whole)


def _validate_extra_metadata(extra: Any, where: str) -> None:
    """``extraMetadata`` is a map (or absent); the writer schema in it a string (or
    absent). Schema lookups and schema-evolution checks read it on every data instant."""
    if extra is None:
        return
    if not isinstance(extra, dict):
        raise HudiTimelineError(
            f"Malformed commit metadata in {where}: extraMetadata must be a map, got {type(extra).__name__}"
        )
    schema = extra.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise HudiTimelineError(
            f"Malformed commit metadata in {where}: extraMetadata.schema must be a string holding "
            f"an Avro schema, got {type(schema).__name__}"
        )


def _plain_write_stat(stat: Any, partition: str) -> bool:
    """Whether ``stat`` is the usual well-formed one, which ``_validate_write_stat``
    returns as it is: checked here with fewer steps, once per file of every commit.
    False sends it to that check, which says what is wrong, or that nothing is."""
    if type(stat) is not dict:
        return False
    file_id = stat.get("fileId")
    path = stat.get("path")
    if type(file_id) is not str or type(path) is not str or not file_id or not path:
        return False
    if stat.get("partitionPath") != partition:
        return False
    # The name starts with the file id and then holds exactly the base file name's two
    # other fields, so that the name's file id is this one (or the name is no base file).
    name = path[path.rfind("/") + 1 :]
    n = len(file_id)
    if not (name.startswith(file_id) and name[n : n + 1] == "_" and name.count("_", n) == 2):
        return False
    for key in STAT_COUNTS:
        value = stat.get(key)
        if value is not None and not (type(value) is int and value >= 0):
            return False
    return True


def _validate_write_stat(stat: Any, partition: str, where: str) -> dict[str, Any] | None:
    """The stat with its partition set, or None when it names no file (null fileId or path)."""
    if not isinstance(stat, dict):
        raise HudiTimelineError(
            f"Malformed commit metadata in {where}: a write stat of partition {partition!r} "
            f"is a {type(stat).__name__}, not a record"
        )
    file_id = stat.get("fileId")
    path = stat.get("path")
    stated = stat.get("partitionPath")
    for key, value in (("fileId", file_id), ("path", path), ("partitionPath", stated)):
        if value is not None and not isinstance(value, str):
            raise HudiTimelineError(
                f"Malformed commit metadata in {where}: {key} of a write stat in partition {partition!r} "
                f"must be a string, got {value!r}"
            )
    if file_id is None or not path:
        return None  # names no file; Hudi's file listings skip such stats too
    if not file_id:
        raise HudiTimelineError(
            f"Malformed commit metadata in {where}: write stat for {path!r} in partition {partition!r} "
            "has an empty fileId"
        )
    if stated is None:
        stat = {**stat, "partitionPath": partition}
    elif stated != partition:
        raise HudiTimelineError(
            f"Malformed commit metadata in {where}: write stat for {path!r} has partitionPath "
            f"{stated!r} but is listed under partition {partition!r}"
        )
    named = stat_file_id(path)
    if named is not None and named != file_id:
        raise HudiTimelineError(
            f"Malformed commit metadata in {where}: write stat has fileId {file_id!r} "
            f"but its path {path!r} belongs to file group {named!r}"
        )
    for key in STAT_COUNTS:
        value = stat.get(key)
        if value is None or (type(value) is int and value >= 0):
            continue  # the usual case, asked first: once per count of every write stat
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise HudiTimelineError(
                f"Malformed commit metadata in {where}: {key} of write stat for {path!r} "
                f"must be a non-negative integer, got {value!r}"
            )
    return stat
