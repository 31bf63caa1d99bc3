"""Resource vectors, as upstream's framework.Resource: cpu in millicores, the rest in units."""

from __future__ import annotations

from collections.abc import Mapping

from shared.model import quantity
from shared.model.pod_resources import HUGEPAGES_PREFIX

__all__ = ["CPU", "DEFAULT_MEMORY_REQUEST", "DEFAULT_MILLI_CPU_REQUEST", "EPHEMERAL_STORAGE", "HUGEPAGES_PREFIX",
           "MEMORY", "PODS", "Resource", "is_scalar_resource"]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Requests assumed for a container that names none, when spreading load (scoring only).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def is_scalar_resource(name: str) -> bool:
    """Extended, hugepages-*, prefixed-native and attachable-volumes-* resources: all but the core four."""
    return name not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)


class Resource:
    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = scalar if scalar is not None else {}

    @classmethod
    def from_list(cls, resources: Mapping[str, str | int | float]) -> Resource:
        """Parse a ResourceList; raises quantity.QuantityError with the resource name."""
        r = cls()
        for name, q in resources.items():
            try:
                r.set(name, q)
            except quantity.QuantityError as exc:
                raise quantity.QuantityError(f"{name}: {exc}") from None
        return r

    def set(self, name: str, q: str | int | float) -> None:
        if name == CPU:
            self.milli_cpu = quantity.milli_value(q)
        elif name == MEMORY:
            self.memory = quantity.value(q)
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = quantity.value(q)
        elif name == PODS:
            self.allowed_pod_number = quantity.value(q)
        else:
            self.scalar[name] = quantity.value(q)

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def add(self, other: Resource) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        for name, v in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + v

    def sub(self, other: Resource) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        for name, v in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) - v

    def set_max(self, other: Resource) -> None:
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        self.ephemeral_storage = max(self.ephemeral_storage, other.ephemeral_storage)
        self.allowed_pod_number = max(self.allowed_pod_number, other.allowed_pod_number)
        for name, v in other.scalar.items():
            self.scalar[name] = max(self.scalar.get(name, 0), v)

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v} == {k: v for k, v in other.scalar.items() if v}
        )

    def __repr__(self) -> str:
        return (
            f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, "
            f"ephemeral_storage={self.ephemeral_storage}, pods={self.allowed_pod_number}, scalar={self.scalar})"
        )
