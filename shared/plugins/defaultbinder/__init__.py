"""DefaultBinder: binding is recorded by the caller (the simulator or the binder service), so in the
pure core this plugin only accepts the binding."""

from __future__ import annotations

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import BindPlugin
from shared.framework.pod_info import PodInfo
from shared.framework.status import Status
from shared.plugins import names


class DefaultBinder(BindPlugin):
    NAME = names.DEFAULT_BINDER

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None
