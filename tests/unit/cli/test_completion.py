"""berth completion bash: a script bash accepts, completing commands, flags and their choices."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from berth.cli import build_parser
from berth.completion_cmd import script


def _complete(tmp_path: Path, *words: str) -> list[str]:
    """What bash's completion function offers after `berth WORDS...` (the last word being typed)."""
    path = tmp_path / "berth.bash"
    path.write_text(script(build_parser()))
    line = " ".join(f"'{w}'" for w in ("berth", *words))
    probe = (f"source {path}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; _berth; "
             'printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    return sorted(done.stdout.split())


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_commands_flags_and_choices_complete(tmp_path: Path) -> None:
    assert _complete(tmp_path, "ge") == ["generate", "get"]
    assert {"-A", "--all-namespaces", "-l", "--selector"} <= set(_complete(tmp_path, "get", "-"))
    assert _complete(tmp_path, "get", "-o", "") == ["json", "name", "table", "wide", "yaml"]
    assert "pods" in _complete(tmp_path, "get", "po") and "poddisruptionbudgets" in _complete(tmp_path, "get", "po")
    assert _complete(tmp_path, "apply", "--validate", "w") == ["warn"]
