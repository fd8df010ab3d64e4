"""Copy-on-write tables of ../shared/hudi-tables checked against rows derived by hand
from the Spark SQL (``X.sql``) that wrote them.

Every expected value below is a literal worked out by applying the statements of the
table's .sql file in order (the comments name the statement); none is computed from
what the reader returns. Each statement that writes data is one completed instant
(commit, or replacecommit for INSERT OVERWRITE and clustering), so
``data_instants[k]`` is the state after the (k+1)-th writing statement.

Timestamp columns are not checked: their stored UTC value depends on the Spark
session time zone of the writer, which the SQL does not state.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pytest

from tests.support import actions, assert_columns, by_key, keys, open_table, read_rows

V9_SIMPLE_META = "sample_table/cow/v9_txns_simple_meta"
V9_NONPART_NOMETA = "sample_table/cow/v9_txns_nonpart_nometa"
V9_SIMPLE_OVERWRITE = "sample_table/cow/v9_txns_simple_overwrite"
V9_TIMEBASED_EPOCHMILLIS = "sample_table/cow/v9_timebasedkeygen_epochmillis"
V6_COMPLEXKEYGEN_HIVESTYLE = "sample_table/cow/v6_complexkeygen_hivestyle"
V6_SIMPLEKEYGEN_NONHIVESTYLE = "sample_table/cow/v6_simplekeygen_nonhivestyle"
V8_NONPARTITIONED = "sample_table/cow/v8_nonpartitioned"


# -- helpers -------------------------------------------------------------------------


# =====================================================================================
# sample_table/cow/v9_txns_simple_meta  (partitioned by region, hive style, MDT on)
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT TXN-001..008          1 UPDATE TXN-001 -> reversal   2 DELETE TXN-002
#  3 UPDATE TXN-005 amount 2500   4 DELETE TXN-005               5 UPDATE TXN-007 fee 75
#  6 INSERT TXN-009, 010 (eu)     7 INSERT OVERWRITE eu -> 011, 012
#  8 INSERT TXN-013, 014 (us)     9 INSERT TXN-015, 016 (apac)   10 CLUSTERING
# 11 INSERT TXN-017 (us), 018 (eu)
# (CREATE INDEX statements write no data: they are `indexing` instants.)

SIMPLE_META_FINAL = {
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


def test_v9_simple_meta_timeline(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)
    # 12 writing statements; INSERT OVERWRITE (7) and run_clustering (10) are replacecommits.
    assert actions(table) == ["commit"] * 7 + ["replacecommit"] + ["commit"] * 2 + ["replacecommit", "commit"]


def test_v9_simple_meta_snapshot(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_SIMPLE_META))
    keyed = by_key(rows)
    assert set(keyed) == set(SIMPLE_META_FINAL)
    assert len(rows) == 12
    for key, partition in SIMPLE_META_FINAL.items():
        assert keyed[key]["_hoodie_partition_path"] == partition
        assert keyed[key]["txn_id"] == key
        assert keyed[key]["region"] == partition.removeprefix("region=")
    # DELETE TXN-002, UPDATE+DELETE TXN-005, INSERT OVERWRITE eu drops 004, 006, 009, 010.
    for gone in ("TXN-002", "TXN-005", "TXN-004", "TXN-006", "TXN-009", "TXN-010"):
        assert gone not in keyed
    # UPDATE ... SET txn_type = 'reversal', txn_ts = 1700100000001 WHERE txn_id = 'TXN-001'
    assert_columns(
        keyed["TXN-001"],
        {
            "txn_type": "reversal",
            "txn_ts": 1700100000001,
            "amount": Decimal("1250.00"),
            "account_id": "ACC-A",
            "txn_date": datetime.date(2024, 1, 15),
        },
    )
    # UPDATE ... SET fee_amount = 75.00, txn_ts = 1700300000007 WHERE txn_id = 'TXN-007'
    assert_columns(
        keyed["TXN-007"],
        {
            "fee_amount": Decimal("75.00"),
            "txn_ts": 1700300000007,
            "amount": Decimal("8900.00"),
            "txn_type": "debit",
            "is_international": True,
        },
    )
    # INSERT OVERWRITE ... PARTITION (region = 'eu'): TXN-011 and TXN-012
    assert_columns(
        keyed["TXN-011"],
        {
            "amount": Decimal("999.99"),
            "currency": "EUR",
            "merchant_name": "MediaMarkt",
            "txn_date": datetime.date(2024, 1, 18),
            "fee_amount": Decimal("0.00"),
        },
    )
    assert_columns(
        keyed["TXN-012"],
        {
            "amount": Decimal("350.00"),
            "currency": "GBP",
            "is_international": True,
            "fee_amount": Decimal("7.50"),
            "txn_ts": 1700500000012,
        },
    )
    # Initial INSERT: TXN-003 has merchant_name NULL, untouched afterwards.
    assert keyed["TXN-003"]["merchant_name"] is None
    assert_columns(keyed["TXN-003"], {"amount": Decimal("5000.00"), "txn_type": "transfer"})
    # Last INSERT (after clustering)
    assert_columns(
        keyed["TXN-018"],
        {"amount": Decimal("55.00"), "merchant_name": "Spotify", "txn_date": datetime.date(2024, 1, 21)},
    )


def test_v9_simple_meta_time_travel(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)

    # After statement 0 (initial INSERT): all 8 rows, nothing updated yet.
    first = by_key(read_rows(table, as_of_instant=0))
    assert set(first) == {f"TXN-00{i}" for i in range(1, 9)}
    assert_columns(first["TXN-001"], {"txn_type": "debit", "txn_ts": 1700000000001})
    assert_columns(first["TXN-005"], {"amount": Decimal("2100.00")})
    assert_columns(first["TXN-007"], {"fee_amount": Decimal("45.00")})

    # After statement 3 (UPDATE TXN-005 amount = 2500.00): 002 deleted, 005 still there.
    after_update_005 = by_key(read_rows(table, as_of_instant=3))
    assert set(after_update_005) == {"TXN-001", "TXN-003", "TXN-004", "TXN-005", "TXN-006", "TXN-007", "TXN-008"}
    assert_columns(after_update_005["TXN-005"], {"amount": Decimal("2500.00"), "txn_ts": 1700200000005})
    assert_columns(after_update_005["TXN-001"], {"txn_type": "reversal"})
    assert_columns(after_update_005["TXN-007"], {"fee_amount": Decimal("45.00")})

    # After statement 4 (DELETE TXN-005).
    assert set(by_key(read_rows(table, as_of_instant=4))) == {
        "TXN-001",
        "TXN-003",
        "TXN-004",
        "TXN-006",
        "TXN-007",
        "TXN-008",
    }

    # After statement 6 (INSERT TXN-009, 010 into eu), before the overwrite.
    before_overwrite = by_key(read_rows(table, as_of_instant=6))
    assert set(before_overwrite) == {
        "TXN-001",
        "TXN-003",
        "TXN-004",
        "TXN-006",
        "TXN-007",
        "TXN-008",
        "TXN-009",
        "TXN-010",
    }
    assert_columns(before_overwrite["TXN-007"], {"fee_amount": Decimal("75.00")})
    assert_columns(before_overwrite["TXN-010"], {"amount": Decimal("2200.00"), "txn_type": "transfer"})

    # After statement 7 (INSERT OVERWRITE eu): eu holds only 011 and 012.
    assert set(by_key(read_rows(table, as_of_instant=7))) == {
        "TXN-001",
        "TXN-003",
        "TXN-007",
        "TXN-008",
        "TXN-011",
        "TXN-012",
    }

    # After statement 10 (clustering) = after statement 9: clustering changes no rows.
    expected_9 = {
        "TXN-001",
        "TXN-003",
        "TXN-007",
        "TXN-008",
        "TXN-011",
        "TXN-012",
        "TXN-013",
        "TXN-014",
        "TXN-015",
        "TXN-016",
    }
    assert set(by_key(read_rows(table, as_of_instant=9))) == expected_9
    assert set(by_key(read_rows(table, as_of_instant=10))) == expected_9


def test_v9_simple_meta_filters(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_META)
    # Final us partition: 001 (reversal), 003 (transfer), 013, 014, 017 (debit).
    rows = read_rows(table, filters=[("region", "=", "us"), ("txn_type", "=", "debit")])
    assert keys(rows) == ["TXN-013", "TXN-014", "TXN-017"]
    # Final eu partition: 011 (999.99), 012 (350.00), 018 (55.00).
    rows = read_rows(table, filters=[("region", "=", "eu"), ("amount", ">", "300")])
    assert keys(rows) == ["TXN-011", "TXN-012"]
    # Final apac partition: 007 (international), 008, 015 (international), 016.
    rows = read_rows(table, filters=[("region", "=", "apac"), ("is_international", "=", "true")])
    assert keys(rows) == ["TXN-007", "TXN-015"]
    # As of statement 6 the eu partition still had 004, 006, 009, 010 (005 deleted in 4).
    rows = read_rows(table, as_of_instant=6, filters=[("region", "=", "eu"), ("currency", "=", "EUR")])
    assert keys(rows) == ["TXN-004", "TXN-006", "TXN-009", "TXN-010"]


# =====================================================================================
# sample_table/cow/v9_txns_nonpart_nometa  (non-partitioned, MDT off)
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT TXN-001..008          1 UPDATE TXN-001 -> reversal   2 DELETE TXN-002
#  3 UPDATE TXN-005 amount 2500   4 DELETE TXN-005               5 UPDATE TXN-007 fee 75
#  6 INSERT TXN-009, 010          7 INSERT TXN-011, 012          8 INSERT TXN-013, 014
#  9 CLUSTERING                  10 INSERT TXN-015, 016

NONPART_FINAL = {
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


def test_v9_nonpart_nometa_timeline(table_path) -> None:
    table = open_table(table_path, V9_NONPART_NOMETA)
    assert actions(table) == ["commit"] * 9 + ["replacecommit", "commit"]


def test_v9_nonpart_nometa_snapshot(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_NONPART_NOMETA))
    keyed = by_key(rows)
    assert set(keyed) == NONPART_FINAL
    assert len(rows) == 14
    assert "TXN-002" not in keyed  # DELETE TXN-002
    assert "TXN-005" not in keyed  # UPDATE then DELETE TXN-005
    for key, row in keyed.items():
        assert row["txn_id"] == key
        assert row["_hoodie_partition_path"] == ""
    # UPDATE ... SET txn_type = 'reversal', txn_ts = 1700100000001 WHERE txn_id = 'TXN-001'
    assert_columns(keyed["TXN-001"], {"txn_type": "reversal", "txn_ts": 1700100000001, "amount": Decimal("1250.00")})
    # UPDATE ... SET fee_amount = 75.00, txn_ts = 1700300000007 WHERE txn_id = 'TXN-007'
    assert_columns(keyed["TXN-007"], {"fee_amount": Decimal("75.00"), "txn_ts": 1700300000007})
    # Untouched rows of the initial INSERT
    assert_columns(
        keyed["TXN-004"],
        {"amount": Decimal("450.75"), "currency": "EUR", "merchant_name": "Zalando", "txn_type": "debit"},
    )
    assert_columns(keyed["TXN-006"], {"fee_amount": Decimal("3.50"), "is_international": True})
    # INSERT TXN-011, 012 (statement 7) and TXN-015, 016 (after clustering)
    assert_columns(keyed["TXN-012"], {"currency": "GBP", "fee_amount": Decimal("7.50")})
    assert_columns(
        keyed["TXN-015"],
        {"amount": Decimal("4500.00"), "merchant_name": "Japan Airlines", "txn_date": datetime.date(2024, 1, 20)},
    )
    assert keyed["TXN-010"]["merchant_name"] is None


def test_v9_nonpart_nometa_time_travel(table_path) -> None:
    table = open_table(table_path, V9_NONPART_NOMETA)

    # After statement 1 (UPDATE TXN-001): 8 rows, 001 reversed.
    after_1 = by_key(read_rows(table, as_of_instant=1))
    assert set(after_1) == {f"TXN-00{i}" for i in range(1, 9)}
    assert_columns(after_1["TXN-001"], {"txn_type": "reversal", "txn_ts": 1700100000001})

    # After statement 2 (DELETE TXN-002): 005 still has its original amount.
    after_2 = by_key(read_rows(table, as_of_instant=2))
    assert set(after_2) == {"TXN-001", "TXN-003", "TXN-004", "TXN-005", "TXN-006", "TXN-007", "TXN-008"}
    assert_columns(after_2["TXN-005"], {"amount": Decimal("2100.00"), "txn_ts": 1700000000005})

    # After statement 3 (UPDATE TXN-005 amount = 2500.00).
    after_3 = by_key(read_rows(table, as_of_instant=3))
    assert set(after_3) == set(after_2)
    assert_columns(after_3["TXN-005"], {"amount": Decimal("2500.00"), "txn_ts": 1700200000005})
    assert_columns(after_3["TXN-007"], {"fee_amount": Decimal("45.00")})

    # After statement 9 (clustering) = after statement 8: 12 rows.
    after_9 = by_key(read_rows(table, as_of_instant=9))
    assert set(after_9) == NONPART_FINAL - {"TXN-015", "TXN-016"}
    assert_columns(after_9["TXN-007"], {"fee_amount": Decimal("75.00")})


def test_v9_nonpart_nometa_filters(table_path) -> None:
    table = open_table(table_path, V9_NONPART_NOMETA)
    # Transfers: 003 and 010 (005 was a credit and is deleted anyway).
    assert keys(read_rows(table, filters=[("txn_type", "=", "transfer")])) == ["TXN-003", "TXN-010"]
    # GBP: 005 (deleted) and 012.
    assert keys(read_rows(table, filters=[("currency", "=", "GBP")])) == ["TXN-012"]
    # As of statement 3, GBP was only 005 (012 not yet inserted).
    assert keys(read_rows(table, as_of_instant=3, filters=[("currency", "=", "GBP")])) == ["TXN-005"]


# =====================================================================================
# sample_table/cow/v9_txns_simple_overwrite  (partitioned by region, non-hive style)
# =====================================================================================
# Writing statements: 0 INSERT TXN-001..006   1 INSERT TXN-007 (us), 008 (eu)
#                     2 INSERT OVERWRITE TABLE -> TXN-101 (us), 102 (eu), 103 (apac)


def test_v9_simple_overwrite_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_SIMPLE_OVERWRITE)) == ["commit", "commit", "replacecommit"]


def test_v9_simple_overwrite_snapshot(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_SIMPLE_OVERWRITE))
    keyed = by_key(rows)
    # INSERT OVERWRITE TABLE replaced every partition.
    assert set(keyed) == {"TXN-101", "TXN-102", "TXN-103"}
    assert len(rows) == 3
    for gone in ("TXN-001", "TXN-004", "TXN-005", "TXN-007", "TXN-008"):
        assert gone not in keyed
    assert_columns(
        keyed["TXN-101"],
        {
            "_hoodie_partition_path": "us",
            "region": "us",
            "account_id": "ACC-X",
            "txn_ts": 1700500000001,
            "amount": Decimal("999.99"),
            "merchant_name": "Apple Store",
            "txn_date": datetime.date(2024, 1, 18),
        },
    )
    assert_columns(
        keyed["TXN-102"],
        {"_hoodie_partition_path": "eu", "region": "eu", "amount": Decimal("350.00"), "currency": "EUR"},
    )
    assert_columns(
        keyed["TXN-103"],
        {
            "_hoodie_partition_path": "apac",
            "region": "apac",
            "amount": Decimal("4500.00"),
            "fee_amount": Decimal("50.00"),
            "is_international": True,
        },
    )


def test_v9_simple_overwrite_time_travel(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_OVERWRITE)
    first = by_key(read_rows(table, as_of_instant=0))
    assert set(first) == {"TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"}
    assert_columns(first["TXN-004"], {"region": "eu", "txn_type": "credit", "amount": Decimal("2100.00")})

    second = by_key(read_rows(table, as_of_instant=1))
    assert set(second) == {f"TXN-00{i}" for i in range(1, 9)}
    assert_columns(second["TXN-007"], {"region": "us", "amount": Decimal("750.00"), "merchant_name": "Best Buy"})
    assert_columns(second["TXN-008"], {"region": "eu", "amount": Decimal("1500.00"), "merchant_name": "IKEA"})


def test_v9_simple_overwrite_filters(table_path) -> None:
    table = open_table(table_path, V9_SIMPLE_OVERWRITE)
    assert keys(read_rows(table, filters=[("region", "=", "us")])) == ["TXN-101"]
    assert keys(read_rows(table, filters=[("region", "=", "apac"), ("amount", ">", "1000")])) == ["TXN-103"]
    assert keys(read_rows(table, filters=[("region", "=", "eu"), ("amount", ">", "1000")])) == []
    # Before the overwrite (statement 1): us = 001, 002, 007; eu = 003 (450.75), 004 (2100.00), 008 (1500.00).
    assert keys(read_rows(table, as_of_instant=1, filters=[("region", "=", "us")])) == ["TXN-001", "TXN-002", "TXN-007"]
    rows = read_rows(table, as_of_instant=1, filters=[("region", "=", "eu"), ("amount", ">", "1000")])
    assert keys(rows) == ["TXN-004", "TXN-008"]


# =====================================================================================
# sample_table/cow/v9_timebasedkeygen_epochmillis  (TimestampBasedKeyGenerator)
# =====================================================================================
# Writing statements: 0 INSERT TXN-001..004
#                     1 INSERT TXN-001 (txn_type 'reversal'), TXN-005, TXN-006
#                     2 UPDATE TXN-003 amount = 500.00      3 DELETE TXN-004
# Statement 1 is a plain INSERT INTO on Hudi 1.1: operation `insert` with the default
# duplicate policy `none`, so it does not upsert (despite the SQL comment): TXN-001 is
# written again into a new file group and both versions stay visible.
# Partition paths use yyyy/MM/dd/HH of ts_millis in UTC (the keygen default time zone):
#   1705311000000 = 2024-01-15 09:30 UTC, 1705315500000 = 2024-01-15 10:45 UTC,
#   1705367700000 = 2024-01-16 01:15 UTC, 1705397400000 = 2024-01-16 09:30 UTC,
#   1705485600000 = 2024-01-17 10:00 UTC, 1705489200000 = 2024-01-17 11:00 UTC
# (the SQL comments' hours are one off; the values are what counts).
# ts_millis itself is not checked: Hudi's UPDATE evolved its type from LONG to STRING.

TIMEBASED_PARTITIONS = {
    "TXN-001": "2024/01/15/09",
    "TXN-002": "2024/01/15/10",
    "TXN-003": "2024/01/16/01",
    "TXN-004": "2024/01/16/09",
    "TXN-005": "2024/01/17/10",
    "TXN-006": "2024/01/17/11",
}


def test_v9_timebased_epochmillis_timeline(table_path) -> None:
    assert actions(open_table(table_path, V9_TIMEBASED_EPOCHMILLIS)) == ["commit"] * 4


def test_v9_timebased_epochmillis_snapshot(table_path) -> None:
    rows = read_rows(open_table(table_path, V9_TIMEBASED_EPOCHMILLIS))
    assert keys(rows) == ["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-005", "TXN-006"]
    assert "TXN-004" not in keys(rows)  # DELETE TXN-004
    for r in rows:
        assert r["_hoodie_partition_path"] == TIMEBASED_PARTITIONS[r["_hoodie_record_key"]]
    # Both TXN-001 versions: the first INSERT's and the second INSERT's.
    txn_001 = sorted((r["txn_ts"], r["txn_type"]) for r in rows if r["_hoodie_record_key"] == "TXN-001")
    assert txn_001 == [(1700000000001, "debit"), (1700100000001, "reversal")]
    keyed = by_key([r for r in rows if r["_hoodie_record_key"] != "TXN-001"])
    # UPDATE ... SET amount = 500.00, txn_ts = 1700200000003 WHERE txn_id = 'TXN-003'
    assert_columns(
        keyed["TXN-003"],
        {"amount": Decimal("500.00"), "txn_ts": 1700200000003, "currency": "EUR", "account_id": "ACC-C"},
    )
    assert_columns(keyed["TXN-005"], {"amount": Decimal("1500.00"), "merchant_name": "IKEA"})
    assert_columns(
        keyed["TXN-006"], {"amount": Decimal("2200.00"), "fee_amount": Decimal("15.00"), "txn_type": "transfer"}
    )
    assert keyed["TXN-006"]["merchant_name"] is None
    assert_columns(keyed["TXN-002"], {"amount": Decimal("89.99"), "txn_date": datetime.date(2024, 1, 15)})


def test_v9_timebased_epochmillis_time_travel(table_path) -> None:
    table = open_table(table_path, V9_TIMEBASED_EPOCHMILLIS)
    first = read_rows(table, as_of_instant=0)
    assert keys(first) == ["TXN-001", "TXN-002", "TXN-003", "TXN-004"]
    assert_columns(by_key(first)["TXN-001"], {"txn_type": "debit"})

    second = read_rows(table, as_of_instant=1)
    assert keys(second) == ["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"]
    third = read_rows(table, as_of_instant=2)
    assert keys(third) == keys(second)
    amount_003 = {
        k: next(r["amount"] for r in rs if r["_hoodie_record_key"] == "TXN-003")
        for k, rs in (("before", second), ("after", third))
    }
    assert amount_003 == {"before": Decimal("450.75"), "after": Decimal("500.00")}
    assert_columns(
        next(r for r in third if r["_hoodie_record_key"] == "TXN-004"),
        {"amount": Decimal("5000.00"), "txn_type": "transfer", "fee_amount": Decimal("25.00")},
    )


def test_v9_timebased_epochmillis_filters(table_path) -> None:
    table = open_table(table_path, V9_TIMEBASED_EPOCHMILLIS)
    # Transfers: 004 (deleted) and 006.
    assert keys(read_rows(table, filters=[("txn_type", "=", "transfer")])) == ["TXN-006"]
    assert keys(read_rows(table, as_of_instant=2, filters=[("txn_type", "=", "transfer")])) == ["TXN-004", "TXN-006"]
    assert keys(read_rows(table, filters=[("currency", "=", "EUR")])) == ["TXN-003", "TXN-005", "TXN-006"]


# =====================================================================================
# The v6/v8 sample tables: two INSERT INTO statements, run as upserts (primaryKey +
# preCombineField on Hudi 0.14/0.15). Statement 0 inserts Alice, Bob, Carol; statement 1
# re-inserts Alice with isActive = false (same longField, so the newer write wins) and
# adds Diana.
# =====================================================================================

SAMPLE_UNCHANGED = {
    # id: (name, isActive, intField, longField, decimalField, dateField)
    2: ("Bob", False, 25000, 9876543210, Decimal("67890.12345"), datetime.date(2023, 4, 2)),
    3: ("Carol", True, 35000, 1928374650, Decimal("11111.22222"), datetime.date(2023, 4, 3)),
    4: ("Diana", True, 45000, 987654321, Decimal("65432.12345"), datetime.date(2023, 4, 4)),
}


def _assert_sample_rows(by_id: dict[Any, dict[str, Any]]) -> None:
    assert set(by_id) == {1, 2, 3, 4}
    # Second INSERT: Alice's isActive becomes false.
    assert_columns(
        by_id[1],
        {
            "name": "Alice",
            "isActive": False,
            "intField": 15000,
            "longField": 1234567890,
            "decimalField": Decimal("12345.67890"),
            "dateField": datetime.date(2023, 4, 1),
            "doubleField": 3.14159,
        },
    )
    assert by_id[1]["binaryField"] == b"binary data"
    for id_, (name, active, int_field, long_field, dec, date) in SAMPLE_UNCHANGED.items():
        assert_columns(
            by_id[id_],
            {
                "name": name,
                "isActive": active,
                "intField": int_field,
                "longField": long_field,
                "decimalField": dec,
                "dateField": date,
            },
        )
    assert by_id[4]["structField"] == {
        "field1": "Diana",
        "field2": 50,
        "child_struct": {"child_field1": 987.654, "child_field2": True},
    }
    assert by_id[4]["arrayField"] == [
        {"arr_struct_f1": "orange", "arr_struct_f2": 900},
        {"arr_struct_f1": "gray", "arr_struct_f2": 1000},
    ]


def _assert_sample_first_commit(by_id: dict[Any, dict[str, Any]]) -> None:
    assert set(by_id) == {1, 2, 3}  # Diana comes with the second INSERT
    assert_columns(by_id[1], {"name": "Alice", "isActive": True})
    assert_columns(by_id[3], {"name": "Carol", "isActive": True})


# -- sample_table/cow/v6_complexkeygen_hivestyle: primaryKey 'id,name', partitioned by
#    (byteField, shortField), hive style. Record keys are "id:<id>,name:<name>".


def test_v6_complexkeygen_hivestyle_snapshot(table_path) -> None:
    table = open_table(table_path, V6_COMPLEXKEYGEN_HIVESTYLE)
    assert actions(table) == ["commit", "commit"]
    rows = read_rows(table)
    assert keys(rows) == ["id:1,name:Alice", "id:2,name:Bob", "id:3,name:Carol", "id:4,name:Diana"]
    _assert_sample_rows(by_key(rows, "id"))
    partitions = {r["id"]: (r["_hoodie_partition_path"], r["byteField"], r["shortField"]) for r in rows}
    assert partitions == {
        1: ("byteField=10/shortField=300", 10, 300),
        2: ("byteField=20/shortField=100", 20, 100),
        3: ("byteField=10/shortField=300", 10, 300),
        4: ("byteField=30/shortField=100", 30, 100),
    }


def test_v6_complexkeygen_hivestyle_time_travel(table_path) -> None:
    table = open_table(table_path, V6_COMPLEXKEYGEN_HIVESTYLE)
    rows = read_rows(table, as_of_instant=0)
    assert keys(rows) == ["id:1,name:Alice", "id:2,name:Bob", "id:3,name:Carol"]
    _assert_sample_first_commit(by_key(rows, "id"))


def test_v6_complexkeygen_hivestyle_filters(table_path) -> None:
    table = open_table(table_path, V6_COMPLEXKEYGEN_HIVESTYLE)
    # byteField=10/shortField=300 holds Alice (now inactive) and Carol.
    rows = read_rows(table, filters=[("byteField", "=", "10"), ("isActive", "=", "true")])
    assert keys(rows, "id") == [3]
    rows = read_rows(table, filters=[("shortField", "=", "100"), ("intField", ">", "30000")])
    assert keys(rows, "id") == [4]
    # Before the second INSERT Alice was active.
    rows = read_rows(table, as_of_instant=0, filters=[("byteField", "=", "10"), ("isActive", "=", "true")])
    assert keys(rows, "id") == [1, 3]


# -- sample_table/cow/v6_simplekeygen_nonhivestyle: primaryKey 'id', partitioned by
#    byteField, non-hive style (partition paths "10", "20", "30").


def test_v6_simplekeygen_nonhivestyle_snapshot(table_path) -> None:
    table = open_table(table_path, V6_SIMPLEKEYGEN_NONHIVESTYLE)
    assert actions(table) == ["commit", "commit"]
    rows = read_rows(table)
    assert keys(rows) == ["1", "2", "3", "4"]
    _assert_sample_rows(by_key(rows, "id"))
    partitions = {r["id"]: (r["_hoodie_partition_path"], r["byteField"], r["shortField"]) for r in rows}
    assert partitions == {1: ("10", 10, 300), 2: ("20", 20, 100), 3: ("10", 10, 200), 4: ("30", 30, 500)}


def test_v6_simplekeygen_nonhivestyle_time_travel(table_path) -> None:
    table = open_table(table_path, V6_SIMPLEKEYGEN_NONHIVESTYLE)
    rows = read_rows(table, as_of_instant=0)
    assert keys(rows) == ["1", "2", "3"]
    _assert_sample_first_commit(by_key(rows, "id"))


def test_v6_simplekeygen_nonhivestyle_filters(table_path) -> None:
    table = open_table(table_path, V6_SIMPLEKEYGEN_NONHIVESTYLE)
    # Partition 10: Alice (intField 15000) and Carol (35000).
    assert keys(read_rows(table, filters=[("byteField", "=", "10"), ("intField", ">", "20000")]), "id") == [3]
    assert keys(read_rows(table, filters=[("byteField", "=", "10"), ("isActive", "=", "false")]), "id") == [1]
    assert keys(read_rows(table, filters=[("byteField", ">=", "20"), ("name", "!=", "Bob")]), "id") == [4]


# -- sample_table/cow/v8_nonpartitioned: primaryKey 'id', no partitions.


def test_v8_nonpartitioned_snapshot(table_path) -> None:
    table = open_table(table_path, V8_NONPARTITIONED)
    assert actions(table) == ["commit", "commit"]
    rows = read_rows(table)
    assert keys(rows) == ["1", "2", "3", "4"]
    by_id = by_key(rows, "id")
    _assert_sample_rows(by_id)
    assert {i: (r["byteField"], r["shortField"]) for i, r in by_id.items()} == {
        1: (1, 300),
        2: (0, 100),
        3: (1, 200),
        4: (1, 500),
    }
    assert all(r["_hoodie_partition_path"] == "" for r in rows)


def test_v8_nonpartitioned_time_travel(table_path) -> None:
    table = open_table(table_path, V8_NONPARTITIONED)
    rows = read_rows(table, as_of_instant=0)
    assert keys(rows) == ["1", "2", "3"]
    _assert_sample_first_commit(by_key(rows, "id"))


def test_v8_nonpartitioned_filters(table_path) -> None:
    table = open_table(table_path, V8_NONPARTITIONED)
    assert keys(read_rows(table, filters=[("isActive", "=", "false")]), "id") == [1, 2]
    assert keys(read_rows(table, as_of_instant=0, filters=[("isActive", "=", "false")]), "id") == [2]


@pytest.mark.parametrize(
    "name",
    [
        V9_SIMPLE_META,
        V9_NONPART_NOMETA,
        V9_SIMPLE_OVERWRITE,
        V9_TIMEBASED_EPOCHMILLIS,
        V6_COMPLEXKEYGEN_HIVESTYLE,
        V6_SIMPLEKEYGEN_NONHIVESTYLE,
        V8_NONPARTITIONED,
    ],
)
def test_record_key_matches_key_column(name: str, table_path) -> None:
    """Every row's _hoodie_record_key is built from its own key column(s)."""
    rows = read_rows(open_table(table_path, name))
    assert rows
    for r in rows:
        if "txn_id" in r:
            assert r["_hoodie_record_key"] == r["txn_id"]
        elif name == V6_COMPLEXKEYGEN_HIVESTYLE:
            assert r["_hoodie_record_key"] == f"id:{r['id']},name:{r['name']}"
        else:
            assert r["_hoodie_record_key"] == str(r["id"])
