"""Upstream-derived scenarios through the in-process simulator, compared with upstream's outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.adapters.input_files import load_files
from shared.simulation.simulator import Simulator

from .scenario import load_expected, mismatches

SCENARIOS = Path(__file__).parent.parent / "scenarios"
CASES = sorted(p for p in SCENARIOS.glob("*.yaml") if not p.name.endswith(".expected.yaml"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_scenario_matches_upstream(path: Path) -> None:
    expected = load_expected(path.with_name(path.stem + ".expected.yaml"))
    report = Simulator(load_files([path]), seed=0).run()
    assert mismatches(report, expected) == []


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_scenario_outcome_independent_of_seed(path: Path) -> None:
    expected = load_expected(path.with_name(path.stem + ".expected.yaml"))
    for seed in (1, 7, 42):
        assert mismatches(Simulator(load_files([path]), seed=seed).run(), expected) == []
