"""The port a service bound, told to whoever launched it (`BERTH_PORT_FILE`)."""

from __future__ import annotations

import os

from shared.settings import Settings


def announce_port(settings: Settings, port: int) -> None:
    """Write `port` to the settings' port file, whole, never half (nothing without one)."""
    if settings.port_file is None:
        return
    partial = settings.port_file.with_name(settings.port_file.name + ".partial")
    partial.write_text(f"{port}\n")
    os.replace(partial, settings.port_file)
