"""The layering the README describes, checked on the source: the core never
imports Ray or the engine layers, its packages import each other one way only,
and ``hudi_ray/`` uses only the core's public names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.support import REPO

CORE = REPO / "core"
LAYERS = [
    "storage",
    "config",
    "util",
    "schema",
    "expr",
    "base_file",
    "log_file",
    "bloom",
    "timeline",
    "partition",
    "file_group",
    "merge",
    "hfile",
    "metadata",
    "incremental",
    "meta_client",
    "query",
    "planning",
    "reading",
    "table",
]
ENGINE = REPO / "hudi_ray"


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".venv" not in p.parts)


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module, imported names, line) of every import in a file, lazy ones included."""
    out: list[tuple[str, list[str], int]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names], node.lineno))
    return out


def _core_package(path: Path) -> str:
    rel = path.relative_to(CORE).parts
    return rel[0] if len(rel) > 1 else ""


def test_core_imports_no_engine() -> None:
    bad = [
        f"{p.relative_to(REPO)}:{line} imports {mod}"
        for p in _modules(CORE)
        for mod, _, line in _imports(p)
        if mod.split(".")[0] in ("ray", "raydp", "pyspark")
        or (mod.startswith("hudi_ray") and not mod.startswith("hudi_ray.core"))
    ]
    assert not bad, bad


def test_core_packages_import_one_way() -> None:
    graph: dict[str, set[str]] = {}
    for p in _modules(CORE):
        src = _core_package(p)
        for mod, _, _ in _imports(p):
            parts = mod.split(".")
            if parts[:2] == ["hudi_ray", "core"] and len(parts) > 2 and src and parts[2] != src:
                graph.setdefault(src, set()).add(parts[2])
    seen: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        if seen.get(node) == 1:
            pytest.fail(f"core packages import each other in a cycle: {' -> '.join([*path, node])}")
        if seen.get(node) == 2:
            return
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*path, node])
        seen[node] = 2

    for node in sorted(graph):
        visit(node, [])
    assert graph, "no imports between core packages found: the check is not looking at the code"
    # The order the README's architecture table lists them in: each imports only earlier ones.
    for i, package in enumerate(LAYERS):
        later = graph.get(package, set()) & set(LAYERS[i + 1 :])
        assert not later, f"core/{package} imports the later layer(s) {sorted(later)}"
    assert set(graph) <= set(LAYERS), f"packages missing from LAYERS: {sorted(set(graph) - set(LAYERS))}"


def test_engine_uses_only_public_core_names() -> None:
    bad: list[str] = []
    for p in _modules(ENGINE):
        for mod, names, line in _imports(p):
            if not mod.startswith("hudi_ray.core"):
                continue
            where = f"{p.relative_to(REPO)}:{line}"
            parts = mod.split(".")
            if len(parts) > 3:
                bad.append(f"{where} imports the submodule {mod}; import from {'.'.join(parts[:3])}")
                continue
            public = {*getattr(importlib.import_module(mod), "__all__", ()), "*", "__all__"}
            bad += [f"{where} imports {mod}.{n}, not in its __all__" for n in names if n not in public]
    assert not bad, bad


def _private_names_of_the_core() -> set[str]:
    """Every ``_name`` the core defines: functions, classes, attributes, fields."""
    names: set[str] = set()
    for p in _modules(CORE):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_engine_touches_no_private_attribute_of_the_core() -> None:
    """``x._name`` in ``hudi_ray/``, where ``_name`` is private to the core, reaches
    into a core object (``self``/``cls`` are the engine's own objects)."""
    private = _private_names_of_the_core()
    assert "_context" in private, "the core's private names were not collected"
    bad: list[str] = []
    for p in _modules(ENGINE):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if not isinstance(node, ast.Attribute) or node.attr not in private:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            bad.append(f"{p.relative_to(REPO)}:{node.lineno} uses .{node.attr}")
    assert not bad, bad


def test_ray_internals_only_in_ray_compat() -> None:
    """A Ray upgrade changes one file: only ``hudi_ray/ray_compat.py`` imports
    Ray's private modules."""
    bad = [
        f"{p.relative_to(REPO)}:{line} imports {mod}"
        for p in _modules(ENGINE)
        if p.name != "ray_compat.py"
        for mod, _, line in _imports(p)
        if mod.startswith("ray") and "._" in mod
    ]
    assert not bad, bad
