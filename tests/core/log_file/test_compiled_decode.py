"""The compiled decoder on bytes that do not decode, and the cost of compiling.

Records cut at every byte, or with a byte changed, end in the project's
errors naming the file, the block and the record, and the compiled loops
never read past their buffer: checked in a process where numba bounds-checks
every array access and the block's bytes end at an unreadable page. numba is
not imported by ``import hudi_ray``, by copy-on-write reads or by the CLI's
``info``; the compiled code is cached where the package cannot be written.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hudi_ray import HudiCorruptFileError, HudiSchemaError
from hudi_ray.core.log_file import avro_decode
from hudi_ray.core.log_file.block import BlockType, HeaderKey, LogBlock
from hudi_ray.core.log_file.content import decode_avro_block
from hudi_ray.core.util import compiled
from tests.support import REPO

# -- damaged records --------------------------------------------------------------------------------

SCHEMA = {
    "type": "record",
    "name": "r",
    "fields": [
        {"name": "s", "type": ["null", "string"]},
        {"name": "l", "type": "long"},
        {"name": "i", "type": ["int", "null"]},
        {"name": "d", "type": "double"},
        {"name": "f", "type": ["null", "float"]},
        {"name": "b", "type": "boolean"},
        {"name": "by", "type": "bytes"},
        {"name": "fx", "type": {"type": "fixed", "name": "fx", "size": 3}},
        {"name": "e", "type": {"type": "enum", "name": "e", "symbols": ["A", "B"]}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}},
        {"name": "n", "type": ["null", {"type": "record", "name": "n", "fields": [{"name": "a", "type": "int"}]}]},
        {"name": "arr", "type": {"type": "array", "items": ["null", "string"]}},
        {"name": "m", "type": {"type": "map", "values": "long"}},
        {"name": "t", "type": "string"},
    ],
}


def record(i: int) -> dict[str, Any]:
    from decimal import Decimal

    return {
        "s": None if i % 3 == 0 else "é" * (i % 4) + "x" * i,
        "l": -(7**i),
        "i": None if i % 2 else 2**30 - i,
        "d": i / 3,
        "f": 1.5,
        "b": i % 2 == 0,
        "by": bytes(range(i % 9)),
        "fx": b"abc",
        "e": "B",
        "dec": Decimal(f"{-(10 ** (i % 12))}.25"),
        "n": {"a": i},
        "arr": ["q", None, "w" * i],
        "m": {"k": i, "j": -i},
        "t": "tail",
    }


def datums(rows: list[dict[str, Any]], schema: dict[str, Any] = SCHEMA) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for row in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        out.append(buf.getvalue())
    return out


def content_of(items: list[bytes], count: int | None = None) -> bytes:
    body = b"".join(struct.pack(">i", len(d)) + d for d in items)
    return struct.pack(">ii", 3, len(items) if count is None else count) + body


def block_of(content: bytes, schema: dict[str, Any] = SCHEMA) -> LogBlock:
    return LogBlock(
        BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, content, "file:///t/p/.f-0_1.log.1", 64
    )


WHERE = r"AVRO_DATA block at byte 64 of file:///t/p/\.f-0_1\.log\.1"


@pytest.mark.parametrize("group", [16, 1])
def test_a_record_cut_short_names_itself(group: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each record of a block cut to each of its lengths (its length prefix
    saying so): the error names that record, whichever way records are grouped."""
    monkeypatch.setattr(avro_decode, "_GROUP", group)
    items = datums([record(i) for i in range(20)])
    for r in (0, 7, 19):
        for cut in range(len(items[r])):
            damaged = [*items[:r], items[r][:cut], *items[r + 1 :]]
            with pytest.raises(HudiCorruptFileError, match=rf"{WHERE}.*record {r}\b"):
                decode_avro_block(block_of(content_of(damaged)))


def test_a_block_cut_at_every_byte_is_corrupt() -> None:
    content = content_of(datums([record(i) for i in range(6)]))
    assert decode_avro_block(block_of(content)).num_rows == 6
    for cut in range(len(content)):
        with pytest.raises(HudiCorruptFileError, match=WHERE):
            decode_avro_block(block_of(content[:cut]))


