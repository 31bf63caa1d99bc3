"""Random ids for events and attempts, cheaply: version 4 UUIDs whose random bits come from a
generator seeded from the operating system once per process (and again in a forked child), not from
a system call per id. The queue makes three for every pod it places; ids must be unique, not
unpredictable."""

from __future__ import annotations

import os
import random
import uuid

_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
"""The version and variant bits, which are set, not random."""
_VERSION_4 = (0x4000 << 64) | (0x8000 << 48)
_random = random.Random(os.urandom(32))


def _reseed() -> None:
    _random.seed(os.urandom(32))


os.register_at_fork(after_in_child=_reseed)


def random_id() -> uuid.UUID:
    """A random (version 4, RFC 4122 variant) UUID."""
    return uuid.UUID(int=(_random.getrandbits(128) & _CLEAR) | _VERSION_4)
