"""``SliceFiles``: a table's base files and log blocks as a read decodes them.

The slice reader and the merge both get their data here, as explicit inputs:
a base file decoded with its format's reader, the partition columns filled
where the writer dropped them, and every decoded piece (a base file, a log
data block) checked against the table schema, so a missing column is named
with the reason it may not be missing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from hudi_ray.core.base_file import BaseFileReader, base_file_format, base_file_reader
from hudi_ray.core.exceptions import HudiCorruptFileError, HudiUnsupportedError
from hudi_ray.core.file_group import Visibility, parse_base_file_name
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.log_file import BlockType, LogScanner, read_log_blocks
from hudi_ray.core.log_file.content import DATA_DECODERS, data_block_columns, decode_delete_columns_of
from hudi_ray.core.merge import LogRecords, MergeConfig
from hudi_ray.core.meta_client import TableContext
from hudi_ray.core.query import ReadSelection
from hudi_ray.core.reading.base_runs import BaseRead
from hudi_ray.core.schema import conform_table, encoded_target, parse_avro_schema
from hudi_ray.core.schema.arrow import check_missing_columns
from hudi_ray.core.schema.required import RequiredColumns
from hudi_ray.core.storage import StorageLike
from hudi_ray.core.timeline import HudiTimeline

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")


def _commit_schemas(timeline: HudiTimeline) -> list[tuple[str, str | None]]:
    """(instant time, writer schema) of the completed data commits, oldest first."""
    return [
        (i.timestamp, (timeline.get_instant_metadata(i).get("extraMetadata") or {}).get("schema"))
        for i in timeline.data_instants
    ]


class SliceFiles:
    """The files of one table's slices, decoded in the table's schema."""

    def __init__(self, context: TableContext) -> None:
        self.context = context
        self.storage: StorageLike = context.storage
        self._fills: bool | None = None
        self._readers: dict[str, BaseFileReader] = {}
        self._required: RequiredColumns | None = None

    def constants(self, partition_path: str) -> dict[str, pa.Scalar]:
        """The partition columns a table written without them gets from the path."""
        if self._fills is None:
            # Asked once per slice; the answer parses table configs (and needs the schema).
            ctx = self.context
            self._fills = bool(ctx.config.drops_partition_fields and ctx.partitioner.is_partitioned)
        return self.context.partitioner.constants(partition_path) if self._fills else {}

    def reader(self, base_rel: str) -> BaseFileReader:
        fmt = base_file_format(base_rel)
        reader = self._readers.get(fmt)
        if reader is None:
            reader = self._readers[fmt] = base_file_reader(self.storage, base_rel, self.context.footers)
        return reader

    def num_rows(self, base_rel: str) -> int:
        return self.reader(base_rel).num_rows(base_rel)

    def decode(self, selection: ReadSelection, base_rel: str, partition_path: str) -> BaseRead:
        """The selection's columns of a base file as the file has them, checked
        (conformed later, alone or in a run of small files)."""
        reader = self.reader(base_rel)
        data = reader.read(base_rel, selection.read_schema.names)
        constants = self.constants(partition_path)
        self._check_base(reader, base_rel, data, selection.read_schema, constants)
        return BaseRead(selection, data, constants, partition_path if constants else "", base_rel)

    def decode_pieces(
        self, selection: ReadSelection, base_rel: str, partition_path: str, batch_size: int
    ) -> Iterator[BaseRead]:
        """``decode`` piece by piece (a Parquet row group, decoded by all cores at
        once, or a batch of a Lance file): memory stays one piece."""
        reader = self.reader(base_rel)
        constants = self.constants(partition_path)
        key = partition_path if constants else ""
        for piece in reader.iter_tables(base_rel, selection.read_schema.names, batch_size):
            self._check_base(reader, base_rel, piece, selection.read_schema, constants)
            yield BaseRead(selection, piece, constants, key, base_rel)

    def finished(self, item: BaseRead) -> pa.Table:
        """A decoded piece in the table schema, masked and projected."""
        uri = self.storage.uri(item.base_rel)
        return item.selection.apply(conform_table(item.data, item.selection.read_schema, item.constants, uri))

    def read(
        self, base_rel: str, partition_path: str, schema: pa.Schema, plain: frozenset[str] | None = None
    ) -> pa.Table:
        """The base file's rows in ``schema``, for the merge. Given ``plain``, text
        columns other than those may stay dictionary arrays (``encoded_target``):
        the merge expands only the rows it keeps."""
        reader = self.reader(base_rel)
        data = reader.read(base_rel, schema.names, encoded=plain is not None)
        constants = self.constants(partition_path)
        self._check_base(reader, base_rel, data, schema, constants)
        if plain is not None:
            schema = encoded_target(schema, data.schema, plain)
        return conform_table(data, schema, constants, self.storage.uri(base_rel))

    def with_other_columns(
        self, base: pa.Table, base_rel: str, partition_path: str, schema: pa.Schema, compared: frozenset[str]
    ) -> pa.Table:
        """``base`` (the compared columns) completed with the file's other columns
        of ``schema``. Text columns of small dictionaries stay encoded: the merge
        drops the replaced rows before it casts the rest, so only kept rows expand."""
        others = pa.schema([f for f in schema if f.name not in base.schema.names])
        rest = self.read(base_rel, partition_path, others, compared)
        if rest.num_rows != base.num_rows:
            raise HudiCorruptFileError(
                f"Base file {self.storage.uri(base_rel)} gave {base.num_rows} rows of its key columns "
                f"and {rest.num_rows} of the others"
            )
        joined = pa.Table.from_arrays([*base.columns, *rest.columns], schema=pa.schema([*base.schema, *rest.schema]))
        return joined.select(schema.names)

    def log_records(
        self, log_rels: Sequence[str], partition_path: str, schema: pa.Schema, cfg: MergeConfig, visibility: Visibility
    ) -> LogRecords:
        """The records of a slice's log blocks that survive visibility and
        rollbacks, oldest first; of data blocks only the columns the merge uses
        are decoded (a projection skips the rest of every block)."""
        records = LogRecords(schema, cfg)
        needed = records.data_columns()
        constants = self.constants(partition_path)
        # Lazy: each log file is read when the scan reaches it.
        logs = (read_log_blocks(self.storage.read_bytes(rel), self.storage.uri(rel)) for rel in log_rels)
        for block in LogScanner(visibility.sees).scan(logs):
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
                    required=lambda name, at=block.instant_time: self._required_columns().reason(name, at),
                    unknown=lambda b=block: self._unknown(data_block_columns(b)),
                )
                records.add_data(raw, block.where())
            else:
                raise HudiUnsupportedError(f"{block.where()}: {block.block_type.name} blocks in a data table")
        return records

    def _check_base(
        self, reader: BaseFileReader, base_rel: str, data: pa.Table, schema: pa.Schema, constants: Mapping
    ) -> None:
        if data.num_columns >= len(schema):
            # Readers return only the asked columns the file has: a file with
            # as many has them all, and nothing can be missing.
            return
        parsed = parse_base_file_name(base_rel.rsplit("/", 1)[-1])
        written_at = parsed.instant_time if parsed else None
        check_missing_columns(
            schema,
            data.column_names,
            self.storage.uri(base_rel),
            required=lambda name: self._required_columns().reason(name, written_at),
            unknown=lambda: self._unknown(reader.schema(base_rel).names),
            filled=constants.keys(),
        )

    def _required_columns(self) -> RequiredColumns:
        if self._required is None:
            ctx = self.context
            self._required = RequiredColumns(
                parse_avro_schema(ctx.avro_schema_str, "table schema"),
                meta_fields=ctx.config.populates_meta_fields,
                # A partial, not a closure: readers are pickled to workers.
                history=functools.partial(_commit_schemas, ctx.timeline),
                create_schema=ctx.config.get("hoodie.table.create.schema"),
            )
        return self._required

    def _unknown(self, names: Sequence[str]) -> list[str]:
        known = set(self.context.schema_with_meta_fields.names)
        return [n for n in names if n not in known]
