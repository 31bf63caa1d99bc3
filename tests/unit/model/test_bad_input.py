"""Every bad input of `tests/inputs/bad_objects.py` through `berth simulate`: exit 2 and one line
naming the object, the field and the rule; never a traceback. Identity rules only warn there."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.cli import main
from tests.inputs.bad_objects import BAD, Bad

NODE = 'kind: Node\napiVersion: v1\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4", pods: "10"}}\n'


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_simulate_refuses_or_warns(case: Bad, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "input.yaml"
    path.write_bytes(case.data())
    code = main(["simulate", "-f", str(path), "-o", "json"])
    out, err = capsys.readouterr()
    if case.gateway_only:
        assert code == 0, err
        assert f"Warning: {case.expected(str(path))} (a cluster's API refuses it)" in err.splitlines()
    else:
        assert code == 2, out
        assert err == f"error: {case.expected(str(path))}\n"


def test_there_are_at_least_sixty_bad_inputs() -> None:
    assert len(BAD) >= 60 and len({c.id for c in BAD}) == len(BAD)


GOOD = [
    ("yaml-stream", NODE + "---\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n"),
    ("json-list", '{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}, '
                  '"status": {"allocatable": {"cpu": "4", "pods": "10"}}}]}'),
    ("json-documents", '{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"pods": "5"}}}\n---\n'
                       '{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}\n'),
    ("json-array", '[{"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"pods": "5"}}}]'),
    ("quantities", NODE + "---\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, resources: "
                   "{requests: {cpu: 0.5, memory: 1e9, ephemeral-storage: 1Gi}, limits: {cpu: 500m}}}]}\n"),
    ("unused-api-fields", NODE + "---\nkind: Pod\nmetadata: {name: web, annotations: {a: b}}\nspec: {restartPolicy: "
                          "Always, containers: [{name: c, image: nginx, env: [{name: A, value: b}], livenessProbe: "
                          "{httpGet: {path: /, port: 80}}}]}\n"),
    ("bom", "\ufeff" + NODE),
]


@pytest.mark.parametrize(("name", "text"), GOOD, ids=[g[0] for g in GOOD])
def test_valid_inputs_in_every_accepted_form(name: str, text: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 0, capsys.readouterr().err


def test_unknown_fields_can_be_warned_about_or_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(NODE + "---\nkind: Pod\nmetadata: {name: web}\nspec: {nodeSelectr: {}, containers: [{name: c}]}\n")
    assert main(["simulate", "-f", str(path), "--validate", "warn"]) == 0
    assert 'Warning: Pod web: unknown field "spec.nodeSelectr"' in capsys.readouterr().err
    assert main(["simulate", "-f", str(path), "--validate", "ignore"]) == 0
    assert "Warning" not in capsys.readouterr().err
