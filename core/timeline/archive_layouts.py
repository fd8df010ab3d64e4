"""The two layouts of Hudi's archived timeline, parsed into entries: layout 1
(``.commits_.archive.N`` log files of Avro records) and layout 2 (LSM Parquet
files listed by manifests)."""

from __future__ import annotations

import dataclasses
import io
import json
import struct
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import (
    HudiCoreError,
    HudiCorruptFileError,
    HudiSchemaError,
)
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file import BlockType, LogBlock, read_log_blocks
from hudi_ray.core.log_file.content import decode_avro_block
from hudi_ray.core.timeline.commit_avro import Reader, value_reader
from hudi_ray.core.timeline.lsm_file import LsmFile

if TYPE_CHECKING:
    import fastavro
    import pyarrow as pa
else:
    fastavro = lazy_module("fastavro")
    pa = lazy_module("pyarrow")


@dataclass(frozen=True, slots=True)
class ArchivedEntry:
    """One completed instant of the archive. Its metadata is read when asked: from the
    ``row`` of its file's metadata column (layout 2, the completed instant file's bytes),
    or from its ``raw`` record (layout 1)."""

    timestamp: str
    action: str
    completion: str
    source: str  # the archive file it came from, for errors
    row: int = -1
    raw: bytes | None = None  # layout 1: the entry's Avro record, in the writer ``schema``
    schema: str | None = None


# -- layout 2 ------------------------------------------------------------------------------