def test_changed_bytes_decode_or_fail_with_the_projects_errors() -> None:
    """Every byte of a block set to values that break varints, lengths and branches."""
    content = content_of(datums([record(i) for i in range(4)]))
    for at in range(8, len(content)):
        for value in (0x00, 0x01, 0x7F, 0x80, 0xFF):
            damaged = content[:at] + bytes([value]) + content[at + 1 :]
            with contextlib.suppress(HudiCorruptFileError, HudiSchemaError):
                decode_avro_block(block_of(damaged))


def test_invalid_utf8_names_the_record_and_the_column() -> None:
    items = datums([record(i) for i in range(6)])
    items[4] = items[4].replace(b"tail", b"ta\xffl")
    with pytest.raises(HudiCorruptFileError, match=rf"{WHERE}.*record 4, column 't': invalid UTF-8"):
        decode_avro_block(block_of(content_of(items)))
    # Only the string columns are checked: bytes are bytes.
    schema = {"type": "record", "name": "r", "fields": [{"name": "b", "type": "bytes"}]}
    block = block_of(content_of(datums([{"b": b"\xff\xfe"}], schema)), schema)
    assert decode_avro_block(block).column("b").to_pylist() == [b"\xff\xfe"]
    # Overlong forms, surrogates and truncated sequences, as Arrow's check refuses them.
    for bad in (b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82", b"\xf4\x90\x80\x80", b"\x80"):
        schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
        item = datums([{"s": "ok"}], schema)[0]
        damaged = [item, bytes([2 * len(bad)]) + bad, item]
        with pytest.raises(HudiCorruptFileError, match=r"record 1, column 's': invalid UTF-8"):
            decode_avro_block(block_of(content_of(damaged), schema))


def test_a_sample_that_underestimates_the_strings_is_decoded_again() -> None:
    """Bytes fields are sized from the first records; later, longer ones overflow that and are decoded with room."""
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}, {"name": "v", "type": "long"}]}
    rows = [{"s": "a", "v": i} for i in range(avro_decode._SAMPLE + 10)] + [{"s": "z" * 20_000, "v": -1}] * 30
    got = decode_avro_block(block_of(content_of(datums(rows, schema)), schema))
    assert got.to_pylist() == rows


_GUARDED = r"""
import ctypes, io, json, mmap, struct, sys
import numpy as np
from hudi_ray import HudiCorruptFileError, HudiSchemaError
from hudi_ray.core.log_file.block import BlockType, HeaderKey, LogBlock
from hudi_ray.core.log_file.content import decode_avro_block, decode_delete_columns_of
from hudi_ray.core.log_file import avro_decode
sys.path.insert(0, sys.argv[1])
from tests.core.log_file.test_compiled_decode import SCHEMA, content_of, datums, record
from tests.core.log_file.test_delete_columnar import _payload, NS

PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
arenas = []

def at_page_end(data):
    # The bytes end where an unreadable page starts: reading one past them faults.
    pages = len(data) // PAGE + 1
    area = mmap.mmap(-1, (pages + 1) * PAGE)
    arenas.append(area)
    base = ctypes.addressof(ctypes.c_char.from_buffer(area))
    assert libc.mprotect(base + pages * PAGE, PAGE, 0) == 0
    start = pages * PAGE - len(data)
    area[start : start + len(data)] = data
    return memoryview(area)[start : start + len(data)]

def block(content, schema=SCHEMA, kind=BlockType.AVRO_DATA):
    return LogBlock(kind, {HeaderKey.SCHEMA: json.dumps(schema)}, at_page_end(content), "g.log", 0)

items = datums([record(i) for i in range(12)])
checked = 0
for group in (16, 1):
    avro_decode._GROUP = group
    for r in range(12):
        for cut in range(len(items[r])):
            # Record r cut short and last in the block: its bytes end the buffer.
            content = content_of([*items[:r], items[r][:cut]])
            try:
                decode_avro_block(block(content))
                raise SystemExit(f"record {r} cut to {cut} bytes decoded")
            except HudiCorruptFileError as exc:
                assert f"record {r}" in str(exc), exc
            checked += 1
whole = content_of(items)
for cut in range(len(whole)):
    try:
        decode_avro_block(block(whole[:cut]))
    except HudiCorruptFileError:
        pass
    checked += 1
for at in range(8, len(whole)):
    for value in (0x00, 0x7F, 0x80, 0xFF):
        try:
            decode_avro_block(block(whole[:at] + bytes([value]) + whole[at + 1 :]))
        except (HudiCorruptFileError, HudiSchemaError):
            pass
        checked += 1
records = [
    {"recordKey": f"k{i}" * i, "partitionPath": "p", "orderingVal": (NS + "StringWrapper", {"value": "v" * i})}
    for i in range(5)
]
payload = _payload(records, [2], True)
for cut in range(len(payload)):
    content = struct.pack(">ii", 3, cut) + payload[:cut]
    try:
        decode_delete_columns_of(LogBlock(BlockType.DELETE, {}, at_page_end(content), "g.log", 0))
    except HudiCorruptFileError:
        pass
    checked += 1
print(checked)
"""


