"""Loading on first use: a package's public names (PEP 562), and the heavy libraries
(pyarrow, numpy, fastavro) a module names, so that planning a read pays only for
what it runs."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["LazyModule", "exported", "lazy_module", "lazy_package"]


def exported(namespace: dict[str, Any], exports: Mapping[str, str], name: str) -> Any:
    """``name`` from its module in ``exports``, kept in ``namespace`` (the package's
    globals) so that later uses skip this; for a package's ``__getattr__``."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value


def lazy_package(
    namespace: dict[str, Any], exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` giving the names ``exports`` lists per
    module, each module imported when one of its names is first read. Importing one
    submodule then runs no other: planning a read does not load the reader's decoders."""
    where = {name: module for module, names in exports.items() for name in names}

    def getattr_(name: str) -> Any:
        return exported(namespace, where, name)

    def dir_() -> list[str]:
        return sorted({*namespace, *where})

    return getattr_, dir_


class LazyModule:
    """Stands for module ``name``, imported on the first attribute read. Each attribute is
    then kept on this object, so later reads cost what a module attribute read costs.
    Modules stand behind one of these under ``if not TYPE_CHECKING``; compiled (numba)
    kernels, which resolve globals when compiled, import their modules directly."""

    def __init__(self, name: str) -> None:
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self.__dict__["_lazy_name"]), attr)
        self.__dict__[attr] = value
        return value

    def __repr__(self) -> str:
        return f"<module {self.__dict__['_lazy_name']!r}, imported on first use>"


def lazy_module(name: str) -> Any:
    """A ``LazyModule`` for ``name``."""
    return LazyModule(name)
