"""Rows of the quickstart trips tables (``quickstart_trips_table/*``): columns (ts, uuid,
rider, driver, fare, city), primaryKey uuid, preCombineField ts, PARTITIONED BY (city),
hive style. Every .sql file starts with the same INSERT of eight trips."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tests.expected.model import Columns

# fmt: off
INSERTED = {
    # rider: (uuid, ts, driver, fare, city) as inserted
    # first INSERT (every trips table)
    "rider-A": ("334e26e9-8355-45cc-97c6-c31daf0df330", 1695159649087, "driver-K", 19.10, "san_francisco"),
    "rider-C": ("e96c4396-3fad-413a-a942-4cb36106d721", 1695091554788, "driver-M", 27.70, "san_francisco"),
    "rider-D": ("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", 1695046462179, "driver-L", 33.90, "san_francisco"),
    "rider-E": ("1dced545-862b-4ceb-8b43-d2a568f6616b", 1695332066204, "driver-O", 93.50, "san_francisco"),
    "rider-F": ("e3cf430c-889d-4015-bc98-59bdce1e530c", 1695516137016, "driver-P", 34.15, "sao_paulo"),
    "rider-G": ("7a84095f-737f-40bc-b62f-6b69664712d2", 1695376420876, "driver-Q", 43.40, "sao_paulo"),
    "rider-I": ("3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", 1695173887231, "driver-S", 41.06, "chennai"),
    "rider-J": ("c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", 1695115999911, "driver-T", 17.85, "chennai"),
    # last INSERT of the Lance tables (M, N in both; K, L in the COW table; O, P in the MOR table)
    "rider-M": ("c3d4e5f6-a7b8-9012-cdef-123456789012", 1695800000001, "driver-W", 48.75, "san_francisco"),
    "rider-N": ("d4e5f6a7-b8c9-0123-def0-234567890123", 1695800000002, "driver-X", 37.20, "san_francisco"),
    "rider-K": ("a1b2c3d4-e5f6-7890-abcd-ef1234567890", 1695800000003, "driver-U", 55.00, "sao_paulo"),
    "rider-L": ("b2c3d4e5-f6a7-8901-bcde-f12345678901", 1695800000004, "driver-V", 62.30, "chennai"),
    "rider-O": ("e5f6a7b8-c9d0-1234-ef01-345678901234", 1695900000001, "driver-Y", 71.50, "chennai"),
    "rider-P": ("f6a7b8c9-d0e1-2345-f012-456789012345", 1695900000002, "driver-Z", 29.80, "chennai"),
}
# fmt: on

FIRST_RIDERS = ("rider-A", "rider-C", "rider-D", "rider-E", "rider-F", "rider-G", "rider-I", "rider-J")


def trips(riders: Iterable[str], changes: Mapping[str, Columns] | None = None) -> dict[str, Columns]:
    """Expected rows by rider: each of ``riders`` as inserted, with ``changes``
    (rider -> columns, e.g. an UPDATE) applied."""
    changes = changes or {}
    rows = {}
    for rider in riders:
        uuid, ts, driver, fare, city = INSERTED[rider]
        row: Columns = {"uuid": uuid, "ts": ts, "rider": rider, "driver": driver, "fare": fare, "city": city}
        row |= {"_hoodie_record_key": uuid, "_hoodie_partition_path": f"city={city}"}
        rows[rider] = {**row, **changes.get(rider, {})}
    return rows
