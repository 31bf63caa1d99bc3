"""Common base for Kubernetes object Structs: frozen, camelCase on the wire, defaults omitted."""

from __future__ import annotations

import msgspec


class K8s(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True, gc=False):
    """A Kubernetes API structure; unknown fields in the input are ignored, as the API server's
    clients do. Subclasses repeat `frozen=True, kw_only=True`: msgspec inherits both, but type
    checkers read only what a class statement says.

    Instances are not tracked by the garbage collector (`gc=False`, inherited too): every service
    holds every pod and node it has read, and each full collection walked them all. A frozen tree
    decoded from the wire cannot hold a reference cycle, and nothing mutates its lists."""
