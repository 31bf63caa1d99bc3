"""Everything `berth up` keeps running: the services, and the broker and the database it launched.

The supervisor (`berth.supervisor`) sees one list of members and restarts what dies:
- a service: started again alone (it rebuilds its view from the log);
- the database: started again on its port and data directory; the services' connection pools
  reconnect (a service that gave up meanwhile is restarted like any other);
- the broker: the embedded one keeps its log in memory, so the services' positions and views
  belong to a log that is gone. They are stopped, the broker starts again on its port with its
  log rebuilt from the event store (`shared.adapters.log_restore`), and they start again, the
  gateway on its URL.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from berth.stack.embedded import EmbeddedStack
from berth.stack.processes import ManagedProcess

from .fleet import Fleet, Member

BROKER = "tansu"
DATABASE = "postgres"


@dataclass(frozen=True)
class Component:
    label: str
    process: ManagedProcess


class SupervisedCluster:
    """A `supervisor.Fleet` over the stack's processes and the services'."""

    def __init__(self, stack: EmbeddedStack, fleet: Fleet, *, say: Callable[[str], None]) -> None:
        self.stack, self.fleet, self.say = stack, fleet, say
        self._gateway_port = 0
        """The gateway's port, kept for a broker restart that fails after the services were stopped
        (the next one brings the gateway back on it: clients hold its URL)."""

    @property
    def members(self) -> dict[str, Member | Component]:
        out: dict[str, Member | Component] = {}
        for label, part in ((BROKER, self.stack.broker), (DATABASE, self.stack.postgres)):
            if part is not None and part.process is not None:
                out[label] = Component(label, part.process)
        out.update(self.fleet.members)
        return out

    def restart(self, label: str) -> object:
        if label == DATABASE:
            self.stack.restart_postgres()
            return None
        if label == BROKER:
            gateway = next((m for m in self.fleet.members.values() if m.spec.gateway), None)
            if gateway is not None:
                self._gateway_port = gateway.port
            started = time.monotonic()
            # Nothing of theirs is worth a graceful stop: their broker and its log are gone.
            self.fleet.kill_all()
            stopped = time.monotonic()
            report = self.stack.restart_broker()
            self.say(f"berth: {report.summary()}")
            rebuilt = time.monotonic()
            members = self.fleet.start_all(gateway_port=self._gateway_port, ready_timeout=self.fleet.ready_timeout)
            self.say(f"berth: services stopped in {stopped - started:.1f} s, broker back with its log in "
                     f"{rebuilt - stopped:.1f} s, services ready in {time.monotonic() - rebuilt:.1f} s")
            return members
        return self.fleet.restart(label)
