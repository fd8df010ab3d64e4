"""Errors of the test kit's table writer.

Every error is a :class:`TestkitError`, so callers can tell a refused write from
a bug. Each also derives from the builtin error the writer raised before it had
its own classes (``ValueError``, ``TypeError``, ...), so existing ``except`` and
``pytest.raises`` clauses keep working.
"""

from __future__ import annotations


class TestkitError(Exception):
    """Base class of every error the test kit raises."""

    # Not a test class, whatever its name says.
    __test__ = False


class WriteSpecError(TestkitError, ValueError):
    """A table spec or writer option is invalid (table version, merge mode, block format, sizes, ...)."""


class SchemaError(TestkitError, ValueError):
    """Columns do not fit the table: missing or unknown columns, invalid names, a changed schema."""


class UnsupportedTypeError(TestkitError, TypeError):
    """An Arrow type has no Hudi representation (Avro type, partition path form, ordering wrapper)."""


class InvalidRowsError(TestkitError, ValueError):
    """The rows of a write are refused: null keys, nulls in non-nullable columns, keys in the wrong place."""


class InstantTimeError(TestkitError, ValueError):
    """An instant time is malformed, or a requested commit time is not after the latest on the timeline."""


class TableExistsError(TestkitError, FileExistsError):
    """A table (or metadata table) already exists where one is to be created."""


class TableNotFoundError(TestkitError, FileNotFoundError):
    """No Hudi table at the path a writer is to open."""


class UnsupportedTableError(TestkitError, ValueError):
    """A table exists but is one this writer cannot write (type, key layout, metadata table layout)."""


class TableStateError(TestkitError, RuntimeError):
    """The stored table contradicts what the writer relies on, such as a key stored in two file groups."""


class ArchiveError(TestkitError, ValueError):
    """Instants cannot be archived as asked: too few completed ones, a pending instant in the way,
    an action the archive format has no entry for, or instant metadata that cannot be converted."""


class HFileWriteError(TestkitError, ValueError):
    """An HFile cannot be written as asked: bad settings, rows out of order or too long."""
