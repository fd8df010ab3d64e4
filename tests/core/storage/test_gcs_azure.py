"""Tables on Google Cloud Storage and Azure Blob Storage (ADLS Gen2), through loopback
emulators the tests start themselves (gcp-storage-emulator; Azurite, installed by ``./dev``),
reached with hudi-rs's option keys:

* every shared table reads like the same table on local disk (snapshot, time travel,
  incremental, a filter with a projection);
* behind the fault proxy, throttling (GCS 429 and 503, Azure 503 and 500) and dropped
  connections cost retries, not rows; a file that keeps failing, or stalls, is an error
  naming it; requests go out together, within ``hoodie.io.max.requests``;
* the clients retry nothing themselves and GCS never waits on gcsfs's bucket-type probe;
* the option keys map onto gcsfs's and adlfs's arguments, and secrets never show.
"""

from __future__ import annotations

import datetime
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hudi_ray import HudiCoreError, HudiStorageError, HudiTableBuilder
from hudi_ray.core.storage import Storage
from tests.core.storage.test_object_store_tables import TABLES, _assert_same, _read, _reads
from tests.support import TablePath, assert_reads_as_local, row_set, to_table

gcsfs = pytest.importorskip("gcsfs")
adlfs = pytest.importorskip("adlfs")
from hudi_ray.core.storage.azure import AzureBlobFileSystem, adlfs_kwargs  # noqa: E402
from hudi_ray.core.storage.gcs import GCSFileSystem, gcsfs_kwargs  # noqa: E402
from hudi_testkit.emulators import AZURITE_ACCOUNT, AZURITE_KEY, Azurite, GcsEmulator, azurite_binary  # noqa: E402
from hudi_testkit.s3proxy import S3Proxy  # noqa: E402

COW = "sample_table/cow/v9_txns_simple_meta"
MOR = "sample_table/mor/avro/v9_txns_simple_meta"
V6 = "sample_table/cow/v6_complexkeygen_hivestyle"
FAULT_TABLES = [MOR, COW, V6]


@dataclass
class Store:
    """One emulated store: where a table's URI points, and the options that reach it."""

    name: str
    emulator_url: str
    fs: Any  # the filesystem tables are uploaded with

    def uri(self, table: str) -> str:
        return f"gs://tables/{table}" if self.name == "gcs" else f"abfs://tables/{table}"

    def options(self, endpoint: str | None = None) -> dict[str, str]:
        """hudi-rs's keys for the emulator, or for a proxy in front of it at ``endpoint``."""
        url = endpoint or self.emulator_url
        if self.name == "gcs":
            return {"google_base_url": url, "google_skip_signature": "true"}
        return {
            "azure_storage_account_name": AZURITE_ACCOUNT,
            "azure_storage_account_key": AZURITE_KEY,
            "azure_storage_endpoint": f"{url}/{AZURITE_ACCOUNT}",
            "azure_allow_http": "true",
        }


@pytest.fixture(scope="module", params=["gcs", "azure"])
def store(request: pytest.FixtureRequest, table_path: TablePath, tables_root: Path) -> Iterator[Store]:
    for name in TABLES:
        table_path(name)  # extracted under tables_root
    if request.param == "gcs":
        with GcsEmulator(preload={"tables": tables_root}) as emulator:
            yield Store("gcs", emulator.url, GCSFileSystem(endpoint_url=emulator.url, token="anon"))
        return
    binary = azurite_binary()
    if binary is None:
        pytest.fail("Azurite is not installed: ./dev test installs it with npm (or set AZURITE_BLOB)")
    with Azurite(binary) as emulator:
        fs = AzureBlobFileSystem(connection_string=emulator.connection_string())
        fs.mkdir("tables")
        for name in TABLES:
            fs.put(str(table_path(name)), f"tables/{name}", recursive=True)
        yield Store("azure", emulator.url, fs)


def _remote(store: Store, name: str, endpoint: str | None = None, **hudi: str):
    builder = HudiTableBuilder.from_base_uri(store.uri(name)).with_storage_options(store.options(endpoint))
    return builder.with_hudi_options(hudi).build() if hudi else builder.build()


@pytest.mark.parametrize("name", TABLES)
def test_every_table_reads_equal_to_local(store: Store, name: str, table_path: TablePath) -> None:
    try:
        local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    except HudiCoreError as exc:
        with pytest.raises(type(exc)):
            _remote(store, name)
        return
    remote = _remote(store, name)
    assert [(i.timestamp, i.completed_at) for i in remote.get_timeline().data_instants] == [
        (i.timestamp, i.completed_at) for i in local.get_timeline().data_instants
    ]
    everything = _read(local)
    for what, opts in _reads(local, everything):
        expected = everything if what == "snapshot" else _read(local, opts)
        _assert_same(_read(remote, opts), expected, f"{store.name} {name}: {what}")


# -- faults, behind the proxy ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def proxy(store: Store) -> Iterator[S3Proxy]:
    with S3Proxy(store.emulator_url) as p:
        yield p


@pytest.fixture
def fresh(proxy: S3Proxy) -> S3Proxy:
    proxy.configure_defaults()
    proxy.reset()
    return proxy


def _rows(batches) -> list[str]:
    table = to_table(batches)
    return row_set(table.drop_columns([c for c in table.column_names if c == "_hoodie_file_name"]))


@pytest.mark.parametrize("name", FAULT_TABLES)
def test_throttling_and_dropped_connections_give_the_same_rows(
    store: Store, fresh: S3Proxy, name: str, table_path: TablePath
) -> None:
    local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    throttles = [503, 429] if store.name == "gcs" else [503, 500]
    for status in throttles:
        fresh.configure(slowdown_fraction=0.1, slowdown_status=status, drop_fraction=0.05, seed=status)
        remote = _remote(store, name, fresh.url, **{"hoodie.io.max.attempts": "10"})
        assert _rows(remote.read()) == _rows(local.read()), status
        assert _rows(list(remote.read_stream())) == _rows(local.read()), status
    faults = fresh.stats()["faults"]
    assert faults.get("slowdown") and faults.get("dropped"), faults


def test_requests_go_out_together_within_the_cap(store: Store, fresh: S3Proxy, table_path: TablePath) -> None:
    fresh.configure(latency_ms=20)
    expected = _rows(HudiTableBuilder.from_base_uri(str(table_path(MOR))).build().read())
    assert _rows(_remote(store, MOR, fresh.url).read()) == expected
    many = fresh.reset()
    assert many["max_in_flight"] >= 8, many
    assert _rows(_remote(store, MOR, fresh.url, **{"hoodie.io.max.requests": "3"}).read()) == expected
    capped = fresh.reset()
    assert capped["max_in_flight"] <= 3, capped


def test_listings_that_span_pages_read_whole(store: Store, fresh: S3Proxy, table_path: TablePath) -> None:
    """Partitions and the timeline listed two entries a page still give every file and row."""
    options = store.options(fresh.url)
    if store.name == "azure":
        # A shared key signs the query the proxy rewrites; a SAS signs only its own fields.
        from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

        sas = generate_account_sas(
            AZURITE_ACCOUNT,
            AZURITE_KEY,
            ResourceTypes(service=True, container=True, object=True),
            AccountSasPermissions(read=True, list=True),
            expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
        )
        options = {k: v for k, v in options.items() if k != "azure_storage_account_key"}
        options["azure_storage_sas_key"] = sas
    fresh.configure(list_page_size=2)
    for name in (COW, MOR, V6):
        local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
        assert_reads_as_local(
            HudiTableBuilder.from_base_uri(store.uri(name)).with_storage_options(options).build(), local, name
        )
    assert fresh.stats()["faults"].get("list_pages_continued", 0) >= 10


