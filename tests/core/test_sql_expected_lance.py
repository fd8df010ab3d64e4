"""The six Lance-base-file tables of ../shared/hudi-tables checked against rows derived
by hand from the Spark SQL (``X.sql``) that wrote them (Hudi 1.2.0-rc1, table version 9,
``'hoodie.table.base.file.format' = 'LANCE'``).

Every expected value below is a literal worked out by applying the statements of the
table's .sql file in order (the comments name the statement); none is computed from
what the reader returns. Each statement that writes data is one completed instant: a
``commit`` on copy-on-write, a ``deltacommit`` on merge-on-read. So ``data_instants[k]``
is the state after the (k+1)-th writing statement.

Read modes exercised: snapshot (latest and time travel ``as of`` an instant),
incremental over (start, end] by completion time (table version 9) and, on the MOR
tables, read-optimized (base files only). On table version 9 a log file is named after
the deltacommit that wrote it, not after the base instant of its file slice.

The two MOR tables disagree with their SQL, and the tests follow the table: in
both, every UPDATE/DELETE after the first UPDATE committed an empty deltacommit (no
write stats, no file written), so those statements have no effect on the rows. Each
table's section lists them and ``*_statements_without_effect`` pins the evidence.

Timestamp columns are not checked: ``txn_datetime`` (TIMESTAMP) holds a UTC value that
depends on the Spark session time zone of the writer, which the SQL does not state.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pytest

import hudi_ray
from tests.support import actions, assert_columns, by_key, keys, open_table, read_rows, rows_of

V9_TRIPS_COW = "quickstart_trips_table/cow/v9_trips_lance"
V9_TRIPS_MOR = "quickstart_trips_table/mor/avro/v9_trips_lance"
V9_NONPARTITIONED = "sample_table/cow/v9_lance_nonpartitioned"
V9_TXNS_NONPART = "sample_table/cow/v9_lance_txns_nonpart"
V9_TXNS_SIMPLE = "sample_table/cow/v9_lance_txns_simple"
V9_NONHIVESTYLE_MOR = "sample_table/mor/avro/v9_lance_nonhivestyle"


# -- helpers -------------------------------------------------------------------------


def _incremental(table: hudi_ray.HudiTable, start: int, end: int) -> list[dict[str, Any]]:
    """Incremental read over (instant ``start``, instant ``end``] by completion time."""
    instants = table.get_timeline().data_instants
    options = (
        hudi_ray.HudiReadOptions()
        .with_query_type(hudi_ray.HudiQueryType.Incremental)
        .with_start_timestamp(instants[start].completed_at)
        .with_end_timestamp(instants[end].completed_at)
    )
    return rows_of(table.read(options))


def _timestamp(table: hudi_ray.HudiTable, k: int) -> str:
    return table.get_timeline().data_instants[k].timestamp


def _written_paths(table: hudi_ray.HudiTable, k: int) -> list[str]:
    """Paths of the files the ``k``-th data instant wrote, from its commit metadata."""
    timeline = table.get_timeline()
    return sorted(stat["path"] for stat in timeline.write_stats(timeline.data_instants[k]))


# =====================================================================================
# The two quickstart trips tables: (ts, uuid, rider, driver, fare, city), primaryKey
# uuid, preCombineField ts, partitioned by city (hive style).
# =====================================================================================

# fmt: off
TRIPS = {
    # rider: (uuid, ts, driver, fare, city) as inserted
    # first INSERT (both tables)
    "rider-A": ("334e26e9-8355-45cc-97c6-c31daf0df330", 1695159649087, "driver-K", 19.10, "san_francisco"),
    "rider-C": ("e96c4396-3fad-413a-a942-4cb36106d721", 1695091554788, "driver-M", 27.70, "san_francisco"),
    "rider-D": ("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", 1695046462179, "driver-L", 33.90, "san_francisco"),
    "rider-E": ("1dced545-862b-4ceb-8b43-d2a568f6616b", 1695332066204, "driver-O", 93.50, "san_francisco"),
    "rider-F": ("e3cf430c-889d-4015-bc98-59bdce1e530c", 1695516137016, "driver-P", 34.15, "sao_paulo"),
    "rider-G": ("7a84095f-737f-40bc-b62f-6b69664712d2", 1695376420876, "driver-Q", 43.40, "sao_paulo"),
    "rider-I": ("3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", 1695173887231, "driver-S", 41.06, "chennai"),
    "rider-J": ("c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", 1695115999911, "driver-T", 17.85, "chennai"),
    # last INSERT (M, N in both tables; K, L in the COW table; O, P in the MOR table)
    "rider-M": ("c3d4e5f6-a7b8-9012-cdef-123456789012", 1695800000001, "driver-W", 48.75, "san_francisco"),
    "rider-N": ("d4e5f6a7-b8c9-0123-def0-234567890123", 1695800000002, "driver-X", 37.20, "san_francisco"),
    "rider-K": ("a1b2c3d4-e5f6-7890-abcd-ef1234567890", 1695800000003, "driver-U", 55.00, "sao_paulo"),
    "rider-L": ("b2c3d4e5-f6a7-8901-bcde-f12345678901", 1695800000004, "driver-V", 62.30, "chennai"),
    "rider-O": ("e5f6a7b8-c9d0-1234-ef01-345678901234", 1695900000001, "driver-Y", 71.50, "chennai"),
    "rider-P": ("f6a7b8c9-d0e1-2345-f012-456789012345", 1695900000002, "driver-Z", 29.80, "chennai"),
}
# fmt: on

FIRST_RIDERS = ("rider-A", "rider-C", "rider-D", "rider-E", "rider-F", "rider-G", "rider-I", "rider-J")
# UPDATE ... SET fare = 0, ts = 1695200000000 WHERE rider = 'rider-A'
RIDER_A_UPDATED = (1695200000000, 0.0)
# UPDATE ... SET fare = 0, ts = 1695400000000 WHERE rider = 'rider-G'
RIDER_G_UPDATED = (1695400000000, 0.0)


def _inserted(*riders: str) -> dict[str, tuple[int, float]]:
    """rider -> (ts, fare) as inserted."""
    return {rider: (TRIPS[rider][1], TRIPS[rider][3]) for rider in riders}


def _assert_trips(rows: list[dict[str, Any]], expected: dict[str, tuple[int, float]]) -> None:
    """``expected``: rider -> (ts, fare); uuid, driver and city are as inserted."""
    by_rider = by_key(rows, "rider")
    assert set(by_rider) == set(expected)
    assert len(rows) == len(expected)
    for rider, (ts, fare) in expected.items():
        uuid, _, driver, _, city = TRIPS[rider]
        row = by_rider[rider]
        assert_columns(row, {"uuid": uuid, "ts": ts, "driver": driver, "fare": fare, "city": city})
        assert row["_hoodie_record_key"] == uuid
        assert row["_hoodie_partition_path"] == f"city={city}"


# =====================================================================================
# quickstart_trips_table/cow/v9_trips_lance  (COW, Lance base files, MDT + record index)
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT rider-A, C, D, E (san_francisco), F, G (sao_paulo), I, J (chennai)
#  1 UPDATE fare = 0, ts = 1695200000000 WHERE rider = 'rider-A'
#  2 DELETE rider-F
#  3 UPDATE fare = 0, ts = 1695400000000 WHERE rider = 'rider-G'
#  4 INSERT rider-M, N (san_francisco), K (sao_paulo), L (chennai)

TRIPS_COW_AFTER_3 = {
    **_inserted("rider-C", "rider-D", "rider-E", "rider-I", "rider-J"),
    "rider-A": RIDER_A_UPDATED,
    "rider-G": RIDER_G_UPDATED,
}
TRIPS_COW_FINAL = {**TRIPS_COW_AFTER_3, **_inserted("rider-M", "rider-N", "rider-K", "rider-L")}


def test_v9_trips_lance_cow_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_TRIPS_COW)) == ["commit"] * 5


def test_v9_trips_lance_cow_snapshot(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_COW)
    rows = read_rows(table)
    # DELETE rider-F; UPDATE rider-A and rider-G; last INSERT adds K, L, M, N.
    _assert_trips(rows, TRIPS_COW_FINAL)
    assert len(rows) == 11
    commit_times = {r["rider"]: r["_hoodie_commit_time"] for r in rows}
    assert commit_times["rider-A"] == _timestamp(table, 1)
    assert commit_times["rider-G"] == _timestamp(table, 3)
    assert commit_times["rider-C"] == _timestamp(table, 0)
    assert commit_times["rider-K"] == _timestamp(table, 4)


def test_v9_trips_lance_cow_time_travel(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_COW)
    # As of 0: the 8 inserted trips.
    _assert_trips(read_rows(table, as_of_instant=0), _inserted(*FIRST_RIDERS))
    # As of 1: UPDATE rider-A (fare 19.10 -> 0).
    _assert_trips(read_rows(table, as_of_instant=1), {**_inserted(*FIRST_RIDERS), "rider-A": RIDER_A_UPDATED})
    # As of 2: DELETE rider-F; rider-G still at 43.40.
    after_2 = {**_inserted(*FIRST_RIDERS), "rider-A": RIDER_A_UPDATED}
    del after_2["rider-F"]
    _assert_trips(read_rows(table, as_of_instant=2), after_2)
    # As of 3: UPDATE rider-G (fare 43.40 -> 0).
    _assert_trips(read_rows(table, as_of_instant=3), TRIPS_COW_AFTER_3)
    # As of 4 = latest.
    _assert_trips(read_rows(table, as_of_instant=4), TRIPS_COW_FINAL)


def test_v9_trips_lance_cow_incremental(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_COW)
    # (0, 1]: UPDATE rider-A.
    rows = _incremental(table, 0, 1)
    _assert_trips(rows, {"rider-A": RIDER_A_UPDATED})
    assert rows[0]["_hoodie_commit_time"] == _timestamp(table, 1)
    # (1, 2]: only DELETE rider-F -> nothing to return.
    assert _incremental(table, 1, 2) == []
    # (2, 3]: UPDATE rider-G.
    _assert_trips(_incremental(table, 2, 3), {"rider-G": RIDER_G_UPDATED})
    # (3, 4]: last INSERT.
    _assert_trips(_incremental(table, 3, 4), _inserted("rider-M", "rider-N", "rider-K", "rider-L"))
    # (0, 3]: UPDATE rider-A, DELETE rider-F (absent), UPDATE rider-G.
    _assert_trips(_incremental(table, 0, 3), {"rider-A": RIDER_A_UPDATED, "rider-G": RIDER_G_UPDATED})


def test_v9_trips_lance_cow_filters(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_COW)
    # sao_paulo: F deleted, G updated, K inserted last.
    assert keys(read_rows(table, filters=[("city", "=", "sao_paulo")]), "rider") == ["rider-G", "rider-K"]
    # fare > 40: E 93.50, I 41.06, K 55.00, L 62.30, M 48.75 (A and G now 0).
    assert keys(read_rows(table, filters=[("fare", ">", "40")]), "rider") == [
        "rider-E",
        "rider-I",
        "rider-K",
        "rider-L",
        "rider-M",
    ]
    # As of 0: fare > 40 was E 93.50, G 43.40, I 41.06.
    assert keys(read_rows(table, as_of_instant=0, filters=[("fare", ">", "40")]), "rider") == [
        "rider-E",
        "rider-G",
        "rider-I",
    ]


# =====================================================================================
# quickstart_trips_table/mor/avro/v9_trips_lance  (MOR, Lance base files, Avro log
# blocks, inline compaction off)
# =====================================================================================
# data_instants (all deltacommits), with what the SQL says and what the table holds:
#  0 INSERT 8 trips: base files in san_francisco, sao_paulo, chennai
#  1 UPDATE fare = 0, ts = 1695200000000 WHERE rider = 'rider-A': one Avro log file in
#    city=san_francisco (.8d159e29-..._<instant 1>.log.1)
#  2 UPDATE fare = 15.50, ts = 1695250000000 WHERE rider = 'rider-C'   -- no effect
#  3 DELETE rider-F                                                   -- no effect
#  4 UPDATE fare = 0, ts = 1695400000000 WHERE rider = 'rider-G'      -- no effect
#  5 DELETE rider-J                                                   -- no effect
#  6 INSERT rider-M, N (san_francisco), O, P (chennai): new base files
# "No effect": the deltacommit completed with no write stats and no file was written
# (the only log file in the table is instant 1's, holding rider-A alone), so Apache
# Hudi read the statement as matching no rows. The SQL intends rider-C fare 15.50, F
# and J deleted and G fare 0; no reader can show that from this table, so the tests
# follow the table (as hudi-rs does). No compaction ran: read-optimized never shows
# the UPDATE of rider-A.

TRIPS_MOR_AFTER_1 = {**_inserted(*FIRST_RIDERS), "rider-A": RIDER_A_UPDATED}
TRIPS_MOR_FINAL = {**TRIPS_MOR_AFTER_1, **_inserted("rider-M", "rider-N", "rider-O", "rider-P")}


def test_v9_trips_lance_mor_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_TRIPS_MOR)) == ["deltacommit"] * 7


def test_v9_trips_lance_mor_statements_without_effect(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_MOR)
    # Instant 1 (UPDATE rider-A) wrote one log file; instants 2-5 wrote nothing.
    [log] = _written_paths(table, 1)
    assert log.startswith("city=san_francisco/.8d159e29-8789-4cf9-8fc4-73717c7258c7-0_")
    assert f"_{_timestamp(table, 1)}.log.1_" in log
    for k in (2, 3, 4, 5):
        assert _written_paths(table, k) == [], k
    assert len(_written_paths(table, 6)) == 2  # san_francisco and chennai base files


def test_v9_trips_lance_mor_snapshot(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_MOR)
    rows = read_rows(table)
    # rider-A from the log (fare 0); C, F, G, J as inserted (statements 2-5 had no
    # effect; the SQL intends C 15.50 and F, J deleted, G 0); M, N, O, P inserted.
    _assert_trips(rows, TRIPS_MOR_FINAL)
    assert len(rows) == 12
    commit_times = {r["rider"]: r["_hoodie_commit_time"] for r in rows}
    assert commit_times["rider-A"] == _timestamp(table, 1)
    assert commit_times["rider-C"] == _timestamp(table, 0)
    assert commit_times["rider-O"] == _timestamp(table, 6)


def test_v9_trips_lance_mor_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_MOR)
    # As of 0: base files only.
    _assert_trips(read_rows(table, as_of_instant=0), _inserted(*FIRST_RIDERS))
    # As of 1: UPDATE rider-A lives only in the log file -> merged over the Lance base.
    _assert_trips(read_rows(table, as_of_instant=1), TRIPS_MOR_AFTER_1)
    # As of 2, 3, 4, 5: the empty deltacommits change nothing.
    for k in (2, 3, 4, 5):
        _assert_trips(read_rows(table, as_of_instant=k), TRIPS_MOR_AFTER_1)
    # As of 6 = latest.
    _assert_trips(read_rows(table, as_of_instant=6), TRIPS_MOR_FINAL)


def test_v9_trips_lance_mor_read_optimized(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_MOR)
    # Latest: the base files of statements 0 and 6; rider-A's log is not applied.
    _assert_trips(
        read_rows(table, read_optimized=True),
        _inserted(*FIRST_RIDERS, "rider-M", "rider-N", "rider-O", "rider-P"),
    )
    # As of 1: the log of statement 1 exists but is not applied.
    _assert_trips(read_rows(table, as_of_instant=1, read_optimized=True), _inserted(*FIRST_RIDERS))


def test_v9_trips_lance_mor_incremental(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_MOR)
    # (0, 1]: UPDATE rider-A (from the log).
    rows = _incremental(table, 0, 1)
    _assert_trips(rows, {"rider-A": RIDER_A_UPDATED})
    assert rows[0]["_hoodie_commit_time"] == _timestamp(table, 1)
    # (1, 5]: the four empty deltacommits -> nothing.
    assert _incremental(table, 1, 5) == []
    # (5, 6]: last INSERT.
    _assert_trips(_incremental(table, 5, 6), _inserted("rider-M", "rider-N", "rider-O", "rider-P"))
    # (0, 6]: rider-A's update and the last INSERT.
    _assert_trips(
        _incremental(table, 0, 6),
        {"rider-A": RIDER_A_UPDATED, **_inserted("rider-M", "rider-N", "rider-O", "rider-P")},
    )


def test_v9_trips_lance_mor_filters(table_path) -> None:
    table = open_table(table_path, V9_TRIPS_MOR)
    # chennai: I, J (not deleted, see above), O, P.
    assert keys(read_rows(table, filters=[("city", "=", "chennai")]), "rider") == [
        "rider-I",
        "rider-J",
        "rider-O",
        "rider-P",
    ]
    # fare < 20: A (0, from the log), J 17.85. Read-optimized: A 19.10, J 17.85.
    assert keys(read_rows(table, filters=[("fare", "<", "20")]), "rider") == ["rider-A", "rider-J"]
    rows = read_rows(table, filters=[("fare", "<", "20")], read_optimized=True)
    _assert_trips(rows, _inserted("rider-A", "rider-J"))
    # fare < 1 holds only after the log merge (A's base row has 19.10).
    _assert_trips(read_rows(table, filters=[("fare", "<", "1")]), {"rider-A": RIDER_A_UPDATED})
    assert read_rows(table, filters=[("fare", "<", "1")], read_optimized=True) == []


# =====================================================================================
# sample_table/cow/v9_lance_nonpartitioned  (COW, non-partitioned, primaryKey id,
# preCombineField updated_at)
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT ids 1..8
#  1 UPDATE score = 0.96, updated_at = 1700100000000 WHERE id = 1
#  2 UPDATE score = 0.93, tags = array('bert', 'transformer', 'finetuned'),
#    updated_at = 1700100000001 WHERE id = 2
#  3 DELETE id 4
#  4 INSERT ids 9, 10 (a new file group; small file limit 0)

# fmt: off
FEATURES = {
    # id: (name, category, score, tags, updated_at) as inserted
    1: ("feature-set-alpha", "vision", 0.92, ["cnn", "resnet", "imagenet"], 1700000000000),
    2: ("feature-set-beta", "nlp", 0.87, ["bert", "transformer"], 1700000000001),
    3: ("feature-set-gamma", "vision", 0.95, ["yolo", "detection"], 1700000000002),
    4: ("feature-set-delta", "audio", 0.78, ["wav2vec", "speech"], 1700000000003),
    5: ("feature-set-epsilon", "nlp", 0.91, ["gpt", "generation"], 1700000000004),
    6: ("feature-set-zeta", "tabular", 0.89, ["xgboost", "classification"], 1700000000005),
    7: ("feature-set-eta", "vision", 0.88, ["segmentation", "unet"], 1700000000006),
    8: ("feature-set-theta", "audio", 0.82, ["whisper", "transcription"], 1700000000007),
    9: ("feature-set-iota", "multimodal", 0.94, ["clip", "contrastive"], 1700200000000),
    10: ("feature-set-kappa", "vision", 0.97, ["sam", "segmentation", "foundation"], 1700200000001),
}
# fmt: on
FEATURE_1_UPDATED = {"score": 0.96, "updated_at": 1700100000000}
FEATURE_2_UPDATED = {"score": 0.93, "tags": ["bert", "transformer", "finetuned"], "updated_at": 1700100000001}


def _assert_features(rows: list[dict[str, Any]], ids: set[int], **changes: dict[str, Any]) -> None:
    """Rows are exactly ``ids``, as inserted, with ``changes`` ("id_<n>" -> columns) applied."""
    by_id = by_key(rows, "id")
    assert set(by_id) == ids
    assert len(rows) == len(ids)
    for id_ in ids:
        name, category, score, tags, updated_at = FEATURES[id_]
        expected = {"id": id_, "name": name, "category": category, "score": score, "tags": tags}
        expected["updated_at"] = updated_at
        expected.update(changes.get(f"id_{id_}", {}))
        row = by_id[id_]
        assert_columns(row, expected)
        assert row["_hoodie_record_key"] == str(id_)
        assert row["_hoodie_partition_path"] == ""


def test_v9_lance_nonpartitioned_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_NONPARTITIONED)) == ["commit"] * 5


def test_v9_lance_nonpartitioned_snapshot(table_path) -> None:
    table = open_table(table_path, V9_NONPARTITIONED)
    rows = read_rows(table)
    # DELETE id 4; UPDATE ids 1, 2; INSERT 9, 10.
    _assert_features(rows, {1, 2, 3, 5, 6, 7, 8, 9, 10}, id_1=FEATURE_1_UPDATED, id_2=FEATURE_2_UPDATED)
    commit_times = {r["id"]: r["_hoodie_commit_time"] for r in rows}
    assert commit_times[1] == _timestamp(table, 1)
    assert commit_times[2] == _timestamp(table, 2)
    assert commit_times[3] == _timestamp(table, 0)
    assert commit_times[10] == _timestamp(table, 4)


def test_v9_lance_nonpartitioned_time_travel(table_path) -> None:
    table = open_table(table_path, V9_NONPARTITIONED)
    first_eight = set(range(1, 9))
    _assert_features(read_rows(table, as_of_instant=0), first_eight)
    # As of 1: id 1 updated, id 2 not yet.
    _assert_features(read_rows(table, as_of_instant=1), first_eight, id_1=FEATURE_1_UPDATED)
    # As of 2: id 2's score and tags updated.
    after_2 = {"id_1": FEATURE_1_UPDATED, "id_2": FEATURE_2_UPDATED}
    _assert_features(read_rows(table, as_of_instant=2), first_eight, **after_2)
    # As of 3: DELETE id 4.
    _assert_features(read_rows(table, as_of_instant=3), first_eight - {4}, **after_2)


def test_v9_lance_nonpartitioned_incremental(table_path) -> None:
    table = open_table(table_path, V9_NONPARTITIONED)
    _assert_features(_incremental(table, 0, 1), {1}, id_1=FEATURE_1_UPDATED)
    _assert_features(_incremental(table, 1, 2), {2}, id_2=FEATURE_2_UPDATED)
    # (2, 3]: only DELETE id 4.
    assert _incremental(table, 2, 3) == []
    _assert_features(_incremental(table, 3, 4), {9, 10})
    # (0, 3]: both UPDATEs; the DELETE returns nothing.
    _assert_features(_incremental(table, 0, 3), {1, 2}, id_1=FEATURE_1_UPDATED, id_2=FEATURE_2_UPDATED)


def test_v9_lance_nonpartitioned_filters(table_path) -> None:
    table = open_table(table_path, V9_NONPARTITIONED)
    assert keys(read_rows(table, filters=[("category", "=", "vision")]), "id") == [1, 3, 7, 10]
    # score > 0.945: 1 (0.96 after the UPDATE), 3 (0.95), 10 (0.97).
    assert keys(read_rows(table, filters=[("score", ">", "0.945")]), "id") == [1, 3, 10]
    # audio: 4 deleted, 8 left; as of 2 both.
    assert keys(read_rows(table, filters=[("category", "=", "audio")]), "id") == [8]
    assert keys(read_rows(table, as_of_instant=2, filters=[("category", "=", "audio")]), "id") == [4, 8]


# =====================================================================================
# sample_table/cow/v9_lance_txns_simple  (partitioned by region, hive style) and
# sample_table/cow/v9_lance_txns_nonpart  (NonpartitionedKeyGenerator, no region column)
# Both: primaryKey txn_id, preCombineField txn_ts, MDT + record index, same statements.
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT TXN-001..008                 1 UPDATE TXN-001 -> reversal
#  2 DELETE TXN-002                      3 UPDATE TXN-005 amount 2500.00
#  4 DELETE TXN-005                      5 UPDATE TXN-007 fee 75.00
#  6 INSERT TXN-009, 010 (eu)            7 INSERT TXN-011, 012 (eu)
#  8 INSERT TXN-013, 014 (us)            9 INSERT TXN-015, 016 (apac)
# Every INSERT writes a new file group (small file limit 0); UPDATE and DELETE rewrite
# the file group holding the key.

# fmt: off
TXNS = {
    # txn_id: (account_id, txn_ts, txn_date, amount, currency, txn_type, merchant_name,
    #          is_international, fee_amount, txn_metadata, region)
    "TXN-001": ("ACC-A", 1700000000001, "2024-01-15", "1250.00", "USD", "debit", "Amazon", False, "0.00",
                '{"category":"retail","mcc":"5411","risk_score":0.05}', "us"),
    "TXN-002": ("ACC-B", 1700000000002, "2024-01-15", "89.99", "USD", "debit", "Netflix", False, "0.00",
                '{"category":"subscription","mcc":"4899","risk_score":0.02}', "us"),
    "TXN-003": ("ACC-A", 1700000000003, "2024-01-15", "5000.00", "USD", "transfer", None, False, "25.00",
                '{"category":"transfer","mcc":"4829","risk_score":0.15}', "us"),
    "TXN-004": ("ACC-C", 1700000000004, "2024-01-15", "450.75", "EUR", "debit", "Zalando", False, "0.00",
                '{"category":"retail","mcc":"5651","risk_score":0.03}', "eu"),
    "TXN-005": ("ACC-D", 1700000000005, "2024-01-15", "2100.00", "GBP", "credit", "Salary Deposit", False, "0.00",
                '{"category":"income","mcc":"6011","risk_score":0.01}', "eu"),
    "TXN-006": ("ACC-C", 1700000000006, "2024-01-15", "175.50", "EUR", "debit", "Lufthansa", True, "3.50",
                '{"category":"travel","mcc":"3000","risk_score":0.08}', "eu"),
    "TXN-007": ("ACC-E", 1700000000007, "2024-01-16", "8900.00", "USD", "debit", "Singapore Airlines", True, "45.00",
                '{"category":"travel","mcc":"3000","risk_score":0.12}', "apac"),
    "TXN-008": ("ACC-F", 1700000000008, "2024-01-16", "320.25", "USD", "debit", "Grab", False, "0.00",
                '{"category":"transport","mcc":"4121","risk_score":0.04}', "apac"),
    "TXN-009": ("ACC-G", 1700400000009, "2024-01-17", "1500.00", "EUR", "debit", "IKEA", False, "0.00",
                '{"category":"retail","mcc":"5712","risk_score":0.04}', "eu"),
    "TXN-010": ("ACC-H", 1700400000010, "2024-01-17", "2200.00", "EUR", "transfer", None, False, "15.00",
                '{"category":"transfer","mcc":"4829","risk_score":0.10}', "eu"),
    "TXN-011": ("ACC-I", 1700500000011, "2024-01-18", "999.99", "EUR", "debit", "MediaMarkt", False, "0.00",
                '{"category":"electronics","mcc":"5732","risk_score":0.06}', "eu"),
    "TXN-012": ("ACC-J", 1700500000012, "2024-01-18", "350.00", "GBP", "debit", "British Airways", True, "7.50",
                '{"category":"travel","mcc":"3000","risk_score":0.09}', "eu"),
    "TXN-013": ("ACC-K", 1700600000013, "2024-01-19", "750.00", "USD", "debit", "Best Buy", False, "0.00",
                '{"category":"electronics","mcc":"5732","risk_score":0.05}', "us"),
    "TXN-014": ("ACC-L", 1700600000014, "2024-01-19", "125.50", "USD", "debit", "Uber", False, "0.00",
                '{"category":"transport","mcc":"4121","risk_score":0.03}', "us"),
    "TXN-015": ("ACC-M", 1700700000015, "2024-01-20", "4500.00", "USD", "debit", "Japan Airlines", True, "50.00",
                '{"category":"travel","mcc":"3000","risk_score":0.11}', "apac"),
    "TXN-016": ("ACC-N", 1700700000016, "2024-01-20", "88.00", "USD", "debit", "GrabFood", False, "0.00",
                '{"category":"food","mcc":"5812","risk_score":0.02}', "apac"),
}
# fmt: on

# UPDATE ... SET txn_type = 'reversal', txn_ts = 1700100000001 WHERE txn_id = 'TXN-001'
TXN_001_UPDATED = {"txn_type": "reversal", "txn_ts": 1700100000001}
# UPDATE ... SET amount = 2500.00, txn_ts = 1700200000005 WHERE txn_id = 'TXN-005'
TXN_005_UPDATED = {"amount": Decimal("2500.00"), "txn_ts": 1700200000005}
# UPDATE ... SET fee_amount = 75.00, txn_ts = 1700300000007 WHERE txn_id = 'TXN-007'
TXN_007_UPDATED = {"fee_amount": Decimal("75.00"), "txn_ts": 1700300000007}

# The statements of both .sql files, in order: (INSERT, ids) / (UPDATE, id, columns) / (DELETE, id).
TXNS_STATEMENTS: list[tuple[Any, ...]] = [
    ("INSERT", [f"TXN-00{i}" for i in range(1, 9)]),
    ("UPDATE", "TXN-001", TXN_001_UPDATED),
    ("DELETE", "TXN-002"),
    ("UPDATE", "TXN-005", TXN_005_UPDATED),
    ("DELETE", "TXN-005"),
    ("UPDATE", "TXN-007", TXN_007_UPDATED),
    ("INSERT", ["TXN-009", "TXN-010"]),
    ("INSERT", ["TXN-011", "TXN-012"]),
    ("INSERT", ["TXN-013", "TXN-014"]),
    ("INSERT", ["TXN-015", "TXN-016"]),
]
TXNS_FINAL_KEYS = {f"TXN-{i:03d}" for i in range(1, 17)} - {"TXN-002", "TXN-005"}


def _txn(txn_id: str, with_region: bool) -> dict[str, Any]:
    """Columns of ``txn_id`` as inserted (txn_datetime not checked, see the docstring)."""
    account, ts, date, amount, currency, txn_type, merchant, intl, fee, metadata, region = TXNS[txn_id]
    expected: dict[str, Any] = {
        "txn_id": txn_id,
        "account_id": account,
        "txn_ts": ts,
        "txn_date": datetime.date.fromisoformat(date),
        "amount": Decimal(amount),
        "currency": currency,
        "txn_type": txn_type,
        "merchant_name": merchant,
        "is_international": intl,
        "fee_amount": Decimal(fee),
        "txn_metadata": metadata,
    }
    if with_region:
        expected["region"] = region
    return expected


def _txns_after(k: int, with_region: bool) -> dict[str, dict[str, Any]]:
    """Expected rows after statements 0..k of TXNS_STATEMENTS, by txn_id."""
    state: dict[str, dict[str, Any]] = {}
    for statement in TXNS_STATEMENTS[: k + 1]:
        if statement[0] == "INSERT":
            state.update({txn_id: _txn(txn_id, with_region) for txn_id in statement[1]})
        elif statement[0] == "UPDATE":
            state[statement[1]] = {**state[statement[1]], **statement[2]}
        else:
            del state[statement[1]]
    return state


def _assert_txns(rows: list[dict[str, Any]], expected: dict[str, dict[str, Any]], partitioned: bool) -> None:
    keyed = by_key(rows)
    assert set(keyed) == set(expected)
    assert len(rows) == len(expected)
    for txn_id, columns in expected.items():
        assert_columns(keyed[txn_id], columns)
        partition = f"region={TXNS[txn_id][10]}" if partitioned else ""
        assert keyed[txn_id]["_hoodie_partition_path"] == partition


def _check_txns_snapshot(table: hudi_ray.HudiTable, partitioned: bool) -> None:
    rows = read_rows(table)
    expected = _txns_after(9, partitioned)
    assert set(expected) == TXNS_FINAL_KEYS
    _assert_txns(rows, expected, partitioned)
    keyed = by_key(rows)
    # DELETE TXN-002; UPDATE then DELETE TXN-005.
    assert "TXN-002" not in keyed
    assert "TXN-005" not in keyed
    # The UPDATEs, spelled out.
    assert_columns(keyed["TXN-001"], {"txn_type": "reversal", "txn_ts": 1700100000001, "amount": Decimal("1250.00")})
    assert_columns(keyed["TXN-007"], {"fee_amount": Decimal("75.00"), "txn_ts": 1700300000007})
    assert keyed["TXN-003"]["merchant_name"] is None
    assert keyed["TXN-001"]["_hoodie_commit_time"] == _timestamp(table, 1)
    assert keyed["TXN-007"]["_hoodie_commit_time"] == _timestamp(table, 5)
    assert keyed["TXN-016"]["_hoodie_commit_time"] == _timestamp(table, 9)


def _check_txns_time_travel(table: hudi_ray.HudiTable, partitioned: bool) -> None:
    assert len(table.get_timeline().data_instants) == len(TXNS_STATEMENTS)
    for k in range(len(TXNS_STATEMENTS)):
        _assert_txns(read_rows(table, as_of_instant=k), _txns_after(k, partitioned), partitioned)
    # Spelled out for the steps around TXN-005:
    after_2 = by_key(read_rows(table, as_of_instant=2))
    assert_columns(after_2["TXN-005"], {"amount": Decimal("2100.00"), "txn_ts": 1700000000005})
    after_3 = by_key(read_rows(table, as_of_instant=3))
    assert_columns(after_3["TXN-005"], {"amount": Decimal("2500.00"), "txn_ts": 1700200000005})
    assert_columns(after_3["TXN-007"], {"fee_amount": Decimal("45.00")})
    assert "TXN-005" not in by_key(read_rows(table, as_of_instant=4))


def _check_txns_incremental(table: hudi_ray.HudiTable, partitioned: bool) -> None:
    def expected(*changed: tuple[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {txn_id: {**_txn(txn_id, partitioned), **columns} for txn_id, columns in changed}

    # (0, 1]: UPDATE TXN-001.
    rows = _incremental(table, 0, 1)
    _assert_txns(rows, expected(("TXN-001", TXN_001_UPDATED)), partitioned)
    assert rows[0]["_hoodie_commit_time"] == _timestamp(table, 1)
    # (1, 2] and (3, 4]: only a DELETE -> nothing.
    assert _incremental(table, 1, 2) == []
    assert _incremental(table, 3, 4) == []
    # (2, 3]: UPDATE TXN-005 amount 2500.00.
    _assert_txns(_incremental(table, 2, 3), expected(("TXN-005", TXN_005_UPDATED)), partitioned)
    # (2, 4]: UPDATE then DELETE TXN-005 -> nothing.
    assert _incremental(table, 2, 4) == []
    # (4, 5]: UPDATE TXN-007 fee 75.00.
    _assert_txns(_incremental(table, 4, 5), expected(("TXN-007", TXN_007_UPDATED)), partitioned)
    # (0, 5]: TXN-001 and TXN-007 updated; 002 and 005 deleted.
    _assert_txns(
        _incremental(table, 0, 5), expected(("TXN-001", TXN_001_UPDATED), ("TXN-007", TXN_007_UPDATED)), partitioned
    )
    # (5, 6], (6, 7], (7, 8], (8, 9]: one INSERT each.
    for k, inserted in ((6, ("TXN-009", "TXN-010")), (7, ("TXN-011", "TXN-012")), (8, ("TXN-013", "TXN-014"))):
        _assert_txns(_incremental(table, k - 1, k), expected(*((t, {}) for t in inserted)), partitioned)
    _assert_txns(_incremental(table, 8, 9), expected(("TXN-015", {}), ("TXN-016", {})), partitioned)


def test_v9_lance_txns_simple_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_TXNS_SIMPLE)) == ["commit"] * 10


def test_v9_lance_txns_simple_snapshot(table_path) -> None:
    table = open_table(table_path, V9_TXNS_SIMPLE)
    _check_txns_snapshot(table, partitioned=True)
    partitions = {r["txn_id"]: r["_hoodie_partition_path"] for r in read_rows(table)}
    assert partitions == {
        "TXN-001": "region=us",
        "TXN-003": "region=us",
        "TXN-013": "region=us",
        "TXN-014": "region=us",
        "TXN-004": "region=eu",
        "TXN-006": "region=eu",
        "TXN-009": "region=eu",
        "TXN-010": "region=eu",
        "TXN-011": "region=eu",
        "TXN-012": "region=eu",
        "TXN-007": "region=apac",
        "TXN-008": "region=apac",
        "TXN-015": "region=apac",
        "TXN-016": "region=apac",
    }


def test_v9_lance_txns_simple_time_travel(table_path) -> None:
    _check_txns_time_travel(open_table(table_path, V9_TXNS_SIMPLE), partitioned=True)


def test_v9_lance_txns_simple_incremental(table_path) -> None:
    _check_txns_incremental(open_table(table_path, V9_TXNS_SIMPLE), partitioned=True)


def test_v9_lance_txns_simple_filters(table_path) -> None:
    table = open_table(table_path, V9_TXNS_SIMPLE)
    # us: 001 (reversal), 003 (transfer), 013, 014 (debit).
    rows = read_rows(table, filters=[("region", "=", "us"), ("txn_type", "=", "debit")])
    assert keys(rows) == ["TXN-013", "TXN-014"]
    # eu: 004 (450.75), 006 (175.50), 009 (1500.00), 010 (2200.00), 011 (999.99), 012 (350.00).
    rows = read_rows(table, filters=[("region", "=", "eu"), ("amount", ">", "300")])
    assert keys(rows) == ["TXN-004", "TXN-009", "TXN-010", "TXN-011", "TXN-012"]
    # apac, international: 007 and 015.
    rows = read_rows(table, filters=[("region", "=", "apac"), ("is_international", "=", "true")])
    assert keys(rows) == ["TXN-007", "TXN-015"]
    # As of 3, eu GBP was TXN-005 (2500.00 after the UPDATE); 012 not yet inserted.
    rows = read_rows(table, as_of_instant=3, filters=[("region", "=", "eu"), ("currency", "=", "GBP")])
    assert keys(rows) == ["TXN-005"]
    assert_columns(rows[0], TXN_005_UPDATED)


def test_v9_lance_txns_nonpart_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_TXNS_NONPART)) == ["commit"] * 10


def test_v9_lance_txns_nonpart_snapshot(table_path) -> None:
    table = open_table(table_path, V9_TXNS_NONPART)
    _check_txns_snapshot(table, partitioned=False)
    rows = read_rows(table)
    assert "region" not in rows[0]


def test_v9_lance_txns_nonpart_time_travel(table_path) -> None:
    _check_txns_time_travel(open_table(table_path, V9_TXNS_NONPART), partitioned=False)


def test_v9_lance_txns_nonpart_incremental(table_path) -> None:
    _check_txns_incremental(open_table(table_path, V9_TXNS_NONPART), partitioned=False)


def test_v9_lance_txns_nonpart_filters(table_path) -> None:
    table = open_table(table_path, V9_TXNS_NONPART)
    # Transfers: 003 and 010.
    assert keys(read_rows(table, filters=[("txn_type", "=", "transfer")])) == ["TXN-003", "TXN-010"]
    # GBP: 005 (deleted) and 012; as of 3 only 005.
    assert keys(read_rows(table, filters=[("currency", "=", "GBP")])) == ["TXN-012"]
    assert keys(read_rows(table, as_of_instant=3, filters=[("currency", "=", "GBP")])) == ["TXN-005"]
    # amount >= 4500: 003 (5000.00), 007 (8900.00), 015 (4500.00, on the bound).
    assert keys(read_rows(table, filters=[("amount", ">=", "4500")])) == ["TXN-003", "TXN-007", "TXN-015"]


# =====================================================================================
# sample_table/mor/avro/v9_lance_nonhivestyle  (MOR, Lance base files, Avro log blocks,
# partitioned by event_date, non-hive style: partition paths "2023-11-14", ...)
# =====================================================================================
# data_instants (all deltacommits), with what the SQL says and what the table holds:
#  0 INSERT evt-001..004 (2023-11-14), evt-005..008 (2023-11-15): base files
#  1 INSERT evt-009..012 (2023-11-16): base file
#  2 UPDATE payload = '{"page": "/home", "session": "sess-abc123"}',
#    event_ts = 1700000000001 WHERE event_id = 'evt-001': one Avro log file in
#    2023-11-14 (.875d6ca6-..._<instant 2>.log.1)
#  3 UPDATE payload/event_ts WHERE event_id = 'evt-002'               -- no effect
#  4 DELETE WHERE user_id = 'user-103' (evt-007, evt-008)            -- no effect
#  5 INSERT evt-013, 014 (2023-11-17): base file
# "No effect": as in the MOR trips table, the deltacommit completed with no write
# stats and no file was written (the only log file holds evt-001 alone). The SQL
# intends evt-002's payload '{"button": "signup", "session": "sess-abc123"}' and
# evt-007, evt-008 deleted; the tests follow the table. No compaction ran.

# fmt: off
EVENTS = {
    # event_id: (user_id, event_type, payload, event_ts, event_date) as inserted
    "evt-001": ("user-100", "page_view", '{"page": "/home"}', 1700000000000, "2023-11-14"),
    "evt-002": ("user-100", "click", '{"button": "signup"}', 1700000060000, "2023-11-14"),
    "evt-003": ("user-101", "page_view", '{"page": "/pricing"}', 1700000120000, "2023-11-14"),
    "evt-004": ("user-102", "purchase", '{"item": "pro-plan", "amount": 49.99}', 1700000180000, "2023-11-14"),
    "evt-005": ("user-100", "page_view", '{"page": "/docs"}', 1700086400000, "2023-11-15"),
    "evt-006": ("user-101", "click", '{"button": "download"}', 1700086460000, "2023-11-15"),
    "evt-007": ("user-103", "signup", '{"method": "google"}', 1700086520000, "2023-11-15"),
    "evt-008": ("user-103", "page_view", '{"page": "/onboarding"}', 1700086580000, "2023-11-15"),
    "evt-009": ("user-100", "purchase", '{"item": "enterprise", "amount": 199.99}', 1700172800000, "2023-11-16"),
    "evt-010": ("user-102", "page_view", '{"page": "/settings"}', 1700172860000, "2023-11-16"),
    "evt-011": ("user-101", "purchase", '{"item": "team-plan", "amount": 99.99}', 1700172920000, "2023-11-16"),
    "evt-012": ("user-104", "signup", '{"method": "email"}', 1700172980000, "2023-11-16"),
    "evt-013": ("user-100", "feature_use", '{"feature": "dashboard"}', 1700259200000, "2023-11-17"),
    "evt-014": ("user-101", "feature_use", '{"feature": "reports"}', 1700259260000, "2023-11-17"),
}
# fmt: on
EVT_001_UPDATED = {"payload": '{"page": "/home", "session": "sess-abc123"}', "event_ts": 1700000000001}
EVENTS_0 = {f"evt-00{i}" for i in range(1, 9)}
EVENTS_1 = EVENTS_0 | {"evt-009", "evt-010", "evt-011", "evt-012"}
EVENTS_ALL = EVENTS_1 | {"evt-013", "evt-014"}


def _assert_events(rows: list[dict[str, Any]], ids: set[str], evt_001_updated: bool) -> None:
    """Rows are exactly ``ids``, as inserted; evt-001 with its UPDATE if ``evt_001_updated``."""
    keyed = by_key(rows)
    assert set(keyed) == ids
    assert len(rows) == len(ids)
    for event_id in ids:
        user, event_type, payload, event_ts, event_date = EVENTS[event_id]
        expected = {
            "event_id": event_id,
            "user_id": user,
            "event_type": event_type,
            "payload": payload,
            "event_ts": event_ts,
            "event_date": event_date,
        }
        if event_id == "evt-001" and evt_001_updated:
            expected.update(EVT_001_UPDATED)
        assert_columns(keyed[event_id], expected)
        assert keyed[event_id]["_hoodie_partition_path"] == event_date


def test_v9_lance_nonhivestyle_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_NONHIVESTYLE_MOR)) == ["deltacommit"] * 6


def test_v9_lance_nonhivestyle_statements_without_effect(table_path) -> None:
    table = open_table(table_path, V9_NONHIVESTYLE_MOR)
    # Instant 2 (UPDATE evt-001) wrote one log file; instants 3 and 4 wrote nothing.
    [log] = _written_paths(table, 2)
    assert log.startswith("2023-11-14/.875d6ca6-3b66-40b6-9294-086a2c4489cd-0_")
    assert f"_{_timestamp(table, 2)}.log.1_" in log
    assert _written_paths(table, 3) == []
    assert _written_paths(table, 4) == []


def test_v9_lance_nonhivestyle_snapshot(table_path) -> None:
    table = open_table(table_path, V9_NONHIVESTYLE_MOR)
    rows = read_rows(table)
    # evt-001 from the log; evt-002 unchanged and evt-007, evt-008 present (statements
    # 3 and 4 had no effect, see above).
    _assert_events(rows, EVENTS_ALL, evt_001_updated=True)
    assert len(rows) == 14
    keyed = by_key(rows)
    assert keyed["evt-001"]["_hoodie_commit_time"] == _timestamp(table, 2)
    assert keyed["evt-002"]["_hoodie_commit_time"] == _timestamp(table, 0)
    assert keyed["evt-013"]["_hoodie_commit_time"] == _timestamp(table, 5)


def test_v9_lance_nonhivestyle_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V9_NONHIVESTYLE_MOR)
    _assert_events(read_rows(table, as_of_instant=0), EVENTS_0, evt_001_updated=False)
    _assert_events(read_rows(table, as_of_instant=1), EVENTS_1, evt_001_updated=False)
    # As of 2: UPDATE evt-001 lives only in the log file.
    _assert_events(read_rows(table, as_of_instant=2), EVENTS_1, evt_001_updated=True)
    # As of 3, 4: the empty deltacommits change nothing.
    _assert_events(read_rows(table, as_of_instant=3), EVENTS_1, evt_001_updated=True)
    _assert_events(read_rows(table, as_of_instant=4), EVENTS_1, evt_001_updated=True)


def test_v9_lance_nonhivestyle_read_optimized(table_path) -> None:
    table = open_table(table_path, V9_NONHIVESTYLE_MOR)
    # Base files only: evt-001 keeps its inserted payload.
    _assert_events(read_rows(table, read_optimized=True), EVENTS_ALL, evt_001_updated=False)
    _assert_events(read_rows(table, as_of_instant=2, read_optimized=True), EVENTS_1, evt_001_updated=False)


def test_v9_lance_nonhivestyle_incremental(table_path) -> None:
    table = open_table(table_path, V9_NONHIVESTYLE_MOR)
    # (0, 1]: second INSERT.
    _assert_events(_incremental(table, 0, 1), {"evt-009", "evt-010", "evt-011", "evt-012"}, evt_001_updated=False)
    # (1, 2]: UPDATE evt-001 (from the log).
    rows = _incremental(table, 1, 2)
    _assert_events(rows, {"evt-001"}, evt_001_updated=True)
    assert rows[0]["_hoodie_commit_time"] == _timestamp(table, 2)
    # (2, 4]: the two empty deltacommits -> nothing.
    assert _incremental(table, 2, 4) == []
    # (4, 5]: last INSERT; (1, 5]: evt-001's update and the last INSERT.
    _assert_events(_incremental(table, 4, 5), {"evt-013", "evt-014"}, evt_001_updated=False)
    _assert_events(_incremental(table, 1, 5), {"evt-001", "evt-013", "evt-014"}, evt_001_updated=True)


def test_v9_lance_nonhivestyle_filters(table_path) -> None:
    table = open_table(table_path, V9_NONHIVESTYLE_MOR)
    # Partition 2023-11-15: evt-005..008 (the DELETE of user-103 had no effect).
    assert keys(read_rows(table, filters=[("event_date", "=", "2023-11-15")])) == [
        "evt-005",
        "evt-006",
        "evt-007",
        "evt-008",
    ]
    # user-100: evt-001, 002, 005, 009, 013.
    assert keys(read_rows(table, filters=[("user_id", "=", "user-100")])) == [
        "evt-001",
        "evt-002",
        "evt-005",
        "evt-009",
        "evt-013",
    ]
    # Payload of evt-001 after the log merge.
    rows = read_rows(table, filters=[("event_date", "=", "2023-11-14"), ("event_type", "=", "page_view")])
    assert keys(rows) == ["evt-001", "evt-003"]
    assert_columns(by_key(rows)["evt-001"], EVT_001_UPDATED)


@pytest.mark.parametrize(
    ("name", "key_column"),
    [
        (V9_TRIPS_COW, "uuid"),
        (V9_TRIPS_MOR, "uuid"),
        (V9_NONPARTITIONED, "id"),
        (V9_TXNS_NONPART, "txn_id"),
        (V9_TXNS_SIMPLE, "txn_id"),
        (V9_NONHIVESTYLE_MOR, "event_id"),
    ],
)
def test_record_key_matches_key_column(name: str, key_column: str, table_path) -> None:
    """Every row's _hoodie_record_key is its primaryKey column as a string."""
    rows = read_rows(open_table(table_path, name))
    assert rows
    for r in rows:
        assert r["_hoodie_record_key"] == str(r[key_column])
