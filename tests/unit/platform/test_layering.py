"""The pure core stays pure: outside shared/adapters/, shared/ imports no I/O library."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"
FORBIDDEN = {"aiokafka", "sqlalchemy", "asyncpg", "aiohttp", "alembic", "psutil", "prometheus_client"}
PURE = sorted(p for p in SHARED.rglob("*.py") if "adapters" not in p.relative_to(SHARED).parts)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(SHARED)))
def test_pure_module_imports_no_io_library(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN
