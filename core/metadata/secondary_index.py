"""Secondary indexes of the metadata table: which record keys hold a column value.

A secondary index lives in the metadata-table partition ``secondary_index_<name>``
(the name ``CREATE INDEX`` gave it) and is declared in the data table's index
definitions file (``hoodie.table.index.defs.path``) with type ``secondary_index``
and one source field. Each record's key is the column value and a record key,
each escaped and joined by ``$``; its payload says only whether the pair was
deleted. Escaping puts ``\\`` before ``\\``, ``$`` and NUL; a null value is stored
as a lone NUL character. Values are stored as Java renders them: a string as it
is, an integer in decimal, a date as its day number since the epoch.

Keys are routed to file groups with Java's ``String.hashCode``: version 2
indexes (table version 9) hash the escaped value and its separator, so one value
sits in one file group; version 1 indexes hash the whole key, so a value may sit
in any file group.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ray.core.config import TableConfig
from hudi_ray.core.config.table_config import DEFAULT_INDEX_DEFS_PATH, INDEX_DEFS_KEY, SECONDARY_INDEX_PREFIX
from hudi_ray.core.exceptions import HudiCorruptFileError, HudiFileNotFoundError, HudiFilterError
from hudi_ray.core.expr.arrow import cast_value
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage import Storage
from hudi_ray.core.storage.paths import metadata_path_problem

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

SEPARATOR = "$"
ESCAPE = "\\"
NULL_VALUE = "\x00"
_EPOCH = dt.date(1970, 1, 1)


@dataclass(frozen=True)
class SecondaryIndexDefinition:
    """One declared secondary index: its metadata-table partition and column."""

    partition: str
    column: str
    routed_by_value: bool  # version 2: a value's records sit in the one file group its prefix hashes to


def escape(text: str) -> str:
    out = []
    for c in text:
        if c in (ESCAPE, SEPARATOR, NULL_VALUE):
            out.append(ESCAPE)
        out.append(c)
    return "".join(out)


def unescape(text: str) -> str:
    out = []
    pending = False
    for c in text:
        if pending:
            out.append(c)
            pending = False
        elif c == ESCAPE:
            pending = True
        else:
            out.append(c)
    return "".join(out)


def value_prefix(value: str) -> str:
    """The key prefix of every record of ``value`` (a stored value text)."""
    return escape(value) + SEPARATOR


def record_key_of(key: str, prefix: str) -> str:
    """The record key of an index key that starts with ``prefix``."""
    return unescape(key[len(prefix) :])


def split_key(key: str) -> tuple[str, str]:
    """(escaped value, record key) of an index key; HudiCorruptFileError when it has no separator."""
    pending = False
    for i, c in enumerate(key):
        if pending:
            pending = False
        elif c == ESCAPE:
            pending = True
        elif c == SEPARATOR:
            return key[:i], unescape(key[i + 1 :])
    raise HudiCorruptFileError(f"Secondary index key {key!r} has no unescaped {SEPARATOR!r} separator")


def stored_value(text: str, dtype: pa.DataType, field: str) -> str | None:
    """A filter value (its text) as the index stores it for a column of ``dtype``; None
    when the type's stored form is not reproduced here (the index is then not used)."""
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return text
    try:
        if pa.types.is_integer(dtype):
            return str(cast_value(text, dtype, field).as_py())
        if pa.types.is_date32(dtype):
            day = cast_value(text, dtype, field).as_py()
            return str((day - _EPOCH).days) if day is not None else None
    except HudiFilterError:
        return None
    return None


def definitions(storage: Storage, config: TableConfig) -> dict[str, SecondaryIndexDefinition]:
    """The secondary indexes the index definitions file declares, by metadata-table
    partition; only identity indexes over one top-level column are taken. A missing
    file declares none; an unreadable or malformed one raises HudiCorruptFileError."""
    rel = (config.get(INDEX_DEFS_KEY) or DEFAULT_INDEX_DEFS_PATH).strip()
    problem = metadata_path_problem(rel)
    where = storage.uri(rel) if problem is None else repr(rel)
    if problem is not None:
        raise HudiCorruptFileError(f"Index definitions path {where} {problem}")
    try:
        raw = storage.read_bytes(rel)
    except HudiFileNotFoundError:
        return {}
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HudiCorruptFileError(f"Index definitions {where} are not JSON: {exc}") from exc
    defs = doc.get("indexDefinitions") if isinstance(doc, Mapping) else None
    if not isinstance(defs, Mapping):
        raise HudiCorruptFileError(f"Index definitions {where} have no 'indexDefinitions' object")
    out: dict[str, SecondaryIndexDefinition] = {}
    for name, entry in defs.items():
        if not isinstance(entry, Mapping) or entry.get("indexType") != "secondary_index":
            continue
        if not isinstance(name, str) or not name.startswith(SECONDARY_INDEX_PREFIX):
            continue
        fields = entry.get("sourceFields")
        function = entry.get("indexFunction") or "identity"
        if function != "identity" or not isinstance(fields, list) or len(fields) != 1:
            continue
        column = fields[0]
        if not isinstance(column, str) or "." in column:
            continue
        # Any other version is searched in every file group, which is right whatever its routing.
        by_value = str(entry.get("version") or "").upper() == "V2"
        out[name] = SecondaryIndexDefinition(name, column, by_value)
    return out
