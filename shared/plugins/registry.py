"""The in-tree registry: plugin name -> plugin class, imported on first use."""

from __future__ import annotations

from importlib import import_module

from shared.framework.interfaces import Plugin

from . import names

_IN_TREE: dict[str, str] = {
    names.PRIORITY_SORT: "shared.plugins.queuesort:PrioritySort",
    names.SCHEDULING_GATES: "shared.plugins.schedulinggates:SchedulingGates",
    names.NODE_UNSCHEDULABLE: "shared.plugins.nodeunschedulable:NodeUnschedulable",
    names.NODE_NAME: "shared.plugins.nodename:NodeName",
    names.TAINT_TOLERATION: "shared.plugins.tainttoleration:TaintToleration",
    names.NODE_AFFINITY: "shared.plugins.nodeaffinity:NodeAffinity",
    names.NODE_PORTS: "shared.plugins.nodeports:NodePorts",
    names.NODE_RESOURCES_FIT: "shared.plugins.noderesources:Fit",
    names.NODE_RESOURCES_BALANCED_ALLOCATION: "shared.plugins.noderesources:BalancedAllocation",
    names.VOLUME_RESTRICTIONS: "shared.plugins.volumes:VolumeRestrictions",
    names.NODE_VOLUME_LIMITS: "shared.plugins.volumes:NodeVolumeLimits",
    names.VOLUME_BINDING: "shared.plugins.volumes:VolumeBinding",
    names.VOLUME_ZONE: "shared.plugins.volumes:VolumeZone",
    names.DYNAMIC_RESOURCES: "shared.plugins.volumes:DynamicResources",
    names.POD_TOPOLOGY_SPREAD: "shared.plugins.podtopologyspread:PodTopologySpread",
    names.INTER_POD_AFFINITY: "shared.plugins.interpodaffinity:InterPodAffinity",
    names.IMAGE_LOCALITY: "shared.plugins.imagelocality:ImageLocality",
    names.DEFAULT_PREEMPTION: "shared.plugins.defaultpreemption:DefaultPreemption",
    names.DEFAULT_BINDER: "shared.plugins.defaultbinder:DefaultBinder",
}


class UnknownPlugin(KeyError):
    pass


def plugin_class(name: str) -> type[Plugin]:
    try:
        target = _IN_TREE[name]
    except KeyError:
        raise UnknownPlugin(name) from None
    module, _, attr = target.partition(":")
    cls: type[Plugin] = getattr(import_module(module), attr)
    return cls
