"""Plots of benchmark results (PNG, headless)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .stats import NEVER_SLOWER, median, median_interval


def _pyplot() -> Any | None:
    """matplotlib's pyplot on the headless backend; None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


NO_PLOT = "no plot: matplotlib is not installed (pip install -e '.[plot]', which make installs)"
"""What the bench says instead of a plot's path when it could not draw one."""


TITLE_WIDTH = 60
"""Characters per title line: a longer title would run off a plot's axes (and out of the image)."""


def _save(plt: Any, fig: Any, ax: Any, title: str, path: Path) -> Path:
    ax.set_title("\n".join(textwrap.wrap(title, TITLE_WIDTH)))
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_throughput(series: Sequence[tuple[float, float]], title: str, path: Path) -> Path | None:
    """Pods bound per second over the run; None when matplotlib is not installed."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([t for t, _ in series], [v for _, v in series], marker=".")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("pods bound per second")
    return _save(plt, fig, ax, title, path)


@dataclass(frozen=True)
class PairedStep:
    """One step of a sweep (`label`: "4/2"), paired round by round: each round's ratio of pods/s
    (two or more; the plot draws their median and where it lies, `median_interval`)."""
    label: str
    ratios: Sequence[float]


def plot_scaling(points: Sequence[tuple[int, float, Mapping[str, float]]], title: str, path: Path, *,
                 ranges: Sequence[Sequence[float]] = (), steps: Sequence[PairedStep] = ()) -> Path | None:
    """Pods/s against filter workers, with linear scaling from the first point for reference, and
    beside it each process's CPU milliseconds per pod, stacked. `ranges`: per point, the pods/s of
    every round it was the median of (drawn as the span from the lowest to the highest). `steps`:
    drawn in a third panel, each step's rounds, its median and that median's interval, against
    `NEVER_SLOWER`."""
    plt = _pyplot()
    if plt is None:
        return None
    workers = [k for k, _, _ in points]
    k0, r0, _ = points[0]
    if steps:
        fig, (ax, cpu, paired) = plt.subplots(1, 3, figsize=(16, 4))
        _draw_steps(paired, steps)
    else:
        fig, (ax, cpu) = plt.subplots(1, 2, figsize=(11, 4))
    ax.plot(workers, [r for _, r, _ in points], marker="o",
            label=f"median of {len(ranges[0])} rounds" if ranges else "measured")
    if ranges:
        ax.vlines(workers, [min(r) for r in ranges], [max(r) for r in ranges], color="tab:blue", alpha=0.4,
                  linewidth=6, label="range of the rounds")
    ax.plot(workers, [r0 * k / k0 for k in workers], linestyle="--", color="grey", label="linear")
    ax.set_xlabel("filter workers")
    ax.set_ylabel("pods bound per second")
    ax.set_xticks(workers)
    ax.legend()
    processes = sorted({p for _, _, ms in points for p in ms if p != "total"},
                       key=lambda p: -max(ms.get(p, 0.0) for _, _, ms in points))
    bottom = [0.0] * len(points)
    slots = list(range(len(points)))
    for process in processes:
        heights = [ms.get(process, 0.0) for _, _, ms in points]
        cpu.bar(slots, heights, bottom=bottom, label=process)
        bottom = [b + h for b, h in zip(bottom, heights)]
    cpu.set_xticks(slots, [str(k) for k in workers])
    cpu.set_xlabel("filter workers")
    cpu.set_ylabel("CPU ms per pod")
    cpu.set_title("CPU per pod, by process")
    cpu.grid(True, axis="y", alpha=0.3)
    cpu.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(plt, fig, ax, title, path)


def _draw_steps(ax: Any, steps: Sequence[PairedStep]) -> None:
    slots = list(range(len(steps)))
    sure = []
    for slot, step in zip(slots, steps):
        ax.scatter([slot] * len(step.ratios), step.ratios, color="grey", alpha=0.5, s=12,
                   label="a round" if slot == 0 else None)
        middle = median(step.ratios) or 0.0
        low, high, confidence = median_interval(step.ratios) or (middle, middle, 0.0)
        sure.append(confidence)
        ax.errorbar([slot], [middle], yerr=[[middle - low], [high - middle]], fmt="o",
                    color="tab:blue", capsize=6, label="median, and where it lies" if slot == 0 else None)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.axhline(NEVER_SLOWER, color="tab:red", linestyle="--", label=f"{NEVER_SLOWER}: never slower")
    ax.set_xticks(slots, [f"{step.label}\n{confidence:.0%} sure" for step, confidence in zip(steps, sure)])
    ax.set_xlim(-0.5, len(steps) - 0.5)
    ax.set_xlabel("filter workers, against the count before")
    ax.set_ylabel("pods/s, ratio in one round")
    ax.set_title("Each step, paired round by round\n(the median lies in the bar, as sure as it says)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
