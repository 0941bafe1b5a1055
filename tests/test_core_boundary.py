"""The core stays platform-neutral: nothing under bot/core imports a platform, the database driver or the model."""

from __future__ import annotations

import ast
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
