"""Every `berth` command starts from one parser of all commands: building it must not import what
only some commands run (the scheduling core, the broker and database clients, progress bars,
plotting), or `berth get pods` pays for the whole system."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("aiokafka", "asyncpg", "sqlalchemy", "alembic", "aiohttp", "numpy", "tqdm", "matplotlib",
         "shared.framework", "shared.plugins", "shared.simulation", "shared.replay.engine",
         "shared.replay.explain", "shared.adapters.postgres", "shared.adapters.kafka", "berth.fleet",
         "berth.stack", "berth.chaos.run", "berth.bench.inprocess", "berth.bench.cluster",
         "berth.bench.fleet_metrics")


def test_the_parser_imports_no_command_s_machinery() -> None:
    code = "import json, sys; import berth.cli; berth.cli.build_parser(); print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.startswith(HEAVY)] == []
