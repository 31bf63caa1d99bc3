"""The pure core stays pure: outside shared/adapters/, shared/ imports no I/O library, reaches no
socket, process, file or standard stream, and starts no event loop or thread."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"
FORBIDDEN = {
    "aiokafka", "sqlalchemy", "asyncpg", "aiohttp", "alembic", "psutil", "prometheus_client",
    "socket", "ssl", "select", "selectors", "http", "urllib", "subprocess", "shutil", "tempfile",
    "asyncio", "threading", "signal", "os",
}
FILE_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "mkdir", "touch"}
STREAMS = {"stdin", "stdout", "stderr"}
EXCEPTIONS: dict[str, tuple[set[str], str]] = {
    "settings.py": ({"os"}, "reads the environment: the one place the services' settings come from"),
    "model/api_fields.py": ({"read_text"}, "reads the schema shipped inside the package, as an import reads code"),
    "events/ids.py": ({"os"}, "seeds its id generator from the system's randomness, as uuid4 does for each id"),
}
PURE = sorted(p for p in SHARED.rglob("*.py") if "adapters" not in p.relative_to(SHARED).parts)


def _io(path: Path) -> set[str]:
    """The I/O modules `path` imports and the file and stream operations it calls."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names} & FORBIDDEN
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module.split(".")[0]} & FORBIDDEN
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            found |= {name} & FILE_CALLS
        elif isinstance(node, ast.Attribute) and node.attr in STREAMS and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            found.add(f"sys.{node.attr}")
    return found


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(SHARED)))
def test_pure_module_does_no_io(path: Path) -> None:
    allowed, _why = EXCEPTIONS.get(str(path.relative_to(SHARED)), (set(), ""))
    assert not _io(path) - allowed


def test_the_check_sees_each_kind_of_io(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import socket\nfrom urllib import request\nimport sys\n"
                     "def f(p):\n    open(p)\n    p.read_bytes()\n    return sys.stdin.read()\n")
    assert _io(probe) == {"socket", "urllib", "open", "read_bytes", "sys.stdin"}
