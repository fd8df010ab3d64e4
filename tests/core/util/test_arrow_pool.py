"""The reader's Arrow memory pool: how it is chosen, and that reads allocate from it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hudi_ray
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.util import arrow_pool
from hudi_ray.core.util.arrow_pool import POOL_ENV, reader_pool
from hudi_testkit import MorTableWriter


@pytest.fixture
def fresh_choice(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The pool chosen again under the test's environment, and again after it."""
    monkeypatch.delenv(POOL_ENV, raising=False)
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    reader_pool.cache_clear()
    yield monkeypatch
    reader_pool.cache_clear()


def test_jemalloc_where_pyarrow_has_it(fresh_choice: pytest.MonkeyPatch) -> None:
    expected = "jemalloc" if "jemalloc" in pa.supported_memory_backends() else pa.default_memory_pool().backend_name
    assert reader_pool().backend_name == expected


def test_the_process_choice_is_followed(fresh_choice: pytest.MonkeyPatch) -> None:
    fresh_choice.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    # Arrow read the variable when it loaded; the reader follows whatever pool that gave.
    assert reader_pool().backend_name == pa.default_memory_pool().backend_name


@pytest.mark.parametrize("name", ["system", " System ", "default"])
def test_the_named_pool_wins(fresh_choice: pytest.MonkeyPatch, name: str) -> None:
    fresh_choice.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    fresh_choice.setenv(POOL_ENV, name)
    expected = "system" if name.strip().lower() == "system" else pa.default_memory_pool().backend_name
    assert reader_pool().backend_name == expected


def test_an_unknown_name_is_the_projects_error(fresh_choice: pytest.MonkeyPatch) -> None:
    fresh_choice.setenv(POOL_ENV, "tcmalloc")
    with pytest.raises(HudiConfigError, match=rf"{POOL_ENV}='tcmalloc' is not a memory pool: use one of jemalloc"):
        reader_pool()


def test_a_pool_pyarrow_lacks_is_the_projects_error(fresh_choice: pytest.MonkeyPatch) -> None:
    def missing() -> pa.MemoryPool:
        raise NotImplementedError("built without it")

    fresh_choice.setitem(arrow_pool._POOLS, "mimalloc", missing)
    fresh_choice.setenv(POOL_ENV, "mimalloc")
    with pytest.raises(HudiConfigError, match="this pyarrow is built without it"):
        reader_pool()


def _other_backend() -> str:
    """A backend other than the process's default, to tell their allocations apart."""
    default = pa.default_memory_pool().backend_name
    others = [b for b in ("system", "jemalloc", "mimalloc") if b != default and b in pa.supported_memory_backends()]
    if not others:
        pytest.skip("this pyarrow has one memory pool only")
    return others[0]


def test_a_merged_read_allocates_from_the_reader_pool(tmp_path: Path, fresh_choice: pytest.MonkeyPatch) -> None:
    """The base file's decoding, the log's and the merge allocate their
    buffers from the reader's pool: the process's default pool sees a small
    part of what the read allocates (Parquet's page buffers, which pyarrow
    gives no pool)."""
    n = 400_000
    base = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "name": pc.cast(pa.array(range(n), pa.int64()), pa.string()),
            "ts": pa.array([1] * n, pa.int64()),
        }
    )
    writer = MorTableWriter.create(
        tmp_path / "t", base, table_name="t", record_key="id", precombine_field="ts", rows_per_file=n
    )
    updates = base.filter(pc.equal(pc.bit_wise_and(base["id"], 3), 0))
    writer.update(updates.set_column(2, "ts", pa.array([2] * updates.num_rows, pa.int64())))
    fresh_choice.setenv(POOL_ENV, _other_backend())
    ours, default = reader_pool(), pa.default_memory_pool()
    assert ours.backend_name != default.backend_name
    before = ours.total_bytes_allocated(), default.total_bytes_allocated()
    batches = hudi_ray.HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build().read()
    ours_bytes = ours.total_bytes_allocated() - before[0]
    default_bytes = default.total_bytes_allocated() - before[1]
    rows = pa.Table.from_batches(batches)
    assert rows.num_rows == n
    assert pc.sum(rows["ts"]).as_py() == n + updates.num_rows
    assert ours_bytes >= rows.nbytes
    assert default_bytes < ours_bytes / 4


# -- jemalloc's configuration --------------------------------------------------------------

_FRESH = r"""
import os, sys
{before}
import hudi_ray
print(os.environ.get("JE_ARROW_MALLOC_CONF", "<unset>"))
"""

_REUSE = r"""
import sys
import hudi_ray
import numpy as np
import pyarrow as pa

def rss_mib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 // 2**20

pool = pa.jemalloc_memory_pool()
buffers = [pa.allocate_buffer(64 << 20, memory_pool=pool) for _ in range(4)]
for b in buffers:
    np.frombuffer(b, np.uint8)[::4096] = 1
held = rss_mib()
del buffers
print(held - rss_mib())
"""


def _child(code: str, env: dict[str, str]) -> str:
    import os
    import subprocess
    import sys

    clean = {
        k: v for k, v in os.environ.items() if k not in (arrow_pool.JEMALLOC_ENV, POOL_ENV, "ARROW_DEFAULT_MEMORY_POOL")
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("before", "env", "expected"),
    [
        ("", {}, arrow_pool.JEMALLOC_CONF),
        ("import pyarrow", {}, "<unset>"),  # jemalloc has read its configuration already
        ("", {arrow_pool.JEMALLOC_ENV: "dirty_decay_ms:0"}, "dirty_decay_ms:0"),
        ("", {arrow_pool.JEMALLOC_ENV: ""}, ""),
        # The reader allocates from another pool: jemalloc is left as Arrow sets it up.
        ("", {POOL_ENV: "mimalloc"}, "<unset>"),
        ("", {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}, "<unset>"),
        ("", {POOL_ENV: " JEmalloc "}, arrow_pool.JEMALLOC_CONF),
        ("", {POOL_ENV: ""}, arrow_pool.JEMALLOC_CONF),
    ],
)
def test_jemalloc_is_configured_only_before_pyarrow_and_only_when_the_process_did_not(
    before: str, env: dict[str, str], expected: str
) -> None:
    assert _child(_FRESH.format(before=before), env) == expected


@pytest.mark.skipif(
    "jemalloc" not in pa.supported_memory_backends() or not Path("/proc/self/statm").exists(),
    reason="needs Arrow's jemalloc and Linux's /proc",
)
def test_freed_memory_stays_for_the_next_slice() -> None:
    """With the configuration, 256 MiB freed stay with the process for reuse; with
    Arrow's own, most of them go at once (if a later pyarrow kept them, the
    configuration would no longer be needed, and this says so)."""
    kept = int(_child(_REUSE, {}))
    assert kept < 64, f"{kept} MiB handed back at once"
    given_back = int(_child(_REUSE, {arrow_pool.JEMALLOC_ENV: ""}))
    assert given_back >= 128, f"only {given_back} MiB handed back with Arrow's configuration"
