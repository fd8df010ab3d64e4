"""Reads through a loopback S3 API behind a proxy that delays, throttles, drops
and stalls requests (``hudi_testkit.s3proxy``): the fetch layer keeps many
requests in flight but never more than its cap, retries what is worth
retrying, and turns what keeps failing into an error naming the file."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator

import pytest

from hudi_ray import HudiReadOptions, HudiStorageError, HudiTableBuilder
from tests.support import assert_reads_as_local, row_set, to_table, upload

pytest.importorskip("s3fs")
from hudi_testkit.s3proxy import S3Proxy, storage_options

BUCKET = "faults"
MOR = "sample_table/mor/avro/v9_txns_simple_meta"
COW = "sample_table/cow/v9_txns_simple_meta"
V6 = "sample_table/cow/v6_complexkeygen_hivestyle"
TABLES = [MOR, COW, V6]
SECRET = "s3cr3t-never-shown-0123456789"


@pytest.fixture(scope="module")
def bucket(s3_endpoint: str, table_path) -> str:
    return upload(s3_endpoint, BUCKET, TABLES, table_path)


@pytest.fixture(scope="module")
def proxy(s3_endpoint: str, bucket: str) -> Iterator[S3Proxy]:
    with S3Proxy(s3_endpoint) as p:
        yield p


@pytest.fixture
def fresh(proxy: S3Proxy) -> S3Proxy:
    proxy.configure_defaults()
    proxy.reset()
    return proxy


def _options(proxy: S3Proxy) -> dict[str, str]:
    assert proxy.url is not None
    return storage_options(proxy.url, secret=SECRET)


def _remote(proxy: S3Proxy, name: str, **hudi: str):
    builder = HudiTableBuilder.from_base_uri(f"s3://{BUCKET}/{name}").with_storage_options(_options(proxy))
    return builder.with_hudi_options(hudi).build() if hudi else builder.build()


def _rows(batches) -> set:
    table = to_table(batches)
    return row_set(table.drop_columns([c for c in table.column_names if c == "_hoodie_file_name"]))


def test_requests_go_out_together_within_the_cap(fresh: S3Proxy, table_path) -> None:
    fresh.configure(latency_ms=20)
    expected = _rows(HudiTableBuilder.from_base_uri(str(table_path(MOR))).build().read())
    assert _rows(_remote(fresh, MOR).read()) == expected
    many = fresh.reset()
    # Commit files, the metadata table's files and the slices' files are fetched together.
    assert many["max_in_flight"] >= 8, many
    assert _rows(_remote(fresh, MOR, **{"hoodie.io.max.requests": "3"}).read()) == expected
    capped = fresh.reset()
    assert capped["max_in_flight"] <= 3, capped
    assert capped["requests"] > 10, capped


@pytest.mark.parametrize("name", TABLES)
def test_throttling_and_dropped_connections_give_the_same_rows(fresh: S3Proxy, name: str, table_path) -> None:
    local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    # Retries wait a little before each try; a generous try budget keeps 10% faults from failing the read.
    fresh.configure(slowdown_fraction=0.05, drop_fraction=0.05, seed=7)
    remote = _remote(fresh, name, **{"hoodie.io.max.attempts": "8"})
    assert _rows(remote.read()) == _rows(local.read())
    assert _rows(list(remote.read_stream())) == _rows(local.read())
    opts = HudiReadOptions().with_as_of_timestamp(local.get_timeline().data_instants[0].timestamp)
    assert _rows(remote.read(opts)) == _rows(local.read(opts))
    stats = fresh.stats()
    assert stats["faults"], stats  # the proxy did throttle and drop along the way


def test_listings_that_span_pages_read_whole(fresh: S3Proxy, table_path) -> None:
    """Partitions and the timeline listed two keys a page still give every file and row
    (moto does not check signatures, so the proxy may rewrite the signed query)."""
    fresh.configure(list_page_size=2)
    for name in TABLES:
        local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
        assert_reads_as_local(_remote(fresh, name), local, name)
    assert fresh.stats()["faults"].get("list_pages_continued", 0) >= 10


def _a_base_file(table_path, name: str) -> str:
    local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    return next(s.base_file_name for s in local.get_file_slices() if s.base_file_name)


def test_a_file_that_always_fails_is_an_error_naming_it(fresh: S3Proxy, table_path, caplog) -> None:
    base = _a_base_file(table_path, COW)
    table = _remote(fresh, COW, **{"hoodie.io.max.attempts": "2"})
    fresh.configure(fail_path=base)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(HudiStorageError, match=re.escape(base)) as info:
        table.read()
    assert SECRET not in str(info.value)
    assert SECRET not in repr(info.value.__cause__)
    assert SECRET not in caplog.text
    assert SECRET not in repr(table)


def test_a_stalled_request_times_out_naming_the_file(fresh: S3Proxy, table_path) -> None:
    base = _a_base_file(table_path, COW)
    table = _remote(fresh, COW, **{"hoodie.io.request.timeout.seconds": "1", "hoodie.io.max.attempts": "1"})
    fresh.configure(stall_path=base, stall_seconds=60)
    started = time.monotonic()
    with pytest.raises(HudiStorageError, match=re.escape(base)) as info:
        table.read()
    # One timed-out try by the prefetch, and one by the direct read it falls back to.
    assert time.monotonic() - started < 20
    assert "no answer within 1 s" in str(info.value)


def test_a_stalled_planning_request_times_out(fresh: S3Proxy) -> None:
    fresh.configure(stall_path="hoodie.properties", stall_seconds=60)
    started = time.monotonic()
    with pytest.raises(HudiStorageError, match=r"hoodie\.properties"):
        _remote(fresh, COW, **{"hoodie.io.request.timeout.seconds": "1", "hoodie.io.max.attempts": "2"})
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hoodie.io.max.requests", "0"),
        ("hoodie.io.max.requests", "many"),
        ("hoodie.io.request.timeout.seconds", "-1"),
        ("hoodie.io.request.timeout.seconds", "inf"),
        ("hoodie.io.max.attempts", "0"),
        ("hoodie.io.max.bytes.in.flight", "1.5"),
    ],
)
def test_bad_io_options_are_config_errors(key: str, value: str, table_path) -> None:
    from hudi_ray import HudiConfigError

    with pytest.raises(HudiConfigError, match=key):
        HudiTableBuilder.from_base_uri(str(table_path(COW))).with_hudi_options({key: value}).build()


def test_explain_reports_requests_and_round_trips(fresh: S3Proxy, table_path) -> None:
    table = _remote(fresh, MOR)
    table.get_schema()  # takes the commit files the build started fetching: none is left in flight
    fresh.reset()
    plan = table.explain(HudiReadOptions(filters=[("txn_id", "!=", "x")]))
    sent = fresh.stats()["requests"]
    assert plan.requests == sent > 0
    # Files are fetched together: fewer round trips than requests.
    assert plan.round_trips is not None and 1 <= plan.round_trips < plan.requests
    assert f"{plan.requests} requests in {plan.round_trips} round trips" in str(plan)
    assert HudiTableBuilder.from_base_uri(str(table_path(MOR))).build().explain().requests is None


def test_a_table_built_again_sees_commits_made_since(fresh: S3Proxy, s3_endpoint: str, table_path) -> None:
    """Clients are shared by the process: no listing of an earlier build may hide a new commit."""
    import s3fs

    local = table_path(COW)
    timeline = local / ".hoodie" / "timeline"
    last = max(p for p in timeline.iterdir() if p.suffix == ".commit" and "_" in p.name)
    fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": s3_endpoint})
    target = f"{BUCKET}/fresh/{COW}"
    fs.put(str(local), target, recursive=True)
    fs.rm(f"{target}/.hoodie/timeline/{last.name}")  # the last commit is still in flight
    before = _rows(_remote(fresh, f"fresh/{COW}").read())
    fs.put(str(last), f"{target}/.hoodie/timeline/{last.name}")
    after = _rows(_remote(fresh, f"fresh/{COW}").read())
    assert after == _rows(HudiTableBuilder.from_base_uri(str(local)).build().read())
    assert before != after
