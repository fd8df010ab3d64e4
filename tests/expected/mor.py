"""Merge-on-read tables of ../shared/hudi-tables and the rows derived by hand from the
Spark SQL (``X.sql``) that wrote them; run by tests/core/sql_expected/test_sql_expected_mor.py.

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

from tests.expected import sample
from tests.expected.model import Instant, Read, Rows, Table
from tests.expected.sample import sample as sample_rows
from tests.expected.trips import FIRST_RIDERS, trips

# U1, U5, U7: the three UPDATEs of the txns tables (TXN-001 reversal, TXN-005 amount
# 2500.00, TXN-007 fee 75.00), spelled out in txns.py.
from tests.expected.txns import TXN_001_UPDATED as U1
from tests.expected.txns import TXN_005_UPDATED as U5
from tests.expected.txns import TXN_007_UPDATED as U7
from tests.expected.txns import txns

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
# Rows: txns.py (the three v9 "txns" MOR tables share their data statements).

SIMPLE_ACTIONS = (
    ["deltacommit"] * 7 + ["replacecommit"] + ["deltacommit"] * 2 + ["commit", "replacecommit", "deltacommit"]
)
# us: 001, 003, 013, 014, 017; eu: 011, 012, 018; apac: 007, 008, 015, 016.
SIMPLE_FINAL = [1, 3, 13, 14, 17, 11, 12, 18, 7, 8, 15, 16]
# DELETE TXN-002; UPDATE then DELETE TXN-005; INSERT OVERWRITE eu drops 004, 006, 009, 010.
SIMPLE_GONE = ("TXN-002", "TXN-005", "TXN-004", "TXN-006", "TXN-009", "TXN-010")
SIMPLE_AFTER_9 = [1, 3, 7, 8, 11, 12, 13, 14, 15, 16]

V9_SIMPLE_META = Table(
    id="v9_simple_meta",
    name="sample_table/mor/avro/v9_txns_simple_meta",
    actions=SIMPLE_ACTIONS,
    record_key="{txn_id}",
    cases=[
        Rows(Read(), txns(SIMPLE_FINAL, {1: U1, 7: U7}, layout="simple"), absent=SIMPLE_GONE),
        # As of 0 (initial INSERT): base files only, nothing updated.
        Rows(Read(as_of=0), txns(range(1, 9), layout="simple")),
        # As of 1: UPDATE TXN-001 lives only in the us log file; 002 still there.
        Rows(Read(as_of=1), txns(range(1, 9), {1: U1}, layout="simple")),
        # As of 2: DELETE TXN-002 (delete block in the us log); 005's amount still 2100.00.
        Rows(Read(as_of=2), txns([1, 3, 4, 5, 6, 7, 8], {1: U1}, layout="simple")),
        # As of 3: UPDATE TXN-005 amount = 2500.00 (eu log); 007's fee still 45.00.
        Rows(Read(as_of=3), txns([1, 3, 4, 5, 6, 7, 8], {1: U1, 5: U5}, layout="simple")),
        # As of 4: DELETE TXN-005 (second eu log).
        Rows(Read(as_of=4), txns([1, 3, 4, 6, 7, 8], {1: U1}, layout="simple")),
        # As of 5: UPDATE TXN-007 fee 75.00 (apac log).
        Rows(Read(as_of=5), txns([1, 3, 4, 6, 7, 8], {1: U1, 7: U7}, layout="simple")),
        # As of 6 (INSERT 009, 010) and 7 (INSERT OVERWRITE eu).
        Rows(Read(as_of=6), txns([1, 3, 4, 6, 7, 8, 9, 10], {1: U1, 7: U7}, layout="simple")),
        Rows(Read(as_of=7), txns([1, 3, 7, 8, 11, 12], {1: U1, 7: U7}, layout="simple")),
        # As of 9, 10 (compaction) and 11 (clustering): same rows, values unchanged by
        # compaction and clustering.
        Rows(Read(as_of=9), txns(SIMPLE_AFTER_9, {1: U1, 7: U7}, layout="simple")),
        Rows(Read(as_of=10), txns(SIMPLE_AFTER_9, {1: U1, 7: U7}, layout="simple")),
        Rows(Read(as_of=11), txns(SIMPLE_AFTER_9, {1: U1, 7: U7}, layout="simple")),
        # Read-optimized, latest: the us/apac logs were compacted (10) and the eu logs
        # replaced (7), so the latest base files already hold every statement:
        # read-optimized = snapshot.
        Rows(Read(read_optimized=True), txns(SIMPLE_FINAL, {1: U1, 7: U7}, layout="simple"), absent=SIMPLE_GONE),
        # Read-optimized as of 5: statements 1-5 only in log files, none compacted yet ->
        # base files of the initial INSERT, unchanged: 001 debit, 002 and 005 present,
        # 007 fee 45.00.
        Rows(Read(as_of=5, read_optimized=True), txns(range(1, 9), layout="simple")),
        # (0, 1]: UPDATE TXN-001 only.
        Rows(Read(incremental=(0, 1)), txns([1], {1: {**U1, "_hoodie_commit_time": Instant(1)}}, layout="simple")),
        # (2, 3]: UPDATE TXN-005 amount 2500.00.
        Rows(Read(incremental=(2, 3)), txns([5], {5: U5}, layout="simple")),
        # (3, 5]: DELETE TXN-005 (absent), UPDATE TXN-007 fee 75.00.
        Rows(Read(incremental=(3, 5)), txns([7], {7: U7}, layout="simple")),
        # (1, 2]: only DELETE TXN-002 -> nothing to return.
        Rows(Read(incremental=(1, 2)), keys=[]),
        # (7, 9]: INSERT TXN-013, 014 (us) and TXN-015, 016 (apac).
        Rows(Read(incremental=(7, 9)), txns([13, 14, 15, 16], layout="simple")),
    ],
)

# =====================================================================================
# sample_table/mor/avro/v9_txns_complex_nometa  (primaryKey 'txn_id,account_id', MDT off)
# =====================================================================================
# Same statements and data_instants as v9_txns_simple_meta; record keys are
# "txn_id:<txn_id>,account_id:<account_id>" (each UPDATE/DELETE names both columns).

V9_COMPLEX_NOMETA = Table(
    id="v9_complex_nometa",
    name="sample_table/mor/avro/v9_txns_complex_nometa",
    actions=SIMPLE_ACTIONS,
    key_column="txn_id",
    record_key="txn_id:{txn_id},account_id:{account_id}",
    cases=[
        Rows(
            Read(),
            txns(
                SIMPLE_FINAL,
                {
                    # Literal spelling of two keys.
                    1: {**U1, "_hoodie_record_key": "txn_id:TXN-001,account_id:ACC-A"},
                    7: U7,
                    18: {"_hoodie_record_key": "txn_id:TXN-018,account_id:ACC-P"},
                },
                layout="complex",
            ),
            absent=SIMPLE_GONE,
        ),
        Rows(Read(as_of=0), txns(range(1, 9), layout="complex")),
        # As of 1: UPDATE TXN-001/ACC-A (log only).
        Rows(Read(as_of=1), txns(range(1, 9), {1: U1}, layout="complex")),
        # As of 2: DELETE TXN-002/ACC-B (delete block).
        Rows(Read(as_of=2), txns([1, 3, 4, 5, 6, 7, 8], {1: U1}, layout="complex")),
        # As of 3: UPDATE TXN-005/ACC-D amount 2500.00; as of 4: DELETE TXN-005/ACC-D.
        Rows(Read(as_of=3), txns([1, 3, 4, 5, 6, 7, 8], {1: U1, 5: U5}, layout="complex")),
        Rows(Read(as_of=4), txns([1, 3, 4, 6, 7, 8], {1: U1}, layout="complex")),  # 007 fee still 45.00
        # As of 5: UPDATE TXN-007/ACC-E fee 75.00.
        Rows(Read(as_of=5), txns([1, 3, 4, 6, 7, 8], {1: U1, 7: U7}, layout="complex")),
        # Read-optimized as of 4: UPDATE TXN-001 and the DELETEs of TXN-002, TXN-005 are only in logs.
        Rows(Read(as_of=4, read_optimized=True), txns(range(1, 9), layout="complex")),
        # Read-optimized, latest: compacted/replaced, so equal to the snapshot.
        Rows(Read(read_optimized=True), txns(SIMPLE_FINAL, {1: U1, 7: U7}, layout="complex")),
    ],
)

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

NONPART_AFTER_8 = [1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14]

V9_NONPART_META = Table(
    id="v9_nonpart_meta",
    name="sample_table/mor/avro/v9_txns_nonpart_meta",
    actions=["deltacommit"] * 9 + ["commit", "replacecommit", "deltacommit"],
    record_key="{txn_id}",
    cases=[
        Rows(
            Read(),
            txns([*NONPART_AFTER_8, 15, 16], {1: U1, 7: U7}, layout="nonpart"),
            absent=("TXN-002", "TXN-005"),  # DELETE TXN-002; UPDATE then DELETE TXN-005
            missing_columns=("region",),
        ),
        Rows(Read(as_of=1), txns(range(1, 9), {1: U1}, layout="nonpart")),
        # As of 2 (DELETE TXN-002): 005 still at its inserted amount.
        Rows(Read(as_of=2), txns([1, 3, 4, 5, 6, 7, 8], {1: U1}, layout="nonpart")),
        # As of 3 (UPDATE TXN-005 amount 2500.00).
        Rows(Read(as_of=3), txns([1, 3, 4, 5, 6, 7, 8], {1: U1, 5: U5}, layout="nonpart")),
        # As of 4 (DELETE TXN-005); 007 not updated yet.
        Rows(Read(as_of=4), txns([1, 3, 4, 6, 7, 8], {1: U1}, layout="nonpart")),
        # As of 5 (UPDATE TXN-007 fee 75.00).
        Rows(Read(as_of=5), txns([1, 3, 4, 6, 7, 8], {1: U1, 7: U7}, layout="nonpart")),
        # As of 8, 9 (compaction), 10 (clustering): 12 rows.
        Rows(Read(as_of=8), txns(NONPART_AFTER_8, {1: U1, 7: U7}, layout="nonpart")),
        Rows(Read(as_of=9), txns(NONPART_AFTER_8, {1: U1, 7: U7}, layout="nonpart")),
        Rows(Read(as_of=10), txns(NONPART_AFTER_8, {1: U1, 7: U7}, layout="nonpart")),
        # Read-optimized as of 8: statements 1-5 are only in logs of the statement-0 file
        # group: 001, 002, 005, 007 as inserted.
        Rows(Read(as_of=8, read_optimized=True), txns(range(1, 15), layout="nonpart")),
        # Read-optimized as of 9: the compaction folded all five logs into a new base file.
        Rows(Read(as_of=9, read_optimized=True), txns(NONPART_AFTER_8, {1: U1, 7: U7}, layout="nonpart")),
        # (0, 2]: UPDATE TXN-001, DELETE TXN-002.
        Rows(Read(incremental=(0, 2)), txns([1], {1: U1}, layout="nonpart")),
        # (2, 4]: UPDATE then DELETE TXN-005 -> nothing.
        Rows(Read(incremental=(2, 4)), keys=[]),
        # (4, 7]: UPDATE TXN-007, INSERT 009, 010, 011, 012.
        Rows(
            Read(incremental=(4, 7)),
            txns(
                [7, 9, 10, 11, 12],
                {7: {**U7, "_hoodie_commit_time": Instant(5)}, 11: {"_hoodie_commit_time": Instant(7)}},
                layout="nonpart",
            ),
        ),
    ],
)

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
# Partition paths (from the DATE_STRING column of each INSERT):
#   TXN-001 2024/01/15/10  '2024-01-15T10:30:00.000Z'   TXN-002 2024/01/15/11  '2024-01-15T11:45:00.000Z'
#   TXN-003 2024/01/16/09  '2024-01-16T09:00:00.000Z'   TXN-004 2024/01/17/14  '2024-01-17T14:20:00.000Z'
#   TXN-005 2024/01/18/16  '2024-01-18T16:30:00.000Z'   TXN-006 2024/01/15/16  '2024-01-15T16:00:00.000Z'

# The two TXN-001 rows: the first INSERT's and the second INSERT's.
TIMEBASED_TXN_001_FIRST = {"txn_ts": 1700000000001, "txn_type": "debit"}
TIMEBASED_TXN_001_SECOND = {"txn_ts": 1700100000001, "txn_type": "reversal"}

V9_TIMEBASED_NONHIVE = Table(
    id="v9_timebased_nonhive",
    name="sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
    actions=["deltacommit"] * 5,
    record_key="{txn_id}",
    cases=[
        Rows(
            Read(),
            {
                "TXN-001": [
                    {**TIMEBASED_TXN_001_FIRST, "_hoodie_partition_path": "2024/01/15/10"},
                    {**TIMEBASED_TXN_001_SECOND, "_hoodie_partition_path": "2024/01/15/10"},
                ],
                # UPDATE ... SET amount = 500.00, txn_ts = 1700200000003 WHERE txn_id = 'TXN-003' (log)
                "TXN-003": {
                    "_hoodie_partition_path": "2024/01/16/09",
                    "amount": Decimal("500.00"),
                    "txn_ts": 1700200000003,
                    "account_id": "ACC-C",
                    "currency": "EUR",
                    "merchant_name": "Zalando",
                    "txn_date": datetime.date(2024, 1, 16),
                },
                "TXN-004": {
                    "_hoodie_partition_path": "2024/01/17/14",
                    "amount": Decimal("5000.00"),
                    "txn_type": "transfer",
                    "merchant_name": None,
                },
                "TXN-005": {
                    "_hoodie_partition_path": "2024/01/18/16",
                    "amount": Decimal("8900.00"),
                    "merchant_name": "Singapore Airlines",
                    "fee_amount": Decimal("45.00"),
                },
                "TXN-006": {
                    "_hoodie_partition_path": "2024/01/15/16",
                    "account_id": "ACC-F",
                    "amount": Decimal("320.25"),
                    "merchant_name": "Grab",
                    "txn_ts": 1700300000006,
                },
            },
            absent=("TXN-002",),  # DELETE TXN-002 (log)
        ),
        # Read-optimized: no compaction ran, DELETE TXN-002 and UPDATE TXN-003 are not in
        # any base file; TXN-003 as first written: 450.75.
        Rows(
            Read(read_optimized=True),
            {
                "TXN-001": [TIMEBASED_TXN_001_FIRST, TIMEBASED_TXN_001_SECOND],
                "TXN-002": {"amount": Decimal("89.99"), "merchant_name": "Netflix"},
                "TXN-003": {"amount": Decimal("450.75"), "txn_ts": 1700000000003},
            },
            keys=["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005", "TXN-006"],
        ),
        Rows(Read(as_of=0), keys=["TXN-001", "TXN-002", "TXN-003", "TXN-004"]),
        Rows(
            Read(as_of=1),
            {"TXN-003": {"amount": Decimal("450.75")}},
            keys=["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005"],
        ),
        # As of 2: UPDATE TXN-003 (log only).
        Rows(
            Read(as_of=2),
            {"TXN-003": {"amount": Decimal("500.00"), "txn_ts": 1700200000003}},
            keys=["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-004", "TXN-005"],
        ),
        # As of 3: DELETE TXN-002 (delete block).
        Rows(Read(as_of=3), keys=["TXN-001", "TXN-001", "TXN-003", "TXN-004", "TXN-005"]),
        # (0, 1]: second INSERT only: its TXN-001 (reversal) and TXN-005; the first
        # INSERT's TXN-001 was written by instant 0.
        Rows(Read(incremental=(0, 1)), {"TXN-001": TIMEBASED_TXN_001_SECOND}, keys=["TXN-001", "TXN-005"]),
        # (1, 3]: UPDATE TXN-003, DELETE TXN-002 (absent).
        Rows(Read(incremental=(1, 3)), {"TXN-003": {"amount": Decimal("500.00"), "txn_ts": 1700200000003}}),
        # (2, 4]: DELETE TXN-002 (absent), INSERT TXN-006.
        Rows(Read(incremental=(2, 4)), keys=["TXN-006"]),
    ],
)

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
# Rows: trips.py.

FARE_0 = {"fare": 0.0}  # UPDATE ... SET fare = 0
V8_AFTER_4 = ["rider-A", "rider-C", "rider-D", "rider-E", "rider-G", "rider-I"]

V8_TRIPS = Table(
    id="v8_trips",
    name="quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
    actions=["deltacommit"] * 5 + ["commit", "deltacommit"],
    key_column="rider",
    record_key="{uuid}",
    cases=[
        # DELETE rider-F, rider-J; UPDATE fare = 0 for rider-A and rider-G.
        Rows(Read(), trips(V8_AFTER_4, {"rider-A": FARE_0, "rider-G": FARE_0})),
        # Read-optimized: compaction (5) folded UPDATE rider-A and both DELETEs; UPDATE
        # rider-G (6) is only in a log, so rider-G keeps its inserted fare 43.40.
        Rows(Read(read_optimized=True), trips(V8_AFTER_4, {"rider-A": FARE_0})),
        Rows(Read(as_of=0), trips(FIRST_RIDERS)),
        # As of 1: UPDATE rider-A fare 0 (log).
        Rows(Read(as_of=1), trips(FIRST_RIDERS, {"rider-A": FARE_0})),
        # As of 2: DELETE rider-F (delete block).
        Rows(Read(as_of=2), trips([*V8_AFTER_4, "rider-J"], {"rider-A": FARE_0})),
        # As of 3: UPDATE rider-J fare 0 (log).
        Rows(Read(as_of=3), trips([*V8_AFTER_4, "rider-J"], {"rider-A": FARE_0, "rider-J": FARE_0})),
        # As of 4: DELETE rider-J; as of 5 (compaction) the same rows.
        Rows(Read(as_of=4), trips(V8_AFTER_4, {"rider-A": FARE_0})),
        Rows(Read(as_of=5), trips(V8_AFTER_4, {"rider-A": FARE_0})),
        # Read-optimized as of 4: no compaction yet -> the inserted rows, all 8.
        Rows(Read(as_of=4, read_optimized=True), trips(FIRST_RIDERS)),
        # (0, 3]: UPDATE rider-A, DELETE rider-F, UPDATE rider-J.
        Rows(Read(incremental=(0, 3)), trips(["rider-A", "rider-J"], {"rider-A": FARE_0, "rider-J": FARE_0})),
        # (0, 4]: rider-J then deleted.
        Rows(Read(incremental=(0, 4)), trips(["rider-A"], {"rider-A": FARE_0})),
        # (3, 4]: only DELETE rider-J.
        Rows(Read(incremental=(3, 4)), keys=[]),
        # (4, 6]: compaction writes no new records; UPDATE rider-G.
        Rows(Read(incremental=(4, 6)), trips(["rider-G"], {"rider-G": {**FARE_0, "_hoodie_commit_time": Instant(6)}})),
    ],
)

# =====================================================================================
# quickstart_trips_table/mor/avro/v6_trips_8i1u  (table version 6)
# =====================================================================================
# data_instants: 0 INSERT 8 trips   1 UPDATE fare = 25.0 WHERE rider = 'rider-D' (log)

FARE_25 = {"fare": 25.0}  # UPDATE ... SET fare = 25.0 WHERE rider = 'rider-D'

V6_TRIPS = Table(
    id="v6_trips",
    name="quickstart_trips_table/mor/avro/v6_trips_8i1u",
    actions=["deltacommit", "deltacommit"],
    key_column="rider",
    record_key="{uuid}",
    cases=[
        Rows(Read(), trips(FIRST_RIDERS, {"rider-D": FARE_25})),
        # UPDATE rider-D only in a log file: read-optimized and as-of-0 keep 33.90.
        Rows(Read(read_optimized=True), trips(FIRST_RIDERS)),
        Rows(Read(as_of=0), trips(FIRST_RIDERS)),
        Rows(Read(as_of=1), trips(FIRST_RIDERS, {"rider-D": FARE_25})),
        # (0, 1] by instant time: UPDATE rider-D.
        Rows(
            Read(incremental=(0, 1), by_completion=False),
            trips(["rider-D"], {"rider-D": {**FARE_25, "_hoodie_commit_time": "20250331030645735"}}),
        ),
    ],
)

# =====================================================================================
# The v6 parquet-log sample tables (rows: sample.py): statement 0 inserts Alice, Bob,
# Carol; statement 1 re-inserts Alice with isActive = false (same longField, so the
# newer write wins; it goes to a parquet log block of Alice's file group) and adds
# Diana (new base file).
# =====================================================================================

# sample_table/mor/parquet/v6_complexkeygen_hivestyle: primaryKey 'id,name',
# partitioned by (byteField, shortField), hive style.
V6_COMPLEXKEYGEN_HIVESTYLE = Table(
    id="v6_complexkeygen_hivestyle",
    name="sample_table/mor/parquet/v6_complexkeygen_hivestyle",
    actions=["deltacommit", "deltacommit"],
    key_column="id",
    record_key="id:{id},name:{name}",
    cases=[
        # Second INSERT: Alice's isActive false, from the log.
        Rows(Read(), sample_rows([1, 2, 3, 4], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=True)),
        # Alice's update is only in a log (not applied); Diana is in a base file.
        Rows(
            Read(read_optimized=True),
            sample_rows([1, 2, 3, 4], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=False),
        ),
        Rows(Read(as_of=0), sample_rows([1, 2, 3], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=False)),
        Rows(Read(as_of=1), sample_rows([1, 2, 3, 4], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=True)),
        # (0, 1] by instant time: the second INSERT's Alice and Diana.
        Rows(
            Read(incremental=(0, 1), by_completion=False),
            sample_rows([1, 4], sample.COMPLEXKEYGEN_HIVESTYLE, alice_reinserted=True),
        ),
    ],
)

# sample_table/mor/parquet/v6_nonpartitioned: primaryKey 'id', no partitions.
V6_NONPARTITIONED = Table(
    id="v6_nonpartitioned",
    name="sample_table/mor/parquet/v6_nonpartitioned",
    actions=["deltacommit", "deltacommit"],
    key_column="id",
    record_key="{id}",
    cases=[
        Rows(Read(), sample_rows([1, 2, 3, 4], sample.NONPARTITIONED, alice_reinserted=True)),
        Rows(Read(read_optimized=True), sample_rows([1, 2, 3, 4], sample.NONPARTITIONED, alice_reinserted=False)),
        Rows(Read(as_of=0), sample_rows([1, 2, 3], sample.NONPARTITIONED, alice_reinserted=False)),
        Rows(
            Read(incremental=(0, 1), by_completion=False),
            sample_rows([1, 4], sample.NONPARTITIONED, alice_reinserted=True),
        ),
    ],
)

TABLES = [
    V9_SIMPLE_META,
    V9_COMPLEX_NOMETA,
    V9_NONPART_META,
    V9_TIMEBASED_NONHIVE,
    V8_TRIPS,
    V6_TRIPS,
    V6_COMPLEXKEYGEN_HIVESTYLE,
    V6_NONPARTITIONED,
]
