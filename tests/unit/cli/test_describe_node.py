"""berth describe node: kubectl's shape, with what the node's pods request and limit."""

from __future__ import annotations

from berth.describe_cmd import render_node

NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "disk": "ssd"}},
        "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi"},
                   "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def _pod(name: str, cpu: str, memory: str = "", limit: str = "") -> dict[str, object]:
    requests = {"cpu": cpu, **({"memory": memory} if memory else {})}
    resources = {"requests": requests, **({"limits": {"cpu": limit}} if limit else {})}
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": resources}]}}


def test_a_node_with_its_pods_and_what_they_take() -> None:
    text = render_node(NODE, [_pod("web", "500m", "1Gi", limit="1"), _pod("db", "1500m", "2Gi")])
    lines = text.splitlines()
    assert lines[0] == "Name:               n1"
    assert lines[1:3] == ["Labels:             disk=ssd", "                    zone=a"]
    assert lines[3] == "Taints:             dedicated=db:NoSchedule"
    assert "Non-terminated Pods:          (2 in total)" in lines
    assert any(line.split()[:4] == ["default", "web", "500m", "(12%)"] for line in lines)
    cpu = next(line for line in lines if line.strip().startswith("cpu ") and "%" in line)
    assert cpu.split() == ["cpu", "2", "(50%)", "1", "(25%)"]
    memory = next(line for line in lines if line.strip().startswith("memory ") and "%" in line)
    assert memory.split() == ["memory", "3Gi", "(37%)", "0", "(0%)"]


def test_an_empty_node() -> None:
    text = render_node({"metadata": {"name": "n2"}, "spec": {}, "status": {}}, [])
    assert "Labels:             <none>" in text and "Taints:             <none>" in text
    assert "Non-terminated Pods:          (0 in total)" in text
