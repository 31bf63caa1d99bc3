"""Loads the example extender servers (examples/extenders/) and runs them on free local ports."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "extenders"


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"berth_example_extender_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def running(name: str, **options: Any) -> Iterator[Any]:
    """The example `name` serving on 127.0.0.1 (a free port) for the duration of the block."""
    server = example(name).make_server("127.0.0.1", 0, **options).start()
    try:
        yield server
    finally:
        server.stop()
