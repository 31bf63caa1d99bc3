"""`berth simulate`: the JSON contract, the table, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from berth.cli import main

SCENARIOS = Path(__file__).parents[2] / "scenarios"
CONTRACT_KEYS = {"namespace", "name", "phase", "nodeName", "nominatedNodeName", "message", "preemptedBy"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_one_entry_per_input_pod_with_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-f", str(SCENARIOS / "preempt-01-basic.yaml"), "-o", "json")
    assert code == 0
    report = json.loads(out)
    pods = report["pods"]
    assert [p["name"] for p in pods] == ["p1.1", "p1.2", "p2.1", "p3.1", "p"]
    for p in pods:
        assert CONTRACT_KEYS <= set(p)
    by_name = {p["name"]: p for p in pods}
    assert by_name["p"]["phase"] == "Bound" and by_name["p"]["nodeName"] == "node1"
    assert by_name["p"]["message"] is None
    assert by_name["p1.1"]["phase"] == "Deleted" and by_name["p1.1"]["preemptedBy"] == "default/p"


def test_pending_pod_carries_the_upstream_message(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "-f", str(SCENARIOS / "taint-01-noschedule-untolerated.yaml"), "-o", "json")
    (pod,) = json.loads(out)["pods"]
    assert pod["phase"] == "Pending"
    assert pod["message"] == (
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: user1}. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_table_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-f", str(SCENARIOS / "queue-01-higher-priority-first.yaml"))
    assert code == 0
    assert "default/high" in out and "Bound" in out and "Insufficient cpu" in out
    assert "2 pods: 1 bound, 1 pending, 0 preempted" in out


def test_invalid_input_exits_2_naming_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                   "  - name: c\n    resources: {requests: {cpu: lots}}\n")
    code, out, err = run(capsys, "-f", str(bad), "-o", "json")
    assert code == 2
    assert out == ""
    assert "Pod default/p" in err and "spec.containers[0].resources.requests[cpu]" in err


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "-f", str(tmp_path / "nope.yaml"))
    assert code == 2 and "cannot read" in err


def test_config_file_and_seed_make_runs_reproducible(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cluster = tmp_path / "c.yaml"
    docs = [f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi}}\n" for i in range(6)]
    docs += [f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c}}]}}\n"
             for i in range(6)]
    cluster.write_text("---\n".join(docs))
    config = tmp_path / "ksc.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n")
    first = run(capsys, "-f", str(cluster), "--config", str(config), "--seed", "5", "-o", "json")[1]
    second = run(capsys, "-f", str(cluster), "--config", str(config), "--seed", "5", "-o", "json")[1]
    assert first == second


def test_pod_being_deleted_is_never_attempted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1'}}\n---\n"
                 "apiVersion: v1\nkind: Pod\nmetadata: {name: going, deletionTimestamp: '2024-01-01T00:00:00Z'}\n"
                 "spec: {containers: [{name: c}]}\n")
    _, out, _ = run(capsys, "-f", str(f), "-o", "json")
    (pod,) = json.loads(out)["pods"]
    assert (pod["phase"], pod["attempts"], pod["message"]) == ("Pending", 0, None)


def test_no_nodes_reports_upstream_error_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n")
    _, out, _ = run(capsys, "-f", str(f), "-o", "json")
    (pod,) = json.loads(out)["pods"]
    assert (pod["phase"], pod["attempts"], pod["message"]) == ("Pending", 1, "no nodes available to schedule pods")


def test_berth_says_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("berth ")
