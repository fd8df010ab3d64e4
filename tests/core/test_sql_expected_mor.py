"""Merge-on-read tables of ../shared/hudi-tables checked against rows derived by hand
from the Spark SQL (``X.sql``) that wrote them.

Every expected value below is a literal worked out by applying the statements of the
table's .sql file in order (the comments name the statement); none is computed from
what the reader returns. On a MOR table each writing statement is one completed
instant: INSERT INTO is a deltacommit with new base files, UPDATE and DELETE are
deltacommits whose changes live only in log files until compaction, INSERT OVERWRITE
and clustering are replacecommits, and compaction is a ``commit``. So
``data_instants[k]`` is the state after the k-th instant listed per table below.

Read modes exercised:
- snapshot (latest, and time travel ``as of`` a deltacommit whose UPDATE/DELETE is
  only in a log file, so the reader has to merge base file and log blocks);
- read-optimized (``hoodie.read.use.read_optimized.mode``): base files only, log
  updates and deletes not applied unless a compaction folded them into a base file;
- incremental over (start, end]: completion times on table version 8/9, instant
  times on version 6; each record's latest state in the range, deleted ones absent.

Where the log files and compactions are placed is read from the file names in the
tables (a log file is named after the base instant of its file slice).
Timestamp columns are not checked (their UTC value depends on the writer's session
time zone, which the SQL does not state).
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import hudi_ray
from tests.support import actions, assert_columns, by_key, keys, open_table, read_rows, rows_of

V9_SIMPLE_META = "sample_table/mor/avro/v9_txns_simple_meta"
V9_NONPART_META = "sample_table/mor/avro/v9_txns_nonpart_meta"
V9_COMPLEX_NOMETA = "sample_table/mor/avro/v9_txns_complex_nometa"
V9_TIMEBASED_NONHIVE = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle"
V8_TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
V6_TRIPS = "quickstart_trips_table/mor/avro/v6_trips_8i1u"
V6_COMPLEXKEYGEN_HIVESTYLE = "sample_table/mor/parquet/v6_complexkeygen_hivestyle"
V6_NONPARTITIONED = "sample_table/mor/parquet/v6_nonpartitioned"


# -- helpers -------------------------------------------------------------------------


def _incremental(table: hudi_ray.HudiTable, start: int, end: int, *, by_completion: bool) -> list[dict[str, Any]]:
    """Incremental read over (instant ``start``, instant ``end``]: the bounds are the
    instants' completion times (table version 8+) or instant times (version 6)."""
    instants = table.get_timeline().data_instants

    def bound(i: int) -> str:
        return instants[i].completed_at if by_completion else instants[i].timestamp

    options = (
        hudi_ray.HudiReadOptions()
        .with_query_type(hudi_ray.HudiQueryType.Incremental)
        .with_start_timestamp(bound(start))
        .with_end_timestamp(bound(end))
    )
    return rows_of(table.read(options))


def _timestamp(table: hudi_ray.HudiTable, k: int) -> str:
    return table.get_timeline().data_instants[k].timestamp


# =====================================================================================
# The three v9 "txns" MOR tables share their data statements.
# Initial INSERT (statement 0), columns: account_id, txn_ts, txn_date, amount,
# currency, txn_type, merchant_name, is_international, fee_amount, region.
# =====================================================================================

# fmt: off
TXNS_INSERTED = {
    # txn_id: (account_id, txn_ts, txn_date, amount, currency, txn_type, merchant_name,
    #          is_international, fee_amount, region)
    # INSERT TXN-001..008
    "TXN-001": ("ACC-A", 1700000000001, "2024-01-15", "1250.00", "USD", "debit", "Amazon", False, "0.00", "us"),
    "TXN-002": ("ACC-B", 1700000000002, "2024-01-15", "89.99", "USD", "debit", "Netflix", False, "0.00", "us"),
    "TXN-003": ("ACC-A", 1700000000003, "2024-01-15", "5000.00", "USD", "transfer", None, False, "25.00", "us"),
    "TXN-004": ("ACC-C", 1700000000004, "2024-01-15", "450.75", "EUR", "debit", "Zalando", False, "0.00", "eu"),
    "TXN-005": ("ACC-D", 1700000000005, "2024-01-15", "2100.00", "GBP", "credit", "Salary Deposit", False, "0.00", "eu"),  # noqa: E501
    "TXN-006": ("ACC-C", 1700000000006, "2024-01-15", "175.50", "EUR", "debit", "Lufthansa", True, "3.50", "eu"),
    "TXN-007": ("ACC-E", 1700000000007, "2024-01-16", "8900.00", "USD", "debit", "Singapore Airlines", True, "45.00", "apac"),  # noqa: E501
    "TXN-008": ("ACC-F", 1700000000008, "2024-01-16", "320.25", "USD", "debit", "Grab", False, "0.00", "apac"),
    # INSERT TXN-009, 010
    "TXN-009": ("ACC-G", 1700400000009, "2024-01-17", "1500.00", "EUR", "debit", "IKEA", False, "0.00", "eu"),
    "TXN-010": ("ACC-H", 1700400000010, "2024-01-17", "2200.00", "EUR", "transfer", None, False, "15.00", "eu"),
    # INSERT (INSERT OVERWRITE eu on the partitioned tables) TXN-011, 012
    "TXN-011": ("ACC-I", 1700500000011, "2024-01-18", "999.99", "EUR", "debit", "MediaMarkt", False, "0.00", "eu"),
    "TXN-012": ("ACC-J", 1700500000012, "2024-01-18", "350.00", "GBP", "debit", "British Airways", True, "7.50", "eu"),
    # INSERT TXN-013, 014
    "TXN-013": ("ACC-K", 1700600000013, "2024-01-19", "750.00", "USD", "debit", "Best Buy", False, "0.00", "us"),
    "TXN-014": ("ACC-L", 1700600000014, "2024-01-19", "125.50", "USD", "debit", "Uber", False, "0.00", "us"),
    # INSERT TXN-015, 016
    "TXN-015": ("ACC-M", 1700700000015, "2024-01-20", "4500.00", "USD", "debit", "Japan Airlines", True, "50.00", "apac"),  # noqa: E501
    "TXN-016": ("ACC-N", 1700700000016, "2024-01-20", "88.00", "USD", "debit", "GrabFood", False, "0.00", "apac"),
    # INSERT TXN-017, 018 (partitioned tables only, after clustering)
    "TXN-017": ("ACC-O", 1700800000017, "2024-01-21", "199.99", "USD", "debit", "Apple Store", False, "0.00", "us"),
    "TXN-018": ("ACC-P", 1700800000018, "2024-01-21", "55.00", "EUR", "debit", "Spotify", False, "0.00", "eu"),
}
# fmt: on

