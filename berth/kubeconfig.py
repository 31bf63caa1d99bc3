"""The kubeconfig `berth up` writes beside berth.json, so kubectl and client libraries reach the
cluster's gateway with its admin token, trusting the cluster's own certificate authority."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .files import write_atomically

FILE = "kubeconfig"
NAME = "berth"


def kubeconfig(server: str, token: str, ca_file: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": NAME, "cluster": {"server": server, "certificate-authority": ca_file}}],
        "users": [{"name": f"{NAME}-admin", "user": {"token": token}}],
        "contexts": [{"name": NAME, "context": {"cluster": NAME, "user": f"{NAME}-admin", "namespace": "default"}}],
        "current-context": NAME,
    }


def write_kubeconfig(path: Path, server: str, token: str, ca_file: str) -> None:
    """Readable by its owner only: it holds the admin token."""
    write_atomically(path, yaml.safe_dump(kubeconfig(server, token, ca_file), sort_keys=False).encode())
