"""Runtime building blocks that need no broker: the dedupe memory, retry delays, child processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from berth.stack.processes import ManagedProcess, free_port, reap_stale
from services.runtime import RecentEvents, RetryPolicy
from shared.events import Envelope


def test_recent_events_is_a_bounded_lru_keyed_by_partition() -> None:
    recent = RecentEvents(capacity=2)
    a, b, c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    recent.remember("pods", 0, a)
    recent.remember("pods", 0, b)
    assert recent.seen("pods", 0, a) and not recent.seen("pods", 1, a)
    recent.remember("pods", 0, c)  # evicts b, the least recently used
    assert not recent.seen("pods", 0, b) and recent.seen("pods", 0, a) and len(recent) == 2
    recent.forget_partition("pods", 0)
    assert len(recent) == 0


def test_retry_delays_grow_and_cap() -> None:
    policy = RetryPolicy(initial=0.1, maximum=0.5)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [0.1, 0.2, 0.4, 0.5]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_stopping_a_process_stops_its_whole_group(tmp_path: Path) -> None:
    # The child ignores SIGTERM and runs a grandchild: both must still be gone after stop().
    script = "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
             "p = subprocess.Popen(['sleep', '60']); print(p.pid, flush=True); time.sleep(60)"
    proc = ManagedProcess("stubborn", [sys.executable, "-c", script], log_path=tmp_path / "log",
                          pid_path=tmp_path / "pid")
    proc.start()
    assert proc.pid is not None and (tmp_path / "pid").exists()
    deadline = time.monotonic() + 10
    while not (tmp_path / "log").read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.02)
    grandchild = int((tmp_path / "log").read_text().split()[0])
    proc.stop(timeout=0.3)
    assert not _alive(proc.pid) and not _alive(grandchild)
    assert not (tmp_path / "pid").exists() and not proc.running()


def test_a_stale_pid_file_is_reaped_only_if_the_command_matches(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        (tmp_path / "other.pid").write_text(f"{sleeper.pid}\nsomething else\n")
        reap_stale(tmp_path / "other.pid")
        assert sleeper.poll() is None and not (tmp_path / "other.pid").exists()
        (tmp_path / "mine.pid").write_text(f"{sleeper.pid}\nsleep 60\n")
        reap_stale(tmp_path / "mine.pid")
        assert not _alive(sleeper.pid)  # (reap_stale reaped it: Popen.wait cannot see the signal)
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


def test_free_port_is_bindable() -> None:
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux-only")
def test_children_of_a_dead_launcher_die_with_it(tmp_path: Path) -> None:
    script = (
        "import sys, time; from pathlib import Path; from berth.stack.processes import ManagedProcess; "
        "p = ManagedProcess('sleep', ['sleep', '60'], log_path=Path(sys.argv[1])); p.start(); "
        "print(p.pid, flush=True); time.sleep(60)"
    )
    launcher = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "log")], stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert launcher.stdout is not None
    child = int(launcher.stdout.readline())
    launcher.stdout.close()
    launcher.kill()
    launcher.wait()
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def test_a_process_gone_since_it_was_listed_is_not_a_group_member(monkeypatch: pytest.MonkeyPatch) -> None:
    from berth.stack import processes

    child = subprocess.Popen(["true"])
    child.wait()  # reaped: its pid names no process any more

    class Gone:
        pid = child.pid

    monkeypatch.setattr(psutil, "process_iter", lambda: iter([Gone()]))
    assert processes.group_members(os.getpgid(0)) == []


def test_copies_of_a_broadcast_request_are_decoded_once_per_batch() -> None:
    from services.runtime.loop import COPY_BYTES, decoded_once
    from shared.errors import DecodeError
    from shared.events import FILTER_REQUESTS, PODS, FilterBatchRequested, PodDeleted, encode, envelope
    from tests.builders import MakePod

    pods = [MakePod().name(f"p{i}").uid(f"u{i}").req(cpu="100m").obj() for i in range(40)]
    big = encode(envelope(FilterBatchRequested(batch_id="b", cycle=1, phase="filter", pods=pods), producer="queue"))
    small = encode(envelope(PodDeleted(uid="u", namespace="default", name="p"), producer="gateway"))
    assert len(big) >= COPY_BYTES > len(small)
    copies: dict[tuple[str, bytes], Envelope] = {}
    first = decoded_once(copies, FILTER_REQUESTS, big)
    assert decoded_once(copies, FILTER_REQUESTS, bytes(big)) is first  # an equal copy, another bytes object
    assert decoded_once(copies, PODS, small) is not decoded_once(copies, PODS, small)  # small ones are not kept
    with pytest.raises(DecodeError):  # the topic is part of the check, and of the key
        decoded_once(copies, PODS, big)
