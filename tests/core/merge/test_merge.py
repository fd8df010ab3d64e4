"""Record merging against a plain-Python model of Hudi's rules, and merge-mode resolution."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hudi_ray import HudiUnsupportedError
from hudi_ray.core.config import TableConfig
from hudi_ray.core.merge import LogRecords, MergeConfig, MergeMode, merge_records, resolve_merge_config

SCHEMA = pa.schema(
    [
        pa.field("_hoodie_commit_time", pa.string(), nullable=False),
        pa.field("_hoodie_record_key", pa.string(), nullable=False),
        pa.field("ts", pa.int64()),
        pa.field("v", pa.string()),
    ]
)


def _cfg(mode: MergeMode) -> MergeConfig:
    return MergeConfig(mode=mode, ordering_fields=("ts",), record_key_fields=("k",))


# An operation: ("upsert", key, ts, value) or ("delete", key, ts or None for a commit-time delete)
op = st.one_of(
    st.tuples(st.just("upsert"), st.sampled_from("abcde"), st.integers(0, 5), st.text("xyz", min_size=1, max_size=2)),
    st.tuples(st.just("delete"), st.sampled_from("abcde"), st.one_of(st.none(), st.integers(1, 5)), st.just("")),
)


def _model(base: dict[str, tuple[int, str]], blocks: list[list[tuple]], mode: MergeMode) -> dict[str, tuple]:
    """Sequential fold, record by record, as Hudi's log scanner does."""
    merged: dict[str, tuple] = {}  # key -> (kind, ts, value); kind "rec" | "del" | "ctdel"
    for block in blocks:
        for kind, key, ts, value in block:
            new = (
                ("ctdel", None, None)
                if kind == "delete" and ts is None
                else ((kind[:3] if kind == "delete" else "rec"), ts, value)
            )
            old = merged.get(key)
            if old is None or mode is MergeMode.COMMIT_TIME_ORDERING or new[0] == "ctdel":
                merged[key] = new
            elif old[0] == "ctdel":
                # A record revives a key after a commit-time delete; a delete does not replace it.
                if new[0] == "rec":
                    merged[key] = new
            elif new[1] >= old[1]:
                merged[key] = new
    out: dict[str, tuple] = {k: (ts, v) for k, (ts, v) in base.items()}
    for key, (kind, ts, value) in merged.items():
        if key in base and mode is MergeMode.EVENT_TIME_ORDERING and kind != "ctdel" and ts < base[key][0]:
            continue
        if kind in ("del", "ctdel"):
            out.pop(key, None)
        else:
            out[key] = (ts, value)
    return out


def _base_table(base: dict[str, tuple[int, str]]) -> pa.Table:
    return pa.table(
        {
            "_hoodie_commit_time": ["1"] * len(base),
            "_hoodie_record_key": list(base),
            "ts": [t for t, _ in base.values()],
            "v": [v for _, v in base.values()],
        },
        schema=SCHEMA,
    )


@settings(max_examples=150, deadline=None)
@given(
    base=st.dictionaries(st.sampled_from("abcd"), st.tuples(st.integers(0, 5), st.text("pq", min_size=1, max_size=2))),
    blocks=st.lists(st.lists(op, min_size=1, max_size=6), max_size=5),
    mode=st.sampled_from(list(MergeMode)),
)
# A key held once beside one held twice, a commit-time delete then an ordered
# delete: only the repeated key is ranked, on record positions taken from the
# whole log, and the second delete must still lose to the first.
@example(
    base={"a": (2, "p")},
    blocks=[[("upsert", "b", 0, "x")], [("delete", "a", None, ""), ("delete", "a", 1, "")]],
    mode=MergeMode.EVENT_TIME_ORDERING,
)
def test_merge_matches_model(base, blocks, mode) -> None:
    cfg = _cfg(mode)
    base_table = _base_table(base)
    logs = LogRecords(SCHEMA, cfg)
    for i, block in enumerate(blocks):
        if block[0][0] == "delete":
            dels = [o for o in block if o[0] == "delete"]
            logs.add_deletes([o[1] for o in dels], [o[2] or 0 for o in dels], [o[2] is None for o in dels])
            block[:] = dels
        else:
            ups = [o for o in block if o[0] == "upsert"]
            raw = pa.table(
                {
                    "_hoodie_commit_time": [str(i + 2)] * len(ups),
                    "_hoodie_record_key": [o[1] for o in ups],
                    "ts": [o[2] for o in ups],
                    "v": [o[3] for o in ups],
                },
                schema=SCHEMA,
            )
            logs.add_data(raw, "test")
            block[:] = ups
    got = merge_records(base_table, logs, cfg)
    assert got.schema == SCHEMA
    rows = {r["_hoodie_record_key"]: (r["ts"], r["v"]) for r in got.to_pylist()}
    assert len(rows) == got.num_rows, "a key was emitted twice"
    assert rows == _model(base, blocks, mode)