def test_compiled_loops_never_read_past_their_buffer(tmp_path: Path) -> None:
    """In a process of its own: numba checks every array index (its own cache,
    so that no unchecked code is loaded), and every block's bytes end at a
    page that cannot be read, so reading one byte past them crashes it."""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", _GUARDED, str(REPO), __name__], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 3000


# -- what loads numba, and where its cache lives ----------------------------------------------------

_IMPORTS = r"""
import sys
import hudi_ray

def loaded(*names):
    return [n for n in names if n in sys.modules]

assert not loaded("pyarrow", "numpy", "fsspec", "numba", "ray", "pyspark", "pandas"), loaded(
    "pyarrow", "numpy", "fsspec", "numba", "ray", "pyspark", "pandas"
)
from hudi_ray.cli import main

cow, mor, plain = sys.argv[1], sys.argv[2], sys.argv[3]
# Planning from a storage listing and JSON commits needs no Arrow: only reads and the metadata table do.
assert len(hudi_ray.HudiTableBuilder.from_base_uri(plain).build().get_file_slices()) > 0
assert not loaded("pyarrow", "numpy", "fastavro", "asyncio"), loaded("pyarrow", "numpy", "fastavro", "asyncio")
# Nor the reader's own machinery: planning loads what planning runs.
reader = [f"hudi_ray.core.{m}" for m in ("reading.read_plan", "merge.merger", "incremental.checkpoint")]
indexes = [f"hudi_ray.core.{m}" for m in ("bloom.filter", "planning.file_pruning", "planning.record_index")]
metadata = [f"hudi_ray.core.{m}" for m in ("metadata.table", "hfile.reader", "log_file.block", "log_file.avro_decode")]
assert not loaded(*reader, *indexes, *metadata), loaded(*reader, *indexes, *metadata)
# Nor does planning from a metadata table (HFile) and Avro commits, without filters.
table = hudi_ray.HudiTableBuilder.from_base_uri(cow).build()
assert len(table.get_file_slices()) > 0 and "fastavro" in sys.modules
assert not loaded("pyarrow", "numpy", "asyncio"), loaded("pyarrow", "numpy", "asyncio")
assert not loaded(*reader, *indexes) and len(loaded(*metadata)) == len(metadata), loaded(*reader, *indexes, *metadata)
assert sum(b.num_rows for b in table.read()) > 0
filters = [("region", "!=", "nowhere"), ("amount", ">", "0"), ("currency", "IN", "USD,EUR")]
assert sum(b.num_rows for b in table.read(hudi_ray.HudiReadOptions(filters=filters))) > 0
assert main(["info", mor]) == 0
# Not pandas: pyarrow 26 imports it on its first conversion of a Python value (pa.scalar, pa.array).
# Not fsspec either: a local table is read through os and Arrow.
heavy = ("numba", "ray", "pyspark", "pyarrow.dataset", "pyarrow.acero", "fsspec")
assert not loaded(*heavy), f"a filtered copy-on-write read or the CLI's info loaded {loaded(*heavy)}"
table = hudi_ray.HudiTableBuilder.from_base_uri(mor).build()
assert sum(b.num_rows for b in table.read()) > 0
assert "numba" in sys.modules, "a merge-on-read read"
"""


