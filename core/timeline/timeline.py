"""The active timeline: completed instants, their metadata and the latest schema."""

from __future__ import annotations

import concurrent.futures
import json
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hudi_ray.core.config import TableConfig, load_table_config
from hudi_ray.core.config.loader import PROPERTIES
from hudi_ray.core.exceptions import (
    HudiCoreError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiSchemaError,
    HudiTimelineError,
    HudiUnsafePathError,
)
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.schema.avro import avro_to_arrow_schema, parse_avro_schema
from hudi_ray.core.storage import FileInfo, Storage
from hudi_ray.core.timeline.commit_validation import (
    validate_clean_metadata,
    validate_commit_metadata,
)
from hudi_ray.core.timeline.instant import (
    CLEAN,
    CLUSTERING,
    COMMIT,
    DATA_ACTIONS,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    HudiInstant,
)
from hudi_ray.core.timeline.metadata import AVRO_MAGIC, decode_instant_metadata
from hudi_ray.core.util.locks import FreshLock

if TYPE_CHECKING:
    import asyncio

    import pyarrow as pa
else:
    asyncio = lazy_module("asyncio")
    pa = lazy_module("pyarrow")

log = logging.getLogger(__name__)

# The timeline folder of table versions 8 and up, unless hoodie.timeline.path moves it.
_LAYOUT_2_TIMELINE = ".hoodie/timeline"

if TYPE_CHECKING:  # the archive (fastavro, log blocks) and the index guards' columns load when asked for
    from hudi_ray.core.timeline.archive import ArchivedTimeline
    from hudi_ray.core.timeline.write_files import WriteFiles


def ask_for_timeline(storage: Storage, *also_list: str, instants: bool = True) -> None:
    """Start, on an object store, what loading the table's timeline asks first, all
    at once: ``hoodie.properties``, the timeline folders of both layouts (which one
    holds the timeline, the properties say), and the folders ``also_list`` once
    those listings have arrived (never older than the timeline they go with); with
    ``instants``, the files of the completed data instants each listing shows, as
    soon as it shows them (``_start_fetch`` takes them)."""
    folders = [_LAYOUT_2_TIMELINE, ".hoodie"]
    storage.ask_early(listings=folders, reads=[PROPERTIES])
    storage.ask_early_after(folders, also_list)
    if not instants:
        return
    for folder in folders:

        def completed(entries: list[FileInfo], folder: str = folder) -> list[str]:
            found = (HudiInstant.parse(e.name) for e in entries if not e.is_dir)
            return [f"{folder}/{i.file_name}" for i in found if i and i.is_completed and i.action in DATA_ACTIONS]

        storage.ask_early_following(folder, completed)


