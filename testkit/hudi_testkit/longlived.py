"""Long-lived tables: hundreds of commits over many file groups, with the table
services a production table runs (compaction, clustering, cleaning, rollbacks of
failed writes, archiving), and the rows a reader must return.

The writers of this package make the data commits (upserts, inserts, deletes of
random rows; a key always stays in its partition); :mod:`hudi_testkit.services`
runs the services. The generator keeps its own model of the table (every live
row, which keys each file group's base file holds, each group's file slices) and
takes the expected rows from it, never from reading the table back.

The scenario that matters most: compaction leaves some MERGE_ON_READ file groups
("slow" ones) alone for longer than the archive window, so their latest slices
hold log files written by delta commits that are no longer on the active
timeline.

With ``metadata`` (table version 9) the table has a metadata table (files, column
stats, partition stats, record index and a secondary index on ``label``) that every
write and every service keeps up to date, as Hudi does (see
:mod:`hudi_testkit.services`), and whose own timeline is archived after the data
table's, keeping every delta commit of an instant the data table still has active.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa

from hudi_ray.core.base_file import parse_base_file_name
from hudi_ray.core.timeline import COMMIT, DELTA_COMMIT, HudiInstant
from hudi_testkit import services
from hudi_testkit.archive import archive_as_hudi, archive_instants, instants_hudi_would_archive
from hudi_testkit.bloom import BloomFilterSpec
from hudi_testkit.common import format_instant_time, list_instants, parse_instant_time
from hudi_testkit.cow import CommitResult, CowTableSpec, CowTableWriter
from hudi_testkit.errors import WriteSpecError
from hudi_testkit.metadata_table import METADATA_DIR, MetadataTableOptions
from hudi_testkit.mor import MorTableWriter

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
RECORD_KEY = "key"
PARTITION_FIELD = "part"
DATA_SCHEMA = pa.schema(
    [
        pa.field(RECORD_KEY, pa.string(), nullable=False),
        pa.field(PARTITION_FIELD, pa.string(), nullable=False),
        pa.field("seq", pa.int64()),  # the number of the write commit that wrote the row
        pa.field("value", pa.float64()),
        pa.field("label", pa.string()),
    ]
)
DATA_COLUMNS = DATA_SCHEMA.names
_LABELS = ("alpha", "beta", "gamma", "delta", None)
SECONDARY_INDEX = "label"  # with ``metadata``: the secondary index on the label column, by that name
_COMMIT_ACTIONS = frozenset({COMMIT, DELTA_COMMIT, "replacecommit"})
_EPOCH = datetime(2024, 3, 1, tzinfo=timezone.utc)

# A row of the model: data values (in DATA_SCHEMA order), commit time and sequence number.
Values = tuple[str, str, int, float, str | None]


@dataclass(frozen=True)
class LongLivedSpec:
    """What to generate. Counts are of write commits (services come on top)."""

    table_type: str  # "COPY_ON_WRITE" | "MERGE_ON_READ"
    table_version: int  # 6 or 9
    commits: int = 300
    partitions: int = 4
    keys: int = 2000
    rows_per_commit: int = 40
    seed: int = 0
    compaction_every: int = 5  # MOR: a compaction every N delta commits, over a subset of file groups
    clustering_every: int = 50  # a clustering of a few small groups of one partition every N commits
    clean_retained: int = 10  # KEEP_LATEST_COMMITS: file slices the last N commits need stay
    rollback_every: int = 37  # a failed write, then its rollback, every N commits
    # The rollbacks fail to delete the failed writes' files (reported in failedDeleteFiles).
    rollback_leaves_files: bool = False
    archive: bool = True  # archive at Hudi's defaults (keep 20..30) after each step
    metadata: bool = False  # table version 9: a metadata table every write and service keeps up to date
    # False: after the initial load (the table's first write) writes only update and delete
    # keys the table holds; no write that completes inserts a new key (a failed write still
    # does, and its rollback undoes it). Compaction, clustering, cleaning, rollbacks and
    # archival run as ever.
    new_keys_after_load: bool = True
    rows_per_file: int | None = None  # rows a write puts in a new base file; None: max(20, keys / (4 * partitions))

    def __post_init__(self) -> None:
        if self.table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise WriteSpecError(f"table_type must be {COPY_ON_WRITE} or {MERGE_ON_READ}, got {self.table_type!r}")
        if self.table_version not in (6, 9):
            raise WriteSpecError(f"table_version must be 6 or 9, got {self.table_version}")
        if self.metadata and self.table_version < 9:
            raise WriteSpecError("metadata needs table version 9")
        if self.commits < 1 or self.partitions < 1 or self.rows_per_commit < 4:
            raise WriteSpecError("commits and partitions must be positive, rows_per_commit at least 4")
        if self.keys < 4 * self.partitions:
            raise WriteSpecError("keys must be at least four per partition")
        if self.rows_per_file is not None and self.rows_per_file < 1:
            raise WriteSpecError("rows_per_file must be positive")
        for name in ("compaction_every", "clustering_every", "clean_retained", "rollback_every"):
            if getattr(self, name) < 1:
                raise WriteSpecError(f"{name} must be positive")

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def slow_stretch(self) -> int:
        """Write commits a slow MOR file group's slice lives before it may be compacted:
        longer than the active timeline's 30 commits, so its first logs' commits get archived."""
        return max(50, 10 * self.compaction_every)


@dataclass(frozen=True)
class LatestSlice:
    """A live file group's latest slice: files relative to the base path, and the
    delta commit that wrote each log file (table version 6 names do not say)."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    log_commits: tuple[str, ...]


