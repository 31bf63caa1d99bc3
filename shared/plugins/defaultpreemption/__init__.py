"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods to make room."""

from .plugin import NAME, DefaultPreemption, pod_terminating_by_preemption

__all__ = ["NAME", "DefaultPreemption", "pod_terminating_by_preemption"]
