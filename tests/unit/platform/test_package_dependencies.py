"""Which of shared/'s packages may import which: the layers of docs/architecture.md, checked.

A package importing one that its entry does not list fails the build: a new dependency is a choice
made here, in review, not one that slips in."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"

ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "settings": {"errors"},
    "memory": set(),
    "model": {"errors"},
    "framework": {"model"},
    "queue": {"framework", "model"},
    "indexes": {"framework", "model"},
    "plugins": {"framework", "model", "preemption"},
    "profiles": {"errors", "framework", "model", "plugins"},
    "preemption": {"framework", "indexes", "model", "scheduler"},
    "extender": {"framework", "model"},
    "scheduler": {"framework", "indexes", "model", "queue", "extender"},
    "simulation": {"extender", "framework", "model", "profiles", "queue", "scheduler"},
    "protocol": {"cluster", "events", "framework", "indexes", "model", "preemption", "scheduler"},
    "events": {"errors", "model"},
    "cluster": {"events", "framework", "model", "queue"},
    "binding": {"events", "framework", "model", "plugins"},
    "projection": {"events", "model"},
    "replay": {"cluster", "errors", "events", "framework", "model", "preemption", "profiles", "projection",
               "protocol", "scheduler"},
    "workloads": {"model"},
    "ports": {"events", "projection"},
    "adapters": {"errors", "events", "extender", "framework", "model", "ports", "preemption", "projection", "replay",
                 "settings"},
}


def _package(path: Path) -> str:
    return path.relative_to(SHARED).parts[0].removesuffix(".py")


def _imported_modules(path: Path) -> list[str]:
    rel = path.relative_to(SHARED.parent).with_suffix("").parts
    modules: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-1])[:len(rel) - node.level]
                modules.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return modules


def _imported_packages(path: Path) -> set[str]:
    found: set[str] = set()
    for module in _imported_modules(path):
        parts = module.split(".")
        if parts[0] == "shared" and len(parts) > 1:
            found.add(parts[1])
    return found


MODULES = sorted(p for p in SHARED.rglob("*.py") if p.parent != SHARED or p.name != "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SHARED)))
def test_a_module_imports_only_what_its_package_may(path: Path) -> None:
    own = _package(path)
    assert own in ALLOWED, f"shared/{own} is a new package: give it an entry in ALLOWED"
    extra = _imported_packages(path) - ALLOWED[own] - {own}
    assert not extra, f"shared/{own} may not import shared/{', shared/'.join(sorted(extra))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SHARED)))
def test_the_core_imports_no_service_cli_or_test(path: Path) -> None:
    above = {m.split(".")[0] for m in _imported_modules(path)} & {"services", "berth", "tests", "tools"}
    assert not above, f"shared/ may not import {', '.join(sorted(above))}"


def test_the_packages_form_layers() -> None:
    """No cycle: each package can be put below every one it imports."""
    placed: list[str] = []
    waiting = dict(ALLOWED)
    while waiting:
        ready = sorted(name for name, uses in waiting.items() if uses <= set(placed))
        assert ready, f"a cycle among shared/{', shared/'.join(sorted(waiting))}"
        placed += ready
        for name in ready:
            del waiting[name]


def test_the_framework_knows_no_plugin_and_the_core_does_no_io() -> None:
    assert "plugins" not in ALLOWED["framework"] and "profiles" not in ALLOWED["framework"]
    assert all("adapters" not in allowed for name, allowed in ALLOWED.items() if name != "adapters")
