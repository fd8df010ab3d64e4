"""Copy-on-write tables of ../shared/hudi-tables and the rows derived by hand from the
Spark SQL (``X.sql``) that wrote them; run by tests/core/sql_expected/test_sql_expected.py.

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

from tests.expected import sample
from tests.expected.model import Read, Rows, Table
from tests.expected.sample import sample as sample_rows

# U1, U5, U7: the three UPDATEs of the txns tables (TXN-001 reversal, TXN-005 amount
# 2500.00, TXN-007 fee 75.00), spelled out in txns.py.
from tests.expected.txns import TXN_001_UPDATED as U1
from tests.expected.txns import TXN_005_UPDATED as U5
from tests.expected.txns import TXN_007_UPDATED as U7
from tests.expected.txns import txns

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
# Rows: txns.INSERTED with the UPDATEs of txns.py applied.

# us: 001, 003, 013, 014, 017; eu: 011, 012, 018; apac: 007, 008, 015, 016.
SIMPLE_META_FINAL = [1, 3, 13, 14, 17, 11, 12, 18, 7, 8, 15, 16]
SIMPLE_META_AFTER_9 = [1, 3, 7, 8, 11, 12, 13, 14, 15, 16]

V9_SIMPLE_META = Table(
    id="v9_simple_meta",
    name="sample_table/cow/v9_txns_simple_meta",
    # 12 writing statements; INSERT OVERWRITE (7) and run_clustering (10) are replacecommits.
    actions=["commit"] * 7 + ["replacecommit"] + ["commit"] * 2 + ["replacecommit", "commit"],
    record_key="{txn_id}",
    cases=[
        Rows(
            Read(),
            txns(SIMPLE_META_FINAL, {1: U1, 7: U7}, layout="simple"),
            # DELETE TXN-002, UPDATE+DELETE TXN-005, INSERT OVERWRITE eu drops 004, 006, 009, 010.
            absent=("TXN-002", "TXN-005", "TXN-004", "TXN-006", "TXN-009", "TXN-010"),
        ),
        # After statement 0 (initial INSERT): all 8 rows, nothing updated yet.
        Rows(Read(as_of=0), txns(range(1, 9), layout="simple")),
        # After statement 3 (UPDATE TXN-005 amount = 2500.00): 002 deleted, 005 still there.
        Rows(Read(as_of=3), txns([1, 3, 4, 5, 6, 7, 8], {1: U1, 5: U5}, layout="simple")),
        # After statement 4 (DELETE TXN-005).
        Rows(Read(as_of=4), txns([1, 3, 4, 6, 7, 8], {1: U1}, layout="simple")),
        # After statement 6 (INSERT TXN-009, 010 into eu), before the overwrite.
        Rows(
            Read(as_of=6),
            txns([1, 3, 4, 6, 7, 8, 9, 10], {1: U1, 7: U7}, layout="simple"),
        ),
        # After statement 7 (INSERT OVERWRITE eu): eu holds only 011 and 012.
        Rows(Read(as_of=7), txns([1, 3, 7, 8, 11, 12], {1: U1, 7: U7}, layout="simple")),
        # After statement 10 (clustering) = after statement 9: clustering changes no rows.
        Rows(Read(as_of=9), txns(SIMPLE_META_AFTER_9, {1: U1, 7: U7}, layout="simple")),
        Rows(Read(as_of=10), txns(SIMPLE_META_AFTER_9, {1: U1, 7: U7}, layout="simple")),
        # Final us partition: 001 (reversal), 003 (transfer), 013, 014, 017 (debit).
        Rows(Read(filters=(("region", "=", "us"), ("txn_type", "=", "debit"))), keys=["TXN-013", "TXN-014", "TXN-017"]),
        # Final eu partition: 011 (999.99), 012 (350.00), 018 (55.00).
        Rows(Read(filters=(("region", "=", "eu"), ("amount", ">", "300"))), keys=["TXN-011", "TXN-012"]),
        # Final apac partition: 007 (international), 008, 015 (international), 016.
        Rows(Read(filters=(("region", "=", "apac"), ("is_international", "=", "true"))), keys=["TXN-007", "TXN-015"]),
        # As of statement 6 the eu partition still had 004, 006, 009, 010 (005 deleted in 4).
        Rows(
            Read(as_of=6, filters=(("region", "=", "eu"), ("currency", "=", "EUR"))),
            keys=["TXN-004", "TXN-006", "TXN-009", "TXN-010"],
        ),
    ],
)

# =====================================================================================
# sample_table/cow/v9_txns_nonpart_nometa  (non-partitioned, MDT off)
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT TXN-001..008          1 UPDATE TXN-001 -> reversal   2 DELETE TXN-002
#  3 UPDATE TXN-005 amount 2500   4 DELETE TXN-005               5 UPDATE TXN-007 fee 75
#  6 INSERT TXN-009, 010          7 INSERT TXN-011, 012          8 INSERT TXN-013, 014
#  9 CLUSTERING                  10 INSERT TXN-015, 016

V9_NONPART_NOMETA = Table(
    id="v9_nonpart_nometa",
    name="sample_table/cow/v9_txns_nonpart_nometa",
    actions=["commit"] * 9 + ["replacecommit", "commit"],
    record_key="{txn_id}",
    cases=[
        Rows(
            Read(),
            txns([1, 3, 4, 6, 7, 8, *range(9, 17)], {1: U1, 7: U7}, layout="nonpart"),
            absent=("TXN-002", "TXN-005"),  # DELETE TXN-002; UPDATE then DELETE TXN-005
            missing_columns=("region",),
        ),
        # After statement 1 (UPDATE TXN-001): 8 rows, 001 reversed.
        Rows(Read(as_of=1), txns(range(1, 9), {1: U1}, layout="nonpart")),
        # After statement 2 (DELETE TXN-002): 005 still has its original amount.
        Rows(Read(as_of=2), txns([1, 3, 4, 5, 6, 7, 8], {1: U1}, layout="nonpart")),
        # After statement 3 (UPDATE TXN-005 amount = 2500.00); 007's fee still 45.00.
        Rows(Read(as_of=3), txns([1, 3, 4, 5, 6, 7, 8], {1: U1, 5: U5}, layout="nonpart")),
        # After statement 9 (clustering) = after statement 8: 12 rows.
        Rows(
            Read(as_of=9),
            txns([1, 3, 4, 6, 7, 8, *range(9, 15)], {1: U1, 7: U7}, layout="nonpart"),
        ),
        # Transfers: 003 and 010 (005 was a credit and is deleted anyway).
        Rows(Read(filters=(("txn_type", "=", "transfer"),)), keys=["TXN-003", "TXN-010"]),
        # GBP: 005 (deleted) and 012.
        Rows(Read(filters=(("currency", "=", "GBP"),)), keys=["TXN-012"]),
        # As of statement 3, GBP was only 005 (012 not yet inserted).
        Rows(Read(as_of=3, filters=(("currency", "=", "GBP"),)), keys=["TXN-005"]),
    ],
)

# =====================================================================================
# sample_table/cow/v9_txns_simple_overwrite  (partitioned by region, non-hive style)
# =====================================================================================
# Writing statements: 0 INSERT TXN-001..006   1 INSERT TXN-007 (us), 008 (eu)
#                     2 INSERT OVERWRITE TABLE -> TXN-101 (us), 102 (eu), 103 (apac)

V9_SIMPLE_OVERWRITE = Table(
    id="v9_simple_overwrite",
    name="sample_table/cow/v9_txns_simple_overwrite",
    actions=["commit", "commit", "replacecommit"],
    record_key="{txn_id}",
    cases=[
        # INSERT OVERWRITE TABLE replaced every partition.
        Rows(
            Read(),
            {
                "TXN-101": {
                    "_hoodie_partition_path": "us",
                    "region": "us",
                    "account_id": "ACC-X",
                    "txn_ts": 1700500000001,
                    "amount": Decimal("999.99"),
                    "merchant_name": "Apple Store",
                    "txn_date": datetime.date(2024, 1, 18),
                },
                "TXN-102": {
                    "_hoodie_partition_path": "eu",
                    "region": "eu",
                    "amount": Decimal("350.00"),
                    "currency": "EUR",
                },
                "TXN-103": {
                    "_hoodie_partition_path": "apac",
                    "region": "apac",
                    "amount": Decimal("4500.00"),
                    "fee_amount": Decimal("50.00"),
                    "is_international": True,
                },
            },
            absent=("TXN-001", "TXN-004", "TXN-005", "TXN-007", "TXN-008"),
        ),
        Rows(
            Read(as_of=0),
            {"TXN-004": {"region": "eu", "txn_type": "credit", "amount": Decimal("2100.00")}},
            keys=["TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"],
        ),
        Rows(
            Read(as_of=1),
            {
                "TXN-007": {"region": "us", "amount": Decimal("750.00"), "merchant_name": "Best Buy"},
                "TXN-008": {"region": "eu", "amount": Decimal("1500.00"), "merchant_name": "IKEA"},
            },
            keys=["TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006", "TXN-007", "TXN-008"],
        ),
        Rows(Read(filters=(("region", "=", "us"),)), keys=["TXN-101"]),
        Rows(Read(filters=(("region", "=", "apac"), ("amount", ">", "1000"))), keys=["TXN-103"]),
        Rows(Read(filters=(("region", "=", "eu"), ("amount", ">", "1000"))), keys=[]),
        # Before the overwrite (statement 1): us = 001, 002, 007; eu = 003 (450.75), 004 (2100.00), 008 (1500.00).
        Rows(Read(as_of=1, filters=(("region", "=", "us"),)), keys=["TXN-001", "TXN-002", "TXN-007"]),
        Rows(Read(as_of=1, filters=(("region", "=", "eu"), ("amount", ">", "1000"))), keys=["TXN-004", "TXN-008"]),
    ],
)

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

V9_TIMEBASED_EPOCHMILLIS = Table(
    id="v9_timebased_epochmillis",
    name="sample_table/cow/v9_timebasedkeygen_epochmillis",
    actions=["commit"] * 4,
    record_key="{txn_id}",
    cases=[
        Rows(
            Read(),
            {
                # Both TXN-001 versions: the first INSERT's and the second INSERT's.
                "TXN-001": [
                    {"_hoodie_partition_path": "2024/01/15/09", "txn_ts": 1700000000001, "txn_type": "debit"},
                    {"_hoodie_partition_path": "2024/01/15/09", "txn_ts": 1700100000001, "txn_type": "reversal"},
                ],
                "TXN-002": {
                    "_hoodie_partition_path": "2024/01/15/10",
                    "amount": Decimal("89.99"),
                    "txn_date": datetime.date(2024, 1, 15),
                },
                # UPDATE ... SET amount = 500.00, txn_ts = 1700200000003 WHERE txn_id = 'TXN-003'
                "TXN-003": {
                    "_hoodie_partition_path": "2024/01/16/01",
                    "amount": Decimal("500.00"),
                    "txn_ts": 1700200000003,
                    "currency": "EUR",
                    "account_id": "ACC-C",
                },
                "TXN-005": {
                    "_hoodie_partition_path": "2024/01/17/10",
                    "amount": Decimal("1500.00"),
                    "merchant_name": "IKEA",
                },
                "TXN-006": {
                    "_hoodie_partition_path": "2024/01/17/11",
                    "amount": Decimal("2200.00"),
                    "fee_amount": Decimal("15.00"),
                    "txn_type": "transfer",
                    "merchant_name": None,
                },
            },
            absent=("TXN-004",),  # DELETE TXN-004
        ),
        Rows(Read(as_of=0), {"TXN-001": {"txn_type": "debit"}}, keys=["TXN-001", "TXN-002", "TXN-003", "TXN-004"]),
        # Before the UPDATE of TXN-003.
        Rows(
            Read(as_of=1),
            {"TXN-003": {"amount": Decimal("450.75")}},
            keys=["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"],
        ),
        # After it; TXN-004 not deleted yet.
        Rows(
            Read(as_of=2),
            {
                "TXN-003": {"amount": Decimal("500.00")},
                "TXN-004": {"amount": Decimal("5000.00"), "txn_type": "transfer", "fee_amount": Decimal("25.00")},
            },
            keys=["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"],
        ),
        # Transfers: 004 (deleted) and 006.
        Rows(Read(filters=(("txn_type", "=", "transfer"),)), keys=["TXN-006"]),
        Rows(Read(as_of=2, filters=(("txn_type", "=", "transfer"),)), keys=["TXN-004", "TXN-006"]),
        Rows(Read(filters=(("currency", "=", "EUR"),)), keys=["TXN-003", "TXN-005", "TXN-006"]),
    ],
)

# =====================================================================================
# The v6/v8 sample tables (rows: sample.py): statement 0 inserts Alice, Bob, Carol;
# statement 1 re-inserts Alice with isActive = false and adds Diana.
# =====================================================================================

# sample_table/cow/v6_complexkeygen_hivestyle: primaryKey 'id,name', partitioned by
# (byteField, shortField), hive style. Record keys are "id:<id>,name:<name>".
V6_COMPLEXKEYGEN_HIVESTYLE = Table(
    id="v6_complexkeygen_hivestyle",
    name="sample_table/cow/v6_complexkeygen_hivestyle",
    actions=["commit", "commit"],
    key_column="id",
    record_key="id:{id},name:{name}",
    cases=[
        Rows(Read(), sample_rows([1, 2, 3, 4], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=True)),
        # Diana comes with the second INSERT.
        Rows(Read(as_of=0), sample_rows([1, 2, 3], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=False)),
        # byteField=10/shortField=300 holds Alice (now inactive) and Carol.
        Rows(Read(filters=(("byteField", "=", "10"), ("isActive", "=", "true"))), keys=[3]),
        Rows(Read(filters=(("shortField", "=", "100"), ("intField", ">", "30000"))), keys=[4]),
        # Before the second INSERT Alice was active.
        Rows(Read(as_of=0, filters=(("byteField", "=", "10"), ("isActive", "=", "true"))), keys=[1, 3]),
    ],
)

# sample_table/cow/v6_simplekeygen_nonhivestyle: primaryKey 'id', partitioned by
# byteField, non-hive style (partition paths "10", "20", "30").
V6_SIMPLEKEYGEN_NONHIVESTYLE = Table(
    id="v6_simplekeygen_nonhivestyle",
    name="sample_table/cow/v6_simplekeygen_nonhivestyle",
    actions=["commit", "commit"],
    key_column="id",
    record_key="{id}",
    cases=[
        Rows(Read(), sample_rows([1, 2, 3, 4], sample.SIMPLEKEYGEN_NONHIVESTYLE, alice_reinserted=True)),
        Rows(Read(as_of=0), sample_rows([1, 2, 3], sample.SIMPLEKEYGEN_NONHIVESTYLE, alice_reinserted=False)),
        # Partition 10: Alice (intField 15000) and Carol (35000).
        Rows(Read(filters=(("byteField", "=", "10"), ("intField", ">", "20000"))), keys=[3]),
        Rows(Read(filters=(("byteField", "=", "10"), ("isActive", "=", "false"))), keys=[1]),
        Rows(Read(filters=(("byteField", ">=", "20"), ("name", "!=", "Bob"))), keys=[4]),
    ],
)

# sample_table/cow/v8_nonpartitioned: primaryKey 'id', no partitions.
V8_NONPARTITIONED = Table(
    id="v8_nonpartitioned",
    name="sample_table/cow/v8_nonpartitioned",
    actions=["commit", "commit"],
    key_column="id",
    record_key="{id}",
    cases=[
        Rows(Read(), sample_rows([1, 2, 3, 4], sample.NONPARTITIONED, alice_reinserted=True)),
        Rows(Read(as_of=0), sample_rows([1, 2, 3], sample.NONPARTITIONED, alice_reinserted=False)),
        Rows(Read(filters=(("isActive", "=", "false"),)), keys=[1, 2]),
        Rows(Read(as_of=0, filters=(("isActive", "=", "false"),)), keys=[2]),
    ],
)

TABLES = [
    V9_SIMPLE_META,
    V9_NONPART_NOMETA,
    V9_SIMPLE_OVERWRITE,
    V9_TIMEBASED_EPOCHMILLIS,
    V6_COMPLEXKEYGEN_HIVESTYLE,
    V6_SIMPLEKEYGEN_NONHIVESTYLE,
    V8_NONPARTITIONED,
]