def test_is_deleted_column_and_no_base() -> None:
    schema = pa.schema([("_hoodie_record_key", pa.string()), ("ts", pa.int64())])
    cfg = MergeConfig(MergeMode.EVENT_TIME_ORDERING, ("ts",), ("k",))
    logs = LogRecords(schema, cfg)
    logs.add_data(pa.table({"_hoodie_record_key": ["a", "b"], "ts": [1, 1]}), "b1")
    logs.add_data(pa.table({"_hoodie_record_key": ["a"], "ts": [2], "_hoodie_is_deleted": [True]}), "b2")
    logs.add_data(pa.table({"_hoodie_record_key": ["b"], "ts": [0], "_hoodie_is_deleted": [True]}), "b3")
    got = merge_records(None, logs, cfg)
    # "a" deleted by a newer event-time delete; "b"'s delete is older, so "b" stays.
    assert got.to_pylist() == [{"_hoodie_record_key": "b", "ts": 1}]


def _config(props: dict[str, str]) -> TableConfig:
    base = {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ"}
    return TableConfig.from_mapping({**base, **props}, "hoodie.properties")


@pytest.mark.parametrize(
    "props, mode",
    [
        (
            {
                "hoodie.table.version": "9",
                "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
                "hoodie.table.ordering.fields": "ts",
            },
            MergeMode.EVENT_TIME_ORDERING,
        ),
        (
            {"hoodie.table.version": "9", "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"},
            MergeMode.COMMIT_TIME_ORDERING,
        ),
        ({"hoodie.table.version": "6", "hoodie.table.precombine.field": "ts"}, MergeMode.EVENT_TIME_ORDERING),
        ({"hoodie.table.version": "6"}, MergeMode.COMMIT_TIME_ORDERING),
        (
            {
                "hoodie.table.version": "6",
                "hoodie.table.precombine.field": "ts",
                "hoodie.compaction.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
                "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
            },
            MergeMode.COMMIT_TIME_ORDERING,
        ),
        (
            {
                "hoodie.table.version": "8",
                "hoodie.table.precombine.field": "ts",
                "hoodie.compaction.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
                "hoodie.record.merge.strategy.id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
            },
            MergeMode.EVENT_TIME_ORDERING,
        ),
        (
            {
                "hoodie.table.version": "6",
                "hoodie.table.precombine.field": "ts",
                "hoodie.compaction.payload.class": "org.apache.hudi.common.model.EventTimeAvroPayload",
            },
            MergeMode.EVENT_TIME_ORDERING,
        ),
    ],
)
def test_merge_mode_resolution(props, mode) -> None:
    assert resolve_merge_config(_config(props)).mode is mode


@pytest.mark.parametrize(
    "props, message",
    [
        ({"hoodie.table.version": "9", "hoodie.record.merge.mode": "CUSTOM"}, "CUSTOM"),
        ({"hoodie.table.version": "6", "hoodie.compaction.payload.class": "com.acme.MyPayload"}, "com.acme.MyPayload"),
        (
            {"hoodie.table.version": "9", "hoodie.record.merge.strategy.id": "1897ef5f-18bc-4557-939c-9d6a8afd1519"},
            "1897ef5f",
        ),
        (
            {
                "hoodie.table.version": "6",
                "hoodie.compaction.payload.class": "org.apache.hudi.common.model.PartialUpdateAvroPayload",
            },
            "PartialUpdateAvroPayload",
        ),
    ],
)
def test_unsupported_mergers_raise(props, message) -> None:
    with pytest.raises(HudiUnsupportedError, match=message):
        resolve_merge_config(_config(props))


@pytest.mark.parametrize(
    ("values", "ct", "dtype"),
    [
        ([5, 2, None, 7], [False, True, False, False], pa.int64()),
        ([1.5, 2, -0.25], [False, False, False], pa.float64()),
        (["b", "a", None], [False, False, False], pa.string()),
        (["5", "x"], [False, False], pa.int64()),  # one value does not fit: it alone becomes unknown
        ([3_000_000_000, 1], [False, False], pa.int32()),  # out of range: unknown, the other kept
        (["a", 1, 2.5], [False, False, False], pa.string()),  # mixed types: cast value by value
        ([True, 0], [False, False], pa.int64()),
    ],
)
def test_delete_ordering_values_cast_as_one_value_at_a_time_would(values: list, ct: list, dtype: pa.DataType) -> None:
    """Delete blocks' ordering values (long, double, string, mixed) are cast to the
    ordering column's type in one call when they all convert; the result must be
    exactly the value-by-value cast, unknown where a value does not fit."""
    from hudi_ray.core.merge.merger import _ordering_array

    expected = []
    for v, c in zip(values, ct):
        if c or v is None:
            expected.append(None)
            continue
        try:
            expected.append(pa.scalar(v).cast(dtype).as_py())
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            expected.append(None)
    got = _ordering_array(values, ct, dtype)
    assert got.type == dtype
    assert got.to_pylist() == expected


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 6), min_size=1, max_size=4),
    deletes_after=st.integers(0, 4),
    data=st.data(),
)
def test_log_rows_gather_block_by_block(sizes: list[int], deletes_after: int, data: st.DataObject) -> None:
    """``LogRecords.rows`` (blocks gathered one by one, a wholly asked block
    taken as it is) returns what a gather over all records joined would."""
    logs = LogRecords(SCHEMA, _cfg(MergeMode.EVENT_TIME_ORDERING))
    for i, n in enumerate(sizes):
        if i == deletes_after:
            logs.add_deletes(["a", "b"], [1, 2], [False, True])
        keys = [f"k{i}-{j}" for j in range(n)]
        logs.add_data(pa.table({"_hoodie_record_key": keys, "ts": list(range(n)), "v": keys}), f"block {i}")
    seqs = sorted(data.draw(st.sets(st.integers(0, max(len(logs) - 1, 0)), max_size=len(logs))))
    got = logs.rows(np.array(seqs, dtype=np.int64))
    expected = logs.table().select(SCHEMA.names).take(pa.array(seqs, pa.int64()))
    assert got.schema.equals(SCHEMA)
    assert got.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("mode", list(MergeMode))