# UPDATE ... SET txn_type = 'reversal', txn_ts = 1700100000001 WHERE txn_id = 'TXN-001'
TXN_001_UPDATED = {"txn_type": "reversal", "txn_ts": 1700100000001}
# UPDATE ... SET amount = 2500.00, txn_ts = 1700200000005 WHERE txn_id = 'TXN-005'
TXN_005_UPDATED = {"amount": Decimal("2500.00"), "txn_ts": 1700200000005}
# UPDATE ... SET fee_amount = 75.00, txn_ts = 1700300000007 WHERE txn_id = 'TXN-007'
TXN_007_UPDATED = {"fee_amount": Decimal("75.00"), "txn_ts": 1700300000007}


def _txn(txn_id: str, *, with_region: bool = True, **changes: Any) -> dict[str, Any]:
    """Expected columns of ``txn_id`` as inserted, with ``changes`` (the UPDATEs) applied."""
    account, ts, date, amount, currency, txn_type, merchant, intl, fee, region = TXNS_INSERTED[txn_id]
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
    }
    if with_region:
        expected["region"] = region
    expected.update(changes)
    return expected


def _assert_txn(row: dict[str, Any], expected: dict[str, Any]) -> None:
    merchant = expected.pop("merchant_name")
    if merchant is None:
        assert row["merchant_name"] is None, row["_hoodie_record_key"]
    else:
        expected["merchant_name"] = merchant
    assert_columns(row, expected)


# =====================================================================================
# sample_table/mor/avro/v9_txns_simple_meta  (partitioned by region, hive style, MDT on)
# =====================================================================================
# data_instants:
#  0 INSERT TXN-001..008 (deltacommit)      1 UPDATE TXN-001 -> reversal (log, us)
#  2 DELETE TXN-002 (log, us)               3 UPDATE TXN-005 amount 2500 (log, eu)
#  4 DELETE TXN-005 (log, eu)               5 UPDATE TXN-007 fee 75 (log, apac)
#  6 INSERT TXN-009, 010 (eu)               7 INSERT OVERWRITE eu -> 011, 012 (replacecommit)
#  8 INSERT TXN-013, 014 (us)               9 INSERT TXN-015, 016 (apac)
# 10 run_compaction (commit): folds the us and apac logs (1, 2, 5) into base files;
#    the eu logs (3, 4) are in a file group already replaced by 7.
# 11 run_clustering (replacecommit)        12 INSERT TXN-017 (us), 018 (eu)

SIMPLE_FINAL = {
    "TXN-001": "region=us",
    "TXN-003": "region=us",
    "TXN-013": "region=us",
    "TXN-014": "region=us",
    "TXN-017": "region=us",
    "TXN-011": "region=eu",
    "TXN-012": "region=eu",
    "TXN-018": "region=eu",
    "TXN-007": "region=apac",
    "TXN-008": "region=apac",
    "TXN-015": "region=apac",
    "TXN-016": "region=apac",
}
FIRST_EIGHT = {f"TXN-00{i}" for i in range(1, 9)}


def _assert_simple_final(rows: list[dict[str, Any]]) -> None:
    keyed = by_key(rows)
    assert set(keyed) == set(SIMPLE_FINAL)
    assert len(rows) == 12
    # DELETE TXN-002; UPDATE then DELETE TXN-005; INSERT OVERWRITE eu drops 004, 006, 009, 010.
    for gone in ("TXN-002", "TXN-005", "TXN-004", "TXN-006", "TXN-009", "TXN-010"):
        assert gone not in keyed
    for key, partition in SIMPLE_FINAL.items():
        assert keyed[key]["_hoodie_partition_path"] == partition
    _assert_txn(keyed["TXN-001"], _txn("TXN-001", **TXN_001_UPDATED))
    _assert_txn(keyed["TXN-007"], _txn("TXN-007", **TXN_007_UPDATED))
    for key in ("TXN-003", "TXN-008", "TXN-011", "TXN-012", "TXN-013", "TXN-014", "TXN-015", "TXN-016", "TXN-017"):
        _assert_txn(keyed[key], _txn(key))
    _assert_txn(keyed["TXN-018"], _txn("TXN-018"))


def test_v9_simple_meta_timeline(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)
    assert actions(table) == ["deltacommit"] * 7 + ["replacecommit"] + ["deltacommit"] * 2 + [
        "commit",
        "replacecommit",
        "deltacommit",
    ]


def test_v9_simple_meta_snapshot(table_path) -> None:
    _assert_simple_final(read_rows(open_table(table_path, V9_SIMPLE_META)))


