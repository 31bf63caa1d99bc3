"""Plots of benchmark results (PNG, headless)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _pyplot() -> Any | None:
    """matplotlib's pyplot on the headless backend; None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _save(plt: Any, fig: Any, ax: Any, title: str, path: Path) -> Path:
    ax.set_title(title)
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


def plot_scaling(points: Sequence[tuple[int, float]], title: str, path: Path) -> Path | None:
    """Pods/s against filter workers, with linear scaling from the first point for reference."""
    plt = _pyplot()
    if plt is None:
        return None
    workers = [k for k, _ in points]
    k0, r0 = points[0]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(workers, [r for _, r in points], marker="o", label="measured")
    ax.plot(workers, [r0 * k / k0 for k in workers], linestyle="--", color="grey", label="linear")
    ax.set_xlabel("filter workers")
    ax.set_ylabel("pods bound per second")
    ax.set_xticks(workers)
    ax.legend()
    return _save(plt, fig, ax, title, path)
