"""The Arrow memory pool the reader allocates its buffers from.

A read that keeps its whole result takes fresh memory for all of it. With
Arrow's default pool on Linux (mimalloc), where the kernel backs fresh memory
with transparent huge pages, that memory sometimes costs more system time than
the read's own work (the kernel clearing huge pages), and the same read's
time depends on what the process ran before it. jemalloc faults fresh
memory in page by page, at a steady cost, so the reader allocates from it
where pyarrow has it. Only the reader's own allocations move: the process's
default pool, which the caller's code uses, stays as it is.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import TYPE_CHECKING

from hudi_ray.core.exceptions import HudiConfigError
from hudi_ray.core.lazy import lazy_module

if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = lazy_module("pyarrow")

# Names a pool the reader uses instead of its choice: jemalloc, mimalloc, system or default.
POOL_ENV = "HUDI_RAY_MEMORY_POOL"

# The configuration Arrow's jemalloc reads once, when pyarrow loads. With Arrow's own, a
# freed large extent goes back to the kernel at once (a forced purge), so the next slice's
# buffers fault in again page by page; only a decay of -1 turns that purge off. Freed pages
# are then reused, and later lent to the kernel (MADV_FREE), which takes them back when it
# needs memory.
JEMALLOC_ENV = "JE_ARROW_MALLOC_CONF"
JEMALLOC_CONF = "muzzy_decay_ms:-1"


def configure_jemalloc() -> bool:
    """Give Arrow's jemalloc ``JEMALLOC_CONF`` when the reader will allocate from it (no
    other pool named, for the reader or the process) and nothing decided otherwise: the
    process set no configuration, and pyarrow has not loaded (jemalloc has read its
    configuration then). Whether it did. The environment carries it to the processes this
    one starts (a local Ray's workers, a local Spark's)."""
    if "pyarrow" in sys.modules or JEMALLOC_ENV in os.environ:
        return False
    named = os.environ.get(POOL_ENV, "").strip().lower() or "jemalloc"
    if named != "jemalloc" or os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return False
    os.environ[JEMALLOC_ENV] = JEMALLOC_CONF
    return True


# Lambdas, so that naming the pools does not import pyarrow.
_POOLS = {
    "jemalloc": lambda: pa.jemalloc_memory_pool(),
    "mimalloc": lambda: pa.mimalloc_memory_pool(),
    "system": lambda: pa.system_memory_pool(),
    "default": lambda: pa.default_memory_pool(),
}


@functools.cache
def reader_pool() -> pa.MemoryPool:
    """The pool named by ``HUDI_RAY_MEMORY_POOL``; without it, the process's
    default pool where the process chose one (``ARROW_DEFAULT_MEMORY_POOL``),
    else jemalloc where this pyarrow has it."""
    named = os.environ.get(POOL_ENV, "").strip().lower()
    if named:
        if named not in _POOLS:
            raise HudiConfigError(f"{POOL_ENV}={named!r} is not a memory pool: use one of {', '.join(_POOLS)}")
        try:
            return _POOLS[named]()
        except NotImplementedError as exc:
            raise HudiConfigError(f"{POOL_ENV}={named!r}: this pyarrow is built without it") from exc
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return pa.default_memory_pool()
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:
        return pa.default_memory_pool()
