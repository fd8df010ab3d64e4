"""Argument parsing, the commands' dispatch, and errors as one line with an exit code."""

from __future__ import annotations

import argparse
import logging
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO
from urllib.parse import urlparse

from hudi_ray.cli import inspect, read
from hudi_ray.cli.output import to_json
from hudi_ray.cli.progress import is_terminal
from hudi_ray.core.exceptions import (
    HudiConfigError,
    HudiCoreError,
    HudiSchemaError,
    HudiTableNotFoundError,
    HudiUnsafePathError,
)
from hudi_ray.core.storage import redact_text
from hudi_ray.core.table import HudiQueryType, HudiReadOptions, HudiTable, HudiTableBuilder, ReadSpec

PROG = "hudi-ray"
OK, FAILED, BAD_INPUT = 0, 1, 2

# "column op value": the operators HudiReadOptions takes, longest first so
# that "<=" is not read as "<", and "NOT IN" not as "IN".
_FILTER = re.compile(
    r"^\s*(?P<field>[^\s=!<>]+)\s*(?P<op>not\s+in\b|in\b|==|!=|<>|<=|>=|=|<|>)\s*(?P<value>.*?)\s*$",
    re.IGNORECASE,
)


class UsageError(Exception):
    """The command line itself is wrong (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors raised (one line, exit code 2) instead of
    printing the usage and exiting the interpreter."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# -- parsing values --------------------------------------------------------------


def parse_filter(text: str) -> tuple[str, str, str]:
    """``"city = sf"``, ``"fare>=10"``, ``"city IN sf,nyc"`` (or ``IN (sf, nyc)``) as a filter tuple."""
    m = _FILTER.match(text)
    if not m or not m.group("value"):
        raise UsageError(
            f"Bad --filter {text!r}: expected 'column op value' with op one of =, !=, <, <=, >, >=, IN, NOT IN"
        )
    field, op, value = m.group("field"), " ".join(m.group("op").upper().split()), m.group("value")
    if op in ("IN", "NOT IN") and value.startswith("(") and value.endswith(")"):
        value = value[1:-1]
    # Quotes around a value are the shell user's, not the data's.
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return field, op, value


def parse_key_value(text: str, flag: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"Bad {flag} {text!r}: expected key=value")
    return key.strip(), value


def parse_columns(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def check_uri(uri: str) -> None:
    """A URI whose scheme fsspec does not know is bad input, found before any I/O."""
    if not uri.strip():
        raise UsageError("The table URI is empty")
    scheme = urlparse(uri).scheme
    if not scheme or len(scheme) == 1 or scheme.lower() == "file":
        return  # a local path: fsspec need not load
    import fsspec

    if scheme.lower() not in fsspec.available_protocols():
        raise UsageError(f"Unknown storage scheme {scheme!r} in {redact_text(uri)!r}")


# -- the parser ------------------------------------------------------------------


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("uri", help="the table's base URI: a local path, file://, s3://, ...")
    p.add_argument(
        "-s",
        "--storage-option",
        action="append",
        default=[],
        metavar="K=V",
        help="a storage option (aws_region=us-west-2, aws_endpoint_url=...); repeatable",
    )
    p.add_argument(
        "--hudi-option", action="append", default=[], metavar="K=V", help="a hoodie.* config for the table; repeatable"
    )
    p.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    p.add_argument("--debug", action="store_true", help="show debug logs, and the traceback of an error")


def _read_options(p: argparse.ArgumentParser, *, incremental: bool = True, columns: bool = False) -> None:
    p.add_argument(
        "-f",
        "--filter",
        action="append",
        default=[],
        metavar="EXPR",
        help="a filter such as 'city = sf', 'fare >= 10', 'city IN sf,nyc'; repeatable (all must hold)",
    )
    p.add_argument("--as-of", metavar="TIME", help="time travel: the table as of this instant time")
    if incremental:
        p.add_argument("--start", metavar="TIME", help="incremental: changes completed after this time")
        p.add_argument("--end", metavar="TIME", help="incremental: changes completed up to this time")
    if columns:
        p.add_argument(
            "-c", "--columns", action="append", metavar="A,B", help="the columns to read (comma-separated; repeatable)"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Look at an Apache Hudi table: its configs, timeline, files and rows.",
        epilog="Exit codes: 0 done, 2 bad input (URI, filter, column, option), 1 any other error.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("info", help="name, type, version, keys, partitioning, merge mode, metadata table, schema")
    _common(p)

    p = sub.add_parser("timeline", help="instants with their times, and the files and records each commit wrote")
    _common(p)
    p.add_argument("-n", "--limit", type=int, default=20, help="newest instants to show (0: all; default 20)")
    p.add_argument("--all", action="store_true", help="also requested and inflight instants")

    p = sub.add_parser("slices", help="file slices per partition: base file, log files, sizes")
    _common(p)
    _read_options(p, incremental=False)

    p = sub.add_parser("explain", help="what each planning stage kept (partitions, file slices) for a read")
    _common(p)
    _read_options(p)

    p = sub.add_parser("stats", help="compute_table_stats, and rows and bytes per partition")
    _common(p)
    _read_options(p, incremental=False)

    p = sub.add_parser("read", help="read rows: an aligned table, CSV, JSON lines or a Parquet file")
    _common(p)
    _read_options(p, columns=True)
    p.add_argument(
        "-n",
        "--limit",
        type=int,
        help=f"at most this many rows (the table format shows {read.TABLE_DEFAULT_LIMIT} by default)",
    )
    p.add_argument("--format", choices=read.FORMATS, help="output format (default: from --out's extension, else table)")
    p.add_argument("-o", "--out", metavar="PATH", help="write to this file (.parquet, .csv, .jsonl, .json)")
    p.add_argument(
        "--ray", action="store_true", help="read through hudi_ray.read_hudi on Ray (RAY_ADDRESS or a local Ray)"
    )
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress", dest="progress", action="store_true", default=None, help="always show the progress bar"
    )
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")
    return parser


# -- running ---------------------------------------------------------------------


def _hudi_options(args: argparse.Namespace) -> dict[str, str]:
    return dict(parse_key_value(kv, "--hudi-option") for kv in args.hudi_option)


def _open(args: argparse.Namespace) -> HudiTable:
    check_uri(args.uri)
    builder = HudiTableBuilder.from_base_uri(args.uri)
    builder.with_storage_options(dict(parse_key_value(kv, "--storage-option") for kv in args.storage_option))
    # The table keeps its own configs; the read's (hoodie.read.*) go with each read.
    builder.with_hudi_options(_hudi_options(args))
    return builder.build()


def _spec(args: argparse.Namespace) -> ReadSpec:
    """The command line's read settings, checked by the core as every engine's
    are: a read, here or on Ray, takes every one of them from this record."""
    start, end = getattr(args, "start", None), getattr(args, "end", None)
    as_of = getattr(args, "as_of", None)
    if as_of and (start or end):
        raise UsageError("--as-of is for snapshot reads; --start/--end for incremental ones: give one or the other")
    return ReadSpec.of(
        args.uri,
        # --start/--end make the read incremental; otherwise a --hudi-option may.
        query_type=HudiQueryType.Incremental if start or end else None,
        filters=[parse_filter(f) for f in getattr(args, "filter", [])],
        hudi_options=_hudi_options(args),
        columns=parse_columns(getattr(args, "columns", None)),
        as_of_timestamp=as_of or None,
        start_timestamp=start or None,
        end_timestamp=end or None,
    )


def _options(spec: ReadSpec) -> HudiReadOptions:
    if spec.columns is None:
        return spec.read_options
    return spec.read_options.with_projection(spec.columns)


def _check_columns(table: HudiTable, options: HudiReadOptions) -> None:
    """Unknown filter columns are reported by planning; check them (and the
    read's columns) up front so that every command names them the same way."""
    if table.has_schema():  # else nothing to check against, and nothing to read
        table.check_columns(options)


def _run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, is_tty: Callable[[TextIO], bool]) -> int:
    table = _open(args)
    command = args.command
    if command == "info":
        report = inspect.info(table)
    elif command == "timeline":
        if args.limit < 0:
            raise UsageError("--limit must be 0 (all) or more")
        report = inspect.timeline(table, limit=args.limit or None, include_pending=args.all)
    else:
        spec = _spec(args)
        options = _options(spec)
        _check_columns(table, options)
        if command == "slices":
            report = inspect.slices(table, options)
        elif command == "explain":
            report = inspect.explain(table, options)
        elif command == "stats":
            report = inspect.stats(table, options)
        else:
            return _read(args, spec, table, options, stdout, stderr, is_tty)
    stdout.write((to_json(report.data) if args.json else report.text) + "\n")
    return OK


