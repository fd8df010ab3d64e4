"""``read_hudi_spark``: a Hudi table as a Spark DataFrame on any SparkSession, its base
files scanned by Spark itself.

hudi-ray plans the read with the core (partition, stats and index pruning), then:

* slices whose rows are their base file's (``HudiReadPlan.reads_base_only``: every COW
  slice, MOR slices without log files, read-optimized queries) go to Spark's own Parquet
  reader: those files, read with the table's columns and Spark types, the read's filters
  and commit-time bounds as a Spark predicate, the projection as a select;
* the other slices (merged with their log files), and base files Spark would not read as
  the table's types, are read by hudi-ray's file group reader: through Ray reader tasks
  and RayDP on a RayDP session, else in Spark's Python workers (``mapInArrow``);
* the two parts are unioned by name.

Which rows a base file contributes, and in which types, is the core's rule
(``HudiReadPlan.base_selection``); this module only says it in Spark's terms.
"""

from __future__ import annotations

import datetime
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_ray.core.config import ENGINE_TUNABLES
from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.expr import ExprOperator, Filter, cast_value
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.table import COMMIT_TIME, READ_ARGS, HudiReadPlan, HudiTableBuilder, ReadSelection, ReadSpec
from hudi_ray.core.util import split_balanced
from hudi_ray.spark_types import spark_arrow_schema, spark_batches, spark_schema
from hudi_ray.tunables import RAY_TUNABLES

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

log = logging.getLogger(__name__)

# In-memory Arrow bytes per Spark partition of the slices hudi-ray reads.
DEFAULT_PARTITION_BYTES = ENGINE_TUNABLES.spark_partition_bytes
# What reaches Spark's Parquet reader: ``auto`` (where Spark's file system reads the
# table's scheme), ``never`` (every slice through hudi-ray's reader).
SPARK_SCANS = ("auto", "never")


def read_hudi_spark(
    spark: SparkSession,
    table_uri: str,
    *,
    storage_options: dict[str, str] | None = None,
    override_num_blocks: int | None = None,
    partition_bytes: int = DEFAULT_PARTITION_BYTES,
    spark_scan: str = "auto",
    **args: Any,
) -> DataFrame:
    """Read a Hudi table into a Spark DataFrame, on any SparkSession: a RayDP one
    (Spark 3.5), or a plain PySpark one without Ray.

    Takes ``read_hudi``'s read arguments (``ReadArgs``: query type, filters, options,
    columns, timestamps, batch size, prefetching). Base files that need no merge are scanned by Spark's Parquet reader
    (``spark_scan="never"`` turns that off); on an object store Spark reads them with
    its own Hadoop file system and credentials, and only when its configuration names
    a file system for the scheme. The other slices are read by hudi-ray in partitions
    of about ``partition_bytes`` of Arrow data (``override_num_blocks``: that many):
    on a RayDP session by Ray reader tasks, planned by the table's planner actor, which
    take ``read_hudi``'s Ray arguments (``planner``, ``num_cpus``, ``ray_remote_args``,
    ...); elsewhere in Spark's Python workers. The result has the columns, types and
    nullability of the table API's read.
    """
    if partition_bytes <= 0:
        raise HudiConfigError(f"partition_bytes must be > 0, got {partition_bytes}")
    if spark_scan not in SPARK_SCANS:
        raise HudiConfigError(f"spark_scan must be one of {', '.join(SPARK_SCANS)}, got {spark_scan!r}")
    raydp = _is_raydp(spark)
    ray_args = {k: v for k, v in args.items() if k not in READ_ARGS}
    unknown = sorted(set(ray_args) - _RAY_ARGS)
    if unknown or (ray_args and not raydp):
        why = "are not arguments of read_hudi_spark" if unknown else "apply on a RayDP session; this one has no Ray"
        raise HudiConfigError(f"{', '.join(unknown or sorted(ray_args))} {why}")
    spec = ReadSpec.of_args(
        table_uri,
        {k: v for k, v in args.items() if k in READ_ARGS},
        "read_hudi_spark",
        num_partitions=override_num_blocks,
        names={"num_partitions": "override_num_blocks"},
    )
    if raydp:
        from hudi_ray.spark.handoff import planned_by_actor

        plan = planned_by_actor(spec, storage_options, ray_args)
    else:
        table = (
            HudiTableBuilder.from_base_uri(spec.uri)
            .with_hudi_options(spec.table_options)
            .with_storage_options(storage_options or {})
            .build()
        )
        read = spec.read_options
        plan = table.plan(read.with_projection(spec.columns) if spec.columns is not None else read)
    schema = spark_arrow_schema(plan.schema or pa.schema([]))
    struct = spark_schema(schema)
    scan = _SparkScan.of(spark, plan, schema) if spark_scan == "auto" else None
    native: list[HudiFileSlice] = []
    if scan is not None:
        candidates = [s for s in plan.slices if plan.reads_base_only(s)]
        native = [s for s, ok in zip(candidates, scan.readable(candidates)) if ok] if candidates else []
    chosen = {id(s) for s in native}
    python = [s for s in plan.slices if id(s) not in chosen]
    log.info(
        "Reading %s: %d file slices scanned by Spark, %d read by hudi-ray", spec.shown_uri, len(native), len(python)
    )
    parts: list[DataFrame] = []
    if native:
        assert scan is not None
        parts.append(scan.dataframe(native))
    if python or not parts:
        parts.append(_python_part(spark, plan, python, schema, struct, spec, partition_bytes, ray_args, raydp))
    df = parts[0]
    for part in parts[1:]:
        df = df.unionByName(part)
    return df


