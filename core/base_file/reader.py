"""The one place a base file's format is chosen: by its file name's extension."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from hudi_ray.core.base_file.lance import LanceReader
from hudi_ray.core.base_file.parquet import FooterCache, ParquetReader
from hudi_ray.core.exceptions import HudiUnsupportedError
from hudi_ray.core.lazy import lazy_module
from hudi_ray.core.storage import StorageLike

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

PARQUET = "parquet"
LANCE = "lance"


class BaseFileReader(Protocol):
    """What the file group reader needs of a base file, by path relative to the base URI."""

    def schema(self, rel: str) -> pa.Schema: ...

    def num_rows(self, rel: str) -> int: ...

    def read(self, rel: str, columns: Sequence[str] | None = None, *, encoded: bool = False) -> pa.Table:
        """The file's ``columns`` (None: all); names the file lacks are left out.
        With ``encoded``, text columns may come as dictionary arrays of their type."""
        ...

    def iter_tables(self, rel: str, columns: Sequence[str] | None, batch_size: int) -> Iterator[pa.Table]:
        """The file in bounded pieces (at least one, empty for a file without rows)."""
        ...


def base_file_format(rel: str) -> str:
    """The format of a base file, from its extension (lower case, no dot)."""
    name = rel.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def is_parquet(rel: str) -> bool:
    return base_file_format(rel) == PARQUET


def base_file_reader(storage: StorageLike, rel: str, footers: FooterCache | None = None) -> BaseFileReader:
    """The reader for ``rel``'s format; a format this reader lacks is unsupported, not corrupt."""
    fmt = base_file_format(rel)
    if fmt == PARQUET:
        return ParquetReader(storage, footers)
    if fmt == LANCE:
        return LanceReader(storage)
    raise HudiUnsupportedError(
        f"Cannot read base file {storage.uri(rel)}: {fmt.upper() or 'extension-less'} base files are not supported"
    )
