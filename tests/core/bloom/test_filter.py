"""Hudi's bloom filters (``core.bloom``): Apache Hudi's own serialized filters decode and
answer as Hudi does; every key of every real table's base files tests positive in its
file's filter; damage is the project's error."""

from __future__ import annotations

import base64
import random
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.base_file import LanceReader
from hudi_ray.core.bloom import DYNAMIC_V0, FOOTER_KEY, SIMPLE, TYPE_CODE_KEY, decode_bloom_filter
from hudi_ray.core.bloom.kernels import jenkins, murmur
from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_ray.core.storage import Storage
from hudi_testkit import BloomFilterSpec
from hudi_testkit.bloom import bloom_filter_text
from tests.support import TablePath, all_table_names

# Apache Hudi's golden serialized filters (TestInternalBloomFilter): SIMPLE of 50 entries
# at fpp 0.001 holding key-000..key-049, and DYNAMIC_V0 of 20 entries a row (at most 60)
# holding key-000..key-099.
SIMPLE_GOLDEN = (
    "/////wAAAAoBAAACz+cFPAf5vcr6feFygnZHoFAOwLY7/WznVO6WN9QF7fMmM1m+zXrzC9ICIvydFz8bNEUfQN/L"
    "vtxjs9bkOxNklqSWK6H6aacyEc1SNA0+iZW9Ae0xTLgQp2k6dg=="
)
DYNAMIC_GOLDEN = (
    "/////wAAAAoBAAABIAAAABQAAAA8AAAAA/////8AAAAKAQAAASBSsn9fX63/7M15X+Rmc+75/96eez/Tdme7//nv"
    "1JuP6WZX/tv/////AAAACgEAAAEg6fC+36p6fdz/Lr98Ppl+/QvlV2rfp5+9/Pm358cj1x/f/Hes/////wAAAAoB"
    "AAABINvt/Ha3Ped32/7//3Wtp+3rLH2o/08eqTXZa/u/j77vpvzdvg=="
)


def _keys(n: int) -> list[str]:
    return [f"key-{i:03d}" for i in range(n)]


