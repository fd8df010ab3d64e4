"""LSM history files read by byte ranges (``core.timeline.lsm_file``): the index columns
and footer without the metadata and plans, the rest on demand, whole files where the
manifest's size is wrong, the project's error where the bytes are damaged."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiStorageError
from hudi_ray.core.storage import Storage
from hudi_ray.core.timeline import lsm_file
from hudi_ray.core.timeline.lsm_file import LsmFile

INDEX = ["instantTime", "completionTime", "action"]
ROWS = 300


def _write(path: Path) -> pa.Table:
    rng = random.Random(7)
    times = [f"2024030100{i:07d}" for i in range(ROWS)]
    table = pa.table(
        {
            "instantTime": times,
            "completionTime": [t[:-1] + "9" for t in times],
            "action": ["commit" if i % 3 else "clean" for i in range(ROWS)],
            # Incompressible, as written metadata nearly is: most of the file's bytes.
            "metadata": [rng.randbytes(2000) for _ in range(ROWS)],
            "plan": [rng.randbytes(500) for _ in range(ROWS)],
        }
    )
    pq.write_table(table, path)
    return table


class _Recorded:
    """The byte ranges a storage was asked for."""

    def __init__(self, storage: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ranges: list[tuple[int, int]] = []
        self.whole = 0
        read_range, read_bytes = storage.read_range_async, storage.read_bytes_async

        async def ranged(rel: str, start: int, end: int) -> bytes:
            self.ranges.append((start, end))
            return await read_range(rel, start, end)

        async def whole(rel: str) -> bytes:
            self.whole += 1
            return await read_bytes(rel)

        monkeypatch.setattr(storage, "read_range_async", ranged)
        monkeypatch.setattr(storage, "read_bytes_async", whole)

    @property
    def bytes(self) -> int:
        return sum(b - a for a, b in self.ranges)


def _open(storage: Storage, size: int | None) -> LsmFile:
    return storage.submit(LsmFile.fetch(storage, "f.parquet", size, INDEX)).result()


def test_the_index_is_read_without_the_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = _write(tmp_path / "f.parquet")
    size = (tmp_path / "f.parquet").stat().st_size
    storage = Storage(str(tmp_path))
    seen = _Recorded(storage, monkeypatch)
    lsm = _open(storage, size)
    assert lsm.read(INDEX).equals(written.select(INDEX))
    assert seen.whole == 0
    assert len(seen.ranges) == 2, "both ends of the file, in one wave"
    assert seen.bytes <= lsm_file.HEAD + lsm_file.TAIL < size / 4
    with pytest.raises(HudiCorruptFileError, match="were not fetched"):
        lsm.read(["metadata"])
    storage.submit(lsm.load(["metadata"])).result()
    assert lsm.read(["metadata"]).equals(written.select(["metadata"]))
    assert seen.bytes < size - 60_000, "the plans were never read (but for what the tail held)"


def test_small_ends_fetch_the_footer_and_columns_they_missed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = _write(tmp_path / "f.parquet")
    size = (tmp_path / "f.parquet").stat().st_size
    monkeypatch.setattr(lsm_file, "HEAD", 256)
    monkeypatch.setattr(lsm_file, "TAIL", 64)
    storage = Storage(str(tmp_path))
    seen = _Recorded(storage, monkeypatch)
    lsm = _open(storage, size)
    assert lsm.read(INDEX).equals(written.select(INDEX))
    assert len(seen.ranges) >= 4 and seen.whole == 0
    starts = [a for a, _ in seen.ranges]
    assert len(starts) == len(set(starts)), "no range is fetched twice"


@pytest.mark.parametrize("wrong", [None, -1000, -1, 1, 5000])
def test_a_wrong_or_missing_size_reads_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wrong: int | None
) -> None:
    written = _write(tmp_path / "f.parquet")
    size = (tmp_path / "f.parquet").stat().st_size
    storage = Storage(str(tmp_path))
    seen = _Recorded(storage, monkeypatch)
    lsm = _open(storage, None if wrong is None else size + wrong)
    assert lsm.size == size
    assert seen.whole == 1
    assert lsm.read([*INDEX, "metadata"]).equals(written.select([*INDEX, "metadata"]))


@pytest.mark.parametrize("damage", ["truncated", "zeroed-index", "footer-length"])
def test_damage_is_the_projects_error(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "f.parquet"
    _write(path)
    data = bytearray(path.read_bytes())
    size = len(data)
    if damage == "truncated":
        data = data[: size // 2]
    elif damage == "zeroed-index":
        data[4:4000] = bytes(3996)
    else:
        data[-8:-4] = (size * 2).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    storage = Storage(str(tmp_path))
    with pytest.raises(HudiCorruptFileError, match=r"f\.parquet"):
        lsm = _open(storage, size)
        lsm.read(INDEX).column("action").to_pylist()


def test_missing_ranges_are_merged_and_exact(tmp_path: Path) -> None:
    lsm = LsmFile(Storage(str(tmp_path)), "f.parquet", 1000)
    lsm._have = [(100, 200), (150, 300), (500, 600)]
    assert lsm._missing([(0, 1000)]) == [(0, 100), (300, 500), (600, 1000)]
    assert lsm._missing([(120, 280), (550, 590)]) == []
    assert lsm._missing([(50, 120), (290, 510)]) == [(50, 100), (300, 500)]
    assert lsm._missing([(700, 800), (800, 900)]) == [(700, 900)]


def test_a_store_refusing_a_range_past_the_end_reads_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Object stores answer a range past the object's end with an error, not fewer bytes."""
    written = _write(tmp_path / "f.parquet")
    size = (tmp_path / "f.parquet").stat().st_size
    storage = Storage(str(tmp_path))
    seen = _Recorded(storage, monkeypatch)
    ranged = storage.read_range_async

    async def strict(rel: str, start: int, end: int) -> bytes:
        if end > size:
            raise HudiStorageError(f"range {start}-{end} of {rel} is not satisfiable")
        return await ranged(rel, start, end)

    monkeypatch.setattr(storage, "read_range_async", strict)
    lsm = _open(storage, size + 100_000)
    assert lsm.size == size and seen.whole == 1
    assert lsm.read(INDEX).equals(written.select(INDEX))
