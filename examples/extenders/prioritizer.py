"""A prioritize extender: nodes named in `preferred` (or labelled `extender.example/preferred`)
score 10, the others 0; the scheduler multiplies by the extender's weight and by 10.
Configure it with `prioritizeVerb: prioritize`, `weight: 1`.

    python examples/extenders/prioritizer.py --port 8890
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _base import ExtenderServer, main, node_labels, node_names

PREFERRED_LABEL = "extender.example/preferred"
MAX_EXTENDER_PRIORITY = 10


def make_server(host: str = "127.0.0.1", port: int = 0, preferred: Collection[str] = (),
                delay: float = 0.0) -> ExtenderServer:
    def prioritize(args: dict[str, Any]) -> list[dict[str, Any]]:
        labels = node_labels(args)
        return [
            {"Host": name,
             "Score": MAX_EXTENDER_PRIORITY if name in preferred or PREFERRED_LABEL in labels.get(name, {}) else 0}
            for name in node_names(args)
        ]
    return ExtenderServer((host, port), {"prioritize": prioritize}, delay)


if __name__ == "__main__":
    main(make_server, "prioritizing scheduler extender")
