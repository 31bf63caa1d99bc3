"""The in-process scheduler: the scheduling algorithm run one pod at a time over the queue, with the
profiles a configuration builds. Above `scheduler` (the algorithm) and `profiles` (which know the
plugins), so neither has to know it."""

from .simulator import Simulator

__all__ = ["Simulator"]
