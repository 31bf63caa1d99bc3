"""Host ports in use on a node (upstream HostPortInfo): ip -> {(protocol, port)}.

0.0.0.0 conflicts with every address for the same protocol and port.
"""

from __future__ import annotations

BIND_ALL = "0.0.0.0"

PortKey = tuple[str, int]


def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
    return (ip or BIND_ALL, protocol or "TCP")


class HostPortInfo:
    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, dict[PortKey, int]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = _sanitize(ip, protocol)
        ports = self._by_ip.setdefault(ip, {})
        key = (protocol, port)
        ports[key] = ports.get(key, 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = _sanitize(ip, protocol)
        ports = self._by_ip.get(ip)
        if not ports:
            return
        key = (protocol, port)
        left = ports.get(key, 0) - 1
        if left > 0:
            ports[key] = left
        else:
            ports.pop(key, None)
            if not ports:
                del self._by_ip[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = _sanitize(ip, protocol)
        key = (protocol, port)
        if ip == BIND_ALL:
            return any(key in ports for ports in self._by_ip.values())
        for addr in (BIND_ALL, ip):
            ports = self._by_ip.get(addr)
            if ports and key in ports:
                return True
        return False

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_ip.values())

    def clone(self) -> HostPortInfo:
        copy = HostPortInfo()
        copy._by_ip = {ip: dict(ports) for ip, ports in self._by_ip.items()}
        return copy
