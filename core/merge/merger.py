"""Merge base-file rows with log records by record key, in Arrow compute.

Log records are processed oldest to newest. Per key, event-time ordering keeps
the record with the greatest ordering value (ties to the later one); a delete
without an ordering value (a "commit-time delete") discards everything before
it; commit-time ordering keeps the latest record. The log's winner then
replaces the base row when it is newer by the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ray.core.merge.config import MergeConfig, MergeMode
from hudi_ray.core.schema import conform_table

RECORD_KEY = "_hoodie_record_key"
IS_DELETED = "_hoodie_is_deleted"
OPERATION = "_hoodie_operation"
_SEQ = "__hudi_seq"
_DEL = "__hudi_del"
_CTDEL = "__hudi_ctdel"
_KEY = "__hudi_key"
_ROW = "__hudi_row"


def record_keys(table: pa.Table, cfg: MergeConfig) -> pa.ChunkedArray:
    """The record key of every row: the meta column, else built like the key generator."""
    if RECORD_KEY in table.column_names and table.column(RECORD_KEY).null_count < table.num_rows:
        return table.column(RECORD_KEY)
    fields = cfg.record_key_fields
    missing = [f for f in fields if f not in table.column_names]
    if not fields or missing:
        raise KeyError(f"record key fields {missing or fields} not in the data")
    if len(fields) == 1:
        return table.column(fields[0]).cast(pa.string())
    parts = []
    for f in fields:
        parts.append(pc.binary_join_element_wise(f, pc.fill_null(table.column(f).cast(pa.string()), "null"), ":"))
    return pc.binary_join_element_wise(*parts, ",")


@dataclass
class LogRecords:
    """Log records of one file slice in processing order: data rows and deletes."""

    schema: pa.Schema  # columns the merge produces (the read schema)
    cfg: MergeConfig
    _pieces: list[pa.Table] = field(default_factory=list)
    _rows: int = 0

    def _piece(self, data: pa.Table, keys: pa.Array, deleted: pa.Array, ct_deleted: pa.Array) -> None:
        n = data.num_rows
        data = data.append_column(_KEY, keys)
        data = data.append_column(_SEQ, pa.array(np.arange(self._rows, self._rows + n, dtype=np.int64)))
        data = data.append_column(_DEL, deleted)
        data = data.append_column(_CTDEL, ct_deleted)
        self._pieces.append(data)
        self._rows += n

    def add_data(self, raw: pa.Table, where: str) -> None:
        """Rows of a data block (in its writer schema)."""
        if raw.num_rows == 0:
            return
        keys = record_keys(raw, self.cfg).cast(pa.string())
        deleted = pa.array(np.zeros(raw.num_rows, dtype=bool))
        if IS_DELETED in raw.column_names:
            deleted = pc.or_(deleted, pc.fill_null(raw.column(IS_DELETED), False))
        if OPERATION in raw.column_names:
            deleted = pc.or_(deleted, pc.fill_null(pc.equal(raw.column(OPERATION), "D"), False))
        if self.cfg.delete_field and self.cfg.delete_field in raw.column_names:
            marker = pc.equal(raw.column(self.cfg.delete_field).cast(pa.string()), self.cfg.delete_marker)
            deleted = pc.or_(deleted, pc.fill_null(marker, False))
        data = conform_table(raw, self.schema, where=where)
        deleted = deleted.combine_chunks() if isinstance(deleted, pa.ChunkedArray) else deleted
        self._piece(data, keys, deleted, pa.array(np.zeros(raw.num_rows, dtype=bool)))

    def add_deletes(self, keys: Sequence[str], ordering: Sequence[object], ct: Sequence[bool]) -> None:
        n = len(keys)
        if n == 0:
            return
        columns = {}
        for f in self.schema:
            if f.name in self.cfg.ordering_fields and len(self.cfg.ordering_fields) == 1:
                columns[f.name] = _ordering_array(ordering, ct, f.type)
            elif f.name == RECORD_KEY:
                columns[f.name] = pa.array(list(keys), pa.string())
            else:
                columns[f.name] = pa.nulls(n, f.type)
        data = pa.Table.from_arrays(list(columns.values()), schema=_nullable(self.schema))
        ct_flags = list(ct)
        if len(self.cfg.ordering_fields) == 1:
            # An ordering value that does not fit the column is compared as a
            # different type: the delete wins, as in Hudi.
            ok = data.column(self.cfg.ordering_fields[0]).is_valid()
            ct_flags = [c or not v for c, v in zip(ct_flags, ok.to_pylist())]
        else:
            ct_flags = [True] * n
        self._piece(data, pa.array(list(keys), pa.string()), pa.array([True] * n), pa.array(ct_flags))

    def __len__(self) -> int:
        return self._rows

    def table(self) -> pa.Table:
        extra = [
            pa.field(_KEY, pa.string()),
            pa.field(_SEQ, pa.int64()),
            pa.field(_DEL, pa.bool_()),
            pa.field(_CTDEL, pa.bool_()),
        ]
        schema = pa.schema([*_nullable(self.schema), *extra])
        return pa.concat_tables([p.cast(schema) for p in self._pieces]) if self._pieces else schema.empty_table()


def _array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def _ordering_array(values: Sequence[object], ct: Sequence[bool], dtype: pa.DataType) -> pa.Array:
    present = [None if c else v for v, c in zip(values, ct)]
    try:
        # One cast for the whole block when every value converts; the same
        # safe cast a value gets on its own below.
        return pa.array(present).cast(dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        pass
    out = []
    for v, c in zip(values, ct):
        if c or v is None:
            out.append(None)
            continue
        try:
            out.append(pa.scalar(v).cast(dtype).as_py())
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            out.append(None)
    return pa.array(out, dtype)


def _last_per_key(table: pa.Table, sort_keys: list[tuple[str, str]]) -> pa.Table:
    """After sorting by key then ``sort_keys``, the last row of each key."""
    spec = [(_KEY, "ascending", "at_start")] + [(name, order, "at_start") for name, order in sort_keys]
    order = pc.sort_indices(table, sort_keys=spec)
    ordered = table.take(order)
    keys = ordered.column(_KEY).combine_chunks()
    n = len(keys)
    if n == 0:
        return ordered
    differs = pc.not_equal(keys.slice(0, n - 1), keys.slice(1))
    last = pa.concat_arrays([differs, pa.array([True])])
    return ordered.filter(last)


def _newer_wins(
    new: pa.Table, new_idx: pa.Array | None, old: pa.Table, old_idx: pa.Array | None, cfg: MergeConfig
) -> pa.Array:
    """Per pair (new row, old row): does the newer record win?

    Event time: the newer wins on a greater or equal ordering value (ties to
    the newer), and always when it is a commit-time delete. Unknown ordering
    values compare as equal.
    """
    n_rows = new.take(new_idx) if new_idx is not None else new
    o_rows = old.take(old_idx) if old_idx is not None else old
    if cfg.mode is MergeMode.COMMIT_TIME_ORDERING:
        return pa.array([True] * n_rows.num_rows)
    result = None
    equal_so_far = None
    for f in cfg.ordering_fields:
        a, b = n_rows.column(f), o_rows.column(f)
        gt = pc.greater(a, b)
        eq = pc.fill_null(pc.equal(a, b), True)
        gt = pc.fill_null(gt, False)
        step = gt if equal_so_far is None else pc.and_(equal_so_far, gt)
        result = step if result is None else pc.or_(result, step)
        equal_so_far = eq if equal_so_far is None else pc.and_(equal_so_far, eq)
    wins = pc.or_(result, equal_so_far)
    if _CTDEL in n_rows.column_names:
        wins = pc.or_(wins, n_rows.column(_CTDEL))
    return wins


def _winners(log: pa.Table, cfg: MergeConfig) -> pa.Table:
    """Per key, the log record that survives the log itself (deletes included)."""
    if cfg.mode is MergeMode.EVENT_TIME_ORDERING:
        ct = log.filter(log.column(_CTDEL))
        if ct.num_rows:
            cut = ct.group_by(_KEY).aggregate([(_SEQ, "max")])
            idx = pc.index_in(log.column(_KEY), cut.column(_KEY))
            cut_seq = pc.take(cut.column(f"{_SEQ}_max"), idx)
            keep = pc.fill_null(pc.greater_equal(log.column(_SEQ), cut_seq), True)
            log = log.filter(keep)
            # Deletes right after a commit-time delete lose to it: until a
            # record follows, the key stays deleted whatever their ordering.
            cut_seq = pc.take(cut.column(f"{_SEQ}_max"), pc.index_in(log.column(_KEY), cut.column(_KEY)))
            after_cut = pc.fill_null(pc.greater(log.column(_SEQ), cut_seq), False)
            records = log.filter(pc.and_(after_cut, pc.invert(log.column(_DEL))))
            first = records.group_by(_KEY).aggregate([(_SEQ, "min")])
            first_seq = pc.take(first.column(f"{_SEQ}_min"), pc.index_in(log.column(_KEY), first.column(_KEY)))
            before_record = pc.fill_null(pc.less(log.column(_SEQ), first_seq), True)
            shadowed = pc.and_(pc.and_(after_cut, log.column(_DEL)), before_record)
            log = log.filter(pc.invert(shadowed))
        # A commit-time delete loses to any record after it, and beats all before it.
        ordering_keys = [(f, "ascending") for f in cfg.ordering_fields]
        log = log.append_column("__hudi_not_ct", pc.invert(log.column(_CTDEL)))
        winners = _last_per_key(log, [("__hudi_not_ct", "ascending"), *ordering_keys, (_SEQ, "ascending")])
        return winners.drop_columns(["__hudi_not_ct"])
    return _last_per_key(log, [(_SEQ, "ascending")])


def merge_records(base: pa.Table | None, logs: LogRecords, cfg: MergeConfig) -> pa.Table:
    """Merge ``base`` (rows in ``logs.schema``) with the log records."""
    schema = logs.schema
    if len(logs) == 0:
        return base if base is not None else schema.empty_table()
    log = logs.table()
    # Who wins is decided on a narrow table (keys, sequence, delete flags,
    # ordering values and a row number); the wide rows are gathered once, at the end.
    decide = [_KEY, _SEQ, _DEL, _CTDEL, *(f for f in cfg.ordering_fields if f not in (_KEY, _SEQ))]
    narrow = log.select(list(dict.fromkeys(decide))).append_column(_ROW, pa.array(np.arange(log.num_rows)))
    winners = _winners(narrow, cfg)

    if base is None or base.num_rows == 0:
        emitted = winners.filter(pc.invert(winners.column(_DEL)))
        return conform_table(log.select(schema.names).take(emitted.column(_ROW)), schema)

    base_keys = _array(record_keys(base, cfg).cast(pa.string()))
    win_keys = _array(winners.column(_KEY))
    # One hash lookup pairs base rows with the log winners of the same key.
    b_idx = pc.index_in(base_keys, win_keys)
    matched_b = pc.is_valid(b_idx)
    base_keep = pc.invert(matched_b)
    emit = np.asarray(pc.invert(winners.column(_DEL)).to_numpy(zero_copy_only=False), dtype=bool).copy()
    if pc.any(matched_b).as_py():
        pos = pc.indices_nonzero(matched_b)
        w_of_b = pc.take(b_idx, pos)
        old = base.select([f for f in cfg.ordering_fields if f in base.column_names])
        wins = _array(_newer_wins(winners, w_of_b, old, pos, cfg))
        # Base rows the log matched but did not beat stay; their log winners are not emitted.
        base_keep = pc.replace_with_mask(base_keep, matched_b, pc.invert(wins))
        beaten = w_of_b.to_numpy(zero_copy_only=False)[~np.asarray(wins.to_numpy(zero_copy_only=False), dtype=bool)]
        emit[beaten] = False
    kept = base.filter(base_keep)
    rows = winners.column(_ROW).filter(pa.array(emit))
    added = conform_table(log.select(schema.names).take(rows), schema)
    return pa.concat_tables([conform_table(kept, schema), added])
