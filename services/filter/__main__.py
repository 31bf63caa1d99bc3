"""python -m services.filter: run one filter worker until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import logging

from .app import main
from .settings import load

if __name__ == "__main__":
    settings = load()
    logging.basicConfig(level=settings.base.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(main(settings))