# Arguments of ``read_hudi`` for Ray: its planner, and options of the reader tasks.
_RAY_ARGS = frozenset(
    {
        "planner",
        "planner_options",
        "num_cpus",
        "num_gpus",
        "memory",
        "resources",
        "accelerator_type",
        "runtime_env",
        "label_selector",
        "max_calls",
        "ray_remote_args",
    }
)


# -- slices Spark scans ----------------------------------------------------------------


class _SparkScan:
    """Base files read by Spark's Parquet reader, as ``plan.base_selection`` says."""

    def __init__(
        self,
        spark: SparkSession,
        plan: HudiReadPlan,
        schema: pa.Schema,
        selection: ReadSelection,
        prefix: Callable[[str], str],
    ) -> None:
        self._spark = spark
        self._plan = plan
        self._schema = schema
        self._path = prefix
        self._selection = selection
        self._read = spark_arrow_schema(selection.read_schema)

    @classmethod
    def of(cls, spark: SparkSession, plan: HudiReadPlan, schema: pa.Schema) -> _SparkScan | None:
        """The scan, or None where Spark cannot read these base files as the table API
        returns them: a table whose base files lack partition columns, columns Spark's
        reader would type or null differently, or a scheme Spark has no file system for."""
        if plan.schema is None or plan.fills_partition_columns:
            return None
        selection = plan.base_selection()
        read = spark_arrow_schema(selection.read_schema)
        if not all(_plain(f.type) for f in read) or not _distinct_ignoring_case(read.names):
            return None
        # Arrow's is_in matches floats by their bits (-0.0 is not in [0.0], NaNs differ by
        # sign); Spark's IN compares numbers. Such a filter is left to the core.
        if any(f.operator.is_list and pa.types.is_floating(read.field(f.field).type) for f in selection.filters):
            return None
        # Spark reads every file column as nullable: a column the table declares
        # non-null is given back as such (``_non_null``); a nested one cannot be.
        if any(_nested_non_null(f.type) for f in schema):
            return None
        if any(not f.nullable and not _zero_of(f.type)[0] for f in schema):
            return None
        prefix = _spark_prefix(spark, plan.context.storage)
        if prefix is None:
            return None
        return cls(spark, plan, schema, selection, prefix)

    def readable(self, slices: Sequence[HudiFileSlice]) -> list[bool]:
        """Per slice, whether its base file holds every column read, each in the
        table's type as Spark reads it (else the core's reader casts or fills it)."""
        wanted = {f.name: _normalized(f.type) for f in self._read}
        dated = any(_has_datetime(f.type) for f in self._read)
        out = []
        for file_schema in self._plan.base_file_schemas(slices):
            if file_schema is None or (dated and _rebased_by_spark(file_schema.metadata or {})):
                out.append(False)
                continue
            names = file_schema.names
            ok = _distinct_ignoring_case(names) and all(
                file_schema.get_field_index(name) >= 0
                and _normalized(file_schema.field(name).type) == want
                and _plain(file_schema.field(name).type)
                for name, want in wanted.items()
            )
            out.append(ok)
        return out

    def dataframe(self, slices: Sequence[HudiFileSlice]) -> DataFrame:
        # Expressions go to Spark as SQL text: a call to the JVM each, where building
        # them as Columns took hundreds (a fifth of a second, as much as a small scan).
        paths = [self._path(s.base_file_relative_path()) for s in slices]
        # The core reads dates and timestamps as written (proleptic Gregorian); Spark would
        # refuse old ones in files not written by Spark 3 unless told the same.
        reader = self._spark.read.schema(spark_schema(self._read)).option("datetimeRebaseMode", "CORRECTED")
        df = reader.option("int96RebaseMode", "CORRECTED").parquet(*paths)
        conditions = []
        predicate = spark_predicate(self._selection, self._selection.read_schema)
        if predicate is not None:
            conditions.append(predicate)
        out = []
        for f in self._schema:
            name = _ident(f.name)
            if f.nullable:
                out.append(name)
                continue
            # A null in a column the table declares non-null means a damaged file: fail rather
            # than give a value. coalesce() with a non-null literal is typed non-null.
            message = _string(f"Column {f.name} of a base file holds a null")
            conditions.append(f"CASE WHEN {name} IS NULL THEN raise_error({message}) ELSE true END")
            zero = f"CAST({_zero_of(f.type)[1]} AS {_spark_type(f.type).simpleString()})"
            out.append(f"coalesce({name}, {zero}) AS {name}")
        if conditions:
            df = df.where(" AND ".join(f"({c})" for c in conditions))
        return df.selectExpr(*out)


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string(text: str) -> str:
    """A SQL string literal of ``text``, exact whatever its characters (as UTF-8 bytes)."""
    return f"CAST(X'{text.encode('utf-8').hex()}' AS STRING)"