@dataclass(frozen=True)
class LongLivedTable:
    path: Path
    spec: LongLivedSpec
    expected: pa.Table  # the latest snapshot's rows (DATA_COLUMNS), sorted by key
    commits: list[str]  # completed write instants (the writers' commits), in order
    written: dict[str, pa.Table]  # write instant -> rows it upserted (DATA_COLUMNS)
    deleted: dict[str, list[str]]  # write instant -> keys it deleted
    commit_times: dict[str, str]  # live key -> _hoodie_commit_time a snapshot must show
    services: dict[str, str]  # service instant -> "compaction" | "clustering" | "clean" | "rollback"
    # failed write instant -> files it wrote (relative), all rolled back (deleted unless
    # the spec's rollbacks leave them)
    rolled_back: dict[str, list[str]]
    completion_times: dict[str, str]  # v8+: every completed instant -> its completion time
    archived: list[str]  # instants archived off the active timeline, as the archiver reported them
    latest_slices: dict[tuple[str, str], LatestSlice]
    locations: dict[str, tuple[str, str]]  # live key -> (partition path, file id) of the group holding it
    metadata_archived: list[str] = field(default_factory=list)  # instants archived off the MDT's timeline


# -- writers with the model's key index ------------------------------------------------------------------


class _ModelIndex:
    """Locates keys with the generator's (partition, key) -> file id map instead of
    reading every base file's keys on each commit, the writers' simple index, whose
    cost grows with the file groups of a long-lived table. The map is what those
    files hold: the generator keeps it from the files it writes and reads."""

    key_index: dict[tuple[str, str], str] | None = None

    def _locate(self, keys: pa.Array, parts: pa.Array) -> pa.Array | None:
        index = self.key_index
        if index is None:
            return super()._locate(keys, parts)  # type: ignore[misc]
        if not index:
            return None
        return pa.array([index.get(pk) for pk in zip(parts.to_pylist(), keys.to_pylist())], pa.string())

    def _find(self, keys: pa.Array, parts: pa.Array | None) -> tuple[pa.Array, pa.Array, pa.Array]:
        index = self.key_index
        if index is None or parts is None:
            return super()._find(keys, parts)  # type: ignore[misc]
        found = [(i, index.get((p, k)), p) for i, (p, k) in enumerate(zip(parts.to_pylist(), keys.to_pylist()))]
        found = [f for f in found if f[1] is not None]
        return (
            pa.array([f[0] for f in found], pa.int64()),
            pa.array([f[1] for f in found], pa.string()),
            pa.array([f[2] for f in found], pa.string()),
        )


