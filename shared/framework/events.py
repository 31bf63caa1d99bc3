"""Cluster events that move unschedulable pods back to the active or backoff queue
(upstream framework.ClusterEvent with its resource names and action types)."""

from __future__ import annotations

from enum import IntFlag
from typing import NamedTuple


class ActionType(IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM
    )
    ALL = ADD | DELETE | UPDATE


# Resources. "Pod" events concern pods the scheduler does not own yet (unscheduled);
# "AssignedPod" events concern pods bound to a node.
POD = "Pod"
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnscheduledPod"
NODE = "Node"
WILDCARD = "*"


class ClusterEvent(NamedTuple):
    resource: str
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this event is one the registered (resource, actions) pair listens for."""
        if registered.resource == WILDCARD and registered.action == ActionType.ALL:
            return True
        resource_ok = registered.resource in (WILDCARD, self.resource) or (
            registered.resource == POD and self.resource in (ASSIGNED_POD, UNSCHEDULED_POD)
        )
        return resource_ok and bool(registered.action & self.action)


NODE_ADD = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
ASSIGNED_POD_UPDATE = ClusterEvent(ASSIGNED_POD, ActionType.UPDATE, "AssignedPodUpdate")
UNSCHEDULED_POD_DELETE = ClusterEvent(UNSCHEDULED_POD, ActionType.DELETE, "UnschedulablePodDelete")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")