def _spark_type(t: pa.DataType) -> Any:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(t)


def _children(t: pa.DataType) -> list[pa.Field]:
    """The fields nested in ``t``: a struct's, a list's item, a map's key and item."""
    types = pa.types
    if types.is_struct(t):
        return list(t)
    if types.is_list(t) or types.is_large_list(t):
        return [t.value_field]
    if types.is_map(t):
        return [t.key_field, t.item_field]
    return []


def _plain(t: pa.DataType) -> bool:
    """Types Spark's Parquet reader reads as hudi-ray's reader gives them to Spark."""
    types = pa.types
    if types.is_nested(t):
        return (types.is_struct(t) or types.is_list(t) or types.is_large_list(t) or types.is_map(t)) and all(
            _plain(f.type) for f in _children(t)
        )
    if types.is_timestamp(t):
        # Spark reads zone-less Parquet timestamps as TIMESTAMP_NTZ, and INT96 by its own rules.
        return t.tz is not None and t.unit in ("ms", "us")
    if types.is_decimal(t):
        return t.precision <= 38
    return (
        types.is_boolean(t)
        or types.is_signed_integer(t)
        or (types.is_floating(t) and not types.is_float16(t))
        or types.is_string(t)
        or types.is_large_string(t)
        or types.is_binary(t)
        or types.is_large_binary(t)
        or types.is_date32(t)
    )


def _normalized(t: pa.DataType) -> str:
    """A type as Spark sees it: no nullability, list item names or large variants."""
    types = pa.types
    if types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{_normalized(f.type)}" for f in t) + ">"
    if types.is_list(t) or types.is_large_list(t):
        return f"list<{_normalized(t.value_type)}>"
    if types.is_map(t):
        return f"map<{_normalized(t.key_type)},{_normalized(t.item_type)}>"
    if types.is_large_string(t):
        return "string"
    if types.is_large_binary(t):
        return "binary"
    if types.is_timestamp(t):
        return f"timestamp[{t.tz is not None}]"
    return str(t)


def _distinct_ignoring_case(names: Sequence[str]) -> bool:
    """Spark matches Parquet columns to names ignoring case (its default): names equal
    but for case make its reader fail."""
    return len({n.lower() for n in names}) == len(names)


def _has_datetime(t: pa.DataType) -> bool:
    return pa.types.is_date(t) or pa.types.is_timestamp(t) or any(_has_datetime(f.type) for f in _children(t))


def _rebased_by_spark(metadata: Mapping[bytes, bytes]) -> bool:
    """Whether Spark shifts a file's dates and timestamps from the Julian calendar
    whatever it is told: files Spark before 3.0 wrote, or wrote in its legacy mode."""
    if b"org.apache.spark.legacyDateTime" in metadata:
        return True
    version = metadata.get(b"org.apache.spark.version")
    if version is None:
        return False
    major = version.decode("utf-8", "replace").split(".", 1)[0]
    return not major.isdigit() or int(major) < 3


