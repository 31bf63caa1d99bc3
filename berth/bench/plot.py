"""Plots of benchmark results (PNG, headless)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def plot_throughput(series: Sequence[tuple[float, float]], title: str, path: Path) -> Path | None:
    """Pods bound per second over the run; None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([t for t, _ in series], [v for _, v in series], marker=".")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("pods bound per second")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
