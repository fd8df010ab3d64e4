"""Every error the reader raises, one module so callers can catch precisely.

``HudiCoreError`` is the common base, named as in hudi-rs so that code catching
it keeps working after switching the import.
"""

from __future__ import annotations


class HudiCoreError(Exception):
    """Base class of every hudi-ray error."""


class HudiConfigError(HudiCoreError, ValueError):
    """A config or option value is missing, malformed or out of range."""


class HudiTableNotFoundError(HudiCoreError, FileNotFoundError):
    """The base path does not hold a Hudi table (no ``.hoodie`` or properties)."""


class HudiStorageError(HudiCoreError, OSError):
    """Listing or reading from storage failed."""


class HudiFileNotFoundError(HudiStorageError, FileNotFoundError):
    """A file the table refers to does not exist in storage."""


class HudiHistoryError(HudiFileNotFoundError):
    """An incremental read cannot be answered: the instants of its range were
    archived off the active timeline, or files its commits wrote were cleaned.
    The message names the missing instant or file; the read option
    ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` turns it
    into a full snapshot read of the range's end instead."""


class HudiUnsafePathError(HudiCoreError):
    """A path taken from table metadata or config leads outside the table's base URI."""


class HudiCorruptFileError(HudiCoreError):
    """A file exists but its content cannot be decoded (truncated, corrupt)."""


class HudiTimelineError(HudiCoreError):
    """The timeline or an instant's metadata cannot be read."""


class HudiTimestampError(HudiConfigError):
    """A timestamp option is in none of the accepted formats."""


class HudiSchemaError(HudiCoreError, ValueError):
    """A schema cannot be resolved, a column named by the caller is unknown, or
    data does not fit its declared type.

    Each of these is a bad value (a schema, a column name, a column's data), so
    it is also a ``ValueError``: engines that read Hudi through this package
    (Ray's datasource tests among them) expect one for data they cannot convert.
    """


class HudiFilterError(HudiSchemaError):
    """A filter is malformed, names an unknown column, or has an unparseable value."""


class HudiCheckpointError(HudiCoreError):
    """An incremental job's checkpoint cannot be read, written or moved."""


class HudiConcurrentRunError(HudiCheckpointError):
    """Another run holds the lease of the same checkpoint."""


class HudiUnsupportedError(HudiCoreError, NotImplementedError):
    """The table or read uses a feature this reader does not support."""


class HudiMissingExtraError(HudiUnsupportedError, ModuleNotFoundError):
    """A feature needs an optional dependency that is not installed; the message
    names the extra to install (``pip install 'hudi-ray[ray]'``).

    Also a ``ModuleNotFoundError``, so code that caught the bare import error
    (to fall back, or to skip a test) keeps working."""

    def __init__(self, message: str, module: str) -> None:
        super().__init__(message)
        self.name = module  # as ModuleNotFoundError.name: the module that is missing


__all__ = [
    "HudiCheckpointError",
    "HudiConcurrentRunError",
    "HudiConfigError",
    "HudiCoreError",
    "HudiCorruptFileError",
    "HudiFileNotFoundError",
    "HudiFilterError",
    "HudiHistoryError",
    "HudiMissingExtraError",
    "HudiSchemaError",
    "HudiStorageError",
    "HudiTableNotFoundError",
    "HudiTimelineError",
    "HudiTimestampError",
    "HudiUnsafePathError",
    "HudiUnsupportedError",
]
