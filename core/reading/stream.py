"""``HudiRecordBatchStream``: a single-use iterator of record batches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")


class HudiRecordBatchStream:
    """Yields ``pyarrow.RecordBatch`` values; iterating consumes it."""

    def __init__(self, batches: Iterable[pa.RecordBatch], schema: pa.Schema | None = None) -> None:
        self._it: Iterator[pa.RecordBatch] = iter(batches)
        self.schema = schema

    def __iter__(self) -> HudiRecordBatchStream:
        return self

    def __next__(self) -> pa.RecordBatch:
        return next(self._it)

    def close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> HudiRecordBatchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