def test_v9_simple_meta_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)

    # As of 0 (initial INSERT): base files only, nothing updated.
    at_0 = by_key(read_rows(table, as_of_instant=0))
    assert set(at_0) == FIRST_EIGHT
    for key in sorted(FIRST_EIGHT):
        _assert_txn(at_0[key], _txn(key))

    # As of 1: UPDATE TXN-001 lives only in the us log file.
    at_1 = by_key(read_rows(table, as_of_instant=1))
    assert set(at_1) == FIRST_EIGHT
    _assert_txn(at_1["TXN-001"], _txn("TXN-001", **TXN_001_UPDATED))
    _assert_txn(at_1["TXN-002"], _txn("TXN-002"))

    # As of 2: DELETE TXN-002 (delete block in the us log).
    at_2 = by_key(read_rows(table, as_of_instant=2))
    assert set(at_2) == FIRST_EIGHT - {"TXN-002"}
    _assert_txn(at_2["TXN-001"], _txn("TXN-001", **TXN_001_UPDATED))
    _assert_txn(at_2["TXN-005"], _txn("TXN-005"))  # amount still 2100.00

    # As of 3: UPDATE TXN-005 amount = 2500.00 (eu log).
    at_3 = by_key(read_rows(table, as_of_instant=3))
    assert set(at_3) == FIRST_EIGHT - {"TXN-002"}
    _assert_txn(at_3["TXN-005"], _txn("TXN-005", **TXN_005_UPDATED))
    _assert_txn(at_3["TXN-007"], _txn("TXN-007"))  # fee still 45.00

    # As of 4: DELETE TXN-005 (second eu log).
    at_4 = by_key(read_rows(table, as_of_instant=4))
    assert set(at_4) == FIRST_EIGHT - {"TXN-002", "TXN-005"}

    # As of 5: UPDATE TXN-007 fee 75.00 (apac log).
    at_5 = by_key(read_rows(table, as_of_instant=5))
    assert set(at_5) == FIRST_EIGHT - {"TXN-002", "TXN-005"}
    _assert_txn(at_5["TXN-007"], _txn("TXN-007", **TXN_007_UPDATED))
    _assert_txn(at_5["TXN-001"], _txn("TXN-001", **TXN_001_UPDATED))

    # As of 6 (INSERT 009, 010) and 7 (INSERT OVERWRITE eu).
    assert set(by_key(read_rows(table, as_of_instant=6))) == FIRST_EIGHT - {"TXN-002", "TXN-005"} | {
        "TXN-009",
        "TXN-010",
    }
    assert set(by_key(read_rows(table, as_of_instant=7))) == {
        "TXN-001",
        "TXN-003",
        "TXN-007",
        "TXN-008",
        "TXN-011",
        "TXN-012",
    }

    # As of 9, 10 (compaction) and 11 (clustering): same rows, values unchanged by
    # compaction and clustering.
    expected_9 = {"TXN-001", "TXN-003", "TXN-007", "TXN-008", "TXN-011", "TXN-012"} | {
        "TXN-013",
        "TXN-014",
        "TXN-015",
        "TXN-016",
    }
    for k in (9, 10, 11):
        rows = by_key(read_rows(table, as_of_instant=k))
        assert set(rows) == expected_9, k
        _assert_txn(rows["TXN-001"], _txn("TXN-001", **TXN_001_UPDATED))
        _assert_txn(rows["TXN-007"], _txn("TXN-007", **TXN_007_UPDATED))


def test_v9_simple_meta_read_optimized(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)
    # Latest: the us/apac logs were compacted (10) and the eu logs replaced (7), so the
    # latest base files already hold every statement: read-optimized = snapshot.
    _assert_simple_final(read_rows(table, read_optimized=True))

    # As of 5: statements 1-5 only in log files, none compacted yet -> base files of
    # the initial INSERT, unchanged: 001 debit, 002 and 005 present, 007 fee 45.00.
    ro_5 = by_key(read_rows(table, as_of_instant=5, read_optimized=True))
    assert set(ro_5) == FIRST_EIGHT
    for key in sorted(FIRST_EIGHT):
        _assert_txn(ro_5[key], _txn(key))


def test_v9_simple_meta_incremental(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)

    # (0, 1]: UPDATE TXN-001 only.
    rows = _incremental(table, 0, 1, by_completion=True)
    assert keys(rows) == ["TXN-001"]
    _assert_txn(rows[0], _txn("TXN-001", **TXN_001_UPDATED))
    assert rows[0]["_hoodie_commit_time"] == _timestamp(table, 1)

    # (2, 3]: UPDATE TXN-005 amount 2500.00.
    rows = _incremental(table, 2, 3, by_completion=True)
    assert keys(rows) == ["TXN-005"]
    _assert_txn(rows[0], _txn("TXN-005", **TXN_005_UPDATED))

    # (3, 5]: DELETE TXN-005 (absent), UPDATE TXN-007 fee 75.00.
    rows = _incremental(table, 3, 5, by_completion=True)
    assert keys(rows) == ["TXN-007"]
    _assert_txn(rows[0], _txn("TXN-007", **TXN_007_UPDATED))

    # (1, 2]: only DELETE TXN-002 -> nothing to return.
    assert _incremental(table, 1, 2, by_completion=True) == []

    # (7, 9]: INSERT TXN-013, 014 (us) and TXN-015, 016 (apac).
    rows = by_key(_incremental(table, 7, 9, by_completion=True))
    assert set(rows) == {"TXN-013", "TXN-014", "TXN-015", "TXN-016"}
    _assert_txn(rows["TXN-015"], _txn("TXN-015"))


# =====================================================================================
# sample_table/mor/avro/v9_txns_complex_nometa  (primaryKey 'txn_id,account_id', MDT off)
# =====================================================================================
# Same statements and data_instants as v9_txns_simple_meta; record keys are
# "txn_id:<txn_id>,account_id:<account_id>".


def _complex_key(txn_id: str) -> str:
    return f"txn_id:{txn_id},account_id:{TXNS_INSERTED[txn_id][0]}"


def test_v9_complex_nometa_snapshot(table_path) -> None:
    table = open_table(table_path, V9_COMPLEX_NOMETA)
    assert actions(table) == actions(open_table(table_path, V9_SIMPLE_META))
    keyed = by_key(read_rows(table))
    assert set(keyed) == {_complex_key(k) for k in SIMPLE_FINAL}
    # Literal spelling of two keys.
    assert "txn_id:TXN-001,account_id:ACC-A" in keyed
    assert "txn_id:TXN-018,account_id:ACC-P" in keyed
    for gone in ("TXN-002", "TXN-005", "TXN-004", "TXN-006", "TXN-009", "TXN-010"):
        assert _complex_key(gone) not in keyed
    for key, partition in SIMPLE_FINAL.items():
        assert keyed[_complex_key(key)]["_hoodie_partition_path"] == partition
    _assert_txn(keyed[_complex_key("TXN-001")], _txn("TXN-001", **TXN_001_UPDATED))
    _assert_txn(keyed[_complex_key("TXN-007")], _txn("TXN-007", **TXN_007_UPDATED))
    _assert_txn(keyed[_complex_key("TXN-003")], _txn("TXN-003"))
    _assert_txn(keyed[_complex_key("TXN-012")], _txn("TXN-012"))