# Base files carry Hudi's bloom filters of their keys, sized for the generator's small files.
_BLOOM = BloomFilterSpec(num_entries=1000, max_entries=10_000)


class _IndexedCowWriter(_ModelIndex, CowTableWriter):
    pass


class _IndexedMorWriter(_ModelIndex, MorTableWriter):
    pass


def _data_table(values: list[Values]) -> pa.Table:
    columns = [list(c) for c in zip(*values)] if values else [[] for _ in DATA_COLUMNS]
    return pa.table(columns, schema=DATA_SCHEMA)


# -- the model ------------------------------------------------------------------------------------------


@dataclass
class _Slice:
    base_instant: str
    base_file: str | None  # relative to the base path
    started_at: int  # write commits made when the slice began
    logs: list[str] = field(default_factory=list)
    log_commits: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return ([self.base_file] if self.base_file else []) + self.logs


@dataclass
class _Group:
    partition_path: str
    file_id: str
    order: int  # creation order: ties break on it, not on random file ids, so a seed gives one table
    slow: bool  # compacted only after ``slow_stretch`` commits
    keys: set[str]  # keys the current base file holds (MOR: deleted ones too, until compacted)
    slices: list[_Slice]
    replaced_at: str | None = None  # the clustering that replaced it; files stay until cleaned

    @property
    def latest(self) -> _Slice:
        return self.slices[-1]


