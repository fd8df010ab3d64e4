"""Archived history: instants moved off the active timeline.

Apache Hudi keeps two layouts of it:

* layout 1 (table version 6 and below): Hudi log files ``.commits_.archive.<N>_<token>``
  in the archive folder (``hoodie.archivelog.folder``, default ``archived``), of Avro
  data blocks of ``HoodieArchivedMetaEntry`` records, one per instant file (requested,
  inflight and completed states apart), the block's SCHEMA header the writer schema;
* layout 2 (version 8 and up): the LSM history (``hoodie.timeline.history.path``,
  default ``history`` under the timeline folder): ``_version_`` names the current
  ``manifest_<N>``, a JSON list of Parquet files named ``<min>_<max>_<level>.parquet``,
  each row one completed instant with its completion time, the raw bytes of its
  completed file (``metadata``) and of its plan.

Everything is read lazily and only as far as a question needs: layout 2's completion
times come from the files whose instant range holds the times asked for; metadata is
decoded per instant when asked. Archive files never change once written (a layout-1
file that grows is read again: entries are cached by name and size), so what was read
is kept for the table's later loads.

Damage never becomes a wrong answer: a missing, truncated or corrupt file is an error
naming it, raised to whoever needed the archive (an index guard turns itself off, a read
fails).
"""

from __future__ import annotations

import io
import logging
import re
import threading
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.keys import HudiTableConfig as K
from hudi_ray.core.exceptions import (
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiTimelineError,
    HudiUnsafePathError,
)
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import check_file_name, metadata_path_problem
from hudi_ray.core.timeline.archive_layouts import (
    INDEX_COLUMNS,
    ArchivedEntry,
    commit_reader,
    decode_entry,
    is_time,
    manifest_files,
    parse_layout_1,
    parse_layout_2,
)
from hudi_ray.core.timeline.commit_avro import container_record
from hudi_ray.core.timeline.instant import CLEAN, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, ROLLBACK, HudiInstant
from hudi_ray.core.timeline.lsm_file import LsmFile
from hudi_ray.core.timeline.metadata import decode_instant_metadata
from hudi_ray.core.timeline.write_files import WriteFiles, extract
from hudi_ray.core.util.pools import io_map

if TYPE_CHECKING:
    import asyncio

    import fastavro
    import numpy as np
else:
    asyncio = lazy_module("asyncio")
    fastavro = lazy_module("fastavro")
    np = lazy_module("numpy")

log = logging.getLogger(__name__)

_LAYOUT_1_FILE = re.compile(r"^\.commits_\.archive\.(\d+)(_.*)?$")
_MERGE_PLAN = "mergeArchivePlan"
_VERSION_FILE = "_version_"
_MANIFEST = re.compile(r"^manifest_(\d+)$")
_LSM_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")

# Which field of a HoodieArchivedMetaEntry holds a completed action's metadata.
_METADATA_FIELD = {
    COMMIT: "hoodieCommitMetadata",
    DELTA_COMMIT: "hoodieCommitMetadata",
    REPLACE_COMMIT: "hoodieReplaceCommitMetadata",
    CLEAN: "hoodieCleanMetadata",
    ROLLBACK: "hoodieRollbackMetadata",
}


def archive_folder(config: TableConfig) -> str | None:
    """The archive folder relative to the table, or None when the configured one is
    unsafe (a path leaving the table is never listed)."""
    if config.table_version >= 8:
        sub = config.get(K.TIMELINE_HISTORY_PATH)
        sub = "history" if sub is None else sub.strip()
        root = config.timeline_path
    else:
        sub = config.get(K.ARCHIVE_LOG_FOLDER)
        sub = "archived" if sub is None else sub.strip()
        root = ".hoodie"
    if sub and metadata_path_problem(sub) is not None:
        return None
    sub = sub.strip("/")
    return f"{root}/{sub}" if sub else root


