"""Resource-name classes as upstream's v1helper / schedutil define them.

Only extended resources can be ignored by NodeResourcesFit's ignoredResources(Groups); only
scalar resources (extended, hugepages-*, prefixed native, attachable-volumes-*) are compared.
"""

from __future__ import annotations

import re
from functools import lru_cache

from shared.framework.resource import CPU, EPHEMERAL_STORAGE, HUGEPAGES_PREFIX, MEMORY, PODS

DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_qualified_name(value: str) -> bool:
    """validation.IsQualifiedName: an optional DNS-subdomain prefix, '/', and a name of <= 63 chars."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    else:
        return False
    return bool(name) and len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def is_prefixed_native_resource(name: str) -> bool:
    return DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


@lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return is_qualified_name(REQUESTS_PREFIX + name)


@lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    if name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS):
        return False
    return (
        is_extended_resource_name(name)
        or name.startswith(HUGEPAGES_PREFIX)
        or is_prefixed_native_resource(name)
        or name.startswith(ATTACHABLE_VOLUMES_PREFIX)
    )