def _absent(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [f"absent-{rng.getrandbits(64):x}" for _ in range(n)]


def test_hudis_simple_filter_holds_its_keys() -> None:
    f = decode_bloom_filter(SIMPLE_GOLDEN, None, "golden")
    assert f.might_contain(_keys(50)).all()
    assert f.might_contain(_absent(2000)).mean() < 0.01


def test_hudis_dynamic_filter_holds_its_keys() -> None:
    f = decode_bloom_filter(DYNAMIC_GOLDEN, DYNAMIC_V0, "golden")
    assert len(f.rows) == 3
    assert f.might_contain(_keys(100)).all()
    # Filled past its bound (100 keys in 3 rows of 20): about 6% false positives by design.
    assert f.might_contain(_absent(2000)).mean() < 0.15


def test_the_hashes_are_hadoops() -> None:
    def h(fn, text: str, seed: int = 0) -> int:  # type: ignore[no-untyped-def]
        data = pa.py_buffer(text.encode())
        import numpy as np

        return int(fn(np.frombuffer(data, np.uint8), 0, len(data), seed))

    # Hadoop's MurmurHash (tail bytes reversed and sign-extended), not the reference one.
    assert h(murmur, "abc") == 1775488903
    assert h(murmur, "é") == -384040333
    # lookup3's published check value; an empty input returns its initial value.
    assert h(jenkins, "Four score and seven years ago") & 0xFFFFFFFF == 0x17770551
    assert h(jenkins, "") & 0xFFFFFFFF == 0xDEADBEEF


def test_null_and_empty_keys_may_be_present() -> None:
    f = decode_bloom_filter(SIMPLE_GOLDEN, None, "golden")
    assert f.might_contain(pa.array([None, "", "key-001"], pa.string())).tolist() == [True, True, True]


@pytest.mark.parametrize("filter_type", [SIMPLE, DYNAMIC_V0])
def test_filters_of_one_shape_share_a_layout_but_answer_for_their_own_keys(filter_type: str) -> None:
    # Decoded one after another, as a table's footers are: the first fills the layout
    # cache. Record counts differ, and the last filter overflows into a second row.
    spec = BloomFilterSpec(filter_type=filter_type, num_entries=40, fpp=0.01, max_entries=200)
    sets = [[f"{n}-{i}" for i in range(count)] for n, count in enumerate([30, 12, 39, 1, 55])]
    decoded = [decode_bloom_filter(bloom_filter_text(keys, spec), filter_type, "f") for keys in sets]
    rows = [len(f.rows) for f in decoded]
    assert rows == ([1] * 5 if filter_type == SIMPLE else [1, 1, 1, 1, 2])
    for keys, f in zip(sets, decoded):
        assert f.might_contain(keys).all()
    others = [f"{n}-{i}" for n, keys in enumerate(sets) for i in range(len(keys), len(keys) + 200)]
    assert 0 < sum(f.might_contain(others).sum() for f in decoded[:4]) < 0.1 * 4 * len(others)


@pytest.mark.parametrize(
    ("text", "code", "match"),
    [
        pytest.param("not base64!", None, "not Base64", id="not-base64"),
        pytest.param(SIMPLE_GOLDEN[:40], None, "truncated|bytes follow", id="truncated"),
        pytest.param(SIMPLE_GOLDEN, "DYNAMIC_V9", "unknown type", id="unknown-type"),
        pytest.param(DYNAMIC_GOLDEN, None, "after its last row", id="dynamic-read-as-simple"),
        pytest.param(SIMPLE_GOLDEN, DYNAMIC_V0, "rows|truncated|bytes", id="simple-read-as-dynamic"),
        pytest.param(
            base64.b64encode(struct.pack(">iibi", -1, 3, 7, 64) + bytes(8)).decode(), None, "hash type", id="hash-type"
        ),
        pytest.param(
            base64.b64encode(struct.pack(">iibi", -2, 3, 1, 64) + bytes(8)).decode(), None, "version", id="version"
        ),
        pytest.param(
            base64.b64encode(struct.pack(">iibi", -1, 0, 1, 64) + bytes(8)).decode(), None, "hashes", id="no-hashes"
        ),
    ],
)
def test_damage_is_the_projects_error(text: str, code: str | None, match: str) -> None:
    with pytest.raises(HudiCorruptFileError, match=match):
        decode_bloom_filter(text, code, "file f.parquet")


@pytest.mark.parametrize("name", all_table_names())
def test_every_key_of_every_real_base_file_is_in_its_filter(name: str, table_path: TablePath) -> None:
    root = table_path(name)
    files = sorted(p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts)
    checked = 0
    for path in files:
        meta = pq.read_metadata(path).metadata or {}
        text = meta.get(FOOTER_KEY.encode())
        if text is None:
            continue
        code = meta.get(TYPE_CODE_KEY.encode())
        f = decode_bloom_filter(text, code.decode() if code else None, str(path))
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0)
        assert f.might_contain(keys).all(), path
        assert f.might_contain(_absent(300)).mean() < 0.02, path
        checked += 1
    # Every Parquet base file Apache Hudi wrote carries its filter, but where the table
    # keeps no meta fields: its writer then adds no keys, and writes none.
    expected = 0 if name.endswith("_no_metafields") else len(files)
    assert checked == expected, f"{checked} of {len(files)} base files of {name} have a filter"


@pytest.mark.parametrize("name", [n for n in all_table_names() if "lance" in n])
def test_every_key_of_every_real_lance_base_file_is_in_its_filter(name: str, table_path: TablePath) -> None:
    root = table_path(name)
    reader = LanceReader(Storage(str(root)))
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.lance") if ".hoodie" not in p.parts)
    assert files
    for rel in files:
        meta = reader.schema(rel).metadata or {}
        code = meta.get(TYPE_CODE_KEY.encode())
        f = decode_bloom_filter(meta[FOOTER_KEY.encode()], code.decode() if code else None, rel)
        keys = reader.read(rel, ["_hoodie_record_key"]).column(0)
        assert f.might_contain(keys).all(), rel
        assert f.might_contain(_absent(300)).mean() < 0.02, rel
