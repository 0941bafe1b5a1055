"""The core stays platform-neutral: nothing under bot/core imports a platform, the database driver or the model."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "bot" / "core"
FORBIDDEN = ("discord", "slack_bolt", "slack_sdk", "aiosqlite", "sqlite3", "torch", "detoxify", "transformers")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


CORE_FILES = sorted(CORE.rglob("*.py"))


def test_core_has_modules():
    """The boundary check actually sees the core's modules."""
    assert len(CORE_FILES) >= 8


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_nothing_platform_specific(path):
    """No core module imports discord, slack, aiosqlite, torch or detoxify."""
    bad = _imports(path) & set(FORBIDDEN)
    assert not bad, f"{path} imports {sorted(bad)}"


# ---------------------------------------------------------------- the package's import graph
# Checked with the standard library (ast) rather than import-linter: it needs no extra dependency, sees imports
# inside functions too (the old bot.cli <-> bot.jobs cycle was one), and runs in the ordinary test suite.

ROOT = CORE.parents[1]
PACKAGES = ("bot", "cogs")
#: What the core may never import (directly, at any depth of its own modules).
CORE_MAY_NOT_IMPORT = ("bot.adapters", "bot.store", "bot.scoring", "bot.jobs", "bot.cli", "bot.runtime",
                       "bot.settings", "bot.eval", "bot.training", "cogs", "bench")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """``{module: modules of bot/ and cogs/ it imports}`` (imports anywhere in the file, relative ones resolved;
    ``from a import b`` counts as ``a.b`` when that is a module, else ``a``); ``bench`` shows up as a target.
    Parsed once per test session (every file of the package: seconds on two cores) and shared: never change it."""
    modules = _package_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join([*pkg, base] if base else pkg)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                while t and t not in modules and t.split(".")[0] != "bench":
                    t = t.rpartition(".")[0]
                if t and t != name:
                    edges.add(t.split(".")[0] if t.startswith("bench") else t)
        graph[name] = edges
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_import_graph_sees_the_package():
    """The graph covers the package and records a known edge (the CLI imports the runtime through its jobs)."""
    g = import_graph()
    assert "bot.runtime" in g and "bot.jobs.scan" in g
    assert "bot.runtime" in g["bot.jobs.scan"]


def test_find_cycles_reports_a_cycle():
    """The cycle finder itself reports a two-module cycle and nothing for a chain."""
    assert find_cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycles():
    """No two modules of bot/ or cogs/ import each other, directly or through others (function-level imports too)."""
    assert find_cycles(import_graph()) == []


def test_core_imports_no_outer_layer():
    """bot.core never imports an adapter, the store, scoring, jobs, the CLI, the runtime or settings."""
    bad = {(m, t) for m, ts in import_graph().items() if m.startswith("bot.core") for t in ts
           if any(t == p or t.startswith(p + ".") for p in CORE_MAY_NOT_IMPORT)}
    assert not bad, sorted(bad)


def test_package_never_imports_bench():
    """Nothing in the shipped package imports the repository's bench/ scripts."""
    assert not {m for m, ts in import_graph().items() if "bench" in ts}
