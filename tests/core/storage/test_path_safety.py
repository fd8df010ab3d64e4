"""Reads stay inside the table, and credentials stay out of reprs, errors and logs.

The crafted tables are copies of real ones (or tables the project's writers
make) in ``tmp_path``, each with a foreign file placed where the crafted path
leads, so that a read which escaped would find something to return.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import shutil
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

import hudi_ray.core.metadata.table as mdt_module
from hudi_ray import HudiTable, HudiTableBuilder, HudiTableNotFoundError, HudiUnsafePathError
from hudi_ray.core.config import parse_properties
from hudi_ray.core.exceptions import HudiConfigError, HudiStorageError
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import (
    contained_path,
    metadata_path_problem,
    move_credentials,
    redact_options,
    redact_text,
    split_credentials,
)
from hudi_ray.datasource import hudi_datasource
from hudi_ray.planner import HudiPlanner, planner_name
from hudi_testkit import write_cow_table
from hudi_testkit.metadata import WriteStat
from hudi_testkit.metadata_table import MetadataTableWriter
from tests.support import upload

TABLE = "sample_table/cow/v9_txns_simple_meta"
V6_TABLE = "sample_table/cow/v6_simplekeygen_nonhivestyle"


def _copy(table_path, name: str, tmp_path: Path) -> Path:
    """A copy two folders below ``tmp_path``, so '../../..' from inside it lands in ``tmp_path``."""
    dest = tmp_path / "a" / "table"
    shutil.copytree(table_path(name), dest)
    return dest


# -- the containment check -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("", ""),
        (".", ""),
        ("p/f.parquet", "p/f.parquet"),
        ("p//./f.parquet", "p/f.parquet"),
        ("p/../q/f", "q/f"),  # '..' that stays inside is only normalised
        ("/etc/passwd", "etc/passwd"),  # relative to the root by contract: never the real /etc
        ("%2e%2e/x", "%2e%2e/x"),  # never decoded, so just a strange name
        ("..%2fx", "..%2fx"),
        ("a:b/c", "a:b/c"),  # ':' is legal in partition values
    ],
)
def test_contained_path_keeps_paths_inside(rel: str, expected: str) -> None:
    assert contained_path(rel) == expected


@pytest.mark.parametrize(
    "rel",
    ["..", "../x", "a/../../x", "a/b/../../../x", "/../x", "../table_evil/f.parquet", "./../x"],
)
def test_contained_path_refuses_climbing_out(rel: str) -> None:
    assert contained_path(rel) is None


@pytest.mark.parametrize("rel", ["s3://other-bucket/t/f.parquet", "file:///etc/passwd", "gs://b/x", "S3A://b/x"])
def test_contained_path_refuses_uris(rel: str) -> None:
    assert contained_path(rel) is None


def test_local_storage_refuses_every_escape(tmp_path: Path) -> None:
    root = tmp_path / "table"
    (root / "p").mkdir(parents=True)
    (root / "p" / "f").write_bytes(b"inside")
    evil = tmp_path / "table_evil"
    evil.mkdir()
    (evil / "f").write_bytes(b"outside")
    (tmp_path / "x").write_bytes(b"outside")
    storage = Storage(str(root))
    assert storage.read_bytes("p/./f") == b"inside"
    assert storage.full_path("/p/f") == f"{root}/p/f"
    assert not storage.exists("%2e%2e/x")  # a literal name under the root, not the parent
    for rel in ("../table_evil/f", "../x", "p/../../x", f"file://{tmp_path}/x", "s3://other-bucket/x"):
        for call in (
            storage.read_bytes,
            storage.exists,
            storage.size,
            storage.list_dir,
            storage.child,
            storage.uri,
            storage.arrow_path,
            lambda r: storage.read_range(r, 0, 1),
        ):
            with pytest.raises(HudiUnsafePathError, match="leads outside the table"):
                call(rel)
    # A child storage (the metadata table's) is confined to its own root.
    child = storage.child("p")
    assert child.read_bytes("f") == b"inside"
    for rel in ("../p/f", "../../table_evil/f"):
        with pytest.raises(HudiUnsafePathError):
            child.read_bytes(rel)


@pytest.mark.parametrize("base", ["s3://bucket/table", "s3://bucket"])
def test_object_store_storage_refuses_other_buckets_and_siblings(base: str) -> None:
    storage = Storage(base)  # s3fs connects lazily: no server is needed to resolve paths
    root = base.removeprefix("s3://")
    assert storage.full_path("p/f.parquet") == f"{root}/p/f.parquet"
    assert storage.uri("p/f.parquet") == f"{base}/p/f.parquet"
    for rel in ("s3://other-bucket/table/f", "../table_evil/f", "../other-bucket/f", "p/../../f"):
        with pytest.raises(HudiUnsafePathError, match=base):
            storage.full_path(rel)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("region=eu", None),
        ("2024/01/02", None),
        ("v=1..2", None),
        ("region=eu/../../../elsewhere", "'.' or '..'"),
        ("./region=eu", "'.' or '..'"),
        ("/abs/path", "absolute"),
        ("s3://other-bucket/x", "URI"),
    ],
)
def test_metadata_path_problem(value: str, problem: str | None) -> None:
    found = metadata_path_problem(value)
    assert found is None if problem is None else problem in found


# -- paths from table metadata -----------------------------------------------------------------


def test_timeline_path_outside_the_table(table_path, tmp_path: Path) -> None:
    base = _copy(table_path, TABLE, tmp_path)
    shutil.copytree(base / ".hoodie" / "timeline", tmp_path / "elsewhere")
    props = base / ".hoodie" / "hoodie.properties"
    text = props.read_text("utf-8").replace("hoodie.timeline.path=timeline", "hoodie.timeline.path=../../../elsewhere")
    props.write_text(text, "utf-8")
    with pytest.raises(
        HudiUnsafePathError, match=r"hoodie\.timeline\.path='\.\./\.\./\.\./elsewhere' in .*hoodie\.properties"
    ):
        HudiTable(str(base))


def test_metadata_table_timeline_path_outside_the_table(table_path, tmp_path: Path) -> None:
    """Not a metadata table to ignore and read on without: a crafted one fails the read."""
    base = _copy(table_path, TABLE, tmp_path)
    props = base / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties"
    text = props.read_text("utf-8")
    assert "hoodie.timeline.path=timeline" in text
    props.write_text(text.replace("hoodie.timeline.path=timeline", "hoodie.timeline.path=../../../../.."), "utf-8")
    with pytest.raises(
        HudiUnsafePathError, match=r"hoodie\.timeline\.path=.* in .*metadata/\.hoodie/hoodie\.properties"
    ):
        HudiTable(str(base)).read()


def _crafted_mdt_table(tmp_path: Path) -> tuple[Path, Path]:
    """A v9 table whose metadata table lists a partition outside the table.

    Written by the project's writer; the MDT writer then records, as a later
    delta commit, a "write" into ``region=eu/../../../elsewhere`` holding a
    copy of a real base file, so its rows would be read if the path were followed.
    """
    base = tmp_path / "a" / "table"
    rows = pa.table({"id": ["1", "2", "3"], "region": ["eu", "us", "eu"], "seq": [1, 1, 1]})
    write_cow_table(
        base,
        rows,
        table_name="t",
        record_key="id",
        partition_field="region",
        precombine_field="seq",
        table_version=9,
        commit_time="20240101000000000",
        metadata_table=True,
    )
    eu = next((base / "region=eu").glob("*.parquet"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(eu, outside / eu.name)
    return base, eu


def _mdt_writer(base: Path) -> MetadataTableWriter:
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text("utf-8"))
    writer = MetadataTableWriter.load(base, props)
    assert writer is not None
    return writer


def test_metadata_table_partition_outside_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base, eu = _crafted_mdt_table(tmp_path)
    crafted = "region=eu/../../../elsewhere"
    stat = WriteStat(eu.name.split("_")[0], crafted, f"{crafted}/{eu.name}", file_size=eu.stat().st_size)
    _mdt_writer(base).commit("20240102000000000", True, [stat])
    table = HudiTable(str(base))
    with pytest.raises(
        HudiUnsafePathError, match=r"Partition 'region=eu/\.\./\.\./\.\./elsewhere' in record '__all_partitions__'"
    ):
        table.read()
    # The storage layer refuses it too, should a metadata source miss a check.
    monkeypatch.setattr(mdt_module, "check_metadata_path", lambda *args: None)
    with pytest.raises(HudiUnsafePathError, match=r"'region=eu/\.\./\.\./\.\./elsewhere/.*\.parquet' leads outside"):
        HudiTable(str(base)).read()


def test_metadata_table_file_name_outside_the_table(tmp_path: Path) -> None:
    base, eu = _crafted_mdt_table(tmp_path)
    writer = _mdt_writer(base)
    crafted = f"../../../elsewhere/{eu.name}"
    writer._files["region=eu"][crafted] = eu.stat().st_size
    stat = WriteStat(eu.name.split("_")[0], "region=eu", f"region=eu/{eu.name}", file_size=eu.stat().st_size)
    writer.commit("20240102000000000", True, [stat])
    with pytest.raises(HudiUnsafePathError, match=r"File name '\.\./\.\./\.\./elsewhere/.*' in record 'region=eu'"):
        HudiTable(str(base)).read()


def test_write_stat_path_outside_the_table(table_path, tmp_path: Path) -> None:
    base = _copy(table_path, TABLE, tmp_path)
    timeline = base / ".hoodie" / "timeline"
    newest = sorted(p for p in timeline.iterdir() if p.name.endswith(".commit") and "_" in p.name)[-1]
    reader = fastavro.reader(io.BytesIO(newest.read_bytes()))
    schema, records = reader.writer_schema, list(reader)
    stat = next(s for stats in records[0]["partitionToWriteStats"].values() for s in stats if s["path"])
    moved = stat["path"]
    stat["path"] = f"../../{moved}"
    out = io.BytesIO()
    fastavro.writer(out, schema, records)
    newest.write_bytes(out.getvalue())
    (tmp_path / moved).parent.mkdir(parents=True)
    shutil.copy(base / moved, tmp_path / moved)
    table = HudiTable(str(base))
    message = rf"Write stat path '\.\./\.\./{moved}' in the commit metadata of instant .* at .*{newest.name}"
    with pytest.raises(HudiUnsafePathError, match=message):
        table.compute_table_stats()  # samples a footer named by the newest commit's write stats
    with pytest.raises(HudiUnsafePathError, match=message):
        table.read()


def test_write_stat_path_outside_the_table_in_json_commit(table_path, tmp_path: Path) -> None:
    base = _copy(table_path, V6_TABLE, tmp_path)
    commit = sorted((base / ".hoodie").glob("*.commit"))[-1]
    meta = json.loads(commit.read_text("utf-8"))
    stats = next(iter(meta["partitionToWriteStats"].values()))
    stats[0]["path"] = "../../elsewhere/" + stats[0]["path"]
    commit.write_text(json.dumps(meta), "utf-8")
    with pytest.raises(HudiUnsafePathError, match=rf"'\.\./\.\./elsewhere/.*' in the commit metadata .*{commit.name}"):
        HudiTable(str(base)).get_file_slices()


def test_partition_key_of_write_stats_outside_the_table(table_path, tmp_path: Path) -> None:
    base = _copy(table_path, V6_TABLE, tmp_path)
    commit = sorted((base / ".hoodie").glob("*.commit"))[-1]
    meta = json.loads(commit.read_text("utf-8"))
    partition, stats = next(iter(meta["partitionToWriteStats"].items()))
    crafted = f"/{partition}"
    for s in stats:
        s["partitionPath"] = crafted
    meta["partitionToWriteStats"] = {crafted: stats}
    commit.write_text(json.dumps(meta), "utf-8")
    with pytest.raises(HudiUnsafePathError, match=r"Partition '/.*' in the commit metadata .* absolute path"):
        HudiTable(str(base)).get_file_slices()


# -- credentials -------------------------------------------------------------------------------

KEY_ID = "AKIAEXAMPLEKEYID"
SECRET = "wJalr/XUtnFEMI+K7MDENG"
TOKEN = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"
CREDS_URI = f"s3://{KEY_ID}:{SECRET}@bucket/warehouse/t"


def _no_secret(text: str) -> None:
    for secret in (SECRET, TOKEN, "XUtnFEMI", KEY_ID):
        assert secret not in text


def test_builder_repr_hides_credentials() -> None:
    builder = (
        HudiTableBuilder.from_base_uri(CREDS_URI)
        .with_storage_options({"aws_secret_access_key": SECRET, "aws_session_token": TOKEN, "aws_region": "eu-west-1"})
        .with_storage_option("aws_access_key_id", KEY_ID)
        .with_option("aws_token", TOKEN)
        .with_hudi_option("hoodie.read.as.of.timestamp", "20240101000000000")
    )
    text = repr(builder)
    _no_secret(text)
    assert "s3://***@bucket/warehouse/t" in text
    assert "'aws_region': 'eu-west-1'" in text and "20240101000000000" in text
    assert str(builder) == text


@pytest.mark.parametrize(
    ("uri", "bare", "user", "password"),
    [
        (CREDS_URI, "s3://bucket/warehouse/t", KEY_ID, SECRET),
        ("s3a://k:s%2Fx@b/t", "s3a://b/t", "k", "s/x"),
        ("s3://bucket/p@q/t", "s3://bucket/p@q/t", None, None),
        ("hdfs://u:p@nn:8020/t", "hdfs://nn:8020/t", "u", "p"),
        (
            "abfs://container@account.dfs.core.windows.net/t",
            "abfs://container@account.dfs.core.windows.net/t",
            None,
            None,
        ),
        ("/local/path", "/local/path", None, None),
    ],
)
def test_split_credentials(uri: str, bare: str, user: str | None, password: str | None) -> None:
    assert split_credentials(uri) == (bare, user, password)


def test_redaction_helpers() -> None:
    text = redact_text(f"Cannot read {CREDS_URI}/x and gs://tok@b/x; abfs://c@acct/x and s3://b/a:b@c stay")
    _no_secret(text)
    assert "s3://***@bucket/warehouse/t/x" in text and "gs://***@b/x" in text
    assert "abfs://c@acct/x" in text and "s3://b/a:b@c" in text
    shown = redact_options({"aws_secret_access_key": SECRET, "token": TOKEN, "key": KEY_ID, "endpoint": "http://h"})
    assert shown == {"aws_secret_access_key": "***", "token": "***", "key": "***", "endpoint": "http://h"}
    uri, opts = move_credentials(CREDS_URI, {"aws_region": "x", "aws_secret_access_key": "given"})
    assert uri == "s3://bucket/warehouse/t"
    assert opts == {"aws_region": "x", "aws_secret_access_key": "given", "aws_access_key_id": KEY_ID}


def test_storage_hides_uri_credentials() -> None:
    storage = Storage(CREDS_URI, {"aws_session_token": TOKEN})
    assert storage.base_url == "s3://bucket/warehouse/t"
    assert storage.options["aws_secret_access_key"] == SECRET  # moved to the options, still used
    _no_secret(repr(storage))
    _no_secret(storage.uri("p/f.parquet"))


def test_storage_errors_hide_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = Storage(str(tmp_path))

    def boom(*args, **kwargs):
        raise RuntimeError(f"denied for {CREDS_URI}/x")

    # A local read opens the file itself (not through fsspec): the failure comes from there.
    monkeypatch.setattr("builtins.open", boom)
    with pytest.raises(HudiStorageError) as info:
        storage.read_bytes("f")
    _no_secret(str(info.value))
    assert "s3://***@bucket" in str(info.value)


def test_ray_entry_points_hide_credentials() -> None:
    with pytest.raises(HudiConfigError) as info:
        hudi_datasource(CREDS_URI, batch_size=0)
    _no_secret(str(info.value))
    with pytest.raises(HudiConfigError) as info:
        HudiPlanner(CREDS_URI, refresh_interval_s=-1)
    _no_secret(str(info.value))
    _no_secret(planner_name(CREDS_URI))


def test_s3_credentials_in_uri_are_used_and_never_shown(
    s3_endpoint: str, table_path, caplog: pytest.LogCaptureFixture
) -> None:
    bucket = upload(s3_endpoint, "creds", [TABLE], table_path)
    endpoint = {"aws_region": "us-east-1", "aws_endpoint_url": s3_endpoint, "aws_allow_http": "true"}
    uri = f"s3://{KEY_ID}:{SECRET}@{bucket}/{TABLE}"
    with caplog.at_level(logging.DEBUG, logger="hudi_ray"):
        table = HudiTableBuilder.from_base_uri(uri).with_storage_options(endpoint).build()
        assert sum(b.num_rows for b in table.read()) > 0
        assert table.base_url == f"s3://{bucket}/{TABLE}"
        _no_secret(repr(table))
        plan = table.plan()
        _no_secret(repr(plan))
        _no_secret(repr(plan.context))
        with pytest.raises(HudiTableNotFoundError) as info:
            HudiTableBuilder.from_base_uri(f"s3://{KEY_ID}:{SECRET}@{bucket}/nope").with_storage_options(
                endpoint
            ).build()
        assert f"s3://{bucket}/nope" in str(info.value)
        _no_secret(str(info.value))
        # The Ray planner logs its table and ships the URI with every snapshot.
        planner = HudiPlanner(uri, storage_options=endpoint)
        snapshot = asyncio.run(planner.snapshot())
        assert snapshot.table_uri == f"s3://{bucket}/{TABLE}"
        _no_secret(repr(snapshot))
        assert asyncio.run(planner.compute_table_stats()) is not None
    assert f"Planner of s3://{bucket}/{TABLE}" in caplog.text
    _no_secret(caplog.text)


# -- credentials kept in the URI (clients that authenticate from it) ---------------


@pytest.fixture
def basic_auth_server(tmp_path: Path):
    """An HTTP server of ``tmp_path`` answering only requests with basic auth ``user:pw``."""
    import base64
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    expected = "Basic " + base64.b64encode(b"user:pw").decode()

    class Handler(SimpleHTTPRequestHandler):
        def _authorized(self) -> bool:
            if self.headers.get("Authorization") == expected:
                return True
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="t"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False

        def do_GET(self) -> None:
            if self._authorized():
                super().do_GET()

        def do_HEAD(self) -> None:
            if self._authorized():
                super().do_HEAD()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_http_credentials_stay_in_the_uri_for_basic_auth(tmp_path: Path, basic_auth_server: int) -> None:
    (tmp_path / "f.txt").write_bytes(b"hello")
    port = basic_auth_server
    storage = Storage(f"http://user:pw@127.0.0.1:{port}")
    # aiohttp does basic auth from the URL; ``username``/``password`` options
    # would reach it as unknown keyword arguments.
    assert storage.options == {}
    assert storage.read_bytes("f.txt") == b"hello"
    assert storage.base_url == f"http://***@127.0.0.1:{port}"
    assert storage.uri("f.txt") == f"http://***@127.0.0.1:{port}/f.txt"
    assert ":pw@" not in repr(storage)
    with pytest.raises(HudiStorageError) as info:
        storage.read_bytes("missing.txt")
    assert ":pw@" not in str(info.value) and "***@127.0.0.1" in str(info.value)
    # Without the credentials the server refuses: the URI's are what authenticated.
    with pytest.raises(HudiStorageError):
        Storage(f"http://127.0.0.1:{port}").read_bytes("f.txt")


def test_webhdfs_credentials_stay_in_the_uri() -> None:
    storage = Storage("webhdfs://alice:pw@namenode:9870/warehouse/t")
    assert storage.options == {}
    assert (storage.fs.user, storage.fs.password) == ("alice", "pw")
    assert storage.fs.url == "http://namenode:9870/webhdfs/v1"
    assert storage.fs._strip_protocol(storage.full_path("p/f.parquet")) == "/warehouse/t/p/f.parquet"
    assert storage.base_url == "webhdfs://***@namenode:9870/warehouse/t"
    assert ":pw@" not in repr(storage)


@pytest.mark.parametrize(
    ("uri", "bare", "options"),
    [
        (CREDS_URI, "s3://bucket/warehouse/t", {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}),
        ("s3n://k:s@b/t", "s3n://b/t", {"aws_access_key_id": "k", "aws_secret_access_key": "s"}),
        ("gs://k:s@b/t", "gs://b/t", {"username": "k", "password": "s"}),
        ("ftp://u:p@host/t", "ftp://host/t", {"username": "u", "password": "p"}),
        ("https://u:p@host/t", "https://u:p@host/t", {}),
        ("webhdfs://u:p@nn:9870/t", "webhdfs://u:p@nn:9870/t", {}),
        ("hdfs://u:p@nn:8020/t", "hdfs://u:p@nn:8020/t", {}),
    ],
)
def test_move_credentials_only_where_the_client_takes_options(uri: str, bare: str, options: dict) -> None:
    assert move_credentials(uri, {}) == (bare, options)


def test_redaction_keeps_paths_holding_an_at_sign() -> None:
    assert redact_text("Cannot read hdfs://nn:8020/tbl/p=a@b/f.parquet") == (
        "Cannot read hdfs://nn:8020/tbl/p=a@b/f.parquet"
    )
    assert redact_text("see https://host:443/a/b@c/d") == "see https://host:443/a/b@c/d"
    assert redact_text("hdfs://u:p@nn:8020/t/p=a@b") == "hdfs://***@nn:8020/t/p=a@b"
    # An object store's secret may hold '/': still redacted.
    assert redact_text(f"Cannot read {CREDS_URI}/p=a@b") == "Cannot read s3://***@bucket/warehouse/t/p=a@b"
    # A URI that is not a credential does not hide one right after it.
    text = redact_text(f"hdfs://nn:8020/a,{CREDS_URI}")
    _no_secret(text)
    assert text == "hdfs://nn:8020/a,s3://***@bucket/warehouse/t"


@pytest.mark.parametrize(
    "given",
    [
        {"key": "explicit-key", "secret": "explicit-secret"},
        {"aws_access_key_id": "explicit-key", "aws_secret_access_key": "explicit-secret"},
        {"Access_Key_Id": "explicit-key", "secret_access_key": "explicit-secret"},
    ],
)
def test_explicit_credentials_win_over_the_uri(given: dict) -> None:
    uri, opts = move_credentials(CREDS_URI, given)
    assert uri == "s3://bucket/warehouse/t"
    assert opts == given  # no URI credential added beside an alias of it
    storage = Storage(CREDS_URI, given)
    assert (storage.fs.key, storage.fs.secret) == ("explicit-key", "explicit-secret")
    # Per credential: an explicit key alone still takes the URI's secret.
    assert move_credentials(CREDS_URI, {"key": "k"})[1] == {"key": "k", "aws_secret_access_key": SECRET}


def test_s3n_credentials_reach_the_client() -> None:
    storage = Storage(f"s3n://{KEY_ID}:{SECRET}@bucket/t", {"aws_region": "eu-west-1"})
    assert (storage.fs.key, storage.fs.secret) == (KEY_ID, SECRET)
    assert storage.base_url == "s3n://bucket/t"
    _no_secret(repr(storage))


@pytest.mark.parametrize("scheme", ["s3", "https"])
def test_planner_name_tells_credentials_apart(scheme: str) -> None:
    alice = planner_name(f"{scheme}://alice:pw1@bucket/warehouse/t")
    bob = planner_name(f"{scheme}://bob:pw2@bucket/warehouse/t")
    bare = planner_name(f"{scheme}://bucket/warehouse/t")
    assert len({alice, bob, bare}) == 3
    for name in (alice, bob):
        assert "alice" not in name and "bob" not in name and "pw" not in name
        assert name.startswith("hudi-planner-t-")


def test_planner_name_same_for_uri_or_option_credentials() -> None:
    opts = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}
    assert planner_name(CREDS_URI) == planner_name("s3://bucket/warehouse/t", storage_options=opts)
    _no_secret(planner_name(CREDS_URI))


def test_ray_entry_points_hide_credentials_kept_in_the_uri() -> None:
    with pytest.raises(HudiConfigError) as info:
        hudi_datasource("https://alice:hunter2@host/warehouse/t", batch_size=0)
    assert "hunter2" not in str(info.value) and "https://***@host/warehouse/t" in str(info.value)
    assert "hunter2" not in planner_name("https://alice:hunter2@host/warehouse/t")
