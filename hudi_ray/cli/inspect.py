"""The commands that describe a table without reading its rows: ``info``,
``timeline``, ``slices``, ``explain`` and ``stats``.

Each returns a ``Report``: the answer as JSON-ready data (``--json``) and as
text for people; both come from the library's public API, so the command line
says what the API would.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from hudi_ray.cli.output import aligned, human_bytes, human_count, key_values
from hudi_ray.core.config import HudiTableConfig, TableConfig
from hudi_ray.core.exceptions import HudiUnsupportedError
from hudi_ray.core.file_group import HudiFileSlice
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.merge import resolve_merge_config
from hudi_ray.core.table import HudiReadOptions, HudiTable
from hudi_ray.core.timeline import DATA_ACTIONS, HudiInstant

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

# Where hoodie.properties lists the metadata table's ready partitions.
METADATA_PARTITIONS_KEY = "hoodie.table.metadata.partitions"


@dataclass
class Report:
    data: Any
    text: str


def _schema_fields(schema: pa.Schema | None) -> list[dict[str, Any]] | None:
    if schema is None:
        return None
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def _schema_or_none(table: HudiTable, get: Callable[[], pa.Schema]) -> pa.Schema | None:
    return get() if table.has_schema() else None


# -- info ------------------------------------------------------------------------


def info(table: HudiTable) -> Report:
    config = TableConfig.from_mapping(table.hudi_options(), f"{table.base_url}/.hoodie/hoodie.properties")
    try:
        merge_mode = resolve_merge_config(config).mode.value
    except HudiUnsupportedError as exc:
        merge_mode = f"unsupported ({exc})"
    mdt_partitions = sorted(p for p in (config.get(METADATA_PARTITIONS_KEY) or "").split(",") if p)
    timeline = table.get_timeline()
    latest = timeline.latest_data_instant()
    schema = _schema_or_none(table, table.get_schema)
    data = {
        "name": table.table_name,
        "uri": table.base_url,
        "type": table.table_type,
        "table_version": table.table_version,
        "timeline_layout_version": config.timeline_layout_version,
        "timeline_path": config.timeline_path,
        "base_file_format": config.base_file_format,
        "record_key_fields": config.record_key_fields,
        "partition_fields": config.partition_fields,
        "hive_style_partitioning": config.is_hive_style,
        "ordering_fields": config.ordering_fields,
        "key_generator": config.key_generator or None,
        "merge_mode": merge_mode,
        "metadata_table": {
            "enabled": config.metadata_table_enabled,
            "partitions": mdt_partitions,
        },
        "timezone": table.timezone,
        "completed_instants": len(timeline.instants),
        "completed_data_instants": len(timeline.data_instants),
        "latest_commit": latest.timestamp if latest else None,
        "schema": _schema_fields(schema),
        "partition_schema": _schema_fields(_schema_or_none(table, table.get_partition_schema)),
    }
    partitioning = "no (non-partitioned)"
    if config.partition_fields:
        style = "hive style" if config.is_hive_style else "plain paths"
        partitioning = f"by {', '.join(config.partition_fields)} ({style})"
    metadata = ", ".join(mdt_partitions) if mdt_partitions else "none"
    if mdt_partitions and not config.metadata_table_enabled:
        metadata += f" (not used: {HudiTableConfig.METADATA_TABLE_ENABLED.value}=false)"
    pairs = [
        ("table", f"{table.table_name} ({table.table_type})"),
        ("uri", table.base_url),
        (
            "version",
            f"{table.table_version} (timeline layout {config.timeline_layout_version}, {config.timeline_path})",
        ),
        ("record key", ", ".join(config.record_key_fields) or "none (keyless)"),
        ("partitioned", partitioning),
        ("ordering", ", ".join(config.ordering_fields) or "none"),
        ("merge mode", merge_mode),
        ("base files", config.base_file_format),
        ("metadata", metadata),
        (
            "timeline",
            f"{len(timeline.instants)} completed instants, latest commit {latest.timestamp if latest else 'none'}",
        ),
    ]
    text = key_values(pairs)
    if schema is None:
        text += "\nschema       none yet (no completed commit)"
    else:
        rows = [(f.name, str(f.type), "" if f.nullable else "not null") for f in schema]
        text += f"\nschema ({len(schema)} columns)\n" + aligned(["column", "type", ""], rows, indent="  ")
    return Report(data, text)


# -- timeline --------------------------------------------------------------------


def _commit_stats(table: HudiTable, instant: HudiInstant) -> dict[str, int] | None:
    """Files and records a completed data instant wrote, from its commit metadata."""
    if not instant.is_completed or instant.action not in DATA_ACTIONS:
        return None
    stats = table.get_timeline().write_stats(instant)
    out = {"files": len({(s.get("partitionPath"), s.get("path")) for s in stats})}
    for key, name in (
        ("numWrites", "records"),
        ("numInserts", "inserts"),
        ("numUpdateWrites", "updates"),
        ("numDeletes", "deletes"),
        ("totalWriteBytes", "bytes"),
    ):
        out[name] = sum(int(s.get(key) or 0) for s in stats)
    return out


def _pending(table: HudiTable) -> list[HudiInstant]:
    """Instants not completed yet, one per instant (its furthest state): the
    requested and inflight files of a completed instant are not pending."""
    timeline = table.get_timeline()
    done = {(i.timestamp, i.action) for i in timeline.instants}
    rank = {"REQUESTED": 0, "INFLIGHT": 1}
    latest: dict[tuple[str, str], HudiInstant] = {}
    for i in timeline.pending:
        key = (i.timestamp, i.action)
        if key in done:
            continue
        if key not in latest or rank.get(i.state, 0) > rank.get(latest[key].state, 0):
            latest[key] = i
    return list(latest.values())


def timeline(table: HudiTable, *, limit: int | None, include_pending: bool) -> Report:
    instants = list(table.get_timeline().instants)
    if include_pending:
        instants += _pending(table)
    instants.sort(key=lambda i: (i.timestamp, i.action), reverse=True)  # newest first, as hudi-cli shows commits
    total = len(instants)
    shown = instants if not limit else instants[:limit]
    entries = []
    for i in shown:
        entries.append(
            {
                "instant": i.timestamp,
                "action": i.action,
                "state": i.state,
                "requested": i.timestamp,
                "completed": i.completion_timestamp if i.is_completed else None,
                "written": _commit_stats(table, i),
            }
        )
    rows = []
    for e in entries:
        w = e["written"] or {}
        completed = e["completed"] or ("(not recorded)" if e["state"] == "COMPLETED" else "")
        rows.append(
            (
                e["requested"],
                completed,
                e["action"],
                e["state"],
                human_count(w.get("files")),
                human_count(w.get("records")),
                human_count(w.get("inserts")),
                human_count(w.get("updates")),
                human_count(w.get("deletes")),
                human_bytes(w.get("bytes")),
            )
        )
    header = ["requested", "completed", "action", "state", "files", "records", "inserts", "updates", "deletes", "bytes"]
    text = aligned(header, rows, right=range(4, 10)) if rows else "no instants on the active timeline"
    if len(shown) < total:
        text += f"\n({len(shown)} newest of {total} instants; --limit 0 shows all)"
    data = {"uri": table.base_url, "total": total, "instants": entries}
    return Report(data, text)


# -- slices ----------------------------------------------------------------------


def _slice_data(s: HudiFileSlice) -> dict[str, Any]:
    return {
        "file_id": s.file_id,
        "base_instant": s.commit_time or s.creation_instant_time,
        "base_file": s.base_file_name or None,
        "base_file_size": s.base_file_size,
        "log_files": [{"name": n, "size": int(z)} for n, z in zip(s.log_file_names, s.log_file_sizes)],
        "total_size": s.total_size_bytes(),
    }


def _by_partition(slices: list[HudiFileSlice]) -> dict[str, list[HudiFileSlice]]:
    groups: dict[str, list[HudiFileSlice]] = defaultdict(list)
    for s in sorted(slices, key=lambda s: (s.partition_path, s.file_id)):
        groups[s.partition_path].append(s)
    return dict(groups)


def slices(table: HudiTable, options: HudiReadOptions) -> Report:
    found = table.get_file_slices(options)
    groups = _by_partition(found)
    partitions = [
        {
            "partition": p,
            "file_slices": [_slice_data(s) for s in group],
            "total_size": sum(s.total_size_bytes() for s in group),
        }
        for p, group in groups.items()
    ]
    latest = table.get_timeline().latest_data_instant()
    as_of = options.as_of_timestamp() or (latest.timestamp if latest else None)
    data = {
        "uri": table.base_url,
        "as_of": as_of,
        "partitions": partitions,
        "total": {
            "partitions": len(groups),
            "file_slices": len(found),
            "base_files": sum(1 for s in found if s.base_file_name),
            "log_files": sum(len(s.log_file_names) for s in found),
            "size": sum(s.total_size_bytes() for s in found),
        },
    }
    lines: list[str] = []
    for part in partitions:
        name = part["partition"] or "(non-partitioned)"
        n = len(part["file_slices"])
        lines.append(f"{name}  ({n} file slice{'s' * (n != 1)}, {human_bytes(part['total_size'])})")
        for fs in part["file_slices"]:
            lines.append(f"  {fs['file_id']}  @ {fs['base_instant']}")
            files = [("base", fs["base_file"] or "(none: log files only)", fs["base_file_size"])]
            files += [("log", lf["name"], lf["size"]) for lf in fs["log_files"]]
            width = max(len(f[1]) for f in files)
            lines += [f"    {kind:<4}  {name.ljust(width)}  {human_bytes(size):>10}" for kind, name, size in files]
    t = data["total"]
    lines.append(
        f"{t['file_slices']} file slices in {t['partitions']} partitions as of {as_of or '-'}: "
        f"{t['base_files']} base files, {t['log_files']} log files, {human_bytes(t['size'])}"
    )
    return Report(data, "\n".join(lines))


# -- explain ---------------------------------------------------------------------


def explain(table: HudiTable, options: HudiReadOptions) -> Report:
    plan = table.explain(options)
    data = {"uri": table.base_url, "filters": [list(f) for f in options.filters], **asdict(plan)}
    data["file_slices"] = plan.file_slices
    return Report(data, str(plan))


# -- stats -----------------------------------------------------------------------


def stats(table: HudiTable, options: HudiReadOptions) -> Report:
    """``compute_table_stats`` (the metadata table's estimate), and per
    partition what the planned read would cover: file slices, bytes on disk,
    rows (exact where the footers decide them) and estimated in-memory bytes."""
    estimate = table.compute_table_stats(options)
    plan = table.plan(options)
    estimates = plan.estimate() if plan.slices else []
    per: dict[str, dict[str, Any]] = {}
    for s, e in zip(plan.slices, estimates):
        p = per.setdefault(
            s.partition_path,
            {
                "partition": s.partition_path,
                "file_slices": 0,
                "size_on_disk": 0,
                "rows": 0,
                "rows_exact": True,
                "bytes": 0,
            },
        )
        p["file_slices"] += 1
        p["size_on_disk"] += s.total_size_bytes()
        p["bytes"] += e.size_bytes
        if e.num_rows is None:
            # Log records merge into this slice: its base file's count is the estimate.
            p["rows"] += s.num_records
            p["rows_exact"] = False
        else:
            p["rows"] += e.num_rows
    partitions = [per[k] for k in sorted(per)]
    total = {
        "partitions": len(partitions),
        "file_slices": sum(p["file_slices"] for p in partitions),
        "size_on_disk": sum(p["size_on_disk"] for p in partitions),
        "rows": sum(p["rows"] for p in partitions),
        "rows_exact": all(p["rows_exact"] for p in partitions),
        "bytes": sum(p["bytes"] for p in partitions),
    }
    data = {
        "uri": table.base_url,
        "table_stats": None if estimate is None else {"rows": estimate[0], "bytes": estimate[1]},
        "partitions": partitions,
        "total": total,
    }

    def rows_text(p: dict[str, Any]) -> str:
        return human_count(p["rows"]) + ("" if p["rows_exact"] else " ~")

    rows = [
        (
            p["partition"] or "(non-partitioned)",
            human_count(p["file_slices"]),
            human_bytes(p["size_on_disk"]),
            rows_text(p),
            human_bytes(p["bytes"]),
        )
        for p in partitions
    ]
    rows.append(
        (
            "total",
            human_count(total["file_slices"]),
            human_bytes(total["size_on_disk"]),
            rows_text(total),
            human_bytes(total["bytes"]),
        )
    )
    if estimate is None:
        head = "compute_table_stats: none (needs a metadata table listing Parquet base files, and a snapshot read)"
    else:
        rows_, bytes_ = estimate
        head = f"compute_table_stats: {human_count(rows_)} rows, {human_bytes(bytes_)} (metadata table estimate)"
    text = head + "\n" + aligned(["partition", "file slices", "on disk", "rows", "in memory"], rows, right=range(1, 5))
    if not total["rows_exact"]:
        text += "\n~ base file rows only: log records merge into these slices when read"
    return Report(data, text)