def test_keys_held_once_by_the_log(mode: MergeMode) -> None:
    """A key the log holds once wins without being ranked; keys held more
    than once are ranked as before. Both kinds in one merge, against the model:
    an update older than its base row, a delete with an ordering value below
    the base row's, a commit-time delete, a new key, and a key updated twice
    and then deleted."""
    base = {"a": (3, "p"), "b": (3, "p"), "c": (3, "p"), "d": (3, "p"), "e": (3, "p")}
    blocks = [
        [("upsert", "a", 1, "x"), ("upsert", "f", 0, "y"), ("upsert", "e", 4, "x")],
        [("delete", "b", 2, ""), ("delete", "c", None, "")],
        [("upsert", "e", 5, "z")],
        [("delete", "e", 9, "")],
    ]
    cfg = _cfg(mode)
    logs = LogRecords(SCHEMA, cfg)
    for i, block in enumerate(blocks):
        if block[0][0] == "delete":
            logs.add_deletes([o[1] for o in block], [o[2] or 0 for o in block], [o[2] is None for o in block])
        else:
            raw = {
                "_hoodie_commit_time": [str(i + 2)] * len(block),
                "_hoodie_record_key": [o[1] for o in block],
                "ts": [o[2] for o in block],
                "v": [o[3] for o in block],
            }
            logs.add_data(pa.table(raw, schema=SCHEMA), "test")
    base_table = _base_table(base)
    got = merge_records(base_table, logs, cfg)
    rows = {r["_hoodie_record_key"]: (r["ts"], r["v"]) for r in got.to_pylist()}
    assert len(rows) == got.num_rows
    assert rows == _model(base, blocks, mode)
    if mode is MergeMode.EVENT_TIME_ORDERING:
        # Spelled out: a stays (its update is older), b stays (its delete is
        # older), c is deleted (commit time), d is untouched, e is deleted, f is new.
        assert rows == {"a": (3, "p"), "b": (3, "p"), "d": (3, "p"), "f": (0, "y")}
