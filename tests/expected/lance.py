"""The six Lance-base-file tables of ../shared/hudi-tables and the rows derived by hand
from the Spark SQL (``X.sql``) that wrote them (Hudi 1.2.0-rc1, table version 9,
``'hoodie.table.base.file.format' = 'LANCE'``); run by tests/core/sql_expected/test_sql_expected_lance.py.

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
table's section lists them and its ``written`` entries pin the evidence.

Timestamp columns are not checked: ``txn_datetime`` (TIMESTAMP) holds a UTC value that
depends on the Spark session time zone of the writer, which the SQL does not state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tests.expected.model import Columns, Instant, Read, Rows, Table, WrittenFiles
from tests.expected.trips import FIRST_RIDERS, trips

# U1, U5, U7: the three UPDATEs of the txns tables (TXN-001 reversal, TXN-005 amount
# 2500.00, TXN-007 fee 75.00), spelled out in txns.py.
from tests.expected.txns import TXN_001_UPDATED as U1
from tests.expected.txns import TXN_005_UPDATED as U5
from tests.expected.txns import TXN_007_UPDATED as U7
from tests.expected.txns import Layout, txns

# =====================================================================================
# The two quickstart trips tables (rows: trips.py).
# =====================================================================================

# UPDATE ... SET fare = 0, ts = 1695200000000 WHERE rider = 'rider-A'
RIDER_A_UPDATED = {"ts": 1695200000000, "fare": 0.0}
# UPDATE ... SET fare = 0, ts = 1695400000000 WHERE rider = 'rider-G'
RIDER_G_UPDATED = {"ts": 1695400000000, "fare": 0.0}

# =====================================================================================
# quickstart_trips_table/cow/v9_trips_lance  (COW, Lance base files, MDT + record index)
# =====================================================================================
# Writing statements, in order (data_instants index):
#  0 INSERT rider-A, C, D, E (san_francisco), F, G (sao_paulo), I, J (chennai)
#  1 UPDATE fare = 0, ts = 1695200000000 WHERE rider = 'rider-A'
#  2 DELETE rider-F
#  3 UPDATE fare = 0, ts = 1695400000000 WHERE rider = 'rider-G'
#  4 INSERT rider-M, N (san_francisco), K (sao_paulo), L (chennai)

TRIPS_COW_AFTER_3 = ["rider-A", "rider-C", "rider-D", "rider-E", "rider-G", "rider-I", "rider-J"]
TRIPS_COW_LAST_INSERT = ["rider-M", "rider-N", "rider-K", "rider-L"]

V9_TRIPS_COW = Table(
    id="v9_trips_cow",
    name="quickstart_trips_table/cow/v9_trips_lance",
    actions=["commit"] * 5,
    key_column="rider",
    record_key="{uuid}",
    cases=[
        # DELETE rider-F; UPDATE rider-A and rider-G; last INSERT adds K, L, M, N.
        Rows(
            Read(),
            trips(
                TRIPS_COW_AFTER_3 + TRIPS_COW_LAST_INSERT,
                {
                    "rider-A": {**RIDER_A_UPDATED, "_hoodie_commit_time": Instant(1)},
                    "rider-G": {**RIDER_G_UPDATED, "_hoodie_commit_time": Instant(3)},
                    "rider-C": {"_hoodie_commit_time": Instant(0)},
                    "rider-K": {"_hoodie_commit_time": Instant(4)},
                },
            ),
        ),
        # As of 0: the 8 inserted trips.
        Rows(Read(as_of=0), trips(FIRST_RIDERS)),
        # As of 1: UPDATE rider-A (fare 19.10 -> 0).
        Rows(Read(as_of=1), trips(FIRST_RIDERS, {"rider-A": RIDER_A_UPDATED})),
        # As of 2: DELETE rider-F; rider-G still at 43.40.
        Rows(Read(as_of=2), trips(TRIPS_COW_AFTER_3, {"rider-A": RIDER_A_UPDATED})),
        # As of 3: UPDATE rider-G (fare 43.40 -> 0).
        Rows(Read(as_of=3), trips(TRIPS_COW_AFTER_3, {"rider-A": RIDER_A_UPDATED, "rider-G": RIDER_G_UPDATED})),
        # As of 4 = latest.
        Rows(
            Read(as_of=4),
            trips(TRIPS_COW_AFTER_3 + TRIPS_COW_LAST_INSERT, {"rider-A": RIDER_A_UPDATED, "rider-G": RIDER_G_UPDATED}),
        ),
        # (0, 1]: UPDATE rider-A.
        Rows(
            Read(incremental=(0, 1)),
            trips(["rider-A"], {"rider-A": {**RIDER_A_UPDATED, "_hoodie_commit_time": Instant(1)}}),
        ),
        # (1, 2]: only DELETE rider-F -> nothing to return.
        Rows(Read(incremental=(1, 2)), keys=[]),
        # (2, 3]: UPDATE rider-G.
        Rows(Read(incremental=(2, 3)), trips(["rider-G"], {"rider-G": RIDER_G_UPDATED})),
        # (3, 4]: last INSERT.
        Rows(Read(incremental=(3, 4)), trips(TRIPS_COW_LAST_INSERT)),
        # (0, 3]: UPDATE rider-A, DELETE rider-F (absent), UPDATE rider-G.
        Rows(
            Read(incremental=(0, 3)),
            trips(["rider-A", "rider-G"], {"rider-A": RIDER_A_UPDATED, "rider-G": RIDER_G_UPDATED}),
        ),
        # sao_paulo: F deleted, G updated, K inserted last.
        Rows(Read(filters=(("city", "=", "sao_paulo"),)), keys=["rider-G", "rider-K"]),
        # fare > 40: E 93.50, I 41.06, K 55.00, L 62.30, M 48.75 (A and G now 0).
        Rows(Read(filters=(("fare", ">", "40"),)), keys=["rider-E", "rider-I", "rider-K", "rider-L", "rider-M"]),
        # As of 0: fare > 40 was E 93.50, G 43.40, I 41.06.
        Rows(Read(as_of=0, filters=(("fare", ">", "40"),)), keys=["rider-E", "rider-G", "rider-I"]),
    ],
)

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

TRIPS_MOR_LAST_INSERT = ["rider-M", "rider-N", "rider-O", "rider-P"]

V9_TRIPS_MOR = Table(
    id="v9_trips_mor",
    name="quickstart_trips_table/mor/avro/v9_trips_lance",
    actions=["deltacommit"] * 7,
    key_column="rider",
    record_key="{uuid}",
    written=[
        # Instant 1 (UPDATE rider-A) wrote one log file; instants 2-5 wrote nothing.
        WrittenFiles(1, 1, prefix="city=san_francisco/.8d159e29-8789-4cf9-8fc4-73717c7258c7-0_", log_of_instant=True),
        WrittenFiles(2, 0),
        WrittenFiles(3, 0),
        WrittenFiles(4, 0),
        WrittenFiles(5, 0),
        WrittenFiles(6, 2),  # san_francisco and chennai base files
    ],
    cases=[
        # rider-A from the log (fare 0); C, F, G, J as inserted (statements 2-5 had no
        # effect; the SQL intends C 15.50 and F, J deleted, G 0); M, N, O, P inserted.
        Rows(
            Read(),
            trips(
                [*FIRST_RIDERS, *TRIPS_MOR_LAST_INSERT],
                {
                    "rider-A": {**RIDER_A_UPDATED, "_hoodie_commit_time": Instant(1)},
                    "rider-C": {"_hoodie_commit_time": Instant(0)},
                    "rider-O": {"_hoodie_commit_time": Instant(6)},
                },
            ),
        ),
        # As of 0: base files only.
        Rows(Read(as_of=0), trips(FIRST_RIDERS)),
        # As of 1: UPDATE rider-A lives only in the log file -> merged over the Lance base.
        Rows(Read(as_of=1), trips(FIRST_RIDERS, {"rider-A": RIDER_A_UPDATED})),
        # As of 2, 3, 4, 5: the empty deltacommits change nothing.
        Rows(Read(as_of=2), trips(FIRST_RIDERS, {"rider-A": RIDER_A_UPDATED})),
        Rows(Read(as_of=3), trips(FIRST_RIDERS, {"rider-A": RIDER_A_UPDATED})),
        Rows(Read(as_of=4), trips(FIRST_RIDERS, {"rider-A": RIDER_A_UPDATED})),
        Rows(Read(as_of=5), trips(FIRST_RIDERS, {"rider-A": RIDER_A_UPDATED})),
        # As of 6 = latest.
        Rows(Read(as_of=6), trips([*FIRST_RIDERS, *TRIPS_MOR_LAST_INSERT], {"rider-A": RIDER_A_UPDATED})),
        # Read-optimized, latest: the base files of statements 0 and 6; rider-A's log is not applied.
        Rows(Read(read_optimized=True), trips([*FIRST_RIDERS, *TRIPS_MOR_LAST_INSERT])),
        # Read-optimized as of 1: the log of statement 1 exists but is not applied.
        Rows(Read(as_of=1, read_optimized=True), trips(FIRST_RIDERS)),
        # (0, 1]: UPDATE rider-A (from the log).
        Rows(
            Read(incremental=(0, 1)),
            trips(["rider-A"], {"rider-A": {**RIDER_A_UPDATED, "_hoodie_commit_time": Instant(1)}}),
        ),
        # (1, 5]: the four empty deltacommits -> nothing.
        Rows(Read(incremental=(1, 5)), keys=[]),
        # (5, 6]: last INSERT.
        Rows(Read(incremental=(5, 6)), trips(TRIPS_MOR_LAST_INSERT)),
        # (0, 6]: rider-A's update and the last INSERT.
        Rows(Read(incremental=(0, 6)), trips(["rider-A", *TRIPS_MOR_LAST_INSERT], {"rider-A": RIDER_A_UPDATED})),
        # chennai: I, J (not deleted, see above), O, P.
        Rows(Read(filters=(("city", "=", "chennai"),)), keys=["rider-I", "rider-J", "rider-O", "rider-P"]),
        # fare < 20: A (0, from the log), J 17.85. Read-optimized: A 19.10, J 17.85.
        Rows(Read(filters=(("fare", "<", "20"),)), keys=["rider-A", "rider-J"]),
        Rows(Read(read_optimized=True, filters=(("fare", "<", "20"),)), trips(["rider-A", "rider-J"])),
        # fare < 1 holds only after the log merge (A's base row has 19.10).
        Rows(Read(filters=(("fare", "<", "1"),)), trips(["rider-A"], {"rider-A": RIDER_A_UPDATED})),
        Rows(Read(read_optimized=True, filters=(("fare", "<", "1"),)), keys=[]),
    ],
)

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


def features(ids: Iterable[int], changes: Mapping[int, Columns] | None = None) -> dict[int, Columns]:
    """Expected rows by id: each of ``ids`` as inserted, with ``changes`` (id -> columns) applied."""
    changes = changes or {}
    rows = {}
    for id_ in ids:
        name, category, score, tags, updated_at = FEATURES[id_]
        row: Columns = {
            "id": id_,
            "name": name,
            "category": category,
            "score": score,
            "tags": tags,
            "updated_at": updated_at,
        }
        row |= {"_hoodie_record_key": str(id_), "_hoodie_partition_path": ""}
        rows[id_] = {**row, **changes.get(id_, {})}
    return rows


V9_NONPARTITIONED = Table(
    id="v9_nonpartitioned",
    name="sample_table/cow/v9_lance_nonpartitioned",
    actions=["commit"] * 5,
    key_column="id",
    record_key="{id}",
    cases=[
        # DELETE id 4; UPDATE ids 1, 2; INSERT 9, 10.
        Rows(
            Read(),
            features(
                [1, 2, 3, 5, 6, 7, 8, 9, 10],
                {
                    1: {**FEATURE_1_UPDATED, "_hoodie_commit_time": Instant(1)},
                    2: {**FEATURE_2_UPDATED, "_hoodie_commit_time": Instant(2)},
                    3: {"_hoodie_commit_time": Instant(0)},
                    10: {"_hoodie_commit_time": Instant(4)},
                },
            ),
        ),
        Rows(Read(as_of=0), features(range(1, 9))),
        # As of 1: id 1 updated, id 2 not yet.
        Rows(Read(as_of=1), features(range(1, 9), {1: FEATURE_1_UPDATED})),
        # As of 2: id 2's score and tags updated.
        Rows(Read(as_of=2), features(range(1, 9), {1: FEATURE_1_UPDATED, 2: FEATURE_2_UPDATED})),
        # As of 3: DELETE id 4.
        Rows(Read(as_of=3), features([1, 2, 3, 5, 6, 7, 8], {1: FEATURE_1_UPDATED, 2: FEATURE_2_UPDATED})),
        Rows(Read(incremental=(0, 1)), features([1], {1: FEATURE_1_UPDATED})),
        Rows(Read(incremental=(1, 2)), features([2], {2: FEATURE_2_UPDATED})),
        # (2, 3]: only DELETE id 4.
        Rows(Read(incremental=(2, 3)), keys=[]),
        Rows(Read(incremental=(3, 4)), features([9, 10])),
        # (0, 3]: both UPDATEs; the DELETE returns nothing.
        Rows(Read(incremental=(0, 3)), features([1, 2], {1: FEATURE_1_UPDATED, 2: FEATURE_2_UPDATED})),
        Rows(Read(filters=(("category", "=", "vision"),)), keys=[1, 3, 7, 10]),
        # score > 0.945: 1 (0.96 after the UPDATE), 3 (0.95), 10 (0.97).
        Rows(Read(filters=(("score", ">", "0.945"),)), keys=[1, 3, 10]),
        # audio: 4 deleted, 8 left; as of 2 both.
        Rows(Read(filters=(("category", "=", "audio"),)), keys=[8]),
        Rows(Read(as_of=2, filters=(("category", "=", "audio"),)), keys=[4, 8]),
    ],
)

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
# the file group holding the key. Rows: txns.py.


def _lance_txns_cases(layout: Layout) -> list[Rows]:
    """The cases both tables share: snapshot, as of every instant, incremental."""
    after_5 = [1, 3, 4, 6, 7, 8]
    return [
        Rows(
            Read(),
            txns(
                [*after_5, *range(9, 17)],
                # The UPDATEs, and the instants that wrote three rows.
                {
                    1: {**U1, "_hoodie_commit_time": Instant(1)},
                    7: {**U7, "_hoodie_commit_time": Instant(5)},
                    16: {"_hoodie_commit_time": Instant(9)},
                },
                layout=layout,
            ),
            absent=("TXN-002", "TXN-005"),  # DELETE TXN-002; UPDATE then DELETE TXN-005
            missing_columns=("region",) if layout == "nonpart" else (),
        ),
        Rows(Read(as_of=0), txns(range(1, 9), layout=layout)),
        Rows(Read(as_of=1), txns(range(1, 9), {1: U1}, layout=layout)),
        # As of 2, 3, 4 the steps around TXN-005: amount 2100.00, then 2500.00, then deleted.
        Rows(Read(as_of=2), txns([1, 3, 4, 5, 6, 7, 8], {1: U1}, layout=layout)),
        Rows(Read(as_of=3), txns([1, 3, 4, 5, 6, 7, 8], {1: U1, 5: U5}, layout=layout)),  # 007 fee still 45.00
        Rows(Read(as_of=4), txns(after_5, {1: U1}, layout=layout)),
        Rows(Read(as_of=5), txns(after_5, {1: U1, 7: U7}, layout=layout)),
        Rows(Read(as_of=6), txns([*after_5, 9, 10], {1: U1, 7: U7}, layout=layout)),
        Rows(Read(as_of=7), txns([*after_5, *range(9, 13)], {1: U1, 7: U7}, layout=layout)),
        Rows(Read(as_of=8), txns([*after_5, *range(9, 15)], {1: U1, 7: U7}, layout=layout)),
        Rows(Read(as_of=9), txns([*after_5, *range(9, 17)], {1: U1, 7: U7}, layout=layout)),
        # (0, 1]: UPDATE TXN-001.
        Rows(Read(incremental=(0, 1)), txns([1], {1: {**U1, "_hoodie_commit_time": Instant(1)}}, layout=layout)),
        # (1, 2] and (3, 4]: only a DELETE -> nothing.
        Rows(Read(incremental=(1, 2)), keys=[]),
        Rows(Read(incremental=(3, 4)), keys=[]),
        # (2, 3]: UPDATE TXN-005 amount 2500.00.
        Rows(Read(incremental=(2, 3)), txns([5], {5: U5}, layout=layout)),
        # (2, 4]: UPDATE then DELETE TXN-005 -> nothing.
        Rows(Read(incremental=(2, 4)), keys=[]),
        # (4, 5]: UPDATE TXN-007 fee 75.00.
        Rows(Read(incremental=(4, 5)), txns([7], {7: U7}, layout=layout)),
        # (0, 5]: TXN-001 and TXN-007 updated; 002 and 005 deleted.
        Rows(Read(incremental=(0, 5)), txns([1, 7], {1: U1, 7: U7}, layout=layout)),
        # (5, 6], (6, 7], (7, 8], (8, 9]: one INSERT each.
        Rows(Read(incremental=(5, 6)), txns([9, 10], layout=layout)),
        Rows(Read(incremental=(6, 7)), txns([11, 12], layout=layout)),
        Rows(Read(incremental=(7, 8)), txns([13, 14], layout=layout)),
        Rows(Read(incremental=(8, 9)), txns([15, 16], layout=layout)),
    ]


V9_TXNS_SIMPLE = Table(
    id="v9_txns_simple",
    name="sample_table/cow/v9_lance_txns_simple",
    actions=["commit"] * 10,
    record_key="{txn_id}",
    cases=[
        *_lance_txns_cases("simple"),
        # us: 001 (reversal), 003 (transfer), 013, 014 (debit).
        Rows(Read(filters=(("region", "=", "us"), ("txn_type", "=", "debit"))), keys=["TXN-013", "TXN-014"]),
        # eu: 004 (450.75), 006 (175.50), 009 (1500.00), 010 (2200.00), 011 (999.99), 012 (350.00).
        Rows(
            Read(filters=(("region", "=", "eu"), ("amount", ">", "300"))),
            keys=["TXN-004", "TXN-009", "TXN-010", "TXN-011", "TXN-012"],
        ),
        # apac, international: 007 and 015.
        Rows(Read(filters=(("region", "=", "apac"), ("is_international", "=", "true"))), keys=["TXN-007", "TXN-015"]),
        # As of 3, eu GBP was TXN-005 (2500.00 after the UPDATE); 012 not yet inserted.
        Rows(
            Read(as_of=3, filters=(("region", "=", "eu"), ("currency", "=", "GBP"))),
            txns([5], {5: U5}, layout="simple"),
        ),
    ],
)

V9_TXNS_NONPART = Table(
    id="v9_txns_nonpart",
    name="sample_table/cow/v9_lance_txns_nonpart",
    actions=["commit"] * 10,
    record_key="{txn_id}",
    cases=[
        *_lance_txns_cases("nonpart"),
        # Transfers: 003 and 010.
        Rows(Read(filters=(("txn_type", "=", "transfer"),)), keys=["TXN-003", "TXN-010"]),
        # GBP: 005 (deleted) and 012; as of 3 only 005.
        Rows(Read(filters=(("currency", "=", "GBP"),)), keys=["TXN-012"]),
        Rows(Read(as_of=3, filters=(("currency", "=", "GBP"),)), keys=["TXN-005"]),
        # amount >= 4500: 003 (5000.00), 007 (8900.00), 015 (4500.00, on the bound).
        Rows(Read(filters=(("amount", ">=", "4500"),)), keys=["TXN-003", "TXN-007", "TXN-015"]),
    ],
)

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
EVENTS_0 = [f"evt-00{i}" for i in range(1, 9)]
EVENTS_1 = [*EVENTS_0, "evt-009", "evt-010", "evt-011", "evt-012"]
EVENTS_ALL = [*EVENTS_1, "evt-013", "evt-014"]


def events(ids: Iterable[str], changes: Mapping[str, Columns] | None = None) -> dict[str, Columns]:
    """Expected rows by event_id: each of ``ids`` as inserted, with ``changes`` applied;
    the partition path is the event_date."""
    changes = changes or {}
    rows = {}
    for event_id in ids:
        user, event_type, payload, event_ts, event_date = EVENTS[event_id]
        row: Columns = {"event_id": event_id, "user_id": user, "event_type": event_type, "payload": payload}
        row |= {"event_ts": event_ts, "event_date": event_date, "_hoodie_partition_path": event_date}
        rows[event_id] = {**row, **changes.get(event_id, {})}
    return rows


V9_NONHIVESTYLE_MOR = Table(
    id="v9_nonhivestyle_mor",
    name="sample_table/mor/avro/v9_lance_nonhivestyle",
    actions=["deltacommit"] * 6,
    record_key="{event_id}",
    written=[
        # Instant 2 (UPDATE evt-001) wrote one log file; instants 3 and 4 wrote nothing.
        WrittenFiles(2, 1, prefix="2023-11-14/.875d6ca6-3b66-40b6-9294-086a2c4489cd-0_", log_of_instant=True),
        WrittenFiles(3, 0),
        WrittenFiles(4, 0),
    ],
    cases=[
        # evt-001 from the log; evt-002 unchanged and evt-007, evt-008 present (statements
        # 3 and 4 had no effect, see above).
        Rows(
            Read(),
            events(
                EVENTS_ALL,
                {
                    "evt-001": {**EVT_001_UPDATED, "_hoodie_commit_time": Instant(2)},
                    "evt-002": {"_hoodie_commit_time": Instant(0)},
                    "evt-013": {"_hoodie_commit_time": Instant(5)},
                },
            ),
        ),
        Rows(Read(as_of=0), events(EVENTS_0)),
        Rows(Read(as_of=1), events(EVENTS_1)),
        # As of 2: UPDATE evt-001 lives only in the log file.
        Rows(Read(as_of=2), events(EVENTS_1, {"evt-001": EVT_001_UPDATED})),
        # As of 3, 4: the empty deltacommits change nothing.
        Rows(Read(as_of=3), events(EVENTS_1, {"evt-001": EVT_001_UPDATED})),
        Rows(Read(as_of=4), events(EVENTS_1, {"evt-001": EVT_001_UPDATED})),
        # Read-optimized (base files only): evt-001 keeps its inserted payload.
        Rows(Read(read_optimized=True), events(EVENTS_ALL)),
        Rows(Read(as_of=2, read_optimized=True), events(EVENTS_1)),
        # (0, 1]: second INSERT.
        Rows(Read(incremental=(0, 1)), events(["evt-009", "evt-010", "evt-011", "evt-012"])),
        # (1, 2]: UPDATE evt-001 (from the log).
        Rows(
            Read(incremental=(1, 2)),
            events(["evt-001"], {"evt-001": {**EVT_001_UPDATED, "_hoodie_commit_time": Instant(2)}}),
        ),
        # (2, 4]: the two empty deltacommits -> nothing.
        Rows(Read(incremental=(2, 4)), keys=[]),
        # (4, 5]: last INSERT; (1, 5]: evt-001's update and the last INSERT.
        Rows(Read(incremental=(4, 5)), events(["evt-013", "evt-014"])),
        Rows(Read(incremental=(1, 5)), events(["evt-001", "evt-013", "evt-014"], {"evt-001": EVT_001_UPDATED})),
        # Partition 2023-11-15: evt-005..008 (the DELETE of user-103 had no effect).
        Rows(Read(filters=(("event_date", "=", "2023-11-15"),)), keys=["evt-005", "evt-006", "evt-007", "evt-008"]),
        # user-100: evt-001, 002, 005, 009, 013.
        Rows(
            Read(filters=(("user_id", "=", "user-100"),)),
            keys=["evt-001", "evt-002", "evt-005", "evt-009", "evt-013"],
        ),
        # Payload of evt-001 after the log merge.
        Rows(
            Read(filters=(("event_date", "=", "2023-11-14"), ("event_type", "=", "page_view"))),
            {"evt-001": EVT_001_UPDATED},
            keys=["evt-001", "evt-003"],
        ),
    ],
)

TABLES = [V9_TRIPS_COW, V9_TRIPS_MOR, V9_NONPARTITIONED, V9_TXNS_NONPART, V9_TXNS_SIMPLE, V9_NONHIVESTYLE_MOR]