def test_heavy_modules_load_only_when_a_path_needs_them(table_path) -> None:
    """``import hudi_ray`` loads neither pyarrow nor the reader; planning a table without a
    metadata table loads neither pyarrow, numpy nor fastavro, nor the reader's, the indexes'
    or the metadata table's modules, and one with a metadata table neither pyarrow, numpy,
    the reader's nor the indexes' modules; a filtered copy-on-write
    read and the CLI's info load no numba, Ray, Spark, pyarrow.dataset or fsspec
    (filters evaluate with compute kernels, not Acero); merge-on-read loads numba."""
    cow = table_path("sample_table/cow/v9_txns_simple_meta")
    mor = table_path("quickstart_trips_table/mor/avro/v8_trips_8i3u1d")  # a slice with Avro log blocks
    plain = table_path("sample_table/cow/v6_complexkeygen_hivestyle")  # no metadata table, JSON commits
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS, str(cow), str(mor), str(plain)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_kernels_fall_back_to_a_cache_under_the_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When numba finds no writable place for its cache (it raises on the
    kernels' import), they are cached under the temporary directory."""
    from numba.core import config

    (tmp_path / "fake_kernels.py").write_text(
        textwrap.dedent(
            """
            from numba.core import config
            if not config.CACHE_DIR:
                raise RuntimeError("cannot cache function 'f': no locator available for file 'fake_kernels.py'")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    monkeypatch.delitem(sys.modules, "fake_kernels", raising=False)
    module = compiled.load("fake_kernels")
    assert module.__name__ == "fake_kernels"
    assert config.CACHE_DIR.startswith(str(tmp_path / "tmp" / "hudi-ray-numba-"))


_CACHED = r"""
import json, sys
from numba.core import caching
if sys.argv[2] == "read-only":
    def refuse(self):
        raise OSError(30, "Read-only file system")
    caching.InTreeCacheLocator.ensure_cache_path = refuse
from hudi_ray.core.log_file.content import decode_avro_block
from hudi_ray.core.log_file.block import BlockType, HeaderKey, LogBlock
from hudi_ray.core.log_file.avro_decode import kernels
schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
content = bytes.fromhex(sys.argv[1])
block = LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, content, "c.log", 0)
assert decode_avro_block(block).column("s").to_pylist() == ["hi"]
walk = kernels().walk
print(json.dumps({"hits": sum(walk.stats.cache_hits.values()), "misses": sum(walk.stats.cache_misses.values())}))
"""


def test_a_read_only_installation_caches_in_the_users_cache_directory(tmp_path: Path) -> None:
    """The package's own directory refuses the cache (as a read-only install
    does): numba compiles into the user's cache directory, and the next
    process loads from there instead of compiling."""
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    content = content_of(datums([{"s": "hi"}], schema)).hex()
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    env["HOME"] = str(tmp_path / "home")
    runs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", _CACHED, content, "read-only"], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    assert list((tmp_path / "user-cache" / "numba").rglob("avro_kernels.walk-*.nbi"))
    assert runs[1] == {"hits": 1, "misses": 0}


_WITHOUT_NUMBA = r"""
import sys
sys.modules["numba"] = None  # an environment made before numba was a dependency
import hudi_ray
from hudi_ray.core.exceptions import HudiMissingExtraError
table = hudi_ray.HudiTableBuilder.from_base_uri(sys.argv[1]).build()
try:
    table.read()
except HudiMissingExtraError as exc:
    assert exc.name == "numba" and "pip install" in str(exc), exc
    print("refused")
"""


def test_a_missing_numba_is_the_projects_error_naming_it(table_path) -> None:
    mor = table_path("quickstart_trips_table/mor/avro/v8_trips_8i3u1d")
    done = subprocess.run([sys.executable, "-c", _WITHOUT_NUMBA, str(mor)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["refused"]
