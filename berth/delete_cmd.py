"""`berth delete pod|node NAME...`, `berth delete -f FILE`, `berth delete pods --all [-A] [-l SEL]`:
delete objects through the gateway, as kubectl does: every object is tried, one that is missing is
reported and the others are still deleted, and the exit status is 1 when any failed."""

from __future__ import annotations

import argparse
import sys
from typing import Any
from urllib.parse import quote

from shared.errors import InvalidInput

from .client import (
    EXIT_ERROR,
    EXIT_INVALID_INPUT,
    CliError,
    Gateway,
    add_cluster_args,
    find_cluster,
    read_input,
    run_guarded,
)

KINDS = {"pod": "pod", "pods": "pod", "po": "pod", "node": "node", "nodes": "node", "no": "node"}


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("delete", help="delete pods or nodes (by name, from a file, or all)",
                                                description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("kind", nargs="?", choices=sorted(KINDS), help="pod(s) or node(s); not with -f")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="the objects' names")
    p.add_argument("-f", "--filename", dest="files", action="append", default=[], metavar="FILE",
                   help="delete the pods and nodes a file names (YAML or JSON, as for apply); repeatable")
    p.add_argument("--all", action="store_true", help="every object of the kind (in the namespace, or -A)")
    p.add_argument("-l", "--selector", default="", metavar="SELECTOR", help="the objects whose labels match")
    p.add_argument("-n", "--namespace", default="default", help="the pods' namespace (default: default)")
    p.add_argument("-A", "--all-namespaces", action="store_true", help="with --all or -l: pods of every namespace")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    targets = _targets(args)
    gateway = Gateway(find_cluster(args))
    if args.all or args.selector:
        targets += _listed(gateway, args)
    failed = False
    for kind, namespace, name in targets:
        path = (f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(name)}" if kind == "pod"
                else f"/api/v1/nodes/{quote(name)}")
        try:
            gateway.delete(path)
        except CliError as exc:  # kubectl goes on with the rest and fails at the end
            print(str(exc), file=sys.stderr)
            failed = True
            continue
        print(f'{kind} "{name}" deleted')
    return EXIT_ERROR if failed else 0


def _targets(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    if args.files and (args.kind or args.names):
        raise CliError("give either -f FILE or a kind and names, not both", EXIT_INVALID_INPUT)
    if args.files:
        return [t for path in args.files for t in _file_targets(path)]
    if not args.kind:
        raise CliError("say what to delete: pod|node NAME..., -f FILE, or pods --all", EXIT_INVALID_INPUT)
    if not args.names and not (args.all or args.selector):
        raise CliError("resource(s) were provided, but no name was specified (give NAMEs, --all or -l)",
                       EXIT_INVALID_INPUT)
    kind = KINDS[args.kind]
    return [(kind, args.namespace, name) for name in args.names]


def _file_targets(path: str) -> list[tuple[str, str, str]]:
    from shared.model.loader import decode_text, parse_documents

    data = read_input(path)
    try:
        docs = parse_documents(decode_text(data, path), path)
    except InvalidInput as exc:
        raise CliError(str(exc), EXIT_INVALID_INPUT) from None
    out = []
    for i, doc in enumerate(docs):
        kind, meta = doc.get("kind"), doc.get("metadata") or {}
        if kind not in ("Pod", "Node") or not meta.get("name"):
            raise CliError(f"{path}: document {i}: only pods and nodes with a metadata.name can be deleted, "
                           f"got {kind or 'no kind'}", EXIT_INVALID_INPUT)
        out.append((kind.lower(), meta.get("namespace") or "default", meta["name"]))
    return out


def _listed(gateway: Gateway, args: argparse.Namespace) -> list[tuple[str, str, str]]:
    kind = KINDS[args.kind] if args.kind else "pod"
    if kind == "pod":
        path = "/api/v1/pods" if args.all_namespaces else f"/api/v1/namespaces/{quote(args.namespace)}/pods"
    else:
        path = "/api/v1/nodes"
    if args.selector:
        path += f"?labelSelector={quote(args.selector)}"
    items = gateway.get(path)["items"]
    return [(kind, i["metadata"].get("namespace") or "default", i["metadata"]["name"]) for i in items]
