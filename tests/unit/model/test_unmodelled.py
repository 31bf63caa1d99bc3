"""What kube-scheduler acts on and Berth does not model is said in a warning, never dropped silently."""

from __future__ import annotations

import pytest

from shared.model.loader import load_objects
from shared.model.unmodelled import CLAIMS, RESIZED, VOLUMES


def _pod(**extra: object) -> dict[str, object]:
    spec = {"containers": [{"name": "c"}], **{k: v for k, v in extra.items() if k != "status"}}
    doc: dict[str, object] = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "web"}, "spec": spec}
    if "status" in extra:
        doc["status"] = extra["status"]
    return doc


@pytest.mark.parametrize(("doc", "warning"), [
    (_pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-0"}]), CLAIMS),
    (_pod(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]), VOLUMES),
    (_pod(volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]), VOLUMES),
    (_pod(status={"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "2"}}]}), RESIZED),
], ids=["resource claims", "persistent volume claim", "ephemeral volume", "resized container"])
def test_each_unmodelled_feature_is_warned_about(doc: dict[str, object], warning: str) -> None:
    assert load_objects([("input", doc)]).warnings == [f"Pod web: {warning}"]


def test_volumes_without_claims_are_fine() -> None:
    doc = _pod(volumes=[{"name": "cfg", "configMap": {"name": "cfg"}}, {"name": "tmp", "emptyDir": {}}])
    assert load_objects([("input", doc)]).warnings == []