def manifest_files(raw: bytes, where: str) -> list[tuple[str, int | None]]:
    """Names and sizes (None where the manifest gives no usable one) of the files a manifest lists."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HudiCorruptFileError(f"Cannot read the archived timeline manifest {where}: {exc}") from exc
    files = doc.get("files") if isinstance(doc, dict) else None
    named = isinstance(files, list) and all(isinstance(f, dict) and isinstance(f.get("fileName"), str) for f in files)
    if not named:
        raise HudiCorruptFileError(f"The archived timeline manifest {where} holds no list of files with names")
    out: list[tuple[str, int | None]] = []
    for f in files:  # type: ignore[union-attr]
        size = f.get("fileLen")
        out.append((f["fileName"], size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None))
    return out


def is_time(value: object) -> bool:
    return isinstance(value, str) and value.isascii() and value.isdigit()


INDEX_COLUMNS = ["instantTime", "completionTime", "action"]


def parse_layout_2(lsm: LsmFile) -> dict[str, ArchivedEntry]:
    """The instants of one LSM file: times and actions; their metadata is read when asked."""
    where = lsm.where
    present = [c for c in INDEX_COLUMNS if c in lsm.names]
    missing = {"instantTime", "action"} - set(present)
    if missing:
        raise HudiCorruptFileError(f"Archived timeline file {where} lacks the column(s) {sorted(missing)}")
    table = lsm.read(present)
    try:
        cols = {name: table.column(name).to_pylist() for name in present}
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise HudiCorruptFileError(f"Cannot read archived timeline file {where}: {exc}") from exc
    completions = cols.get("completionTime", [None] * table.num_rows)
    out: dict[str, ArchivedEntry] = {}
    for row, (ts, action, completion) in enumerate(zip(cols["instantTime"], cols["action"], completions)):
        if not is_time(ts) or not isinstance(action, str):
            raise HudiCorruptFileError(f"Archived timeline file {where} holds an instant without a time or action")
        if completion is not None and not (is_time(completion) and completion >= ts):
            raise HudiCorruptFileError(
                f"Archived timeline file {where} gives instant {ts} the completion time {completion!r}"
            )
        # A record without a completion time took effect at its instant time, as Hudi reads it.
        out.setdefault(ts, ArchivedEntry(ts, action, completion or ts, where, row=row))
    return out


# -- layout 1 ------------------------------------------------------------------------------


_SCHEMAS: dict[str, Any] = {}
_SCHEMAS_LOCK = threading.Lock()


def _layout_1_schema(text: str, where: str) -> Any:
    """A block's writer schema, parsed once per distinct text (fastavro re-parses a
    schema on every read unless it parsed it itself, with its hint)."""
    with _SCHEMAS_LOCK:
        found = _SCHEMAS.get(text)
    if found is not None:
        return found
    try:
        found = fastavro.parse_schema(json.loads(text))
    except Exception as exc:  # json and fastavro raise many unrelated types
        raise HudiCorruptFileError(f"The SCHEMA header of {where} is not a usable Avro schema: {exc}") from exc
    with _SCHEMAS_LOCK:
        _SCHEMAS[text] = found
    return found


@lru_cache(maxsize=32)
def commit_reader(schema_text: str) -> Reader | None:
    """The fast reader of an entry's first field, ``hoodieCommitMetadata`` (a commit's
    metadata: most of what index guards and incremental reads decode), where it applies."""
    try:
        fields = json.loads(schema_text).get("fields") or []
    except (ValueError, AttributeError):
        return None
    if not fields or fields[0].get("name") != "hoodieCommitMetadata":
        return None
    return value_reader(fields[0].get("type"))


def decode_entry(raw: bytes, schema_text: str, where: str) -> dict[str, Any]:
    try:
        value = fastavro.schemaless_reader(io.BytesIO(raw), _layout_1_schema(schema_text, where), None)
    except HudiCorruptFileError:
        raise
    except Exception as exc:  # fastavro raises many unrelated types
        raise HudiCorruptFileError(f"Cannot decode {where}: {exc}") from exc
    if not isinstance(value, dict):
        raise HudiCorruptFileError(f"{where} is not a record")
    return value


def _records(content: bytes | memoryview, where: str) -> Iterable[bytes]:
    """The records of an Avro data block's content: int32 version, int32 count, then
    per record an int32 length and its bytes."""
    view = memoryview(content)
    if len(view) < 8:
        raise HudiCorruptFileError(f"{where} is too short for an Avro data block")
    version = int.from_bytes(view[0:4], "big", signed=True)
    count = int.from_bytes(view[4:8], "big", signed=True)
    if version not in (1, 2, 3) or count < 0 or count > (len(view) - 8) // 4:
        raise HudiCorruptFileError(f"{where} declares content version {version} and {count} records")
    pos = 8
    for _ in range(count):
        if pos + 4 > len(view):
            raise HudiCorruptFileError(f"{where} ends inside a record")
        size = int.from_bytes(view[pos : pos + 4], "big", signed=True)
        pos += 4
        if size < 0 or pos + size > len(view):
            raise HudiCorruptFileError(f"{where} declares a record of {size} bytes past its end")
        yield bytes(view[pos : pos + size])
        pos += size


_ENTRY_INDEX = ("commitTime", "actionType", "actionState")
_HEADER = struct.Struct(">ii")  # an Avro data block's content version and record count
_LENGTH = struct.Struct(">i")


def parse_layout_1(blob: bytes, where: str) -> dict[str, ArchivedEntry]:
    """Completed entries of one archive file: which instant each record is, by the
    compiled Avro decoder stepping over the rest (the metadata of every state file of
    every instant, most of an archive's bytes); a record's metadata is decoded when
    asked. A corrupt block loses instants (and with them write stats a read may need):
    it fails the read, naming the file."""
    blocks: list[tuple[LogBlock, list[bytes]]] = []
    for block in read_log_blocks(blob, where):
        if block.block_type is BlockType.CORRUPT:
            raise HudiCorruptFileError(f"Corrupt block at byte {block.offset} of archive file {where}")
        block_where = block.where()
        if block.block_type is not BlockType.AVRO_DATA:
            # The archiver writes Avro data blocks only (Hudi's reader takes every block as one).
            raise HudiCorruptFileError(f"{block_where} is not an Avro data block of archived instants")
        if block.schema is None:
            raise HudiCorruptFileError(f"{block_where} has no SCHEMA header")
        blocks.append((block, list(_records(block.content, block_where))))
    out: dict[str, ArchivedEntry] = {}
    for block, records, index in _indexed(blocks):
        block_where = block.where()
        if index.num_rows != len(records) or not {"commitTime", "actionType"} <= set(index.column_names):
            raise HudiCorruptFileError(f"{block_where} holds no instant times and actions of its records")
        n = index.num_rows
        states = index.column("actionState").to_pylist() if "actionState" in index.column_names else [None] * n
        times, actions = index.column("commitTime").to_pylist(), index.column("actionType").to_pylist()
        for raw, ts, action, state in zip(records, times, actions, states):
            if not is_time(ts) or not isinstance(action, str):
                raise HudiCorruptFileError(f"A record of {block_where} has no instant time or action")
            if state in ("REQUESTED", "INFLIGHT"):
                continue  # the requested and inflight files of the instant
            if state not in (None, "COMPLETED"):
                raise HudiCorruptFileError(f"A record of {block_where} gives instant {ts} the state {state!r}")
            out.setdefault(ts, ArchivedEntry(ts, action, ts, where, raw=raw, schema=block.schema))
    return out


def _indexed(blocks: list[tuple[LogBlock, list[bytes]]]) -> Iterable[tuple[LogBlock, list[bytes], pa.Table]]:
    """Each block with its records' index columns. The blocks of one schema (an archive
    file's usually are) are decoded as one block, a decoder call for the lot; where that
    fails, block by block, so that the error names the block."""
    start = 0
    while start < len(blocks):
        end = start + 1
        while end < len(blocks) and blocks[end][0].schema == blocks[start][0].schema:
            end += 1
        run = blocks[start:end]
        start = end
        index = None
        if len(run) > 1:
            count = sum(len(records) for _, records in run)
            # Rebuilt from the records each block's framing gave, so no byte outside them is read.
            framed = (_LENGTH.pack(len(r)) + r for _, records in run for r in records)
            merged = _HEADER.pack(1, count) + b"".join(framed)
            try:
                index = decode_avro_block(dataclasses.replace(run[0][0], content=merged), _ENTRY_INDEX)
            except HudiCoreError:
                index = None
        if index is None:
            for block, records in run:
                yield block, records, _block_index(block)
            continue
        at = 0
        for block, records in run:
            yield block, records, index.slice(at, len(records))
            at += len(records)


def _block_index(block: LogBlock) -> pa.Table:
    try:
        return decode_avro_block(block, _ENTRY_INDEX)
    except HudiSchemaError as exc:
        raise HudiCorruptFileError(f"Cannot decode {block.where()}: {exc}") from exc
