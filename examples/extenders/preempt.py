"""A preempt-verb extender: it vetoes preemption on the nodes named in `protected` and lets the
scheduler's victims stand elsewhere, answering with victims' UIDs (MetaVictims), as upstream
expects. Configure it with `preemptVerb: preempt` (it serves `filter` as a pass-through too).

    python examples/extenders/preempt.py --port 8891
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _base import ExtenderServer, main, node_names


def make_server(host: str = "127.0.0.1", port: int = 0, protected: Collection[str] = (),
                delay: float = 0.0) -> ExtenderServer:
    def preempt(args: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        meta = args.get("NodeNameToMetaVictims")
        if meta is not None:
            for node, victims in meta.items():
                if node not in protected:
                    out[node] = victims
        for node, victims in (args.get("NodeNameToVictims") or {}).items():
            if node not in protected:
                out[node] = {
                    "Pods": [{"UID": p["metadata"].get("uid", "")} for p in victims.get("Pods") or []],
                    "NumPDBViolations": victims.get("NumPDBViolations", 0),
                }
        return {"NodeNameToMetaVictims": out}

    def filter_(args: dict[str, Any]) -> dict[str, Any]:
        if args.get("NodeNames") is not None:
            return {"NodeNames": node_names(args)}
        return {"Nodes": args.get("Nodes")}
    return ExtenderServer((host, port), {"preempt": preempt, "filter": filter_}, delay)


if __name__ == "__main__":
    main(make_server, "preemption-vetoing scheduler extender")
