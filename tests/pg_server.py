"""A throwaway PostgreSQL server for the store contract suite: ``initdb`` + ``pg_ctl`` from the PostgreSQL binaries
of this machine, started by the tests themselves and stopped at the end.

``initdb`` refuses to run as root, so under root the cluster belongs to the ``postgres`` system user (``runuser``)
in a temporary folder it owns; otherwise the current user runs it. The server listens on 127.0.0.1 on a free port
(and a unix socket in that folder), with password authentication (scram-sha-256) so a wrong password is a real
refusal. Where the binaries are missing :func:`find_bindir` returns ``None``; the fixture then skips with the
reason, except when the ``CI`` environment variable is set, where it fails (never a silent skip in CI).
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Superuser password of the throwaway cluster (it listens on 127.0.0.1 only and lives for one test session).
PASSWORD = "contract-suite"
USER = "modbot"


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: ``$PG_BINDIR``, ``pg_config --bindir``, the Debian layout
    (``/usr/lib/postgresql/<n>/bin``, newest first) or ``PATH``; ``None`` when none has both."""
    candidates: list[Path] = []
    if os.environ.get("PG_BINDIR"):
        candidates.append(Path(os.environ["PG_BINDIR"]))
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    debian = Path("/usr/lib/postgresql")
    if debian.is_dir():
        versions = sorted((p for p in debian.iterdir() if p.name.isdigit()), key=lambda p: int(p.name), reverse=True)
        candidates += [p / "bin" for p in versions]
    if shutil.which("initdb"):
        candidates.append(Path(shutil.which("initdb") or "").parent)
    for cand in candidates:
        if (cand / "initdb").is_file() and (cand / "pg_ctl").is_file():
            return cand
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """A running throwaway cluster: ``url(db)`` gives a ``postgresql://`` URL of one of its databases."""

    bindir: Path
    root: Path
    port: int
    run_as: list[str]

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        """``postgresql://modbot:<password>@127.0.0.1:<port>/<database>``."""
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder; a second call does nothing."""
        if not self.data.exists():
            return
        subprocess.run([*self.run_as, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                        "stop"], capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def start_server(bindir: Path) -> PgServer:
    """initdb + pg_ctl start in a new temporary folder; returns when the server accepts connections.

    Raises:
        RuntimeError: initdb or pg_ctl failed (their output is in the message).
    """
    root = Path(tempfile.mkdtemp(prefix="modbot-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        import pwd

        try:
            pw = pwd.getpwnam("postgres")
        except KeyError as exc:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError("running as root and there is no 'postgres' user to own the cluster") from exc
        os.chown(root, pw.pw_uid, pw.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if run_as:
        os.chown(pwfile, pw.pw_uid, pw.pw_gid)
    port = free_port()
    server = PgServer(bindir, root, port, run_as)
    steps = [
        [*run_as, str(bindir / "initdb"), "-D", str(server.data), "-U", USER, "--pwfile", str(pwfile),
         "-A", "scram-sha-256", "--no-sync", "-E", "UTF8", "--locale", "C"],
        [*run_as, str(bindir / "pg_ctl"), "-D", str(server.data), "-l", str(root / "log"), "-w", "-t", "60",
         "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
               "-c full_page_writes=off -c max_connections=100", "start"],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = (root / "log").read_text() if (root / "log").exists() else ""
            server.stop()
            raise RuntimeError(f"{Path(cmd[len(run_as)]).name} failed ({done.returncode}): "
                               f"{done.stdout}{done.stderr}{log}")
    atexit.register(server.stop)  # a session that dies before the fixture's teardown leaves no server running
    return server
