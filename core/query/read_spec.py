"""``ReadSpec``: a read as an engine's entry point takes it, checked once.

``read_hudi`` (Ray), the Spark 4 source and the command line take the same
settings under the same names: a query type, filters, timestamps, columns,
``hoodie.*`` options for the table and for the read, and a few sizes. Each
builds a ``ReadSpec`` from them, so every rule (which keys belong to the read,
which timestamps fit which query type, what a count may be) lives here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from hudi_ray.core.config import ENGINE_TUNABLES, ReadTunables, int_option, is_read_config, warn_unknown_keys
from hudi_ray.core.config import HudiReadConfig as R
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import Filter, from_str_tuples
from hudi_ray.core.query.read_options import HudiQueryType, HudiReadOptions
from hudi_ray.core.storage import normalize_base_uri, redact_text

# The incremental range's keys as hudi-rs 0.2 named them, which ray.data.read_hudi documents.
LEGACY_READ_KEYS = {
    "hoodie.read.file_group.start_timestamp": R.START_TIMESTAMP.value,
    "hoodie.read.file_group.end_timestamp": R.END_TIMESTAMP.value,
}


class ReadArgs(TypedDict, total=False):
    """The read arguments every engine's entry point takes by keyword
    (``read_hudi``, ``read_hudi_spark``, ``hudi_datasource``), named once here;
    ``ReadSpec.of`` documents and checks them."""

    query_type: str
    filters: Sequence[Sequence[str]] | None
    hudi_options: Mapping[str, str] | None
    columns: Sequence[str] | None
    as_of_timestamp: str | None
    start_timestamp: str | None
    end_timestamp: str | None
    batch_size: int | None
    prefetch: bool | None
    prefetch_depth: int  # units a reader task fetches ahead: the argument, else ENGINE_TUNABLES's


READ_ARGS = frozenset(ReadArgs.__annotations__)


@dataclass(frozen=True)
class ReadSpec:
    """The checked settings of one read of ``uri``.

    ``read_options`` hold the filters and every per-read config (timestamps
    included), ``table_options`` the ``hoodie.*`` configs of the table. A
    ``None`` size is the engine's to choose. The URI may hold credentials:
    only ``shown_uri`` is for messages and logs.
    """

    uri: str = field(repr=False)
    shown_uri: str
    read_options: HudiReadOptions
    table_options: dict[str, str]
    columns: list[str] | None
    batch_size: int | None  # rows per batch: the argument, else hoodie.read.stream.batch_size
    prefetch: bool  # fetch upcoming slices' files while decoding
    prefetch_depth: int  # units a reader task fetches ahead: the argument, else ENGINE_TUNABLES's
    num_partitions: int | None  # pieces of work: the argument, else hoodie.read.input.partitions

    @property
    def incremental(self) -> bool:
        return self.read_options.query_type() is HudiQueryType.Incremental

    @property
    def where(self) -> str:
        """The end of a message about this read."""
        return f" (reading {self.shown_uri})"

    @classmethod
    def of_args(
        cls,
        uri: str,
        args: Mapping[str, Any],
        caller: str,
        *,
        num_partitions: object = None,
        names: Mapping[str, str] | None = None,
    ) -> ReadSpec:
        """``of`` with an entry point's ``ReadArgs``; a key that is not one is
        named as an argument ``caller`` does not take."""
        unknown = sorted(set(args) - READ_ARGS)
        if unknown:
            raise HudiConfigError(
                f"{', '.join(unknown)}: not an argument of {caller} (reading {redact_text(str(uri))})"
            )
        return cls.of(uri, num_partitions=num_partitions, names=names, **args)

    @classmethod
    def of(
        cls,
        uri: str,
        *,
        query_type: str | HudiQueryType | None = None,
        filters: Sequence[Sequence[str] | Filter] | None = None,
        hudi_options: Mapping[str, object] | None = None,
        columns: Sequence[str] | None = None,
        as_of_timestamp: str | None = None,
        start_timestamp: str | None = None,
        end_timestamp: str | None = None,
        read_optimized: bool | None = None,
        batch_size: object = None,
        prefetch: bool | None = None,
        prefetch_depth: object = None,
        num_partitions: object = None,
        strings: bool = False,
        names: Mapping[str, str] | None = None,
    ) -> ReadSpec:
        """Check and resolve a read's settings.

        ``query_type`` None keeps the query type ``hudi_options`` give
        (snapshot by default); the timestamp arguments must fit it. Sizes are
        integers, or with ``strings`` (options given as text) their text.
        ``prefetch`` None is on for object stores, off for local files.
        ``names`` maps these arguments to the caller's names, for messages.
        """
        shown = redact_text(str(uri))
        where = f" (reading {shown})"

        def name(argument: str) -> str:
            return (names or {}).get(argument, argument)

        if columns is not None and (isinstance(columns, (str, bytes)) or not all(isinstance(c, str) for c in columns)):
            # A bare string would be read as a list of one-letter columns.
            raise HudiConfigError(f"{name('columns')} must be a list of column names, got {columns!r}{where}")
        depth = ENGINE_TUNABLES.prefetch_depth
        if prefetch_depth is not None:
            depth = int_option(prefetch_depth, name("prefetch_depth"), minimum=0, strings=strings, where=where)
        hudi = {str(k): str(v) for k, v in (hudi_options or {}).items()}
        warn_unknown_keys(hudi)
        hudi = {LEGACY_READ_KEYS.get(k, k): v for k, v in hudi.items()}
        read = HudiReadOptions(
            filters=from_str_tuples(filters or []),
            hudi_options={k: v for k, v in hudi.items() if is_read_config(k)},
        )
        if query_type is not None:
            read = read.with_query_type(query_type)
        incremental = read.query_type() is HudiQueryType.Incremental
        if as_of_timestamp is not None:
            if incremental:
                raise HudiConfigError(
                    f"{name('as_of_timestamp')} applies to snapshot reads, not incremental ones{where}"
                )
            read = read.with_as_of_timestamp(as_of_timestamp)
        if (start_timestamp is not None or end_timestamp is not None) and not incremental:
            raise HudiConfigError(
                f"{name('start_timestamp')} and {name('end_timestamp')} apply to incremental reads "
                f"({name('query_type')}='incremental'){where}"
            )
        if start_timestamp is not None:
            read = read.with_start_timestamp(start_timestamp)
        if end_timestamp is not None:
            read = read.with_end_timestamp(end_timestamp)
        if read_optimized is not None:
            read = read.with_hudi_option(R.USE_READ_OPTIMIZED_MODE, str(read_optimized).lower())
        size = read.batch_size()
        if batch_size is not None:
            size = int_option(batch_size, name("batch_size"), minimum=1, strings=strings, where=where)
        # Every per-read tunable is checked here, not when the read is first planned.
        tunables = ReadTunables.from_options(read.hudi_options)
        partitions = tunables.input_partitions  # hoodie.read.input.partitions, as hudi-rs engines take it
        if num_partitions is not None:
            partitions = int_option(num_partitions, name("num_partitions"), minimum=1, strings=strings, where=where)
        return cls(
            uri=uri,
            shown_uri=shown,
            read_options=read,
            table_options={k: v for k, v in hudi.items() if not is_read_config(k)},
            columns=list(columns) if columns is not None else None,
            batch_size=size,
            # Fetching ahead pays off where each request is slow: object stores.
            prefetch=normalize_base_uri(uri)[0] != "file" if prefetch is None else prefetch,
            prefetch_depth=depth,
            num_partitions=partitions,
        )
