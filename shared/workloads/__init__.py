"""Deterministic synthetic clusters modelled on upstream's scheduler_perf workloads."""

from .generate import WORKLOADS, Workload, generate

__all__ = ["WORKLOADS", "Workload", "generate"]
