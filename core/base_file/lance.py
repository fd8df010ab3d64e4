"""Read Lance base files (one Lance file each, format v2) through pylance.

pylance is an optional extra: it is imported on the first Lance read, and a
table with Lance base files fails then, naming the file and the extra to
install. Lance reads go to storage through Lance's own object store client
(local paths directly, object stores by URI with the table's storage
options), so only paths the ``Storage`` resolved are ever opened.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hudi_ray.core.exceptions import (
    HudiCoreError,
    HudiCorruptFileError,
    HudiFileNotFoundError,
    HudiStorageError,
    HudiUnsupportedError,
)
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage import StorageLike, redact_text

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

INSTALL_HINT = "pip install 'hudi-ray[lance]'"

# Storage schemes as Lance's object store names them; Lance reads no other remote store.
_LANCE_SCHEMES = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gs",
    "gcs": "gs",
    "az": "az",
    "azure": "az",
    # Lance names Azure Blob Storage ``az`` and takes ``abfss``, but not ``abfs``.
    "abfs": "az",
    "abfss": "abfss",
}

# Lance reports a file it cannot decode with these words; anything else from
# an OSError is taken for the storage failing.
_DECODE_WORDS = ("invalid user input", "corrupt", "magic", "decode", "projection", "schema", "protobuf")


def _lance_file(uri: str) -> ModuleType:
    try:
        return importlib.import_module("lance.file")
    except ImportError as exc:
        raise HudiUnsupportedError(
            f"Cannot read Lance base file {uri}: pylance is not installed ({INSTALL_HINT})"
        ) from exc


def _is_panic(exc: BaseException) -> bool:
    # pylance surfaces a Rust panic (e.g. on a file too short to hold a footer)
    # as pyo3's PanicException, a BaseException that cannot be imported by name.
    return type(exc).__name__ == "PanicException"


@contextmanager
def _errors(uri: str) -> Iterator[None]:
    try:
        yield
    except HudiCoreError:
        raise
    except FileNotFoundError as exc:
        raise HudiFileNotFoundError(f"Base file not found: {uri}") from exc
    except (pa.ArrowException, MemoryError) as exc:
        raise HudiCorruptFileError(f"Cannot decode Lance base file {uri}: {redact_text(str(exc))}") from exc
    except OSError as exc:
        msg = redact_text(str(exc))
        if "not found" in msg.lower():
            raise HudiFileNotFoundError(f"Base file not found: {uri}") from exc
        if any(w in msg.lower() for w in _DECODE_WORDS):
            raise HudiCorruptFileError(f"Cannot decode Lance base file {uri}: {msg}") from exc
        raise HudiStorageError(f"Cannot read base file {uri}: {msg}") from exc
    except (ValueError, RuntimeError) as exc:
        msg = redact_text(str(exc))
        if msg.startswith("Not found"):
            raise HudiFileNotFoundError(f"Base file not found: {uri}") from exc
        raise HudiCorruptFileError(f"Cannot decode Lance base file {uri}: {msg}") from exc
    except BaseException as exc:
        if not _is_panic(exc):
            raise
        raise HudiCorruptFileError(f"Cannot decode Lance base file {uri}: {redact_text(str(exc))}") from exc


def lance_location(storage: StorageLike, rel: str) -> tuple[str, dict[str, str] | None]:
    """The path or URI Lance opens for ``rel``, and the storage options it takes."""
    path = storage.full_path(rel)  # refuses a path outside the table
    if storage.is_local:
        return path, None
    scheme = _LANCE_SCHEMES.get(storage.protocol.lower())
    if scheme is None:
        raise HudiUnsupportedError(
            f"Cannot read Lance base file {storage.uri(rel)}: Lance does not read from {storage.protocol}:// storage"
        )
    return f"{scheme}://{path}", _lance_options(storage.options)


def _lance_options(options: Mapping[str, str]) -> dict[str, str]:
    # The options are object_store keys already (as hudi-rs takes them); only
    # the HTTP switch goes by another name in Lance's client config.
    out = {k: str(v) for k, v in options.items()}
    if "aws_allow_http" in out and "allow_http" not in out:
        out["allow_http"] = out["aws_allow_http"]
    # An http endpoint is allowed by its scheme, as hudi_ray's own clients take it.
    endpoints = ("google_base_url", "base_url", "azure_storage_endpoint", "azure_endpoint", "endpoint")
    if any(out.get(k, "").startswith("http://") for k in endpoints):
        out.setdefault("allow_http", "true")
    return out


@dataclass(frozen=True)
class LanceFileInfo:
    """What a Lance file's footer tells without decoding data: its schema, rows and
    on-disk bytes per top-level column (None where columns do not map one to one)."""

    schema: pa.Schema
    num_rows: int
    data_bytes: int
    column_bytes: Mapping[str, int] | None


class LanceReader:
    """Reads one table's Lance base files by path relative to the base URI."""

    def __init__(self, storage: StorageLike) -> None:
        self.storage = storage

    def _open(self, rel: str, columns: Sequence[str] | None = None) -> Any:
        module = _lance_file(self.storage.uri(rel))
        path, options = lance_location(self.storage, rel)
        return module.LanceFileReader(path, storage_options=options, columns=None if columns is None else list(columns))

    def schema(self, rel: str) -> pa.Schema:
        with _errors(self.storage.uri(rel)):
            return self._open(rel).metadata().schema

    def num_rows(self, rel: str) -> int:
        with _errors(self.storage.uri(rel)):
            return int(self._open(rel).num_rows())

    def info(self, rel: str) -> LanceFileInfo:
        with _errors(self.storage.uri(rel)):
            reader = self._open(rel)
            md = reader.metadata()
            stats = reader.file_statistics().columns
            names = md.schema.names
            # Nested fields take a column per leaf: only a flat file maps columns to fields.
            per_column = {n: int(s.size_bytes) for n, s in zip(names, stats)} if len(stats) == len(names) else None
            return LanceFileInfo(md.schema, int(md.num_rows), int(md.num_data_bytes), per_column)

    def _projected(self, rel: str, columns: Sequence[str] | None) -> tuple[Any, pa.Schema]:
        """A reader of the ``columns`` the file has (None: all) and their schema.

        A Lance reader takes its projection when opened and fails on a name the
        file lacks, so the file is opened once for its schema and again only
        when that projection drops columns."""
        reader = self._open(rel)
        schema = reader.metadata().schema
        if columns is None:
            return reader, schema
        present = set(schema.names)
        cols = list(dict.fromkeys(c for c in columns if c in present))
        projected = pa.schema([schema.field(c) for c in cols])
        if cols == schema.names:
            return reader, projected
        return (self._open(rel, cols) if cols else reader), projected

    def read(self, rel: str, columns: Sequence[str] | None = None, *, encoded: bool = False) -> pa.Table:
        """The file's ``columns`` (None: all); names the file lacks are left out.
        Columns come as the file stores them, ``encoded`` or not."""
        with _errors(self.storage.uri(rel)):
            reader, schema = self._projected(rel, columns)
            if not schema.names:
                return _no_columns(reader.num_rows())
            return reader.read_all(batch_size=_READ_BATCH_ROWS).to_table()

    def iter_tables(self, rel: str, columns: Sequence[str] | None, batch_size: int) -> Iterator[pa.Table]:
        """The file in tables of at most ``batch_size`` rows (one empty table for
        a file without rows): memory stays a few batches whatever the file's size."""
        with _errors(self.storage.uri(rel)):
            reader, schema = self._projected(rel, columns)
            if not schema.names:
                yield _no_columns(reader.num_rows())
                return
            produced = False
            for batch in reader.read_all(batch_size=max(1, batch_size)).to_batches():
                produced = True
                yield pa.Table.from_batches([batch])
            if not produced:
                yield schema.empty_table()


# Rows per batch Lance decodes for a whole-file read; the batches are joined after.
_READ_BATCH_ROWS = 64 * 1024


def _no_columns(num_rows: int) -> pa.Table:
    # Lance decodes no rows without a column; the row count comes from the footer.
    return pa.table({"_": pa.nulls(num_rows)}).drop_columns(["_"])
