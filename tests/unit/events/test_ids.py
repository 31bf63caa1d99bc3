"""Ids made without a system call each are version 4 UUIDs, distinct, and a forked child's differ
from its parent's."""

from __future__ import annotations

import os
import uuid
import warnings

from shared.events.ids import random_id


def test_random_ids_are_distinct_version_4_uuids() -> None:
    ids = [random_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(i.version == 4 and i.variant == uuid.RFC_4122 for i in ids)
    assert uuid.UUID(str(ids[0])) == ids[0]


def test_a_forked_child_draws_other_ids() -> None:
    read, write = os.pipe()
    with warnings.catch_warnings():  # forking with threads alive (a BLAS pool) warns; the child only writes
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: its next id, to the parent
        os.write(write, random_id().bytes)
        os._exit(0)
    os.close(write)
    child = uuid.UUID(bytes=os.read(read, 16))
    os.close(read)
    os.waitpid(pid, 0)
    assert child != random_id()
