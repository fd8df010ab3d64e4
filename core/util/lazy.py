"""Public names of a package, each loaded from its module on first use (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def exported(namespace: dict[str, Any], exports: Mapping[str, str], name: str) -> Any:
    """``name`` from its module in ``exports``, kept in ``namespace`` (the package's
    globals) so that later uses skip this; for a package's ``__getattr__``."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value