def test_a_table_built_again_sees_commits_made_since(store: Store, table_path: TablePath) -> None:
    """Clients are shared by the process: no listing of an earlier build may hide a new commit."""
    local = table_path(COW)
    last = max(p for p in (local / ".hoodie" / "timeline").iterdir() if p.suffix == ".commit" and "_" in p.name)
    remote_last = f"tables/{COW}/.hoodie/timeline/{last.name}"
    complete = _rows(_remote(store, COW).read())
    store.fs.rm(remote_last)  # as if the last commit were still in flight
    try:
        before = _rows(_remote(store, COW).read())
    finally:
        store.fs.put(str(last), remote_last)
    after = _rows(_remote(store, COW).read())
    assert after == complete == _rows(HudiTableBuilder.from_base_uri(str(local)).build().read())
    assert before != after


def test_an_azure_folder_lists_in_one_request(store: Store, fresh: S3Proxy, table_path: TablePath) -> None:
    """adlfs lists ``folder`` before ``folder/`` and probes a missing one twice more: here a
    folder is one request, and a missing one two (the listing, then the blob itself)."""
    if store.name != "azure":
        pytest.skip("Azure's listing")
    fresh.configure(record=True)
    assert _rows(_remote(store, V6, fresh.url).read()) == _rows(
        HudiTableBuilder.from_base_uri(str(table_path(V6))).build().read()
    )
    listings = [r["path"] for r in fresh.requests() if "comp=list" in r["path"]]
    prefixes = [re.search(r"prefix=([^&]*)", p).group(1) for p in listings]  # type: ignore[union-attr]
    assert prefixes and all(p.endswith("/") for p in prefixes), prefixes
    assert not [p for p in listings if "maxresults=1&" in p or p.endswith("maxresults=1")], listings
    heads = [r["path"] for r in fresh.requests() if r["method"] == "HEAD"]
    assert heads and all(h.rstrip("/").endswith(("timeline", ".hoodie", "files")) for h in heads), heads


def test_azure_listing_answers_as_adlfs_does(store: Store) -> None:
    """Files, folders, a file listed as itself, and missing folders and containers, as
    adlfs's own listing gives them; a folder with a marker blob (``folder/``, as some tools
    write) lists its files, where adlfs lists the marker as a file named like the folder."""
    if store.name != "azure":
        pytest.skip("Azure's listing")
    fs = store.fs
    fs.pipe({"tables/ls/a/one.parquet": b"1", "tables/ls/a/sub/two": b"22", "tables/ls/marked/": b""})
    fs.pipe({"tables/ls/marked/three": b"333"})
    plain = adlfs.AzureBlobFileSystem(connection_string=fs.connection_string)

    def entries(f: Any, path: str) -> list[tuple[str, str, Any]]:
        return sorted((e["name"].rstrip("/"), e["type"], e["size"]) for e in f.ls(path, detail=True))

    for path in ("tables/ls/a", "tables/ls/a/", "tables/ls/a/one.parquet"):
        assert entries(fs, path) == entries(plain, path), path
    assert entries(fs, "tables/ls/a") == [
        ("tables/ls/a/one.parquet", "file", 1),
        ("tables/ls/a/sub", "directory", None),
    ]
    assert entries(fs, "tables/ls/marked") == [("tables/ls/marked/three", "file", 3)]
    fs.rm("tables/ls/marked/three")
    assert fs.ls("tables/ls/marked", detail=True) == []  # only its marker is left
    for missing in ("tables/ls/nothing", "tables/ls/a/sub/nothing", "no-such-container/x"):
        with pytest.raises(FileNotFoundError):
            fs.ls(missing, detail=True)


def _a_base_file(table_path: TablePath, name: str) -> str:
    local = HudiTableBuilder.from_base_uri(str(table_path(name))).build()
    return next(s.base_file_name for s in local.get_file_slices() if s.base_file_name)


