"""`berth apply -f FILE…`: validate and submit Nodes, Pods, PriorityClasses and PodDisruptionBudgets.

Each file goes to the gateway in one request, so it is validated as a whole and either all of it is
published or none of it. Large files show an upload progress line on stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from tqdm import tqdm

from .client import Gateway, add_cluster_args, add_validate_arg, field_validation, find_cluster, read_input, run_guarded

PROGRESS_FROM_BYTES = 1 << 20


RESOURCE = {"PriorityClass": "priorityclass.scheduling.k8s.io", "PodDisruptionBudget": "poddisruptionbudget.policy"}
"""How kubectl names a kind in its lines (its resource and API group); pods and nodes are core."""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("apply", help="submit objects to the cluster",
                                                description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("-f", "--filename", dest="files", action="append", required=True, metavar="FILE",
                   help="YAML (multi-document) or JSON; repeatable; '-' reads standard input")
    add_validate_arg(p)
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    gateway = Gateway(find_cluster(args), timeout=600)
    bodies = [(path, read_input(path)) for path in args.files]  # read all first: a missing file sends nothing
    for path, body in bodies:
        started = time.monotonic()
        bar = tqdm(total=len(body), desc=f"{path}: uploading", unit="B", unit_scale=True, unit_divisor=1024,
                   file=sys.stderr, disable=len(body) < PROGRESS_FROM_BYTES, leave=False)

        def progress(sent: int, total: int) -> None:
            bar.update(sent - bar.n)

        try:
            result = gateway.request("POST", f"/apis/berth.dev/v1/apply?fieldValidation={field_validation(args)}",
                                     body, content_type="application/yaml",
                                     progress=None if bar.disable else progress)
        finally:
            bar.close()
        for item in result["items"]:  # kubectl's lines: pod/web-1 created
            print(f"{RESOURCE.get(item['kind'], item['kind'].lower())}/{item['name']} {item['action']}")
        counts = ", ".join(f"{n} {action}" for action, n in sorted(result["counts"].items()))
        print(f"{path}: {len(result['items'])} objects ({counts}); {result['published']} events published "
              f"in {time.monotonic() - started:.2f}s", file=sys.stderr)
    return 0