def test_v9_complex_nometa_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V9_COMPLEX_NOMETA)
    eight = {_complex_key(k) for k in FIRST_EIGHT}

    at_0 = by_key(read_rows(table, as_of_instant=0))
    assert set(at_0) == eight
    _assert_txn(at_0[_complex_key("TXN-001")], _txn("TXN-001"))

    # As of 1: UPDATE TXN-001/ACC-A (log only).
    at_1 = by_key(read_rows(table, as_of_instant=1))
    assert set(at_1) == eight
    _assert_txn(at_1[_complex_key("TXN-001")], _txn("TXN-001", **TXN_001_UPDATED))

    # As of 2: DELETE TXN-002/ACC-B (delete block).
    at_2 = by_key(read_rows(table, as_of_instant=2))
    assert set(at_2) == eight - {"txn_id:TXN-002,account_id:ACC-B"}

    # As of 3: UPDATE TXN-005/ACC-D amount 2500.00; as of 4: DELETE TXN-005/ACC-D.
    at_3 = by_key(read_rows(table, as_of_instant=3))
    _assert_txn(at_3["txn_id:TXN-005,account_id:ACC-D"], _txn("TXN-005", **TXN_005_UPDATED))
    at_4 = by_key(read_rows(table, as_of_instant=4))
    assert set(at_4) == eight - {"txn_id:TXN-002,account_id:ACC-B", "txn_id:TXN-005,account_id:ACC-D"}

    # As of 5: UPDATE TXN-007/ACC-E fee 75.00.
    at_5 = by_key(read_rows(table, as_of_instant=5))
    _assert_txn(at_5["txn_id:TXN-007,account_id:ACC-E"], _txn("TXN-007", **TXN_007_UPDATED))
    # As of 4 it was still 45.00.
    _assert_txn(at_4["txn_id:TXN-007,account_id:ACC-E"], _txn("TXN-007"))


def test_v9_complex_nometa_read_optimized(table_path) -> None:
    table = open_table(table_path, V9_COMPLEX_NOMETA)
    # As of 4: UPDATE TXN-001 and the DELETEs of TXN-002, TXN-005 are only in logs.
    ro_4 = by_key(read_rows(table, as_of_instant=4, read_optimized=True))
    assert set(ro_4) == {_complex_key(k) for k in FIRST_EIGHT}
    _assert_txn(ro_4[_complex_key("TXN-001")], _txn("TXN-001"))
    _assert_txn(ro_4[_complex_key("TXN-005")], _txn("TXN-005"))
    # Latest: compacted/replaced, so equal to the snapshot.
    latest = by_key(read_rows(table, read_optimized=True))
    assert set(latest) == {_complex_key(k) for k in SIMPLE_FINAL}
    _assert_txn(latest[_complex_key("TXN-001")], _txn("TXN-001", **TXN_001_UPDATED))
    _assert_txn(latest[_complex_key("TXN-007")], _txn("TXN-007", **TXN_007_UPDATED))


# =====================================================================================
# sample_table/mor/avro/v9_txns_nonpart_meta  (non-partitioned, MDT on)
# =====================================================================================
# data_instants:
#  0 INSERT TXN-001..008      1 UPDATE TXN-001 (log)    2 DELETE TXN-002 (log)
#  3 UPDATE TXN-005 (log)     4 DELETE TXN-005 (log)    5 UPDATE TXN-007 (log)
#  6 INSERT TXN-009, 010      7 INSERT TXN-011, 012     8 INSERT TXN-013, 014
#  9 run_compaction (commit)  10 run_clustering (replacecommit)
# 11 INSERT TXN-015, 016
# All five logs belong to the one file group of statement 0.


def test_v9_nonpart_meta_timeline(table_path) -> None:
    table = open_table(table_path, V9_NONPART_META)
    assert actions(table) == ["deltacommit"] * 9 + ["commit", "replacecommit", "deltacommit"]


def test_v9_nonpart_meta_snapshot(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_NONPART_META))
    keyed = by_key(rows)
    assert set(keyed) == {
        "TXN-001",
        "TXN-003",
        "TXN-004",
        "TXN-006",
        "TXN-007",
        "TXN-008",
        "TXN-009",
        "TXN-010",
        "TXN-011",
        "TXN-012",
        "TXN-013",
        "TXN-014",
        "TXN-015",
        "TXN-016",
    }
    assert len(rows) == 14
    assert "TXN-002" not in keyed  # DELETE TXN-002
    assert "TXN-005" not in keyed  # UPDATE then DELETE TXN-005
    for key, row in keyed.items():
        assert row["_hoodie_partition_path"] == ""
        if key == "TXN-001":
            _assert_txn(row, _txn(key, with_region=False, **TXN_001_UPDATED))
        elif key == "TXN-007":
            _assert_txn(row, _txn(key, with_region=False, **TXN_007_UPDATED))
        else:
            _assert_txn(row, _txn(key, with_region=False))