def test_a_file_that_always_fails_is_an_error_naming_it_after_the_last_try(
    store: Store, fresh: S3Proxy, table_path: TablePath, caplog: pytest.LogCaptureFixture
) -> None:
    base = _a_base_file(table_path, COW)
    table = _remote(store, COW, fresh.url, **{"hoodie.io.max.attempts": "3"})
    fresh.configure(fail_path=base, fail_status=503 if store.name == "gcs" else 500, record=True)
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    with pytest.raises(HudiStorageError, match=re.escape(base)) as info:
        table.read()
    # The fetcher's tries alone, not the client's on top of each (gcsfs: 6 over 33 s; Azure: 4 over 80 s).
    assert time.monotonic() - started < 15
    tries = [r for r in fresh.requests() if base in r["path"]]
    # Three tries for each request that meets the file (the prefetch's, then the direct read's
    # size and bytes): with the client's own retries inside, each try would be six or four.
    assert len(tries) in (3, 6, 9), tries
    assert "failed 3 times" in str(info.value)
    assert AZURITE_KEY not in str(info.value) and AZURITE_KEY not in caplog.text
    assert AZURITE_KEY not in repr(table)
    fresh.configure(record=False)


def test_a_stalled_request_times_out_naming_the_file(store: Store, fresh: S3Proxy, table_path: TablePath) -> None:
    base = _a_base_file(table_path, COW)
    hudi = {"hoodie.io.request.timeout.seconds": "1", "hoodie.io.max.attempts": "1"}
    table = _remote(store, COW, fresh.url, **hudi)
    fresh.configure(stall_path=base, stall_seconds=60)
    started = time.monotonic()
    with pytest.raises(HudiStorageError, match=re.escape(base)):
        table.read()
    assert time.monotonic() - started < 20


def test_a_missing_table_is_table_not_found(store: Store) -> None:
    with pytest.raises(HudiCoreError, match="no-such-table"):
        _remote(store, "no-such-table")


@pytest.mark.parametrize(
    "uri",
    [
        f"abfss://tables/{MOR}",
        f"az://tables/{MOR}",
        f"abfs://tables@{AZURITE_ACCOUNT}.dfs.core.windows.net/{MOR}",
        f"abfss://tables@{AZURITE_ACCOUNT}.blob.core.windows.net/{MOR}",
    ],
)
def test_every_azure_uri_form_reads_the_table(store: Store, uri: str, table_path: TablePath) -> None:
    """ADLS Gen2 (``abfss://``, ``container@account.dfs``) and Blob (``az://``) URIs reach the
    same container, through the Blob API the emulator serves."""
    if store.name != "azure":
        pytest.skip("Azure URI forms")
    options = store.options()
    if "@" in uri:  # the account comes from the URI
        options = {k: v for k, v in options.items() if k != "azure_storage_account_name"}
    remote = HudiTableBuilder.from_base_uri(uri).with_storage_options(options).build()
    assert _rows(remote.read()) == _rows(HudiTableBuilder.from_base_uri(str(table_path(MOR))).build().read())


# -- clients and options -----------------------------------------------------------------------------


def test_gcs_uses_the_json_api_client_that_does_not_probe_or_retry() -> None:
    fs = Storage("gs://bucket/table", {"google_skip_signature": "true"}).fs
    assert type(fs) is GCSFileSystem and isinstance(fs, gcsfs.core.GCSFileSystem)
    # Not gcsfs.GCSFileSystem, which since 2026.3 may be the probing ExtendedGcsFileSystem.
    assert "Extended" not in type(fs).__mro__[1].__name__
    assert not hasattr(GCSFileSystem._request, "__wrapped__")  # no retry decorator


def test_azure_client_retries_nothing_itself() -> None:
    storage = Storage("abfs://tables/t", {"azure_storage_use_emulator": "true"})
    fs = storage.fs
    assert type(fs) is AzureBlobFileSystem
    assert fs.service_client._config.retry_policy.total_retries == 0