def _read(
    args: argparse.Namespace,
    spec: ReadSpec,
    table: HudiTable,
    options: HudiReadOptions,
    stdout: TextIO,
    stderr: TextIO,
    is_tty: Callable[[TextIO], bool],
) -> int:
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    fmt = args.format or ("json" if args.json and args.out is None else None)
    request = read.ReadCommand(
        options=options,
        table_options=spec.table_options,
        limit=args.limit,
        fmt=read.output_format(fmt, args.out),
        out=args.out,
        progress=args.progress,
    )
    done = read.run(args.uri, table, request, use_ray=args.ray, stdout=stdout, stderr=stderr, is_terminal=is_tty)
    if args.out is not None:
        stderr.write(read.summary(done) + "\n")
    return OK


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return redact_text(text)


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, (UsageError, HudiTableNotFoundError, HudiConfigError, HudiSchemaError, HudiUnsafePathError)):
        return BAD_INPUT
    return FAILED


def _configure_logging(debug: bool, stderr: TextIO) -> None:
    handler = logging.StreamHandler(stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("hudi_ray").setLevel(logging.DEBUG if debug else logging.WARNING)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    is_tty: Callable[[TextIO], bool] = is_terminal,
) -> int:
    """Run ``hudi-ray`` with ``argv`` (default: the process's); returns the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        err.write(f"{PROG}: error: {exc}\n")
        return BAD_INPUT
    except SystemExit as exc:  # --help, --version: argparse printed them
        return int(exc.code or 0) if isinstance(exc.code, int) else OK
    _configure_logging(debug, err)
    try:
        return _run(args, out, err, is_tty)
    except KeyboardInterrupt:
        err.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader of our output (head, less) went away: not an error of ours.
        return OK
    except (HudiCoreError, UsageError, OSError, ValueError) as exc:
        if debug:
            traceback.print_exc(file=err)
        err.write(f"{PROG}: error: {_one_line(exc)}\n")
        return _exit_code(exc)
    except Exception as exc:
        if debug:
            traceback.print_exc(file=err)
        err.write(f"{PROG}: error: {type(exc).__name__}: {_one_line(exc)}\n")
        return FAILED