def has_archived_history(storage: Storage, config: TableConfig) -> bool:
    """True when instants may have moved off the active timeline (LSM history or the
    archive folder)."""
    folder = archive_folder(config)
    if folder is None:
        return True  # a folder that may lie outside the table is not listed; its instants stay unknown
    try:
        names = [info.name for info in storage.list_dir(folder) if not info.is_dir]
    except HudiFileNotFoundError:
        return False
    if config.table_version >= 8:
        return any(n == _VERSION_FILE or _MANIFEST.match(n) or _LSM_FILE.match(n) for n in names)
    return any(_LAYOUT_1_FILE.match(n) for n in names)


class ArchivedTimeline:
    """A table's archived instants, read on demand. Thread-safe; one per loaded
    timeline, lending what it read to the next load of the same table."""

    def __init__(self, storage: Storage, config: TableConfig, previous: ArchivedTimeline | None = None) -> None:
        self._storage = storage
        self._layout = 2 if config.table_version >= 8 else 1
        self._folder = archive_folder(config)
        self._lock = threading.RLock()
        # Files of the current archive: name -> (min, max) instant range (layout 2), or
        # name -> size (layout 1); None until listed.
        self._files: dict[str, Any] | None = None
        # Entries per file, keyed by (name, size or range): files never change under a name.
        self._read: dict[tuple[str, Any], dict[str, ArchivedEntry]] = dict(previous._read) if previous else {}
        self._decoded: dict[tuple[str, str], dict[str, Any]] = dict(previous._decoded) if previous else {}
        self._all: dict[str, ArchivedEntry] | None = None
        self._rolled_back: frozenset[str] | None = None
        self._write_files: tuple[list[str], list[tuple[list[int], WriteFiles]]] | None = None
        # Layout 2: the files read (by location) and their metadata columns, once decoded.
        self._lsm: dict[str, LsmFile] = dict(previous._lsm) if previous else {}
        self._columns: dict[str, list[bytes | None]] = dict(previous._columns) if previous else {}

    @property
    def layout(self) -> int:
        return self._layout

    @property
    def location(self) -> str:
        return self._storage.uri(self._folder) if self._folder is not None else "an unsafe archive folder"

    def __getstate__(self) -> dict[str, Any]:
        # Shipped plans carry no archive content; a worker reads what it needs again.
        state = self.__dict__.copy()
        state.update(_lock=None, _files=None, _read={}, _decoded={}, _all=None, _lsm={}, _columns={})
        state.update(_rolled_back=None, _write_files=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # -- files ---------------------------------------------------------------

    def _require_folder(self) -> str:
        if self._folder is None:
            raise HudiUnsafePathError(
                f"The archive folder configured for {self._storage.base_url} leads outside the table; "
                "its archived instants are not read"
            )
        return self._folder

    def files(self) -> dict[str, Any]:
        """The archive's current files (empty when there is no archive)."""
        with self._lock:
            if self._files is None:
                try:
                    self._files = self._storage.submit(self._discover()).result()
                except HudiFileNotFoundError as exc:
                    raise HudiFileNotFoundError(f"{exc} (a file of the archived timeline at {self.location})") from exc
            return self._files

    def is_present(self) -> bool:
        return bool(self.files())

    def _rel(self, name: str) -> str:
        return f"{self._require_folder()}/{name}"

    async def _discover(self) -> dict[str, Any]:
        return await (self._list_layout_2() if self._layout == 2 else self._list_layout_1())

    async def _list_layout_2(self) -> dict[str, Any]:
        folder = self._require_folder()
        version = await self._current_version()
        if version is None:
            return {}
        manifest = f"manifest_{version}"
        where = self._storage.uri(self._rel(manifest))
        try:
            text = await self._storage.read_bytes_async(self._rel(manifest))
        except HudiFileNotFoundError as exc:
            raise HudiFileNotFoundError(
                f"The archived timeline's {self._storage.uri(f'{folder}/{_VERSION_FILE}')} names manifest "
                f"version {version}, but {where} does not exist"
            ) from exc
        out: dict[str, Any] = {}
        for name, size in manifest_files(text, where):
            check_file_name(name, "Archive file", where, self._storage.base_url)
            m = _LSM_FILE.match(name)
            if m is None:
                raise HudiCorruptFileError(f"Manifest {where} lists {name!r}, which is not an archived timeline file")
            out[name] = (m.group(1), m.group(2), size)
        return out

    async def _current_version(self) -> int | None:
        """The version ``_version_`` names; as Hudi does, the greatest manifest listed
        when that file is missing or unreadable."""
        rel = self._rel(_VERSION_FILE)
        try:
            text = (await self._storage.read_bytes_async(rel)).decode("utf-8").strip()
            if text.isascii() and text.isdigit():
                return int(text)
            log.warning("Ignoring %s: %r is not a version number", self._storage.uri(rel), text[:40])
        except HudiFileNotFoundError:
            pass
        except UnicodeDecodeError:
            log.warning("Ignoring %s: not UTF-8 text", self._storage.uri(rel))
        try:
            listed = await self._storage.list_dir_async(self._require_folder())
        except HudiFileNotFoundError:
            return None
        versions = [int(m.group(1)) for info in listed if (m := _MANIFEST.match(info.name)) is not None]
        return max(versions, default=None)

    async def _list_layout_1(self) -> dict[str, Any]:
        folder = self._require_folder()
        try:
            listed = await self._storage.list_dir_async(folder)
        except HudiFileNotFoundError:
            return {}
        files = {i.name: i.size for i in listed if not i.is_dir and _LAYOUT_1_FILE.match(i.name)}
        if any(i.name == _MERGE_PLAN for i in listed):
            await self._apply_merge_plan(files)
        return files

    async def _apply_merge_plan(self, files: dict[str, Any]) -> None:
        """A merge of small archive files left unfinished: while every file it merges is
        still there, the merged file is incomplete; once any is gone, the rest are leftovers."""
        rel = self._rel(_MERGE_PLAN)
        where = self._storage.uri(rel)
        try:
            raw = await self._storage.read_bytes_async(rel)
        except HudiFileNotFoundError:
            return  # the merge finished meanwhile
        try:
            records = list(fastavro.reader(io.BytesIO(raw)))
        except Exception as exc:  # fastavro raises many unrelated types
            raise HudiCorruptFileError(f"Cannot decode the archive merge plan {where}: {exc}") from exc
        if len(records) != 1 or not isinstance(records[0], dict):
            raise HudiCorruptFileError(f"The archive merge plan {where} holds {len(records)} records, not one")
        candidates = [str(c).rsplit("/", 1)[-1] for c in records[0].get("candidate") or ()]
        merged = str(records[0].get("mergedArchiveFileName") or "").rsplit("/", 1)[-1]
        if all(c in files for c in candidates):
            files.pop(merged, None)
        elif merged in files:
            for c in candidates:
                files.pop(c, None)

    # -- entries -------------------------------------------------------------

    def _entries_of(self, names: list[str]) -> dict[str, ArchivedEntry]:
        """Completed entries of the given current files, read together."""
        files = self.files()
        keys = [(n, files[n]) for n in names]
        with self._lock:
            missing = [k for k in keys if k not in self._read]
        if missing:
            rels = [self._rel(n) for n, _ in missing]
            try:
                if self._layout == 2:
                    opened = self._storage.submit(self._open_lsm([(r, k[1][2]) for r, k in zip(rels, missing)]))
                    for key, lsm in zip(missing, opened.result()):
                        parsed = parse_layout_2(lsm)
                        with self._lock:
                            self._read[key] = parsed
                            self._lsm[lsm.where] = lsm
                else:
                    for key, rel, blob in zip(missing, rels, self._storage.read_many(rels)):
                        parsed = parse_layout_1(blob, self._storage.uri(rel))
                        with self._lock:
                            self._read[key] = parsed
            except HudiFileNotFoundError as exc:
                raise HudiFileNotFoundError(
                    f"The archived timeline at {self.location} lists a file storage lacks: {exc}"
                ) from exc
        out: dict[str, ArchivedEntry] = {}
        with self._lock:
            for key in sorted(keys):  # by name: deduplicate the way file order would
                for ts, entry in self._read[key].items():
                    out.setdefault(ts, entry)
        return out

    async def _open_lsm(self, files: list[tuple[str, int | None]]) -> list[LsmFile]:
        return list(
            await asyncio.gather(*(LsmFile.fetch(self._storage, rel, size, INDEX_COLUMNS) for rel, size in files))
        )

    def entries(self) -> dict[str, ArchivedEntry]:
        """Every completed instant of the archive, by instant time."""
        with self._lock:
            if self._all is None:
                self._all = self._entries_of(sorted(self.files()))
            return self._all

    def completion_times(self, times: Collection[str]) -> dict[str, str]:
        """Completion times of those of ``times`` the archive holds. Layout 2 reads only
        the files whose instant range holds one of them; layout 1 keeps no completion
        times (they are the instant times, as Hudi has them for that layout)."""
        if not times:
            return {}
        if self._layout == 1:
            held = self.entries()
            return {t: t for t in times if t in held}
        with self._lock:
            known = self._all
        if known is None:
            wanted = [n for n, (lo, hi, _) in self.files().items() if any(lo <= t <= hi for t in times)]
            known = self._entries_of(wanted)
        return {t: known[t].completion for t in times if t in known}

    def preload_metadata(self) -> None:
        """Read every file's metadata column now, files side by side (Arrow decompresses
        them without holding the interpreter): for questions about every write."""
        with self._lock:
            sources = sorted({e.source for e in (self._all or {}).values() if e.raw is None} - set(self._columns))
        io_map(self._metadata_column, sources)

    def instants(self, actions: Collection[str] | None = None) -> list[HudiInstant]:
        """Completed archived instants (of ``actions``, or all), oldest first."""
        found = [
            HudiInstant(
                e.timestamp,
                e.action,
                completion_timestamp=e.completion if self._layout == 2 else None,
                archived=True,
            )
            for e in self.entries().values()
            if actions is None or e.action in actions
        ]
        return sorted(found)

    def write_files(self, timestamps: Sequence[str]) -> list[tuple[list[int], WriteFiles]]:
        """The files the archived commits and delta commits among ``timestamps`` wrote,
        as far as the compiled walk takes their metadata: parts of (where in
        ``timestamps`` each instant of the part is, their files). The instants in no
        part are left to the full decode."""
        every, parts = self._every_write()
        wanted = {ts: k for k, ts in enumerate(timestamps)}
        out: list[tuple[list[int], WriteFiles]] = []
        for places, files in parts:
            mapped = np.array([wanted.get(every[p], -1) for p in places], dtype=np.int64)
            keep = mapped >= 0
            if keep.all():
                out.append((mapped.tolist(), files))
            elif keep.any():
                out.append((mapped[keep].tolist(), files.subset(keep)))
        return out

    def _every_write(self) -> tuple[list[str], list[tuple[list[int], WriteFiles]]]:
        """``write_files`` of every archived commit and delta commit, walked once."""
        with self._lock:
            if self._write_files is not None:
                return self._write_files
        entries = self.entries()
        timestamps = sorted(ts for ts, e in entries.items() if e.action in (COMMIT, DELTA_COMMIT))
        self.preload_metadata()
        groups: dict[str, list[tuple[int, bytes]]] = {}
        for place, ts in enumerate(timestamps):
            entry = entries.get(ts)
            if entry is None or entry.action not in (COMMIT, DELTA_COMMIT):
                continue
            if entry.raw is not None:
                if entry.schema:
                    groups.setdefault(entry.schema, []).append((place, entry.raw))
                continue
            raw = self._metadata_column(entry.source)[entry.row]
            if raw is None:
                continue  # a commit without metadata: the full decode's checks refuse it
            try:
                schema, body = container_record(raw)
            except Exception:  # damage or an unusual container: the full decode says which
                continue
            groups.setdefault(schema, []).append((place, body))
        prefix = (_METADATA_FIELD[COMMIT],) if self._layout == 1 else ()
        parts: list[tuple[list[int], WriteFiles]] = []
        for schema, members in groups.items():
            places = [place for place, _ in members]
            found = extract([record for _, record in members], schema, prefix)
            if found is not None:
                parts.append((places, found))
        with self._lock:
            self._write_files = (timestamps, parts)
        return timestamps, parts

    def rolled_back(self) -> frozenset[str]:
        """Instants the archived rollbacks undid: a file such an instant left behind (a
        delete the rollback reported failed) is not data, though older than the active
        timeline. Reads the whole archive's index and every archived rollback."""
        with self._lock:
            if self._rolled_back is not None:
                return self._rolled_back
        undone: set[str] = set()
        for entry in self.entries().values():
            if entry.action != ROLLBACK:
                continue
            meta, where = self.metadata(entry.timestamp)
            undone.update(_rolled_back_instants(meta, where))
        found = frozenset(undone)
        with self._lock:
            self._rolled_back = found
        return found

    def metadata(self, timestamp: str) -> tuple[dict[str, Any], str]:
        """The decoded metadata of an archived completed instant, and where it is from."""
        entry = self.entries().get(timestamp)
        if entry is None:
            raise HudiTimelineError(f"Instant {timestamp} is not a completed instant of the archive at {self.location}")
        where = f"archived instant {timestamp} ({entry.action}) in {entry.source}"
        key = (entry.source, timestamp)
        with self._lock:
            cached = self._decoded.get(key)
        if cached is not None:
            return cached, where
        value = self._decode(entry, where)
        with self._lock:
            self._decoded[key] = value
        return value, where

    def _metadata_column(self, source: str) -> list[bytes | None]:
        """The metadata column of a layout-2 file, read the first time an instant of it is asked for."""
        with self._lock:
            found = self._columns.get(source)
            lsm = self._lsm.get(source)
        if found is not None:
            return found
        if lsm is None:
            raise HudiTimelineError(f"The archived timeline file {source} is no longer held")
        if "metadata" not in lsm.names:
            column: list[bytes | None] = [None] * lsm.num_rows
        else:
            self._storage.submit(lsm.load(["metadata"])).result()
            column = lsm.read(["metadata"]).column("metadata").to_pylist()
        with self._lock:
            self._columns[source] = column
        return column

    def _decode(self, entry: ArchivedEntry, where: str) -> dict[str, Any]:
        if entry.raw is not None:
            first = commit_reader(entry.schema or "") if entry.action in (COMMIT, DELTA_COMMIT) else None
            if first is not None:
                try:
                    value, _ = first(entry.raw, 0)
                except Exception:  # damage: fastavro decodes the record and reports it
                    value = decode_entry(entry.raw, entry.schema or "", where).get("hoodieCommitMetadata")
            else:
                value = decode_entry(entry.raw, entry.schema or "", where).get(_METADATA_FIELD.get(entry.action, ""))
            if value is not None and not isinstance(value, dict):
                raise HudiCorruptFileError(f"The metadata of {where} is a {type(value).__name__}, not a record")
            return value or {}
        raw = self._metadata_column(entry.source)[entry.row]
        return decode_instant_metadata(raw, where) if raw is not None else {}


def _rolled_back_instants(meta: dict[str, Any], where: str) -> list[str]:
    """The instant times a rollback's metadata names (``commitsRollback``, and
    ``instantsRollback`` where the writer keeps it)."""
    times = meta.get("commitsRollback")
    undone = meta.get("instantsRollback")
    ok = times is None or (isinstance(times, list) and all(isinstance(t, str) and is_time(t) for t in times))
    ok = ok and (
        undone is None
        or (isinstance(undone, list) and all(isinstance(u, dict) and is_time(u.get("commitTime")) for u in undone))
    )
    if not ok:
        raise HudiCorruptFileError(
            f"Malformed rollback metadata in {where}: commitsRollback must list instant times and "
            "instantsRollback records with a commitTime"
        )
    return [*(times or ()), *(u["commitTime"] for u in undone or ())]
