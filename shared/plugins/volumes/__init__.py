"""Volume plugins of the default profile. Berth schedules pods without volume objects (no PVCs,
CSI drivers or ResourceClaims), so each of these passes every pod; they exist so that profiles
naming them (enabling, disabling, configuring) load exactly as upstream's do."""

from __future__ import annotations

from collections.abc import Sequence

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import FilterPlugin, PreFilterPlugin, PreFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import SKIP, Status
from shared.plugins import names


class _NoVolumes(PreFilterPlugin, FilterPlugin):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        return None

    def checks_nothing_for(self, pod: PodInfo) -> bool:
        return True


class VolumeRestrictions(_NoVolumes):
    NAME = names.VOLUME_RESTRICTIONS


class NodeVolumeLimits(_NoVolumes):
    NAME = names.NODE_VOLUME_LIMITS


class VolumeBinding(_NoVolumes):
    NAME = names.VOLUME_BINDING


class VolumeZone(_NoVolumes):
    NAME = names.VOLUME_ZONE


class DynamicResources(_NoVolumes):
    NAME = names.DYNAMIC_RESOURCES