def _nested_non_null(t: pa.DataType) -> bool:
    """Whether a nested field other than a map key is non-null (Spark's reader makes it nullable)."""
    children = _children(t)
    checked = children[1:] if pa.types.is_map(t) else children  # Spark's map keys are non-null too
    return any(not f.nullable for f in checked) or any(_nested_non_null(f.type) for f in children)


def _zero_of(t: pa.DataType) -> tuple[bool, str]:
    """(whether the type has one, a SQL literal of it): what ``coalesce`` is given."""
    types = pa.types
    if types.is_string(t) or types.is_large_string(t):
        return True, "''"
    if types.is_binary(t) or types.is_large_binary(t):
        return True, "X''"
    if types.is_boolean(t):
        return True, "false"
    if types.is_integer(t) or types.is_floating(t) or types.is_decimal(t):
        return True, "0"
    if types.is_date32(t):
        return True, "date_from_unix_date(0)"
    if types.is_timestamp(t):
        return True, "timestamp_micros(0)"
    return False, ""


def _spark_prefix(spark: SparkSession, storage: Any) -> Callable[[str], str] | None:
    """How a base file (relative path) is named to Spark, or None when Spark's file
    system would not name the same file: a scheme it has no file system for, or one
    whose URIs mean something else to Hadoop (http, user info, an ``abfs`` root
    without its account)."""
    protocol, root = storage.protocol.lower(), storage.root.rstrip("/")
    if protocol == "file":
        return _Paths("file", root, storage)
    if protocol not in _HADOOP_SCHEMES or ("@" in root.split("/", 1)[0]) != (protocol in ("abfs", "abfss")):
        return None
    for scheme in ("s3a", "s3") if protocol == "s3" else (protocol,):
        if _has_file_system(spark, scheme):
            return _Paths(scheme, root, storage)
    return None


@dataclass(frozen=True)
class _Paths:
    """A base file's path as Spark names it: ``scheme://root/relative``, globs escaped."""

    scheme: str
    root: str
    storage: Any

    def __call__(self, rel: str) -> str:
        return _unglobbed(f"{self.scheme}://{self.root}/{self.storage.relative(rel)}")


# Object stores whose fsspec roots Hadoop reads as the same places.
_HADOOP_SCHEMES = frozenset({"s3", "s3a", "gs", "hdfs", "abfs", "abfss"})


def _unglobbed(path: str) -> str:
    """``path`` as Spark's reader takes it literally: it expands Hadoop globs in paths."""
    return "".join("\\" + c if c in _GLOB else c for c in path)


_GLOB = frozenset("\\*?[]{}")


def _has_file_system(spark: SparkSession, scheme: str) -> bool:
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return False
    try:
        conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
        return True
    except Exception:  # Py4J raises whatever the JVM threw: no file system for it
        return False


# -- the row mask in Spark's terms ------------------------------------------------------


def spark_predicate(selection: ReadSelection, schema: pa.Schema) -> str | None:
    """The selection's row mask (filters and commit-time bounds) as Spark SQL that keeps
    exactly the rows the core's Arrow mask keeps (nulls, NaN and ``NOT IN`` as Arrow
    treats them)."""
    parts = [_filter(f, schema.field(f.field).type) for f in selection.filters]
    commit = _ident(COMMIT_TIME)
    if selection.commit_times is not None:
        times = ", ".join(_string(t) for t in sorted(selection.commit_times))
        parts.append(f"coalesce({commit} IN ({times}), false)" if times else "false")
    if selection.commit_range is not None:
        lo, hi = selection.commit_range
        if lo:
            parts.append(f"{commit} > {_string(lo)}")
        if hi:
            parts.append(f"{commit} <= {_string(hi)}")
    return " AND ".join(f"({p})" for p in parts) if parts else None


def _literal(value: Any, dtype: pa.DataType) -> str:
    """A SQL literal of a filter value already cast to the column's type, exact."""
    types = pa.types
    if value is None:
        return "NULL"
    if types.is_boolean(dtype):
        return "true" if value else "false"
    if types.is_integer(dtype):
        return str(int(value))
    if types.is_floating(dtype):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
        return f"CAST('{value!r}' AS DOUBLE)"
    if types.is_decimal(dtype):
        return f"CAST('{value}' AS DECIMAL({dtype.precision},{dtype.scale}))"
    if types.is_string(dtype) or types.is_large_string(dtype):
        return _string(value)
    if types.is_binary(dtype) or types.is_large_binary(dtype):
        return f"X'{bytes(value).hex()}'"
    if types.is_date32(dtype):
        return f"date_from_unix_date({(value - datetime.date(1970, 1, 1)).days})"
    if types.is_timestamp(dtype):
        micros = pa.scalar(value, dtype).cast(pa.timestamp("us", tz="UTC")).value
        return f"timestamp_micros({micros})"
    raise HudiConfigError(f"No Spark literal for a filter value of type {dtype}")


