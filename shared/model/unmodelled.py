"""Parts of a pod that kube-scheduler reads and Berth does not model: said in a warning rather than
dropped in silence (see docs/conformance.md for each feature gate)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLAIMS = ("spec.resourceClaims: dynamic resources (DynamicResourceAllocation) are not allocated; the pod is "
          "placed as if it claimed none")
VOLUMES = ("spec.volumes: volume claims are not bound (VolumeBinding, VolumeZone, VolumeRestrictions, "
           "NodeVolumeLimits); the pod is placed as if it had no persistent or ephemeral volume")
RESIZED = ("status.containerStatuses: resized container resources (InPlacePodVerticalScaling) are not read; "
           "the pod counts its spec's requests")


def unmodelled(doc: Mapping[str, Any]) -> list[str]:
    """What of this pod document Berth ignores although kube-scheduler would act on it."""
    spec_doc, status_doc = doc.get("spec"), doc.get("status")
    spec: Mapping[str, Any] = spec_doc if isinstance(spec_doc, dict) else {}
    status: Mapping[str, Any] = status_doc if isinstance(status_doc, dict) else {}
    out: list[str] = []
    if spec.get("resourceClaims"):
        out.append(CLAIMS)
    volumes = spec.get("volumes") or []
    if any(isinstance(v, dict) and ("persistentVolumeClaim" in v or "ephemeral" in v) for v in volumes):
        out.append(VOLUMES)
    statuses = status.get("containerStatuses") or []
    if any(isinstance(s, dict) and ("allocatedResources" in s or "resources" in s) for s in statuses):
        out.append(RESIZED)
    return out
