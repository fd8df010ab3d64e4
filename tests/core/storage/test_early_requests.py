"""Questions asked early on an object store (``Storage.ask_early``): a table's load asks
its properties, both timeline folders, its root, its metadata table's first files and
the walk for partitions together, so that the answers arrive in a few round trips, not
one after another. Each answer is taken once, replaced when asked again, and a failure
reaches whoever takes it, as if they had asked themselves."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
import time
from collections.abc import Callable, Iterator
from urllib.parse import unquote

import pytest

from hudi_ray import HudiReadOptions, HudiTableBuilder
from hudi_ray.core.exceptions import HudiFileNotFoundError
from hudi_ray.core.meta_client import context
from hudi_ray.core.storage import Storage
from tests.support import assert_reads_as_local, upload

pytest.importorskip("s3fs")
from hudi_testkit.s3proxy import S3Proxy, storage_options

BUCKET = "early"
V6 = "sample_table/cow/v6_complexkeygen_hivestyle"  # no metadata table: partitions walked in storage
V9 = "sample_table/cow/v9_txns_simple_meta"  # listed by its metadata table
# The v6 table's partitions, two levels deep.
V6_PARTITIONS = ["byteField=10/shortField=300", "byteField=20/shortField=100", "byteField=30/shortField=100"]


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path) -> str:
    return upload(s3_endpoint, BUCKET, [V6, V9], table_path)


@pytest.fixture(scope="module")
def proxy(s3_endpoint: str, bucket: str) -> Iterator[S3Proxy]:
    with S3Proxy(s3_endpoint, record=True) as p:
        yield p


@pytest.fixture
def fresh(proxy: S3Proxy) -> S3Proxy:
    proxy.configure_defaults()
    proxy.configure(record=True)
    proxy.reset()
    return proxy


def _target(r: dict) -> str:
    path = unquote(r["path"])
    if "prefix=" in path:
        return path.split("prefix=", 1)[1].split("&", 1)[0]
    return path.split(f"/{BUCKET}/", 1)[-1].split("?", 1)[0]


def _asked(proxy: S3Proxy) -> list[str]:
    """What each finished request asked for: a listed prefix (ending in /) or a read key."""
    return [_target(r) for r in proxy.requests()]


def _listed_after(proxy: S3Proxy, later: str, earlier: list[str]) -> bool:
    """Whether the listing of ``later`` arrived after the first listings of ``earlier`` ended."""
    first: dict[str, dict] = {}
    for r in proxy.requests():
        first.setdefault(_target(r), r)
    ends = [first[e]["arrived_ms"] + first[e]["ms"] for e in earlier]
    return first[later]["arrived_ms"] >= max(ends)


def _until(proxy: S3Proxy, done: Callable[[list[str]], bool]) -> list[str]:
    """The requests once ``done`` holds for them (answers asked early arrive on their own)."""
    deadline = time.monotonic() + 30
    while True:
        asked = _asked(proxy)
        if done(asked) or time.monotonic() > deadline:
            return asked
        time.sleep(0.05)


def _table(proxy: S3Proxy, name: str):
    assert proxy.url is not None
    return (
        HudiTableBuilder.from_base_uri(f"s3://{BUCKET}/{name}").with_storage_options(storage_options(proxy.url)).build()
    )


def test_partitions_the_commits_name_are_asked_with_the_load(fresh: S3Proxy, table_path) -> None:
    """Two levels down, the partitions the commits wrote are listed with the load, beside the
    walk's first level: a round trip sooner than the walk finds them. Each once, after the
    timeline, and a read takes them."""
    table = _table(fresh, V6)
    partitions = [f"{V6}/{p}/" for p in V6_PARTITIONS]
    wanted = [f"{V6}/", *(f"{V6}/{p.split('/')[0]}/" for p in V6_PARTITIONS), *partitions]
    asked = _until(fresh, lambda got: all(w in got for w in wanted))
    assert all(w in asked for w in wanted), asked
    for partition in partitions:
        assert _listed_after(fresh, partition, [f"{V6}/.hoodie/", f"{V6}/.hoodie/timeline/"]), partition
    pruned = table.get_file_slices(HudiReadOptions(filters=[("byteField", "=", "10")]))
    assert [s.partition_path for s in pruned] == [V6_PARTITIONS[0]]
    assert_reads_as_local(table, HudiTableBuilder.from_base_uri(str(table_path(V6))).build(), V6)
    asked = _asked(fresh)
    for prefix in wanted:
        assert asked.count(prefix) == 1, (prefix, asked)


def test_the_walk_for_partitions_is_asked_with_the_load(
    fresh: S3Proxy, table_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Beyond this many folders named by commits, only the walk is asked ahead.
    monkeypatch.setattr(context, "PLANNING_TUNABLES", dataclasses.replace(context.PLANNING_TUNABLES, early_listings=5))
    table = _table(fresh, V6)
    wanted = [f"{V6}/", *(f"{V6}/{p.split('/')[0]}/" for p in V6_PARTITIONS)]
    # No plan has been asked for, yet the levels above the partitions are listed (the walk
    # ran ahead); the partitions themselves are not, until a plan keeps them.
    asked = _until(fresh, lambda got: all(w in got for w in wanted))
    assert all(w in asked for w in wanted), asked
    time.sleep(0.5)
    assert not any(f"{V6}/{p}/" in _asked(fresh) for p in V6_PARTITIONS)
    pruned = table.get_file_slices(HudiReadOptions(filters=[("byteField", "=", "10")]))
    assert [s.partition_path for s in pruned] == [V6_PARTITIONS[0]]
    asked = _asked(fresh)
    assert [p for p in V6_PARTITIONS if f"{V6}/{p}/" in asked] == [V6_PARTITIONS[0]]
    # The root is listed after the timeline: never older than the instants it goes with.
    assert _listed_after(fresh, f"{V6}/", [f"{V6}/.hoodie/", f"{V6}/.hoodie/timeline/"])
    assert_reads_as_local(table, HudiTableBuilder.from_base_uri(str(table_path(V6))).build(), V6)
    asked = _asked(fresh)
    # Taken from the early answers, not asked again. (``.hoodie/`` is not among them: s3fs
    # lists a folder's parent when the folder is empty, as ``.hoodie/timeline/`` is here.)
    for prefix in [*wanted, *(f"{V6}/{p}/" for p in V6_PARTITIONS), f"{V6}/.hoodie/hoodie.properties"]:
        assert asked.count(prefix) == 1, (prefix, asked)


def test_the_metadata_tables_instants_are_asked_with_the_load(fresh: S3Proxy, table_path) -> None:
    table = _table(fresh, V9)
    mdt_timeline = f"{V9}/.hoodie/metadata/.hoodie/timeline/"

    def mdt_instants(got: list[str]) -> list[str]:
        return [g for g in got if g.startswith(mdt_timeline) and g.endswith(".deltacommit")]

    # Read as soon as the metadata table's timeline is listed, before any plan asks.
    asked = _until(fresh, lambda got: len(mdt_instants(got)) >= 5)
    assert len(mdt_instants(asked)) >= 5, asked
    assert_reads_as_local(table, HudiTableBuilder.from_base_uri(str(table_path(V9))).build(), V9)
    # The metadata table's files are listed after its timeline, never before.
    mdt = f"{V9}/.hoodie/metadata"
    assert _listed_after(fresh, f"{mdt}/files/", [f"{mdt}/.hoodie/", f"{mdt}/.hoodie/timeline/"])
    asked = _asked(fresh)
    instants = mdt_instants(asked)
    assert len(instants) == len(set(instants)), instants  # each read once
    for prefix in [f"{V9}/.hoodie/timeline/", f"{V9}/.hoodie/metadata/files/", f"{V9}/.hoodie/hoodie.properties"]:
        assert asked.count(prefix) == 1, (prefix, asked)


def test_a_table_loaded_again_lists_storage_as_it_is_then(fresh: S3Proxy, s3_endpoint: str) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    first = _table(fresh, V6)  # its load asks the walk; nothing takes the answers
    _until(fresh, lambda got: f"{V6}/byteField=20/" in got)
    added = f"{BUCKET}/{V6}/byteField=20/shortField=999/.hoodie_partition_metadata"
    fs.pipe(added, b"#partition metadata")
    try:
        again = first.reloaded()
        storage = again._context.storage
        assert "shortField=999" in [e.name for e in storage.list_dir("byteField=20")]
    finally:
        fs.rm(added)


def _storage(proxy: S3Proxy) -> Storage:
    assert proxy.url is not None
    return Storage(f"s3://{BUCKET}/{V6}", storage_options(proxy.url))


def test_questions_queued_for_an_earlier_load_are_dropped(fresh: S3Proxy) -> None:
    """A load queues questions on the I/O loop (the walk, partitions by name, answers
    followed). One that runs after the next load has begun (``forget_early``) asks nothing
    and keeps nothing: that load must not take a listing older than its own timeline."""
    time.sleep(0.5)  # earlier tests' walks, still running, end
    fresh.reset()
    storage = _storage(fresh)

    # The loop is held busy while the earlier load's questions are queued and the next begins.
    async def hold() -> None:
        time.sleep(0.5)  # blocks the loop itself: what is queued after waits

    blocker = storage.submit(hold())
    storage.ask_early_new([V6_PARTITIONS[0]])
    storage.ask_early_tree(2)
    storage.forget_early()  # the next load begins before the loop runs them
    blocker.result()
    storage.submit(asyncio.sleep(0.2)).result()
    assert len(storage._early) == 0
    assert not [a for a in _asked(fresh) if a.startswith(f"{V6}/")], _asked(fresh)
    # Asked for the current load, they are kept and taken.
    storage.ask_early_new([V6_PARTITIONS[0]])
    _until(fresh, lambda got: f"{V6}/{V6_PARTITIONS[0]}/" in got)
    assert any(e.name.endswith(".parquet") for e in storage.list_dir(V6_PARTITIONS[0]))
    assert _asked(fresh).count(f"{V6}/{V6_PARTITIONS[0]}/") == 1


def test_an_answer_asked_early_is_taken_once(fresh: S3Proxy) -> None:
    storage = _storage(fresh)
    key = ".hoodie/hoodie.properties"
    storage.ask_early(reads=[key], listings=[".hoodie"])
    first = storage.read_bytes(key)
    assert b"hoodie.table.name" in first
    assert any(i.name == "hoodie.properties" for i in storage.list_dir(".hoodie"))
    assert _asked(fresh).count(f"{V6}/{key}") == 1
    assert storage.read_bytes(key) == first  # taken already: asked again
    assert _asked(fresh).count(f"{V6}/{key}") == 2
    assert _asked(fresh).count(f"{V6}/.hoodie/") == 1


def test_a_failure_reaches_the_one_who_takes_the_answer(fresh: S3Proxy) -> None:
    storage = _storage(fresh)
    storage.ask_early(reads=[".hoodie/no-such-file"])
    with pytest.raises(HudiFileNotFoundError, match="no-such-file"):
        storage.read_bytes(".hoodie/no-such-file")
    storage.ask_early(listings=["no-such-folder"])
    with pytest.raises(HudiFileNotFoundError, match=r"Directory not found: s3://early/.*/no-such-folder"):
        storage.list_dir("no-such-folder")


def test_an_answer_asked_again_replaces_the_one_not_taken(fresh: S3Proxy, s3_endpoint: str) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    path = f"{BUCKET}/{V6}/.hoodie/scratch-answer"
    fs.pipe(path, b"old")
    try:
        storage = _storage(fresh)
        storage.ask_early(reads=[".hoodie/scratch-answer"])
        _until(fresh, lambda got: f"{V6}/.hoodie/scratch-answer" in got)
        fs.pipe(path, b"new")
        storage.ask_early(reads=[".hoodie/scratch-answer"])
        assert storage.read_bytes(".hoodie/scratch-answer") == b"new"
    finally:
        fs.rm(path)


def test_a_storage_with_answers_in_flight_ships_without_them(fresh: S3Proxy) -> None:
    # Reader tasks get the table's storage pickled; its answers asked early stay behind.
    storage = _storage(fresh)
    storage.ask_early(reads=[".hoodie/hoodie.properties"], listings=[""])
    shipped = pickle.loads(pickle.dumps(storage))
    assert b"hoodie.table.name" in shipped.read_bytes(".hoodie/hoodie.properties")
    assert b"hoodie.table.name" in storage.read_bytes(".hoodie/hoodie.properties")


def test_a_local_table_asks_nothing_early(table_path) -> None:
    storage = Storage(str(table_path(V6)))
    storage.ask_early(reads=[".hoodie/hoodie.properties"], listings=[""])
    storage.ask_early_tree(2)
    assert len(storage._early) == 0