class _Generator:
    def __init__(self, path: Path, spec: LongLivedSpec) -> None:
        self.path = path
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.clock = _EPOCH
        self.rows: dict[str, tuple[Values, str, str]] = {}  # key -> (values, commit time, seqno)
        self.groups: dict[tuple[str, str], _Group] = {}
        self.data_instants: list[HudiInstant] = []  # completed, incl. compactions and clusterings
        self.commits: list[str] = []
        self.written: dict[str, pa.Table] = {}
        self.deleted: dict[str, list[str]] = {}
        self.services: dict[str, str] = {}
        self.rolled_back: dict[str, list[str]] = {}
        self.completion_times: dict[str, str] = {}
        self.archived: list[str] = []
        self.metadata_archived: list[str] = []
        self.created = 0  # file groups made so far: every third is slow
        self.keys_by_partition: list[list[str]] = [[] for _ in range(spec.partitions)]
        for n in range(spec.keys):
            self.keys_by_partition[n % spec.partitions].append(f"k{n:06d}")
        self.rows_per_file = spec.rows_per_file or max(20, spec.keys // (spec.partitions * 4))
        self.index: dict[tuple[str, str], str] = {}  # (partition path, key) -> file id holding it
        self.writer: CowTableWriter

    # -- time ---------------------------------------------------------------------------------------

    def tick(self) -> str:
        """The next instant time: a second or more after anything before, so every
        completion (at most 0.9 s after its instant) comes before the next instant."""
        self.clock += timedelta(milliseconds=self.rng.randint(1000, 4000))
        return format_instant_time(self.clock)

    def completion(self, instant: str) -> str | None:
        if self.spec.table_version < 8:
            return None
        return format_instant_time(parse_instant_time(instant) + timedelta(milliseconds=self.rng.randint(1, 900)))

    # -- rows -----------------------------------------------------------------------------------------

    @staticmethod
    def partition_of(key: str, partitions: int) -> str:
        return f"p{int(key[1:]) % partitions}"

    def make_rows(self, keys: list[str], seq: int) -> pa.Table:
        cols: dict[str, list[object]] = {name: [] for name in DATA_COLUMNS}
        for k in keys:
            cols[RECORD_KEY].append(k)
            cols[PARTITION_FIELD].append(self.partition_of(k, self.spec.partitions))
            cols["seq"].append(seq)
            cols["value"].append(round(self.rng.uniform(-1000, 1000), 2))
            cols["label"].append(self.rng.choice(_LABELS))
        return pa.table(cols, schema=DATA_SCHEMA)

    def key_table(self, keys: list[str]) -> pa.Table:
        parts = [self.partition_of(k, self.spec.partitions) for k in keys]
        return pa.table({RECORD_KEY: keys, PARTITION_FIELD: parts}, schema=pa.schema(list(DATA_SCHEMA)[:2]))

    def absent_keys(self, partition: int) -> list[str]:
        return [k for k in self.keys_by_partition[partition] if k not in self.rows]

    def group_rows(self, partition_path: str, file_id: str, keys: set[str]) -> services.GroupRows:
        """A base file's rows from the model: the live ones of ``keys``, by key."""
        live = sorted(k for k in keys if k in self.rows)
        values = [self.rows[k][0] for k in live]
        data = _data_table(values)
        return services.GroupRows(
            partition_path,
            file_id,
            data,
            pa.array([self.rows[k][1] for k in live], pa.string()),
            pa.array([self.rows[k][2] for k in live], pa.string()),
        )

    # -- writes -----------------------------------------------------------------------------------------

    def metadata_options(self) -> MetadataTableOptions | bool:
        """The metadata table: every index the reader prunes with, HFiles written fast, the
        bootstrap completed on the generator's clock (before the first commit)."""
        if not self.spec.metadata:
            return False
        return MetadataTableOptions(
            column_stats_columns=("_hoodie_record_key", "key", "seq", "label"),
            record_index_file_groups=4,
            secondary_indexes=((SECONDARY_INDEX, "label"),),
            secondary_index_file_groups=2,
            bloom_filters=True,
            hfile_compression_level=1,
            created_at=format_instant_time(self.clock),
        )

    def create(self) -> None:
        spec = self.spec
        initial = sorted(self.rng.sample(range(spec.keys), spec.keys // 2))
        table = self.make_rows([f"k{n:06d}" for n in initial], 0)
        mdt = self.metadata_options()
        instant = self.tick()
        if spec.is_mor:
            mor = _IndexedMorWriter.create(
                self.path,
                table,
                table_name="long_lived",
                record_key=RECORD_KEY,
                partition_field=PARTITION_FIELD,
                table_version=spec.table_version,
                commit_time=instant,
                rows_per_file=self.rows_per_file,
                metadata_table=mdt,
                bloom_filter=_BLOOM,
            )
            self.writer = mor
            result = mor.commits[-1]
        else:
            cow_spec = CowTableSpec("long_lived", RECORD_KEY, PARTITION_FIELD, table_version=spec.table_version)
            cow = _IndexedCowWriter.create(
                self.path,
                cow_spec,
                DATA_SCHEMA,
                rows_per_file=self.rows_per_file,
                metadata_table=mdt,
                bloom_filter=_BLOOM,
            )
            self.writer = cow
            result = cow.upsert(table, commit_time=instant)
        self.absorb(result, table, [])
        assert isinstance(self.writer, _ModelIndex)
        self.writer.key_index = self.index  # from now on: every group the writer knows is in it

    def write_step(self, seq: int) -> None:
        """One write commit: updates of live keys of a few file groups (sometimes with
        new keys), inserts of new keys into one partition, or deletes of live keys;
        without ``new_keys_after_load``, updates of live keys in place of the inserts."""
        spec = self.spec
        live = sorted(self.rows)
        r = self.rng.random()
        instant = self.tick()
        if r < 0.12 and len(live) > spec.rows_per_commit:
            keys = sorted(self.hot_keys(max(1, spec.rows_per_commit // 4)))
            if isinstance(self.writer, MorTableWriter):
                result = self.writer.delete(self.key_table(keys), commit_time=instant)
            else:
                result = services.delete_cow(self.writer, self.key_table(keys), commit_time=instant)
            self.absorb(result, None, keys)
            return
        if r < 0.27 and not spec.new_keys_after_load:
            keys = self.hot_keys(spec.rows_per_commit // 2)
        elif r < 0.27:
            partition = self.rng.randrange(spec.partitions)
            absent = self.absent_keys(partition)
            keys = self.rng.sample(absent, min(len(absent), spec.rows_per_commit // 2))
        else:
            keys = self.hot_keys(spec.rows_per_commit)
            if spec.new_keys_after_load and self.rng.random() < 0.3:
                absent = self.absent_keys(self.rng.randrange(spec.partitions))
                keys += self.rng.sample(absent, min(len(absent), self.rng.randint(1, 5)))
        if not keys:  # a full key space: update instead
            keys = self.rng.sample(live, min(len(live), spec.rows_per_commit))
        table = self.make_rows(sorted(keys), seq)
        self.absorb(self.writer.upsert(table, commit_time=instant), table, [])

    def hot_keys(self, n: int) -> list[str]:
        """Up to ``n`` live keys of a few random file groups: updates touch some groups per
        commit, not all of them, as in most tables (and each log file costs a write)."""
        groups = [g for g in self.live_groups() if any(k in self.rows for k in g.keys)]
        chosen = self.rng.sample(groups, min(len(groups), self.rng.randint(2, 6)))
        pool = sorted(k for g in chosen for k in g.keys if k in self.rows)
        return self.rng.sample(pool, min(len(pool), n))

    def absorb(self, result: CommitResult, upserted: pa.Table | None, deleted: list[str]) -> None:
        """Bring the model up to a completed write commit."""
        instant = result.instant_time
        if upserted is not None:
            for i, values in enumerate(zip(*(upserted[c].to_pylist() for c in DATA_COLUMNS))):
                self.rows[values[0]] = (values, instant, f"{instant}_0_{i}")
        for k in deleted:
            self.rows.pop(k, None)
        for stat in result.write_stats:
            if not stat.path:
                continue
            key = (stat.partition_path, stat.file_id)
            if parse_base_file_name(stat.path.rsplit("/", 1)[-1]) is not None:
                group = self.groups.get(key) or self.new_group(*key)
                self.set_keys(group, set(services.base_file_keys(self.path, stat.path)))
                group.slices.append(_Slice(instant, stat.path, len(self.commits)))
            else:  # a log file: always of the latest slice, as writes and services never overlap
                self.groups[key].latest.logs.append(stat.path)
                self.groups[key].latest.log_commits.append(instant)
        self.commits.append(instant)
        self.written[instant] = upserted if upserted is not None else DATA_SCHEMA.empty_table()
        self.deleted[instant] = list(deleted)
        self.completed(instant, DELTA_COMMIT if self.spec.is_mor else COMMIT, result.completion_time)

    def set_keys(self, group: _Group, keys: set[str]) -> None:
        """The keys of a group's new base file, in the group and in the key index."""
        p = group.partition_path
        for k in group.keys - keys:
            if self.index.get((p, k)) == group.file_id:
                del self.index[(p, k)]
        for k in keys:
            self.index[(p, k)] = group.file_id
        group.keys = keys

    def new_group(self, partition_path: str, file_id: str) -> _Group:
        group = _Group(partition_path, file_id, self.created, self.created % 3 == 0, set(), [])
        self.created += 1
        self.groups[(partition_path, file_id)] = group
        return group

    def completed(self, instant: str, action: str, completion: str | None, data: bool = True) -> None:
        if completion is not None:
            self.completion_times[instant] = completion
        if data:
            self.data_instants.append(HudiInstant(instant, action, completion_timestamp=completion))

    def failed_write_and_rollback(self, seq: int) -> None:
        """A write that dies after writing its files (updates and new keys), then its rollback."""
        keys = self.hot_keys(self.spec.rows_per_commit // 2)
        absent = self.absent_keys(self.rng.randrange(self.spec.partitions))
        keys += self.rng.sample(absent, min(len(absent), 3))
        table = self.make_rows(sorted(keys), seq)
        instant = self.tick()
        failed = services.failed_write(self.writer, lambda: self.writer.upsert(table, commit_time=instant))
        rb = self.tick()
        done = services.rollback(
            self.writer, rb, self.completion(rb), failed, leave_files=self.spec.rollback_leaves_files
        )
        self.rolled_back[instant] = [s.path for s in failed.write_stats if s.path]
        self.services[rb] = "rollback"
        self.completed(rb, services.ROLLBACK, done.completion_time, data=False)

    # -- services ---------------------------------------------------------------------------------------

    def live_groups(self) -> list[_Group]:
        return [g for g in self.groups.values() if g.replaced_at is None]

    def compaction(self) -> None:
        """Compact up to half the eligible slices with logs, most logs first; slow
        groups are eligible only once their slice is ``slow_stretch`` commits old."""
        assert isinstance(self.writer, MorTableWriter)
        now = len(self.commits)
        eligible = [
            g
            for g in self.live_groups()
            if g.latest.logs
            and any(k in self.rows for k in g.keys)
            and (not g.slow or now - g.latest.started_at >= self.spec.slow_stretch)
        ]
        if not eligible:
            return
        eligible.sort(key=lambda g: (-len(g.latest.logs), g.order))
        chosen = eligible[: max(1, (len(eligible) + 1) // 2)]
        work = [(self.slice_files(g), self.group_rows(g.partition_path, g.file_id, g.keys)) for g in chosen]
        instant = self.tick()
        done = services.compact(self.writer, instant, self.completion(instant), work)
        for g, stat in zip(chosen, done.write_stats):
            self.set_keys(g, {k for k in g.keys if k in self.rows})
            g.slices.append(_Slice(instant, stat.path, now))
        self.services[instant] = "compaction"
        self.completed(instant, COMMIT, done.completion_time)

    def slice_files(self, g: _Group) -> services.SliceFiles:
        s = g.latest
        name = s.base_file.rsplit("/", 1)[-1] if s.base_file else None
        logs = tuple(rel.rsplit("/", 1)[-1] for rel in s.logs)
        return services.SliceFiles(g.partition_path, g.file_id, s.base_instant, name, logs)

    def clustering(self) -> None:
        """Rewrite the smallest few (2 to 6) file groups of the partition with the most groups as one."""
        by_partition: dict[str, list[_Group]] = {}
        for g in self.live_groups():
            by_partition.setdefault(g.partition_path, []).append(g)
        if not by_partition:
            return
        partition, candidates = max(by_partition.items(), key=lambda kv: (len(kv[1]), kv[0]))
        if len(candidates) < 2:
            return
        candidates.sort(key=lambda g: (sum(k in self.rows for k in g.keys), g.order))
        chosen = candidates[: min(6, max(2, len(candidates) // 3))]
        keys = {k for g in chosen for k in g.keys if k in self.rows}
        if not keys:
            return
        file_id = services.new_file_id()
        instant = self.tick()
        output = self.group_rows(partition, file_id, keys)
        done = services.cluster(
            self.writer, instant, self.completion(instant), [self.slice_files(g) for g in chosen], output
        )
        for g in chosen:
            g.replaced_at = instant
            self.set_keys(g, set())
        group = self.new_group(partition, file_id)
        self.set_keys(group, keys)
        group.slices.append(_Slice(instant, done.write_stats[0].path, len(self.commits)))
        self.services[instant] = "clustering"
        self.completed(instant, services.REPLACE_COMMIT, done.completion_time)

    def clean(self) -> None:
        """KEEP_LATEST_COMMITS: per file group, delete slices older than the earliest
        retained commit except the last one before it (queries as of that commit
        need it); delete replaced groups whose clustering is older than it."""
        retained = self.spec.clean_retained
        if len(self.data_instants) <= retained:
            return
        earliest = self.data_instants[-retained]
        files: list[str] = []
        for key, g in list(self.groups.items()):
            if g.replaced_at is not None:
                if g.replaced_at < earliest.timestamp:
                    files += [f for s in g.slices for f in s.files]
                    del self.groups[key]
                continue
            older = [s for s in g.slices[:-1] if s.base_instant < earliest.timestamp]
            for s in older[:-1]:
                files += s.files
                g.slices.remove(s)
        if not files:
            return
        instant = self.tick()
        last = self.data_instants[-1].timestamp
        done = services.clean(self.writer, instant, self.completion(instant), sorted(files), earliest, last)
        self.services[instant] = "clean"
        self.completed(instant, services.CLEAN, done.completion_time, data=False)

    def archive(self) -> None:
        archived = archive_as_hudi(self.path)
        self.archived += archived
        # The MDT's bound moves only when the data table archives; its archiver runs then.
        if self.spec.metadata and archived:
            self.metadata_archived += archive_metadata_table(self.path)

    # -- the run ----------------------------------------------------------------------------------------

    def run(self) -> LongLivedTable:
        spec = self.spec
        self.create()
        for seq in range(1, spec.commits):
            if seq % spec.rollback_every == 0:
                self.failed_write_and_rollback(seq)
            self.write_step(seq)
            if spec.is_mor and seq % spec.compaction_every == 0:
                self.compaction()
            if seq % spec.clustering_every == 0:
                self.clustering()
            self.clean()
            if spec.archive:
                self.archive()
        return self.result()

    def result(self) -> LongLivedTable:
        live = sorted(self.rows)
        values = [self.rows[k][0] for k in live]
        expected = _data_table(values)
        latest = {
            key: LatestSlice(
                g.partition_path,
                g.file_id,
                g.latest.base_instant,
                g.latest.base_file,
                tuple(g.latest.logs),
                tuple(g.latest.log_commits),
            )
            for key, g in self.groups.items()
            if g.replaced_at is None
        }
        return LongLivedTable(
            path=self.path,
            spec=self.spec,
            expected=expected,
            commits=list(self.commits),
            written=dict(self.written),
            deleted=dict(self.deleted),
            commit_times={k: self.rows[k][1] for k in live},
            services=dict(self.services),
            rolled_back=dict(self.rolled_back),
            completion_times=dict(self.completion_times),
            archived=list(self.archived),
            latest_slices=latest,
            locations={k: (p, fid) for (p, k), fid in self.index.items() if k in self.rows},
            metadata_archived=list(self.metadata_archived),
        )


def archive_metadata_table(base: Path, *, keep_min: int = 20, keep_max: int = 30) -> list[str]:
    """Archive the metadata table's timeline as Hudi's archiver does (``archive_as_hudi``'s choice,
    at the MDT's default 20..30), bounded as Hudi bounds a metadata table: nothing at or after the
    data table's earliest active commit (commit, delta commit or replace commit) or its earliest
    pending instant, so every data instant still active keeps its MDT delta commit (a reader
    takes the MDT as caught up with the data table only then). Returns the archived instant times."""
    mdt = base / METADATA_DIR
    data = list_instants(base / ".hoodie" / "timeline")
    first_commit = next((i.timestamp for i in data if i.is_completed and i.action in _COMMIT_ACTIONS), None)
    done = {i.timestamp for i in data if i.is_completed}
    first_pending = next((i.timestamp for i in data if i.timestamp not in done), None)
    bound = min((t for t in (first_commit, first_pending) if t is not None), default=None)
    choice = instants_hudi_would_archive(mdt, keep_min=keep_min, keep_max=keep_max)
    actions = {i.timestamp: i.action for i in list_instants(mdt / ".hoodie" / "timeline") if i.is_completed}
    commits = [t for t in choice if actions.get(t) in _COMMIT_ACTIONS and (bound is None or t < bound)]
    if not commits:
        return []
    # Hudi's choice is every completed instant up to its last commit: the oldest ones, a prefix.
    return archive_instants(mdt, len([t for t in choice if t <= commits[-1]]))


def write_long_lived_table(path: str | Path, spec: LongLivedSpec) -> LongLivedTable:
    """Write a long-lived table at ``path`` (which must not hold a table yet) as ``spec`` says."""
    return _Generator(Path(path).absolute(), spec).run()