def test_v9_nonpart_meta_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V9_NONPART_META)

    at_1 = by_key(read_rows(table, as_of_instant=1))
    assert set(at_1) == FIRST_EIGHT
    _assert_txn(at_1["TXN-001"], _txn("TXN-001", with_region=False, **TXN_001_UPDATED))

    # As of 2 (DELETE TXN-002): 005 still at its inserted amount.
    at_2 = by_key(read_rows(table, as_of_instant=2))
    assert set(at_2) == FIRST_EIGHT - {"TXN-002"}
    _assert_txn(at_2["TXN-005"], _txn("TXN-005", with_region=False))

    # As of 3 (UPDATE TXN-005 amount 2500.00).
    at_3 = by_key(read_rows(table, as_of_instant=3))
    assert set(at_3) == FIRST_EIGHT - {"TXN-002"}
    _assert_txn(at_3["TXN-005"], _txn("TXN-005", with_region=False, **TXN_005_UPDATED))

    # As of 4 (DELETE TXN-005).
    at_4 = by_key(read_rows(table, as_of_instant=4))
    assert set(at_4) == FIRST_EIGHT - {"TXN-002", "TXN-005"}
    _assert_txn(at_4["TXN-007"], _txn("TXN-007", with_region=False))

    # As of 5 (UPDATE TXN-007 fee 75.00).
    at_5 = by_key(read_rows(table, as_of_instant=5))
    _assert_txn(at_5["TXN-007"], _txn("TXN-007", with_region=False, **TXN_007_UPDATED))

    # As of 8, 9 (compaction), 10 (clustering): 12 rows.
    for k in (8, 9, 10):
        rows = by_key(read_rows(table, as_of_instant=k))
        assert set(rows) == {
            "TXN-001",
            "TXN-003",
            "TXN-004",
            "TXN-006",
            "TXN-007",
            "TXN-008",
            "TXN-009",
            "TXN-010",
            "TXN-011",
            "TXN-012",
            "TXN-013",
            "TXN-014",
        }, k
        _assert_txn(rows["TXN-007"], _txn("TXN-007", with_region=False, **TXN_007_UPDATED))


def test_v9_nonpart_meta_read_optimized(table_path) -> None:
    table = open_table(table_path, V9_NONPART_META)
    # As of 8: statements 1-5 are only in logs of the statement-0 file group.
    ro_8 = by_key(read_rows(table, as_of_instant=8, read_optimized=True))
    assert set(ro_8) == FIRST_EIGHT | {"TXN-009", "TXN-010", "TXN-011", "TXN-012", "TXN-013", "TXN-014"}
    for key in ("TXN-001", "TXN-002", "TXN-005", "TXN-007"):
        _assert_txn(ro_8[key], _txn(key, with_region=False))
    # As of 9: the compaction folded all five logs into a new base file.
    ro_9 = by_key(read_rows(table, as_of_instant=9, read_optimized=True))
    assert set(ro_9) == FIRST_EIGHT - {"TXN-002", "TXN-005"} | {
        "TXN-009",
        "TXN-010",
        "TXN-011",
        "TXN-012",
        "TXN-013",
        "TXN-014",
    }
    _assert_txn(ro_9["TXN-001"], _txn("TXN-001", with_region=False, **TXN_001_UPDATED))
    _assert_txn(ro_9["TXN-007"], _txn("TXN-007", with_region=False, **TXN_007_UPDATED))


def test_v9_nonpart_meta_incremental(table_path) -> None:
    table = open_table(table_path, V9_NONPART_META)
    # (0, 2]: UPDATE TXN-001, DELETE TXN-002.
    rows = _incremental(table, 0, 2, by_completion=True)
    assert keys(rows) == ["TXN-001"]
    _assert_txn(rows[0], _txn("TXN-001", with_region=False, **TXN_001_UPDATED))
    # (2, 4]: UPDATE then DELETE TXN-005 -> nothing.
    assert _incremental(table, 2, 4, by_completion=True) == []
    # (4, 7]: UPDATE TXN-007, INSERT 009, 010, 011, 012.
    rows = by_key(_incremental(table, 4, 7, by_completion=True))
    assert set(rows) == {"TXN-007", "TXN-009", "TXN-010", "TXN-011", "TXN-012"}
    _assert_txn(rows["TXN-007"], _txn("TXN-007", with_region=False, **TXN_007_UPDATED))
    _assert_txn(rows["TXN-010"], _txn("TXN-010", with_region=False))
    assert rows["TXN-007"]["_hoodie_commit_time"] == _timestamp(table, 5)
    assert rows["TXN-011"]["_hoodie_commit_time"] == _timestamp(table, 7)


# =====================================================================================
# sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle  (TimestampBasedKeyGenerator,
# DATE_STRING yyyy-MM-dd'T'HH:mm:ss.SSSZ -> yyyy/MM/dd/HH, non-hive style)
# =====================================================================================
# data_instants:
#  0 INSERT TXN-001..004
#  1 INSERT TXN-001 (txn_type 'reversal'), TXN-005
#  2 UPDATE TXN-003 amount = 500.00 (log)     3 DELETE TXN-002 (log)
#  4 INSERT TXN-006
# run_compaction scheduled nothing (only 4 delta commits, under the default trigger
# of 5): the timeline has no compaction instant and both logs are in the latest
# slices. Statement 1 is a plain INSERT INTO on Hudi 1.1: operation `insert` with
# duplicate policy `none`, so (despite the SQL comment "Upsert") TXN-001 is written
# again into a new base file and both versions stay visible.

TIMEBASED_PARTITIONS = {
    "TXN-001": "2024/01/15/10",  # '2024-01-15T10:30:00.000Z'
    "TXN-002": "2024/01/15/11",  # '2024-01-15T11:45:00.000Z'
    "TXN-003": "2024/01/16/09",  # '2024-01-16T09:00:00.000Z'
    "TXN-004": "2024/01/17/14",  # '2024-01-17T14:20:00.000Z'
    "TXN-005": "2024/01/18/16",  # '2024-01-18T16:30:00.000Z'
    "TXN-006": "2024/01/15/16",  # '2024-01-15T16:00:00.000Z'
}


def _timebased_rows_except_001(rows: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return by_key([r for r in rows if r["_hoodie_record_key"] != "TXN-001"])


def _txn_001_versions(rows: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return sorted((r["txn_ts"], r["txn_type"]) for r in rows if r["_hoodie_record_key"] == "TXN-001")


def test_v9_timebased_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_TIMEBASED_NONHIVE)) == ["deltacommit"] * 5


