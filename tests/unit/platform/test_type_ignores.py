"""Every `# type: ignore` names the error it silences and says why, on its line, and a file that
turns error codes off (`# mypy: disable-error-code=...`) says why on the line above: mypy (with
warn_unused_ignores, over shared/, services/, berth/ and tests/) checks that a marker still
silences something, this that a reader learns why."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TREES = ("shared", "services", "berth", "tools", "tests", "examples")
MARKER = re.compile(r"(?<!`)#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")
FILE_OFF = re.compile(r"^#\s*mypy:\s*disable-error-code")


def test_each_type_ignore_names_its_error_and_its_reason() -> None:
    bare: list[str] = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            lines = path.read_text().splitlines()
            for number, line in enumerate(lines, 1):
                if FILE_OFF.match(line) and not (number > 1 and lines[number - 2].lstrip().startswith("#")):
                    bare.append(f"{path.relative_to(ROOT)}:{number}")
                found = MARKER.search(line)
                if found is None:
                    continue
                reason = found["rest"].strip().removeprefix("#").strip()
                if not found["codes"] or not reason:
                    bare.append(f"{path.relative_to(ROOT)}:{number}")
    assert not bare, f"a type: ignore without its error code or reason: {', '.join(bare[:10])}"