def _filter(f: Filter, dtype: pa.DataType) -> str:
    col = _ident(f.field)
    floating = pa.types.is_floating(dtype)
    values = [cast_value(v, dtype, f.field).as_py() for v in f.values]
    op = f.operator
    if op.is_list:
        # Arrow's is_in matches NaN to NaN, as Spark's IN does; a null row is not in
        # the list, so NOT IN keeps it (Spark's NOT IN would give null: dropped).
        inside = f"{col} IN ({', '.join(_literal(v, dtype) for v in values)})"
        if op is ExprOperator.NotIn:
            return f"{col} IS NULL OR NOT ({inside})"
        return f"coalesce({inside}, false)"
    value = values[0]
    literal = _literal(value, dtype)
    # A float comparison is kept out of the Parquet scan (``+ 0.0D`` changes no comparison):
    # Parquet's dictionary filter tells -0.0 from 0.0 and would skip a row group holding a
    # -0.0 that equals 0.
    number = f"({col} + 0.0D)" if floating else col
    if op is ExprOperator.Ne:
        # Arrow: NaN differs from everything, NaN included; Spark: NaN equals NaN.
        return f"isnan({col}) OR {number} != {literal}" if floating else f"{col} != {literal}"
    if floating and isinstance(value, float) and math.isnan(value):
        # Arrow: no value compares equal, below or above NaN; a null row stays null (dropped).
        return f"{col} IS NOT NULL AND false"
    compare = f"{number} {_SQL_OPS[op]} {literal}"
    # Spark orders NaN above every number; Arrow's comparisons with NaN are false.
    return f"NOT isnan({col}) AND {compare}" if floating else compare


_SQL_OPS = {
    ExprOperator.Eq: "=",
    ExprOperator.Lt: "<",
    ExprOperator.Lte: "<=",
    ExprOperator.Gt: ">",
    ExprOperator.Gte: ">=",
}


# -- slices hudi-ray reads --------------------------------------------------------------


def _python_part(
    spark: SparkSession,
    plan: HudiReadPlan,
    slices: list[HudiFileSlice],
    schema: pa.Schema,
    struct: StructType,
    spec: ReadSpec,
    partition_bytes: int,
    ray_args: dict[str, Any],
    raydp: bool,
) -> DataFrame:
    from hudi_ray.reader import ChunkRead

    if not slices:
        return spark.createDataFrame(spark.sparkContext.emptyRDD(), struct)
    sizes = [e.size_bytes for e in plan.estimate(slices)]
    count = spec.num_partitions or max(
        min(spark.sparkContext.defaultParallelism, len(slices)), math.ceil(sum(sizes) / partition_bytes)
    )
    work = [
        ChunkRead(
            plan=plan,
            slices=chunk,
            batch_size=spec.batch_size or RAY_TUNABLES.block_rows,
            prefetch=spec.prefetch,
            prefetch_depth=spec.prefetch_depth,
        )
        for chunk in split_balanced(slices, sizes, min(count, len(slices)))
    ]
    if raydp:
        from hudi_ray.spark.handoff import from_chunk_reads

        return from_chunk_reads(spark, work, schema, ray_args)
    return _map_in_arrow(spark, work, struct)


def _is_raydp(spark: SparkSession) -> bool:
    return (spark.sparkContext.master or "").startswith("ray")


def _map_in_arrow(spark: SparkSession, work: list[Any], struct: StructType) -> DataFrame:
    """The chunks read in Spark's Python workers, one Spark partition each."""
    plan = work[0].plan
    # The plan travels once in the function, not once per chunk.
    shipped = [replace(w, plan=None) for w in work]

    def read(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from hudi_ray.reader import read_chunk

        for seeds in batches:
            for index in seeds.column(0).to_pylist():
                yield from spark_batches(read_chunk(replace(shipped[index], plan=plan)), struct)

    seeds = spark.range(0, len(work), 1, len(work))
    return seeds.mapInArrow(read, struct)


__all__ = ["DEFAULT_PARTITION_BYTES", "SPARK_SCANS", "read_hudi_spark", "spark_predicate"]