def test_v9_timebased_snapshot(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_TIMEBASED_NONHIVE))
    assert keys(rows) == ["TXN-001", "TXN-001", "TXN-003", "TXN-004", "TXN-005", "TXN-006"]
    for r in rows:
        assert r["_hoodie_partition_path"] == TIMEBASED_PARTITIONS[r["_hoodie_record_key"]]
    # First INSERT's TXN-001 and second INSERT's.
    assert _txn_001_versions(rows) == [(1700000000001, "debit"), (1700100000001, "reversal")]
    by_key = _timebased_rows_except_001(rows)
    assert "TXN-002" not in by_key  # DELETE TXN-002 (log)
    # UPDATE ... SET amount = 500.00, txn_ts = 1700200000003 WHERE txn_id = 'TXN-003' (log)
    assert_columns(
        by_key["TXN-003"],
        {
            "amount": Decimal("500.00"),
            "txn_ts": 1700200000003,
            "account_id": "ACC-C",
            "currency": "EUR",
            "merchant_name": "Zalando",
            "txn_date": datetime.date(2024, 1, 16),
        },
    )
    assert_columns(by_key["TXN-004"], {"amount": Decimal("5000.00"), "txn_type": "transfer"})
    assert by_key["TXN-004"]["merchant_name"] is None
    assert_columns(
        by_key["TXN-005"],
        {"amount": Decimal("8900.00"), "merchant_name": "Singapore Airlines", "fee_amount": Decimal("45.00")},
    )
    assert_columns(
        by_key["TXN-006"],
        {"account_id": "ACC-F", "amount": Decimal("320.25"), "merchant_name": "Grab", "txn_ts": 1700300000006},
    )


def test_v9_timebased_read_optimized(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_TIMEBASED_NONHIVE), read_optimized=True)
    # No compaction ran: DELETE TXN-002 and UPDATE TXN-003 are not in any base file.
    assert keys(rows) == ["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"]
    assert _txn_001_versions(rows) == [(1700000000001, "debit"), (1700100000001, "reversal")]
    by_key = _timebased_rows_except_001(rows)
    # INSERT TXN-003 as first written: 450.75.
    assert_columns(by_key["TXN-003"], {"amount": Decimal("450.75"), "txn_ts": 1700000000003})
    assert_columns(by_key["TXN-002"], {"amount": Decimal("89.99"), "merchant_name": "Netflix"})


def test_v9_timebased_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V9_TIMEBASED_NONHIVE)
    at_0 = read_rows(table, as_of_instant=0)
    assert keys(at_0) == ["TXN-001", "TXN-002", "TXN-003", "TXN-004"]

    at_1 = read_rows(table, as_of_instant=1)
    assert keys(at_1) == ["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005"]
    assert_columns(_timebased_rows_except_001(at_1)["TXN-003"], {"amount": Decimal("450.75")})

    # As of 2: UPDATE TXN-003 (log only).
    at_2 = read_rows(table, as_of_instant=2)
    assert keys(at_2) == keys(at_1)
    assert_columns(_timebased_rows_except_001(at_2)["TXN-003"], {"amount": Decimal("500.00"), "txn_ts": 1700200000003})

    # As of 3: DELETE TXN-002 (delete block).
    at_3 = read_rows(table, as_of_instant=3)
    assert keys(at_3) == ["TXN-001", "TXN-001", "TXN-003", "TXN-004", "TXN-005"]


def test_v9_timebased_incremental(table_path) -> None:
    table = open_table(table_path, V9_TIMEBASED_NONHIVE)
    # (0, 1]: second INSERT only: its TXN-001 (reversal) and TXN-005; the first
    # INSERT's TXN-001 was written by instant 0.
    rows = _incremental(table, 0, 1, by_completion=True)
    assert keys(rows) == ["TXN-001", "TXN-005"]
    assert _txn_001_versions(rows) == [(1700100000001, "reversal")]
    # (1, 3]: UPDATE TXN-003, DELETE TXN-002 (absent).
    rows = _incremental(table, 1, 3, by_completion=True)
    assert keys(rows) == ["TXN-003"]
    assert_columns(rows[0], {"amount": Decimal("500.00"), "txn_ts": 1700200000003})
    # (2, 4]: DELETE TXN-002 (absent), INSERT TXN-006.
    assert keys(_incremental(table, 2, 4, by_completion=True)) == ["TXN-006"]


# =====================================================================================
# quickstart_trips_table/mor/avro/v8_trips_8i3u1d  (table version 8, partitioned by city)
# =====================================================================================
# data_instants:
#  0 INSERT 8 trips                       1 UPDATE fare = 0 WHERE rider = 'rider-A' (log)
#  2 DELETE rider-F (log)                 3 UPDATE fare = 0 WHERE rider = 'rider-J' (log)
#  4 DELETE rider-J (log)
#  5 compaction (commit; not a statement of the SQL: the timeline shows a compaction
#    right after the 5th delta commit) folds 1-4 into new base files
#  6 UPDATE fare = 0 WHERE rider = 'rider-G' (log in the post-compaction slice)
# UPDATE leaves ts as is: equal ordering values, so the later write wins.

TRIPS = {
    # rider: (uuid, ts, driver, fare, city) as inserted
    "rider-A": ("334e26e9-8355-45cc-97c6-c31daf0df330", 1695159649087, "driver-K", 19.10, "san_francisco"),
    "rider-C": ("e96c4396-3fad-413a-a942-4cb36106d721", 1695091554788, "driver-M", 27.70, "san_francisco"),
    "rider-D": ("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", 1695046462179, "driver-L", 33.90, "san_francisco"),
    "rider-E": ("1dced545-862b-4ceb-8b43-d2a568f6616b", 1695332066204, "driver-O", 93.50, "san_francisco"),
    "rider-F": ("e3cf430c-889d-4015-bc98-59bdce1e530c", 1695516137016, "driver-P", 34.15, "sao_paulo"),
    "rider-G": ("7a84095f-737f-40bc-b62f-6b69664712d2", 1695376420876, "driver-Q", 43.40, "sao_paulo"),
    "rider-I": ("3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", 1695173887231, "driver-S", 41.06, "chennai"),
    "rider-J": ("c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", 1695115999911, "driver-T", 17.85, "chennai"),
}


