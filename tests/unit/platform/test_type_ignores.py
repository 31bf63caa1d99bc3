"""Every `# type: ignore` names the error it silences and says why, on its line: mypy (with
warn_unused_ignores) checks that it still silences something, this that a reader learns why."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TREES = ("shared", "services", "berth", "tools", "tests")
MARKER = re.compile(r"(?<!`)#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def test_each_type_ignore_names_its_error_and_its_reason() -> None:
    bare: list[str] = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                found = MARKER.search(line)
                if found is None:
                    continue
                reason = found["rest"].strip().removeprefix("#").strip()
                if not found["codes"] or not reason:
                    bare.append(f"{path.relative_to(ROOT)}:{number}")
    assert not bare, f"a type: ignore without its error code or reason: {', '.join(bare[:10])}"
