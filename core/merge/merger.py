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
from typing import TYPE_CHECKING, Any

from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.merge.config import MergeConfig, MergeMode
from hudi_ray.core.schema import conform_table, one_array
from hudi_ray.core.schema.avro import RECORD_KEY
from hudi_ray.core.util.arrow_pool import reader_pool
from hudi_ray.core.util.compiled import load

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

IS_DELETED = "_hoodie_is_deleted"
OPERATION = "_hoodie_operation"
_SEQ = "__hudi_seq"
_DEL = "__hudi_del"
_CTDEL = "__hudi_ctdel"
_KEY = "__hudi_key"


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


def compared_columns(cfg: MergeConfig) -> frozenset[str]:
    """Columns whose values the merge compares (keys, ordering values): the
    others it only carries, and may carry dictionary-encoded."""
    return frozenset((RECORD_KEY, *cfg.record_key_fields, *cfg.ordering_fields))


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
        # The processing order, which is also the record's row in ``table()``.
        data = data.append_column(_SEQ, pa.array(np.arange(self._rows, self._rows + n, dtype=np.int64)))
        data = data.append_column(_DEL, deleted)
        data = data.append_column(_CTDEL, ct_deleted)
        self._pieces.append(data)
        self._rows += n

    def data_columns(self) -> frozenset[str]:
        """The columns ``add_data`` uses of a data block: the rest need not be decoded."""
        cfg = self.cfg
        extra = (RECORD_KEY, IS_DELETED, OPERATION, *cfg.record_key_fields, *cfg.ordering_fields)
        return frozenset((*self.schema.names, *extra, *((cfg.delete_field,) if cfg.delete_field else ())))

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
        deleted = one_array(deleted)
        self._piece(data, keys, deleted, pa.array(np.zeros(raw.num_rows, dtype=bool)))

    def add_deletes(
        self,
        keys: Sequence[str] | pa.Array,
        ordering: Sequence[object] | pa.Array,
        ct: Sequence[bool] | np.ndarray,
    ) -> None:
        """Deleted keys with their ordering values (an array, or the values
        themselves) and their commit-time-delete flags."""
        n = len(keys)
        if n == 0:
            return
        key_array = keys if isinstance(keys, pa.Array) else pa.array(list(keys), pa.string())
        ct_flags = np.asarray(ct, dtype=bool)
        single = len(self.cfg.ordering_fields) == 1
        columns = {}
        for f in self.schema:
            if single and f.name == self.cfg.ordering_fields[0]:
                columns[f.name] = _ordering_array(ordering, ct_flags, f.type)
            elif f.name == RECORD_KEY:
                columns[f.name] = key_array
            else:
                columns[f.name] = pa.nulls(n, f.type)
        data = pa.Table.from_arrays(list(columns.values()), schema=_nullable(self.schema))
        if single:
            # An ordering value that does not fit the column is compared as a
            # different type: the delete wins, as in Hudi.
            valid = data.column(self.cfg.ordering_fields[0]).is_valid()
            ct_flags = ct_flags | ~_flags(valid)
        else:
            ct_flags = np.ones(n, dtype=bool)
        self._piece(data, key_array, pa.array(np.ones(n, dtype=bool)), pa.array(ct_flags))

    def __len__(self) -> int:
        return self._rows

    def rows(self, seqs: np.ndarray) -> pa.Table:
        """The records at ``seqs`` (sorted, distinct processing positions), in
        ``schema``. Gathered block by block: a block whose every record is
        asked for is taken as it is, and no block is joined to another first
        (a gather across chunks copies them all into one)."""
        out = []
        start = 0
        for piece in self._pieces:
            n = piece.num_rows
            lo, hi = np.searchsorted(seqs, (start, start + n))
            if hi > lo:
                data = piece.select(self.schema.names)
                if hi - lo == n:
                    out.append(data)
                elif 2 * (hi - lo) > n:
                    # Most of the block: Arrow's filter copies kept runs, cheaper than a gather.
                    keep = np.zeros(n, dtype=bool)
                    keep[seqs[lo:hi] - start] = True
                    out.append(pc.filter(data, pa.array(keep), memory_pool=reader_pool()))
                else:
                    out.append(pc.take(data, seqs[lo:hi] - start, memory_pool=reader_pool()))
            start += n
        if not out:
            return self.schema.empty_table()
        return pa.concat_tables([conform_table(t, self.schema) for t in out])

    def table(self, columns: Sequence[str] | None = None) -> pa.Table:
        """Every record, with its key, sequence and delete flags; only ``columns`` (None: all)."""
        extra = [
            pa.field(_KEY, pa.string()),
            pa.field(_SEQ, pa.int64()),
            pa.field(_DEL, pa.bool_()),
            pa.field(_CTDEL, pa.bool_()),
        ]
        schema = pa.schema([*_nullable(self.schema), *extra])
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        pieces = [p.select(schema.names).cast(schema) for p in self._pieces]
        return pa.concat_tables(pieces) if pieces else schema.empty_table()


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def _ordering_array(values: Sequence[object] | pa.Array, ct: np.ndarray, dtype: pa.DataType) -> pa.Array:
    present: pa.Array | list[object]
    if isinstance(values, pa.Array):
        present = pc.if_else(pa.array(ct), pa.nulls(len(values), values.type), values) if ct.any() else values
    else:
        present = [None if c else v for v, c in zip(values, ct)]
    try:
        # One cast for the whole block when every value converts; the same
        # safe cast a value gets on its own below.
        return (present if isinstance(present, pa.Array) else pa.array(present)).cast(dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        pass
    out: list[Any] = []
    for v in present.to_pylist() if isinstance(present, pa.Array) else present:
        if v is None:
            out.append(None)
            continue
        try:
            out.append(pa.scalar(v).cast(dtype).as_py())
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            out.append(None)
    return pa.array(out, dtype)


def _newer_wins(
    new: pa.Table, new_idx: pa.Array | None, old: pa.Table, old_idx: pa.Array | None, cfg: MergeConfig
) -> pa.Array:
    """Per pair (new row, old row): does the newer record win?

    Event time: the newer wins on a greater or equal ordering value (ties to
    the newer), and always when it is a commit-time delete. Unknown ordering
    values compare as equal.
    """
    if cfg.mode is MergeMode.COMMIT_TIME_ORDERING:
        return pa.array(np.ones(len(new_idx) if new_idx is not None else new.num_rows, dtype=bool))
    # Only the columns compared are gathered (``new`` also holds the keys).
    compared = [*cfg.ordering_fields, *([_CTDEL] if _CTDEL in new.column_names else [])]
    new = new.select(list(dict.fromkeys(compared)))
    pool = reader_pool()
    n_rows = pc.take(new, new_idx, memory_pool=pool) if new_idx is not None else new
    o_rows = pc.take(old, old_idx, memory_pool=pool) if old_idx is not None else old
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


@dataclass(frozen=True)
class _KeyCodes:
    """Keys hashed once, as small integers: ``log[i]`` is the code of log
    record i's key (0 .. count - 1), ``base[j]`` that of base row j's key, or
    -1 when no log record has it. Everything after compares integers."""

    log: np.ndarray
    base: np.ndarray
    count: int


def _key_codes(log_keys: pa.Array, base_keys: pa.Array | None) -> _KeyCodes:
    """Codes of the keys, as ``dictionary_encode`` of the log's keys (nulls
    one code) and ``index_in`` of the base's in its dictionary would give them."""
    kernels = load("hudi_ray.core.merge.key_kernels")
    log = _codes(len(log_keys))
    base = _codes(0 if base_keys is None else len(base_keys))
    count = kernels.match_keys(*_string_buffers(log_keys), *_string_buffers(base_keys), log, base)
    return _KeyCodes(log=log, base=base, count=count)


def _codes(n: int) -> np.ndarray:
    """An int64 array of ``n`` in memory of the reader's Arrow pool (``arrow_pool``), not numpy's."""
    return np.frombuffer(pa.allocate_buffer(8 * n, memory_pool=reader_pool()), dtype=np.int64)


def _string_buffers(keys: pa.Array | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets as int64, data bytes, validity as a byte per key or empty when
    no key is null) of text or binary keys; none at all for None."""
    if keys is None:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.uint8)
    if not (pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type) or pa.types.is_binary(keys.type)):
        keys = keys.cast(pa.large_string())
    _, offsets, data = keys.buffers()
    width = np.int64 if pa.types.is_large_string(keys.type) else np.int32
    n = len(keys)
    starts = np.frombuffer(offsets, dtype=width, count=n + 1, offset=keys.offset * np.dtype(width).itemsize)
    valid = np.zeros(0, dtype=np.uint8)
    if keys.null_count:
        valid = np.asarray(keys.is_valid().to_numpy(zero_copy_only=False), dtype=np.uint8)
    return (
        starts.astype(np.int64),
        np.zeros(0, dtype=np.uint8) if data is None else np.frombuffer(data, dtype=np.uint8),
        valid,
    )


def _winner_rows(narrow: pa.Table, codes: _KeyCodes, cfg: MergeConfig) -> np.ndarray:
    """Per key code, the log row (its ``_SEQ``) that survives the log itself, deletes included."""
    seq = narrow.column(_SEQ).to_numpy()
    key = codes.log
    if cfg.mode is not MergeMode.EVENT_TIME_ORDERING:
        last = np.full(codes.count, -1, dtype=np.int64)
        np.maximum.at(last, key, seq)
        return last
    winners = np.empty(codes.count, dtype=np.int64)
    # A key's only record wins whatever it holds; the ranking below is for
    # keys the log holds more than once (often none: each key updated once).
    repeated = np.bincount(key, minlength=codes.count)[key] > 1
    if not repeated.any():
        winners[key] = seq
        return winners
    once = ~repeated
    winners[key[once]] = seq[once]
    rows = np.flatnonzero(repeated)
    _rank_repeated(narrow.take(rows), key[rows], codes.count, cfg, winners)
    return winners


def _rank_repeated(narrow: pa.Table, key: np.ndarray, count: int, cfg: MergeConfig, winners: np.ndarray) -> None:
    """Event-time winners of the keys of ``narrow``'s records (``key``, their
    codes of ``count``), written into ``winners``."""
    seq = narrow.column(_SEQ).to_numpy()
    is_del = _flags(narrow.column(_DEL))
    is_ct = _flags(narrow.column(_CTDEL))
    alive = None
    if is_ct.any():
        # Everything before a key's last commit-time delete is discarded.
        cut = np.full(count, -1, dtype=np.int64)
        np.maximum.at(cut, key[is_ct], seq[is_ct])
        cut_of = cut[key]
        after = (cut_of >= 0) & (seq > cut_of)
        # Deletes right after a commit-time delete lose to it: until a
        # record follows, the key stays deleted whatever their ordering.
        record = after & ~is_del
        # Past every sequence number: ``seq`` holds some records' positions in the whole log, not 0 .. n - 1.
        first = np.full(count, int(seq.max()) + 1, dtype=np.int64)
        np.minimum.at(first, key[record], seq[record])
        shadowed = after & is_del & (seq < first[key])
        alive = np.flatnonzero((seq >= cut_of) & ~shadowed)
    live = narrow if alive is None else narrow.take(alive)
    # A commit-time delete loses to any record after it, and beats all before it.
    order = pa.table(
        {
            "code": key if alive is None else key[alive],
            "not_ct": ~(is_ct if alive is None else is_ct[alive]),
            **{f"o{i}": live.column(f) for i, f in enumerate(cfg.ordering_fields)},
            "seq": live.column(_SEQ),
        }
    )
    spec = [(name, "ascending", "at_start") for name in order.column_names]
    ranked = pc.sort_indices(order, sort_keys=spec).to_numpy()
    ordered_codes = order.column("code").to_numpy()[ranked]
    last = np.append(ordered_codes[1:] != ordered_codes[:-1], True) if len(ranked) else np.zeros(0, dtype=bool)
    winners[ordered_codes[last]] = order.column("seq").to_numpy()[ranked[last]]


def _flags(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(one_array(column).fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


@dataclass(frozen=True)
class MergeDecision:
    """What a merge of one slice returns: which base rows stay (``base_keep``,
    a mask over the base rows; None when there is no base or every row stays)
    and which log records (``log_rows``, their sorted processing positions)."""

    base_keep: np.ndarray | None
    log_rows: np.ndarray

    def keeps_base(self) -> bool:
        """Whether any base row stays (without a base: False)."""
        return self.base_keep is None or bool(self.base_keep.any())


def decide_merge(base: pa.Table | None, logs: LogRecords, cfg: MergeConfig) -> MergeDecision:
    """Which base rows and log records a merge returns. ``base`` needs only
    the ``compared_columns`` the base file has: the others are not looked at,
    so a reader can decode them for the rows that stay, and only when some do."""
    if len(logs) == 0:
        return MergeDecision(None, np.zeros(0, dtype=np.int64))
    # Who wins is decided on a narrow table (keys, sequence, delete flags and
    # ordering values); the wide rows are gathered once, at the end (``rows``).
    decide = [_KEY, _SEQ, _DEL, _CTDEL, *(f for f in cfg.ordering_fields if f not in (_KEY, _SEQ))]
    narrow = logs.table(list(dict.fromkeys(decide)))
    has_base = base is not None and base.num_rows > 0
    base_keys = one_array(record_keys(base, cfg).cast(pa.string())) if has_base else None
    codes = _key_codes(one_array(narrow.column(_KEY)), base_keys)
    winners = _winner_rows(narrow, codes, cfg)
    emit = ~_flags(narrow.column(_DEL))[winners]
    if not has_base:
        return MergeDecision(None if base is None else np.zeros(0, dtype=bool), np.sort(winners[emit]))

    assert base is not None  # has_base
    matched = np.flatnonzero(codes.base >= 0)
    base_keep = np.ones(base.num_rows, dtype=np.bool_)
    if len(matched):
        matched_codes = codes.base[matched]
        old = base.select([f for f in cfg.ordering_fields if f in base.column_names])
        wins = _flags(_newer_wins(narrow, pa.array(winners[matched_codes]), old, pa.array(matched), cfg))
        # Base rows the log matched but did not beat stay; their log winners are not emitted.
        base_keep[matched[wins]] = False
        emit[matched_codes[~wins]] = False
    return MergeDecision(None if base_keep.all() else base_keep, np.sort(winners[emit]))


def apply_merge(base: pa.Table | None, decision: MergeDecision, logs: LogRecords) -> pa.Table:
    """The merged rows: ``base``'s kept rows, then the log's. ``base`` is in
    ``logs.schema``, except that columns other than ``compared_columns`` may
    be dictionary arrays of their type: they are cast once the replaced rows
    are dropped. It may be None when the decision keeps no base row."""
    schema = logs.schema
    added = logs.rows(decision.log_rows) if len(decision.log_rows) else None
    if base is None or not decision.keeps_base():
        return added if added is not None else schema.empty_table()
    keep = decision.base_keep
    kept = base if keep is None else pc.filter(base, pa.array(keep), memory_pool=reader_pool())
    kept = conform_table(kept, schema)
    return kept if added is None else pa.concat_tables([kept, added])


def merge_records(base: pa.Table | None, logs: LogRecords, cfg: MergeConfig) -> pa.Table:
    """Merge ``base`` with the log records (``decide_merge``, then ``apply_merge``)."""
    return apply_merge(base, decide_merge(base, logs, cfg), logs)
