"""Loading the compiled (numba) kernels, on first use only.

``import hudi_ray`` does not import numba: a module of kernels is imported
when a read first needs it, and numba then loads the machine code it cached
on an earlier run, or compiles and caches it. Where the cache lives is
numba's choice, in this order: ``NUMBA_CACHE_DIR`` when set; else the
``__pycache__`` directory beside the kernels' source, when writable; else
the user's cache directory (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``).
A read-only installation thus caches per user. When none of these can be
written, the kernels are cached under the temporary directory instead of
failing the read.
"""

from __future__ import annotations

import importlib
import os
import threading
from types import ModuleType
from typing import Literal, TypedDict

from hudi_ray.core.exceptions import HudiMissingExtraError

_lock = threading.Lock()


class JitOptions(TypedDict):
    cache: bool
    nogil: bool
    boundscheck: bool
    error_model: Literal["python", "numpy"]


# Every kernel: cached machine code, no GIL, no bounds checks (the kernels
# check offsets themselves), and numpy's division semantics (no exceptions).
JIT_OPTIONS: JitOptions = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}


def load(module: str) -> ModuleType:
    """The kernels module ``module`` (a full name), imported once per process."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name not in ("numba", "llvmlite"):
            raise
        # A required dependency, but an environment made before it was can lack it.
        raise HudiMissingExtraError(
            f"Reading log files needs numba ({exc.name} is not installed): pip install 'numba>=0.60'", exc.name
        ) from exc
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
    # No cache location numba would choose is writable: use one under the
    # temporary directory, for this process's compiled code and later ones.
    with _lock:
        from numba.core import config

        if not config.CACHE_DIR:  # type: ignore[attr-defined]  # numba sets its config at runtime
            import tempfile

            config.CACHE_DIR = os.path.join(tempfile.gettempdir(), f"hudi-ray-numba-{_user()}")  # type: ignore[attr-defined]
        return importlib.import_module(module)


# Every module of kernels, for ``warm``.
KERNELS = (
    "hudi_ray.core.log_file.avro_kernels",
    "hudi_ray.core.merge.key_kernels",
    "hudi_ray.core.timeline.write_kernels",
    "hudi_ray.core.bloom.kernels",
    "hudi_ray.core.base_file.footer_kernels",
)


def warm() -> None:
    """Compile and cache every kernel now (``./dev`` does, after installing),
    so that no read pays for compiling them; loading them from the cache is quick."""
    for module in KERNELS:
        load(module)


def _user() -> str:
    try:
        return str(os.getuid())
    except AttributeError:  # pragma: no cover - no uids on Windows
        return os.environ.get("USERNAME", "user")