class HudiTimeline:
    """Completed instants of a table's active timeline, loaded once.

    ``timestamp`` of an instant is its requested time. For table version 8 and
    later the completion time is known too and orders incremental reads.
    """

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        instants: list[HudiInstant],
        pending: list[HudiInstant],
    ) -> None:
        self._storage = storage
        self._config = config
        self.instants = sorted(instants)
        self.pending = sorted(pending)
        self._metadata: dict[str, tuple[dict[str, Any], list[dict[str, Any]] | None]] = {}
        # Raw commit files fetched together ahead of decoding (object stores only).
        self._raw: dict[str, bytes] = {}
        self._fetching: tuple[list[HudiInstant], concurrent.futures.Future[list[bytes | BaseException]]] | None = None
        self._fetched_together = False
        self._lock = FreshLock()
        self._fetch_lock = FreshLock()
        self._clustering_requested = {
            i.timestamp for i in self.pending if i.action == CLUSTERING and i.state == "REQUESTED"
        }
        self._data = [i for i in self.instants if i.action in DATA_ACTIONS]
        self._data_ts = {i.timestamp for i in self._data}
        self._avro_schema: str | None = None  # set once checked by get_latest_avro_schema
        every = self.instants + self.pending
        # Instants requested before this time and not pending were archived, completed.
        self.start: str | None = min((i.timestamp for i in every), default=None)
        self._on_timeline = frozenset(i.timestamp for i in every)
        self._archive: ArchivedTimeline | None = None
        self._archive_lender: ArchivedTimeline | None = None

    # -- loading ---------------------------------------------------------------

    @classmethod
    def load(
        cls,
        storage: Storage,
        config: TableConfig,
        previous: HudiTimeline | None = None,
    ) -> HudiTimeline:
        """The timeline in ``config.timeline_path`` (on an object store, the listing
        ``ask_for_timeline`` asked early). ``previous``, an earlier load of the same
        table, lends what it decoded of instants completed on both."""
        folder = config.timeline_path
        tz = config.timezone
        completed: list[HudiInstant] = []
        pending: list[HudiInstant] = []
        try:
            listed = storage.list_dir(folder)
        except HudiFileNotFoundError:
            if storage.is_local:
                raise
            listed = []  # an object store has no empty folders: no objects, no instants
        for info in listed:
            if info.is_dir:
                continue
            instant = HudiInstant.parse(info.name, tz)
            if instant is None:
                continue
            (completed if instant.is_completed else pending).append(instant)
        if not completed and not pending:
            cls._check_layout(storage, config, folder)
        timeline = cls(storage, config, completed, pending)
        if previous is not None:
            timeline._reuse_decoded(previous)
        timeline._start_fetch()
        return timeline

    @classmethod
    def load_with_config(
        cls, storage: Storage, overrides: dict[str, str], previous: HudiTimeline | None = None
    ) -> tuple[TableConfig, HudiTimeline]:
        """A table's configs and timeline (``previous`` as ``load`` takes it). On
        an object store, what ``ask_for_timeline`` asked early is taken here: the
        configs say which of the two listings is the timeline."""
        config = load_table_config(storage, overrides)
        return config, cls.load(storage, config, previous)

    @staticmethod
    def _check_layout(storage: Storage, config: TableConfig, folder: str) -> None:
        """An empty timeline whose instants sit in the other layout's folder
        means the table version is wrong, not that the table is empty."""
        other = ".hoodie" if folder != ".hoodie" else ".hoodie/timeline"
        if not storage.exists(other):
            return
        found = [i.name for i in storage.list_dir(other) if not i.is_dir and HudiInstant.parse(i.name) is not None]
        if found:
            raise HudiTimelineError(
                f"Table version {config.table_version} in {config.source} keeps its timeline in "
                f"{storage.uri(folder)}, which holds no instants, but {storage.uri(other)} holds "
                f"{len(found)} (e.g. {found[0]}); the table version contradicts the timeline layout"
            )

    # -- instants ------------------------------------------------------------

    @property
    def data_instants(self) -> list[HudiInstant]:
        """Completed commits, delta commits and replace commits, oldest first."""
        return list(self._data)

    @property
    def is_empty(self) -> bool:
        return not self._data

    def _select(self, actions: set[str], desc: bool) -> list[HudiInstant]:
        found = [i for i in self.instants if i.action in actions]
        return found[::-1] if desc else found

    def get_completed_commits(self, desc: bool = False) -> list[HudiInstant]:
        return self._select({COMMIT}, desc)

    def get_completed_deltacommits(self, desc: bool = False) -> list[HudiInstant]:
        return self._select({DELTA_COMMIT}, desc)

    def get_completed_replacecommits(self, desc: bool = False) -> list[HudiInstant]:
        return self._select({REPLACE_COMMIT}, desc)

    def get_completed_clustering_commits(self, desc: bool = False) -> list[HudiInstant]:
        found = [i for i in self.get_completed_replacecommits() if self.is_clustering(i)]
        return found[::-1] if desc else found

    def is_clustering(self, instant: HudiInstant) -> bool:
        if instant.action == CLUSTERING:
            return True
        if instant.action != REPLACE_COMMIT:
            return False
        if instant.timestamp in self._clustering_requested:
            return True
        # Layout 1 has no clustering action: the operation type tells.
        return self.get_instant_metadata(instant).get("operationType") == "CLUSTER"

    def get_latest_commit_timestamp(self) -> str:
        if not self._data:
            raise HudiTimelineError(f"No completed commits on the timeline of {self._storage.base_url}")
        return self._data[-1].timestamp

    def latest_data_instant(self) -> HudiInstant | None:
        return self._data[-1] if self._data else None

    def is_completed_data_instant(self, ts: str) -> bool:
        """True for completed data instants, and for instants older than the
        active timeline (archived ones were completed)."""
        return ts in self._data_ts or self.is_archived(ts)

    def is_archived(self, ts: str) -> bool:
        """Whether ``ts`` is older than the active timeline: an archived, completed instant."""
        return self.start is not None and ts < self.start and ts not in self._on_timeline

    # -- archived history ------------------------------------------------------

    @property
    def archive(self) -> ArchivedTimeline:
        """The archived history, read only as far as questions need it."""
        with self._lock:
            if self._archive is None:
                from hudi_ray.core.timeline.archive import ArchivedTimeline

                self._archive = ArchivedTimeline(self._storage, self._config, self._archive_lender)
                self._archive_lender = None
            return self._archive

    def archived_completion_times(self, times: Iterable[str]) -> dict[str, str]:
        """Completion times of archived instants among ``times``, from the archive; those
        it does not hold are left out. Before table version 8 an instant's completion
        time is its instant time, and the archive is not read."""
        wanted = {t for t in times if self.is_archived(t)}
        if self._config.table_version < 8:
            return {t: t for t in wanted}
        return self.archive.completion_times(wanted)

    def archived_rollbacks(self) -> frozenset[str]:
        """Instants undone by the rollbacks in the archive (none without an archive)."""
        return self.archive.rolled_back() if self.archive.is_present() else frozenset()

    def rewrote_history(self) -> str | None:
        """Whether the active timeline shows that instants before it were archived: an
        active write that rewrote a file group no active write created (an update of a
        file written before the active timeline, or a replace of such a group). Says
        which; None when no active write shows it."""
        created: set[tuple[str, str]] = set()
        for instant in self._data:
            for partition, ids in self.replaced_file_ids(instant).items():
                for file_id in ids:
                    if (partition, file_id) not in created:
                        return f"instant {instant.timestamp} replaced file group {file_id}, written before"
            for stat in self.write_stats(instant):
                group = (stat["partitionPath"], stat["fileId"])
                previous = stat.get("prevCommit")
                if group not in created and previous not in (None, "", "null"):
                    return f"instant {instant.timestamp} rewrote file group {group[1]}, last written at {previous}"
                created.add(group)
        return None

    def archived_data_instants(self) -> list[HudiInstant]:
        """Completed data instants of the archived history, oldest first (reads the
        whole archive's index: only for questions about every write)."""
        found = [i for i in self.archive.instants(DATA_ACTIONS) if self.is_archived(i.timestamp)]
        self.archive.preload_metadata()  # whoever asks for every write reads their metadata next
        return found

    def find(self, ts: str) -> HudiInstant | None:
        for i in self._data:
            if i.timestamp == ts:
                return i
        return None

    # -- metadata ------------------------------------------------------------

    def _instant_path(self, instant: HudiInstant) -> str:
        return f"{self._config.timeline_path}/{instant.file_name}"

    def _read_raw(self, instant: HudiInstant) -> bytes:
        if not instant.file_name:
            raise HudiTimelineError(f"Instant {instant.timestamp} has no file on the active timeline")
        with self._lock:
            raw = self._raw.pop(instant.file_name, None)
        if raw is None and not self._fetched_together and instant.is_completed and instant.action in DATA_ACTIONS:
            self._fetch_data_instants()
            with self._lock:
                raw = self._raw.pop(instant.file_name, None)
        return raw if raw is not None else self._storage.read_bytes(self._instant_path(instant))

    def _reuse_decoded(self, previous: HudiTimeline) -> None:
        """Take over ``previous``'s decoded and checked metadata of instants
        completed on both. A completed instant's file is never rewritten (a
        rollback removes it, and its instant then is no longer listed), so a
        reader following the timeline decodes, and on an object store fetches,
        each commit once, not once per reload."""
        names = {i.file_name for i in self.instants if i.file_name}
        with previous._lock:
            # Keyed by file name: entries under a bare timestamp are left behind.
            kept = {k: v for k, v in previous._metadata.items() if k in names}
        self._metadata.update(kept)
        self._archive_lender = previous._archive or previous._archive_lender

    def _start_fetch(self) -> None:
        """On an object store, start fetching every completed data instant's
        file as soon as the timeline is listed: a plan reads them all (file
        listings, schemas, checks), one by one they cost a round trip each, and
        meanwhile the plan goes on (the metadata table's own chain of requests)."""
        if self._storage.is_local:
            return
        wanted = [i for i in self._data if i.file_name and i.file_name not in self._metadata]
        if len(wanted) <= 1:
            return
        storage = self._storage

        async def fetch_all() -> list[bytes | BaseException]:
            jobs = (storage.read_bytes_async(self._instant_path(i)) for i in wanted)
            return list(await asyncio.gather(*jobs, return_exceptions=True))

        self._fetching = (wanted, storage.submit(fetch_all()))

    def _fetch_data_instants(self) -> None:
        """Take what ``_start_fetch`` fetched, the first time a data instant's
        file is needed. A file whose fetch failed is read alone later, and
        reports its own error."""
        with self._fetch_lock:
            if self._fetched_together:
                return
            self._fetched_together = True
            fetching, self._fetching = self._fetching, None
            if fetching is None:
                return
            wanted, future = fetching
            try:
                blobs = future.result()
            except Exception as exc:
                log.debug("Fetching the commit files of %s together failed: %s", self._storage.base_url, exc)
                return
            with self._lock:
                for i, raw in zip(wanted, blobs):
                    if isinstance(raw, bytes) and i.file_name not in self._metadata:
                        self._raw[i.file_name] = raw

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_fetching"] = None  # a future of this process
        return state

    def _resolve(self, instant: HudiInstant) -> HudiInstant:
        """The timeline's instant for ``instant`` (which may carry only a timestamp)."""
        resolved = instant if instant.file_name else self.find(instant.timestamp)
        if resolved is None:
            raise HudiTimelineError(f"Instant {instant.timestamp} is not a completed instant on the timeline")
        return resolved

    def get_instant_metadata(self, instant: HudiInstant) -> dict[str, Any]:
        return self._load_metadata(instant)[0]

    def _load_metadata(self, instant: HudiInstant) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
        """An instant's metadata and, for completed data instants, its validated write
        stats; decoded and checked once per instant."""
        if instant.archived:
            return self._load_archived(instant)
        key = instant.file_name or instant.timestamp
        with self._lock:
            cached = self._metadata.get(key)
        if cached is not None:
            return cached
        resolved = self._resolve(instant)
        where = self._storage.uri(self._instant_path(resolved))
        raw = self._read_raw(resolved)
        stats: list[dict[str, Any]] | None = None
        if resolved.action in DATA_ACTIONS and resolved.is_completed:
            # Completed data instants always carry metadata; an empty file is
            # damage, and read as "wrote nothing" it hides the instant's rows.
            if not raw.strip():
                raise HudiTimelineError(
                    f"Completed instant {resolved.timestamp} ({resolved.action}) has an empty metadata file {where}"
                )
            meta = decode_instant_metadata(raw, where)
            stats = validate_commit_metadata(
                meta,
                resolved.action,
                f"{where} (instant {resolved.timestamp})",
                paths_where=self._metadata_where(resolved),
                base=self._storage.base_url,
            )
        else:
            meta = decode_instant_metadata(raw, where)
            if resolved.action == CLEAN and resolved.is_completed:
                validate_clean_metadata(meta, f"{where} (instant {resolved.timestamp})")
        with self._lock:
            self._metadata[key] = (meta, stats)
        return meta, stats

    def _load_archived(self, instant: HudiInstant) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
        key = f"archived:{instant.timestamp}"
        with self._lock:
            cached = self._metadata.get(key)
        if cached is not None:
            return cached
        meta, where = self.archive.metadata(instant.timestamp)
        stats: list[dict[str, Any]] | None = None
        if instant.action in DATA_ACTIONS:
            stats = validate_commit_metadata(meta, instant.action, where, base=self._storage.base_url)
        elif instant.action == CLEAN:
            validate_clean_metadata(meta, where)
        with self._lock:
            self._metadata[key] = (meta, stats)
        return meta, stats

    def get_instant_metadata_in_json(self, instant: HudiInstant) -> str:
        resolved = self._resolve(instant)
        raw = self._read_raw(resolved)
        if raw.startswith(AVRO_MAGIC):
            return json.dumps(self.get_instant_metadata(resolved), default=str)
        # Layout-1 metadata already is JSON; hand it back as written.
        decode_instant_metadata(raw, self._storage.uri(self._instant_path(resolved)))
        return raw.decode("utf-8")

    def write_stats(self, instant: HudiInstant) -> list[dict[str, Any]]:
        """Every write stat of an instant that names a file, across partitions, each
        with its ``partitionPath``; paths already checked to stay inside the table."""
        meta, stats = self._load_metadata(instant)
        if stats is None:  # not a completed data instant: checked on each call
            if "partitionToWriteStats" not in meta:
                return []
            resolved = self._resolve(instant)
            where = self._metadata_where(resolved)
            stats = validate_commit_metadata(meta, resolved.action, where, base=self._storage.base_url)
        return list(stats)

    def write_files(self, instants: Sequence[HudiInstant]) -> WriteFiles:
        """The files ``instants`` wrote (the stats ``write_stats`` gives) and their
        operations, as columns. The archived commits' metadata is walked by compiled
        code, many at once; whatever it leaves goes through ``write_stats``."""
        from hudi_ray.core.timeline.write_files import WriteFiles

        archived = [place for place, i in enumerate(instants) if i.archived]
        parts: list[tuple[list[int], WriteFiles]] = []
        if archived:
            for places, files in self.archive.write_files([instants[place].timestamp for place in archived]):
                parts.append(([archived[k] for k in places], files))
        taken = {place for places, _ in parts for place in places}
        rest = [(place, i) for place, i in enumerate(instants) if place not in taken]
        operations = [self.get_instant_metadata(i).get("operationType") for _, i in rest]
        stats = [self.write_stats(i) for _, i in rest]
        parts.append(([place for place, _ in rest], WriteFiles.of_stats(operations, stats)))
        return WriteFiles.assemble(len(instants), parts)

    def _metadata_where(self, instant: HudiInstant) -> str:
        return (
            f"the commit metadata of instant {instant.timestamp} ({instant.action}) at "
            f"{self._storage.uri(self._instant_path(instant))}"
        )

    def replaced_file_ids(self, instant: HudiInstant) -> dict[str, list[str]]:
        if instant.action != REPLACE_COMMIT:
            return {}
        meta = self.get_instant_metadata(instant)
        return {p: list(ids or []) for p, ids in (meta.get("partitionToReplaceFileIds") or {}).items()}

    # -- schema --------------------------------------------------------------

    def get_latest_avro_schema(self) -> str:
        """The writer schema of the latest data instant carrying one (else the
        create schema), checked to parse with valid Avro names; a failure names
        the file it comes from."""
        schema = self._latest_avro_schema()
        if schema is None:
            raise HudiSchemaError(
                f"No schema found for {self._storage.base_url}: no commit carries one and "
                "hoodie.table.create.schema is not set"
            )
        return schema

    def has_schema(self) -> bool:
        """Whether the table has a schema yet. A table without one (no commit
        carries one, no create schema: a table without commits) reads nothing;
        a schema that is there but damaged is an error, not a missing one."""
        return self._latest_avro_schema() is not None

    def _latest_avro_schema(self) -> str | None:
        if self._avro_schema is not None:
            return self._avro_schema
        for instant in reversed(self._data):
            meta = self.get_instant_metadata(instant)
            schema = (meta.get("extraMetadata") or {}).get("schema")
            if schema:
                parse_avro_schema(schema, f"the writer schema in {self._metadata_where(instant)}")
                self._avro_schema = schema
                return schema
        create = self._config.get("hoodie.table.create.schema")
        if create:
            parse_avro_schema(create, f"hoodie.table.create.schema in {self._config.source}")
            self._avro_schema = create
            return create
        return None

    def get_latest_schema(self) -> pa.Schema:
        text = self.get_latest_avro_schema()
        return avro_to_arrow_schema(parse_avro_schema(text, "latest commit schema"), "latest commit schema")


def archive_errors() -> tuple[type[HudiCoreError], ...]:
    """What reading the archive raises on damage or absence of its files."""
    return (HudiCorruptFileError, HudiFileNotFoundError, HudiTimelineError, HudiUnsafePathError)