def _by_rider(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return by_key(rows, "rider")


def _assert_trips(by_rider: dict[str, dict[str, Any]], fares: dict[str, float]) -> None:
    """``fares``: rider -> expected fare; the other columns are as inserted."""
    assert set(by_rider) == set(fares)
    for rider, fare in fares.items():
        uuid, ts, driver, _, city = TRIPS[rider]
        row = by_rider[rider]
        assert_columns(row, {"uuid": uuid, "ts": ts, "driver": driver, "fare": fare, "city": city})
        assert row["_hoodie_record_key"] == uuid
        assert row["_hoodie_partition_path"] == f"city={city}"


V8_INSERTED_FARES = {rider: values[3] for rider, values in TRIPS.items()}


def test_v8_trips_timeline(table_path) -> None:
    assert actions(open_table(table_path, V8_TRIPS)) == ["deltacommit"] * 5 + ["commit", "deltacommit"]


def test_v8_trips_snapshot(table_path) -> None:
    by_rider = _by_rider(read_rows(open_table(table_path, V8_TRIPS)))
    # DELETE rider-F, rider-J; UPDATE fare = 0 for rider-A and rider-G.
    _assert_trips(
        by_rider,
        {"rider-A": 0.0, "rider-C": 27.70, "rider-D": 33.90, "rider-E": 93.50, "rider-G": 0.0, "rider-I": 41.06},
    )


def test_v8_trips_read_optimized(table_path) -> None:
    by_rider = _by_rider(read_rows(open_table(table_path, V8_TRIPS), read_optimized=True))
    # Compaction (5) folded UPDATE rider-A and both DELETEs; UPDATE rider-G (6) is
    # only in a log, so rider-G keeps its inserted fare 43.40.
    _assert_trips(
        by_rider,
        {"rider-A": 0.0, "rider-C": 27.70, "rider-D": 33.90, "rider-E": 93.50, "rider-G": 43.40, "rider-I": 41.06},
    )


def test_v8_trips_time_travel_log_merge(table_path) -> None:
    table = open_table(table_path, V8_TRIPS)
    _assert_trips(_by_rider(read_rows(table, as_of_instant=0)), V8_INSERTED_FARES)
    # As of 1: UPDATE rider-A fare 0 (log).
    _assert_trips(_by_rider(read_rows(table, as_of_instant=1)), {**V8_INSERTED_FARES, "rider-A": 0.0})
    # As of 2: DELETE rider-F (delete block).
    after_2 = {r: f for r, f in V8_INSERTED_FARES.items() if r != "rider-F"}
    _assert_trips(_by_rider(read_rows(table, as_of_instant=2)), {**after_2, "rider-A": 0.0})
    # As of 3: UPDATE rider-J fare 0 (log).
    _assert_trips(_by_rider(read_rows(table, as_of_instant=3)), {**after_2, "rider-A": 0.0, "rider-J": 0.0})
    # As of 4: DELETE rider-J; as of 5 (compaction) the same rows.
    after_4 = {r: f for r, f in after_2.items() if r != "rider-J"}
    for k in (4, 5):
        _assert_trips(_by_rider(read_rows(table, as_of_instant=k)), {**after_4, "rider-A": 0.0})
    # Read-optimized as of 4: no compaction yet -> the inserted rows, all 8.
    _assert_trips(_by_rider(read_rows(table, as_of_instant=4, read_optimized=True)), V8_INSERTED_FARES)


def test_v8_trips_incremental(table_path) -> None:
    table = open_table(table_path, V8_TRIPS)
    # (0, 3]: UPDATE rider-A, DELETE rider-F, UPDATE rider-J.
    _assert_trips(_by_rider(_incremental(table, 0, 3, by_completion=True)), {"rider-A": 0.0, "rider-J": 0.0})
    # (0, 4]: rider-J then deleted.
    _assert_trips(_by_rider(_incremental(table, 0, 4, by_completion=True)), {"rider-A": 0.0})
    # (3, 4]: only DELETE rider-J.
    assert _incremental(table, 3, 4, by_completion=True) == []
    # (4, 6]: compaction writes no new records; UPDATE rider-G.
    rows = _incremental(table, 4, 6, by_completion=True)
    _assert_trips(_by_rider(rows), {"rider-G": 0.0})
    assert rows[0]["_hoodie_commit_time"] == _timestamp(table, 6)


# =====================================================================================
# quickstart_trips_table/mor/avro/v6_trips_8i1u  (table version 6)
# =====================================================================================
# data_instants: 0 INSERT 8 trips   1 UPDATE fare = 25.0 WHERE rider = 'rider-D' (log)


def test_v6_trips_snapshot(table_path) -> None:
    table = open_table(table_path, V6_TRIPS)
    assert actions(table) == ["deltacommit", "deltacommit"]
    _assert_trips(_by_rider(read_rows(table)), {**V8_INSERTED_FARES, "rider-D": 25.0})


def test_v6_trips_read_optimized_and_time_travel(table_path) -> None:
    table = open_table(table_path, V6_TRIPS)
    # UPDATE rider-D only in a log file: read-optimized and as-of-0 keep 33.90.
    _assert_trips(_by_rider(read_rows(table, read_optimized=True)), V8_INSERTED_FARES)
    _assert_trips(_by_rider(read_rows(table, as_of_instant=0)), V8_INSERTED_FARES)
    _assert_trips(_by_rider(read_rows(table, as_of_instant=1)), {**V8_INSERTED_FARES, "rider-D": 25.0})


def test_v6_trips_incremental(table_path) -> None:
    table = open_table(table_path, V6_TRIPS)
    # (0, 1] by instant time: UPDATE rider-D.
    rows = _incremental(table, 0, 1, by_completion=False)
    _assert_trips(_by_rider(rows), {"rider-D": 25.0})
    assert rows[0]["_hoodie_commit_time"] == "20250331030645735"


# =====================================================================================
# The v6 parquet-log sample tables: two INSERT INTO statements, run as upserts
# (primaryKey + preCombineField on Hudi 0.14/0.15). Statement 0 inserts Alice, Bob,
# Carol; statement 1 re-inserts Alice with isActive = false (same longField, so the
# newer write wins; it goes to a parquet log block of Alice's file group) and adds
# Diana (new base file).
# =====================================================================================

SAMPLE_ROWS = {
    # id: (name, isActive, intField, longField, doubleField, decimalField, dateField) as first inserted
    1: ("Alice", True, 15000, 1234567890, 3.14159, Decimal("12345.67890"), datetime.date(2023, 4, 1)),
    2: ("Bob", False, 25000, 9876543210, 2.71828, Decimal("67890.12345"), datetime.date(2023, 4, 2)),
    3: ("Carol", True, 35000, 1928374650, 1.41421, Decimal("11111.22222"), datetime.date(2023, 4, 3)),
    4: ("Diana", True, 45000, 987654321, 2.468, Decimal("65432.12345"), datetime.date(2023, 4, 4)),
}


def _assert_sample(by_id: dict[Any, dict[str, Any]], ids: set[int], *, alice_active: bool) -> None:
    assert set(by_id) == ids
    for id_ in ids:
        name, active, int_field, long_field, double_field, dec, date = SAMPLE_ROWS[id_]
        if id_ == 1:
            active = alice_active
        assert_columns(
            by_id[id_],
            {
                "name": name,
                "isActive": active,
                "intField": int_field,
                "longField": long_field,
                "doubleField": double_field,
                "decimalField": dec,
                "dateField": date,
            },
        )
    if 1 in ids:
        assert by_id[1]["binaryField"] == b"binary data"
        assert by_id[1]["arrayField"] == [
            {"arr_struct_f1": "red", "arr_struct_f2": 100},
            {"arr_struct_f1": "blue", "arr_struct_f2": 200},
            {"arr_struct_f1": "green", "arr_struct_f2": 300},
        ]
        assert by_id[1]["structField"] == {
            "field1": "Alice",
            "field2": 30,
            "child_struct": {"child_field1": 123.456, "child_field2": True},
        }
    if 4 in ids:
        assert by_id[4]["structField"] == {
            "field1": "Diana",
            "field2": 50,
            "child_struct": {"child_field1": 987.654, "child_field2": True},
        }


# -- sample_table/mor/parquet/v6_complexkeygen_hivestyle: primaryKey 'id,name',
#    partitioned by (byteField, shortField), hive style.

COMPLEX_PARTITIONS = {
    1: ("byteField=10/shortField=300", 10, 300),
    2: ("byteField=20/shortField=100", 20, 100),
    3: ("byteField=10/shortField=300", 10, 300),
    4: ("byteField=30/shortField=100", 30, 100),
}


def test_v6_complexkeygen_snapshot(table_path) -> None:
    table = open_table(table_path, V6_COMPLEXKEYGEN_HIVESTYLE)
    assert actions(table) == ["deltacommit", "deltacommit"]
    rows = read_rows(table)
    assert keys(rows) == ["id:1,name:Alice", "id:2,name:Bob", "id:3,name:Carol", "id:4,name:Diana"]
    # Second INSERT: Alice's isActive false, from the log.
    _assert_sample(by_key(rows, "id"), {1, 2, 3, 4}, alice_active=False)
    assert {r["id"]: (r["_hoodie_partition_path"], r["byteField"], r["shortField"]) for r in rows} == (
        COMPLEX_PARTITIONS
    )


def test_v6_complexkeygen_read_optimized(table_path) -> None:
    rows = read_rows(open_table(table_path, V6_COMPLEXKEYGEN_HIVESTYLE), read_optimized=True)
    # Alice's update is only in a log (not applied); Diana is in a base file.
    assert keys(rows) == ["id:1,name:Alice", "id:2,name:Bob", "id:3,name:Carol", "id:4,name:Diana"]
    _assert_sample(by_key(rows, "id"), {1, 2, 3, 4}, alice_active=True)


def test_v6_complexkeygen_time_travel_and_incremental(table_path) -> None:
    table = open_table(table_path, V6_COMPLEXKEYGEN_HIVESTYLE)
    _assert_sample(by_key(read_rows(table, as_of_instant=0), "id"), {1, 2, 3}, alice_active=True)
    _assert_sample(by_key(read_rows(table, as_of_instant=1), "id"), {1, 2, 3, 4}, alice_active=False)
    # (0, 1] by instant time: the second INSERT's Alice and Diana.
    rows = _incremental(table, 0, 1, by_completion=False)
    assert keys(rows) == ["id:1,name:Alice", "id:4,name:Diana"]
    _assert_sample(by_key(rows, "id"), {1, 4}, alice_active=False)


# -- sample_table/mor/parquet/v6_nonpartitioned: primaryKey 'id', no partitions.

NONPART_SMALL = {1: (1, 300), 2: (0, 100), 3: (1, 200), 4: (1, 500)}  # id: (byteField, shortField)


def test_v6_nonpartitioned_snapshot(table_path) -> None:
    table = open_table(table_path, V6_NONPARTITIONED)
    assert actions(table) == ["deltacommit", "deltacommit"]
    rows = read_rows(table)
    assert keys(rows) == ["1", "2", "3", "4"]
    by_id = by_key(rows, "id")
    _assert_sample(by_id, {1, 2, 3, 4}, alice_active=False)
    assert {i: (r["byteField"], r["shortField"]) for i, r in by_id.items()} == NONPART_SMALL
    assert all(r["_hoodie_partition_path"] == "" for r in rows)


def test_v6_nonpartitioned_read_optimized_and_time_travel(table_path) -> None:
    table = open_table(table_path, V6_NONPARTITIONED)
    ro = read_rows(table, read_optimized=True)
    assert keys(ro) == ["1", "2", "3", "4"]
    _assert_sample(by_key(ro, "id"), {1, 2, 3, 4}, alice_active=True)
    at_0 = read_rows(table, as_of_instant=0)
    assert keys(at_0) == ["1", "2", "3"]
    _assert_sample(by_key(at_0, "id"), {1, 2, 3}, alice_active=True)
    rows = _incremental(table, 0, 1, by_completion=False)
    assert keys(rows) == ["1", "4"]
    _assert_sample(by_key(rows, "id"), {1, 4}, alice_active=False)
