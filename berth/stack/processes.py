"""Child processes that never outlive Berth: own process group, parent-death signal, pid files.

Three layers make sure an embedded broker or database is not left behind:
1. `ManagedProcess.stop()` signals the child's whole process group, waits, then SIGKILLs it.
2. An atexit hook stops every process still running when the interpreter exits (normal exit,
   an exception, Ctrl-C); `install_termination_handler` turns SIGTERM into a normal exit first.
3. On Linux the child gets a parent-death signal (prctl PR_SET_PDEATHSIG), so even a SIGKILLed
   launcher takes its children with it. Pid files let the next start in the same state directory
   reap anything a crash on another platform left running.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

import psutil

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_live: dict[int, ManagedProcess] = {}
_live_lock = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the child binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _pdeathsig_preexec(sig: int) -> Callable[[], None] | None:
    """A preexec hook asking Linux to send `sig` to the child when its parent thread dies.

    Only from the main thread: the signal fires when the *thread* that forked exits, so a child
    spawned from a worker thread would die with that thread.
    """
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def hook() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl
            os.kill(os.getpid(), sig)

    return hook


class ManagedProcess:
    """One child process in its own session (process group), stopped as a group."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        log_path: Path,
        pid_path: Path | None = None,
        stop_signal: int = signal.SIGTERM,
        death_signal: int = signal.SIGKILL,
        user: int | None = None,
        group: int | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.pid_path = pid_path
        self.stop_signal = stop_signal
        self._death_signal = death_signal
        self._user, self._group, self._env, self._cwd = user, group, env, cwd
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        if self.pid_path is not None:
            reap_stale(self.pid_path)
        with open(self.log_path, "ab") as log_file:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: Ctrl-C in the terminal does not hit it
                preexec_fn=_pdeathsig_preexec(self._death_signal),
                user=self._user,
                group=self._group,
                extra_groups=[] if self._user is not None else None,
                env=self._env,
                cwd=self._cwd,
            )
        if self.pid_path is not None:
            self.pid_path.write_text(f"{self._proc.pid}\n{' '.join(self.argv)}\n")
        with _live_lock:
            _live[self._proc.pid] = self
        log.info("started %s (pid %d): %s", self.name, self._proc.pid, " ".join(self.argv))

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the leader to stop, wait up to `timeout`, then SIGKILL whatever is left of its group.

        Only the leader gets the polite signal: a server (the postmaster) shuts its own workers down
        in order, and a signal meant for it can mean something else to them.
        """
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(self.stop_signal)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    log.warning("%s (pid %d) did not stop in %.0fs; killing it", self.name, proc.pid, timeout)
            # The leader may be gone while its children linger; the group id outlives it.
            _kill_group(proc)
        finally:
            self._forget(proc, "stopped")


    def kill(self) -> None:
        """SIGKILL the whole group at once, as a crash would; nothing gets to clean up."""
        proc = self._proc
        if proc is None:
            return
        _kill_group(proc)
        self._forget(proc, "killed")

    def _forget(self, proc: subprocess.Popen[bytes], how: str) -> None:
        """The process is gone: no longer live, its pid file removed."""
        with _live_lock:
            _live.pop(proc.pid, None)
        if self.pid_path is not None:
            self.pid_path.unlink(missing_ok=True)
        log.info("%s %s (pid %d)", how, self.name, proc.pid)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process's whole group and wait for every member to be gone."""
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    _wait_group_gone(proc.pid, 5.0)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_members(pgid: int) -> list[psutil.Process]:
    members = []
    for proc in psutil.process_iter():
        # A process listed a moment ago may be gone by now: os.getpgid then raises, not psutil.
        with contextlib.suppress(psutil.Error, ProcessLookupError, PermissionError):
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc)
    return members


def _wait_group_gone(pgid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)


def reap_stale(pid_path: Path) -> None:
    """Kill a process a crashed launcher left behind, if its pid file still names a live one.

    The command line is compared too, so a recycled pid of an unrelated process is left alone.
    """
    try:
        pid_text, _, argv = pid_path.read_text().partition("\n")
        pid = int(pid_text)
    except (OSError, ValueError):
        return
    with contextlib.suppress(psutil.Error):
        proc = psutil.Process(pid)
        if " ".join(proc.cmdline()) == argv.strip():
            log.warning("killing process %d left over from an earlier run: %s", pid, argv.strip())
            _signal_group(pid, signal.SIGKILL)
            proc.wait(5)
    pid_path.unlink(missing_ok=True)


def stop_all() -> None:
    """Stop every child still running (registered with atexit)."""
    with _live_lock:
        procs = list(_live.values())
    for proc in reversed(procs):
        with contextlib.suppress(Exception):
            proc.stop(timeout=5.0)


atexit.register(stop_all)


def install_termination_handler() -> None:
    """Make SIGTERM unwind like Ctrl-C (so `with` blocks and atexit run) where nothing else handles it.

    Only from the main thread, and only over the default disposition: an asyncio service that
    registered its own handler keeps it.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def _raise(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, _raise)
