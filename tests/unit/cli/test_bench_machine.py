"""The machine a bench result names: CPUs, threads per core, model, Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.machine import describe_machine, summary


@pytest.mark.parametrize(("siblings", "threads"), [("0\n", 1), ("0,8\n", 2), ("0-1\n", 2), ("0-3,8-11", 8),
                                                   ("what", 0), (None, 0)])
def test_threads_per_core_from_cpu0s_siblings(siblings: str | None, threads: int, tmp_path: Path) -> None:
    path = tmp_path / "thread_siblings_list"
    if siblings is not None:
        path.write_text(siblings)
    assert describe_machine(tmp_path / "none", path)["threads_per_core"] == threads


def test_the_model_and_a_line_for_people(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Example CPU @ 3.0GHz\nflags\t: fpu\n")
    siblings = tmp_path / "siblings"
    siblings.write_text("0,16\n")
    machine = describe_machine(cpuinfo, siblings)
    assert machine["cpu_model"] == "Example CPU @ 3.0GHz"
    assert isinstance(machine["usable_cpus"], int) and machine["usable_cpus"] >= 1
    line = summary(machine)
    assert line.startswith(f"{machine['usable_cpus']} CPUs (2 threads per core), Example CPU @ 3.0GHz, Python 3.")
    assert "threads per core" not in summary({**machine, "threads_per_core": 1})
