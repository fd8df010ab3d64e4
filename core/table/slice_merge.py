"""The merge stage of a slice read: a base file's rows merged with its log records.

The log blocks that survive visibility and rollbacks are decoded first, only
the columns the merge uses; the base file is then read for the keys and
ordering values the merge decides on (its other columns only when a base row
stays), and the decision applied.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from hudi_ray.core.exceptions import HudiCorruptFileError, HudiUnsupportedError
from hudi_ray.core.file_group import Visibility
from hudi_ray.core.log_file import BlockType, LogBlock, LogScanner, read_log_blocks
from hudi_ray.core.log_file.content import DATA_DECODERS, data_block_columns, decode_delete_columns_of
from hudi_ray.core.merge import LogRecords, MergeConfig, MergeMode, apply_merge, compared_columns, decide_merge
from hudi_ray.core.schema.arrow import check_missing_columns
from hudi_ray.core.storage import StorageLike
from hudi_ray.core.table.selection import ReadSelection

if TYPE_CHECKING:
    from hudi_ray.core.table.file_group_reader import HudiFileGroupReader

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=64)
def _warn_missing_ordering(missing: tuple[str, ...]) -> None:
    # Cached: one warning per set of fields, not one per file slice.
    log.warning("Ordering fields %s are not in the table schema; merging treats them as unset", list(missing))


def _ordering_in(cfg: MergeConfig, schema: pa.Schema) -> MergeConfig:
    """The merge config restricted to ordering fields the data has.

    hudi-rs reads a record without its ordering field as having no ordering
    value: all such records tie, and ties go to the newer record. With no
    ordering field left that is commit-time ordering.
    """
    present = tuple(f for f in cfg.ordering_fields if f in schema.names)
    if present == cfg.ordering_fields:
        return cfg
    _warn_missing_ordering(tuple(f for f in cfg.ordering_fields if f not in present))
    mode = cfg.mode if present else MergeMode.COMMIT_TIME_ORDERING
    return dataclasses.replace(cfg, ordering_fields=present, mode=mode)


def _log_blocks(storage: StorageLike, log_rels: Sequence[str], visibility: Visibility) -> list[LogBlock]:
    """Data and delete blocks that survive visibility and rollbacks, oldest first."""
    # Lazy: each log file is read when the scan reaches it.
    files = (read_log_blocks(storage.read_bytes(rel), storage.uri(rel)) for rel in log_rels)
    return LogScanner(visibility.sees).scan(files)


def _log_records(
    reader: HudiFileGroupReader,
    log_rels: Sequence[str],
    partition_path: str,
    selection: ReadSelection,
    cfg: MergeConfig,
    visibility: Visibility,
) -> LogRecords:
    schema = selection.read_schema
    records = LogRecords(schema, cfg)
    # Only the columns the merge uses are decoded: a projection skips the rest of every block.
    needed = records.data_columns()
    constants = reader._constants(partition_path)
    for block in _log_blocks(reader.context.storage, log_rels, visibility):
        if block.block_type is BlockType.DELETE:
            deletes = decode_delete_columns_of(block)
            records.add_deletes(deletes.keys, deletes.ordering, deletes.commit_time_delete)
        elif block.block_type in DATA_DECODERS:
            raw = DATA_DECODERS[block.block_type](block, needed)
            for name, value in constants.items():
                if name not in raw.column_names:
                    raw = raw.append_column(name, pa.repeat(value, raw.num_rows))
            check_missing_columns(
                schema,
                raw.column_names,
                f"the schema of {block.where()}",
                required=lambda name, at=block.instant_time: reader._required_columns().reason(name, at),
                unknown=lambda block=block: reader._unknown_columns(data_block_columns(block)),
            )
            records.add_data(raw, block.where())
        else:
            raise HudiUnsupportedError(f"{block.where()}: {block.block_type.name} blocks in a data table")
    return records


def merge_slice(
    reader: HudiFileGroupReader,
    base_rel: str | None,
    log_rels: Sequence[str],
    partition_path: str,
    selection: ReadSelection,
    visibility: Visibility,
) -> pa.Table:
    """The slice's rows in ``selection.read_schema``: the base file's merged with the logs' (not yet masked)."""
    schema = selection.read_schema
    cfg = _ordering_in(reader.context.merge_config(), schema)
    compared = compared_columns(cfg)
    decided_on = pa.schema([f for f in schema if f.name in compared])
    records = _log_records(reader, log_rels, partition_path, selection, cfg, visibility)
    base = None
    if base_rel and len(decided_on):
        # The merge decides on the keys and ordering values alone. With fewer
        # log records than base rows some base row stays, so the file is read
        # whole, at once; else its other columns are read after the decision,
        # and only when a base row stays.
        stays = len(records) < reader._base_reader(base_rel).num_rows(base_rel)
        base = reader._read_base(base_rel, partition_path, schema if stays else decided_on, compared)
    elif base_rel:
        # Nothing to decide on (no key column in the read): the whole file, as it is.
        base = reader._read_base(base_rel, partition_path, schema, compared)
    decision = decide_merge(base, records, cfg)
    if base is not None and base_rel and decision.keeps_base() and len(base.schema) < len(schema):
        base = _with_other_columns(reader, base, base_rel, partition_path, schema, compared)
    return apply_merge(base, decision, records)


def _with_other_columns(
    reader: HudiFileGroupReader,
    base: pa.Table,
    base_rel: str,
    partition_path: str,
    schema: pa.Schema,
    compared: frozenset[str],
) -> pa.Table:
    """``base`` (the compared columns) completed with the file's other columns
    of ``schema``. Text columns of small dictionaries stay encoded: the merge
    drops the replaced rows before it casts the rest, so only kept rows expand."""
    others = pa.schema([f for f in schema if f.name not in base.schema.names])
    rest = reader._read_base(base_rel, partition_path, others, compared)
    if rest.num_rows != base.num_rows:
        raise HudiCorruptFileError(
            f"Base file {reader.context.storage.uri(base_rel)} gave {base.num_rows} rows of its key columns "
            f"and {rest.num_rows} of the others"
        )
    joined = pa.Table.from_arrays([*base.columns, *rest.columns], schema=pa.schema([*base.schema, *rest.schema]))
    return joined.select(schema.names)