def test_gcs_option_keys() -> None:
    assert gcsfs_kwargs({"google_service_account": "/k.json"}) == {"token": "/k.json"}
    assert gcsfs_kwargs({"SERVICE_ACCOUNT_PATH": "/k.json"}) == {"token": "/k.json"}
    assert gcsfs_kwargs({"google_application_credentials": "/adc.json"}) == {"token": "/adc.json"}
    assert gcsfs_kwargs({"google_service_account_key": '{"type": "service_account"}'}) == {
        "token": {"type": "service_account"}
    }
    assert gcsfs_kwargs({"google_base_url": "http://h:1/", "google_bucket": "b", "project": "p"}) == {
        "endpoint_url": "http://h:1",
        "project": "p",
    }
    assert gcsfs_kwargs({"google_skip_signature": "true"}) == {"token": "anon"}
    with pytest.raises(HudiCoreError, match="google_service_account_key") as info:
        gcsfs_kwargs({"google_service_account_key": "not json s3cr3t"})
    assert "s3cr3t" not in str(info.value)


def test_azure_option_keys() -> None:
    assert adlfs_kwargs({"azure_storage_account_name": "a", "azure_storage_account_key": "k"}) == {
        "account_name": "a",
        "account_key": "k",
    }
    assert adlfs_kwargs({"account_name": "a", "azure_storage_sas_key": "sv=1"}) == {
        "account_name": "a",
        "sas_token": "sv=1",
    }
    assert adlfs_kwargs({"azure_client_id": "c", "azure_client_secret": "s", "azure_tenant_id": "t"}) == {
        "client_id": "c",
        "client_secret": "s",
        "tenant_id": "t",
    }
    assert adlfs_kwargs({"azure_storage_endpoint": "https://acct.blob.core.windows.net"}) == {
        "account_host": "acct.blob.core.windows.net"
    }
    emulator = adlfs_kwargs({"azure_storage_use_emulator": "true"})
    assert emulator == {
        "connection_string": "DefaultEndpointsProtocol=http;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"
        f"AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
    }
    assert adlfs_kwargs({"azure_skip_signature": "true", "azure_msi_endpoint": "x", "azure_container_name": "c"}) == {
        "anon": True
    }


def test_abfs_uri_forms_name_the_container_and_the_account() -> None:
    full = Storage("abfss://tables@acct.dfs.core.windows.net/db/t", {"azure_storage_account_key": "k"})
    assert full.root == "tables/db/t"
    assert full.options["azure_storage_account_name"] == "acct"
    assert Storage("az://tables/db/t", {"azure_storage_use_emulator": "true"}).root == "tables/db/t"
    given = Storage("abfs://tables@acct.dfs.core.windows.net/t", {"account_name": "other", "account_key": "k"})
    assert "azure_storage_account_name" not in given.options
    with pytest.raises(HudiStorageError, match="Not an Azure storage account"):
        Storage("abfs://tables@example.com/t", {})


def test_secrets_never_show_in_reprs() -> None:
    secret = "Zm9vYmFyc2VjcmV0a2V5"
    for uri, options in [
        ("abfs://tables/t", {"azure_storage_account_name": "a", "azure_storage_account_key": secret}),
        ("abfs://tables/t", {"azure_storage_account_name": "a", "access_key": secret}),
        ("abfs://tables/t", {"azure_storage_account_name": "a", "azure_storage_sas_key": secret}),
        ("abfs://tables/t", {"connection_string": f"AccountName=a;AccountKey={secret};"}),
        ("gs://b/t", {"google_service_account_key": f'{{"private_key": "{secret}"}}'}),
    ]:
        try:
            assert secret not in repr(Storage(uri, options)), options
        except HudiStorageError as exc:  # gcsfs refuses a key that is not one: the error hides it too
            assert uri.startswith("gs://") and secret not in str(exc), exc
        assert secret not in repr(HudiTableBuilder.from_base_uri(uri).with_storage_options(options)), options


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from hudi_ray.core.exceptions import HudiMissingExtraError

    for module, uri, extra in [
        ("gcsfs", "gs://b/t", "hudi-ray[gcs]"),
        ("adlfs", "abfs://c/t", "hudi-ray[azure]"),
    ]:
        monkeypatch.setitem(sys.modules, module, None)
        for mine in ("hudi_ray.core.storage.gcs", "hudi_ray.core.storage.azure"):
            monkeypatch.delitem(sys.modules, mine, raising=False)
        with pytest.raises(HudiMissingExtraError, match=re.escape(extra)):
            Storage(uri, {})
