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


class HudiUnsafePathError(HudiCoreError):
    """A path taken from table metadata or config leads outside the table's base URI."""


class HudiCorruptFileError(HudiCoreError):
    """A file exists but its content cannot be decoded (truncated, corrupt)."""


class HudiTimelineError(HudiCoreError):
    """The timeline or an instant's metadata cannot be read."""


class HudiTimestampError(HudiConfigError):
    """A timestamp option is in none of the accepted formats."""


class HudiSchemaError(HudiCoreError):
    """A schema cannot be resolved, or a column named by the caller is unknown."""


class HudiFilterError(HudiSchemaError):
    """A filter is malformed, names an unknown column, or has an unparseable value."""


class HudiUnsupportedError(HudiCoreError, NotImplementedError):
    """The table or read uses a feature this reader does not support."""


__all__ = [
    "HudiConfigError",
    "HudiCoreError",
    "HudiCorruptFileError",
    "HudiFileNotFoundError",
    "HudiFilterError",
    "HudiSchemaError",
    "HudiStorageError",
    "HudiTableNotFoundError",
    "HudiTimelineError",
    "HudiTimestampError",
    "HudiUnsafePathError",
    "HudiUnsupportedError",
]
