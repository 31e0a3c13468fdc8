"""bench/stall_bench.py through the compose shape, without Docker: deploy/nginx.conf in front of two replicas
(gunicorn with WEB_CONCURRENCY 2 each, as docker-compose.yml runs them) on PostgreSQL.

    .venv/bin/python bench/stall_compose.py      # BENCH_SECONDS, BENCH_PLANS, BENCH_BATCHES as stall_bench.py;
                                                 # BENCH_DATABASE_URL (the local test database), BENCH_PORT (8781)

The database is a fresh schema of BENCH_DATABASE_URL, migrated and seeded, dropped at the end; nginx (from the
distribution: apt-get install nginx-light) listens on BENCH_PORT and the clients of stall_bench.py talk to it.
Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import stall_bench as sb
from sqlalchemy import create_engine, text

DATABASE = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
SCHEMA = f"bench_compose_{uuid.uuid4().hex[:8]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nginx_conf(listen_port: int, replica_ports: list[int], workdir: Path) -> str:
    """deploy/nginx.conf as compose runs it, with the replicas, the port and the scratch paths made local."""
    conf = (sb.ROOT / "deploy" / "nginx.conf").read_text()
    servers = re.findall(r"\bserver\s+[\w.-]+:\d+", conf)
    assert len(servers) == len(replica_ports), servers
    for old, port in zip(servers, replica_ports, strict=True):
        conf = conf.replace(old, f"server 127.0.0.1:{port}", 1)
    conf = re.sub(r"\blisten\s+\d+;", f"listen 127.0.0.1:{listen_port};", conf)
    return conf.replace("/tmp/nginx", str(workdir / "nginx"))


class Fleet:
    """The replicas and nginx, stopped together (what stall_bench.main does with its one server)."""

    def __init__(self, procs: list[subprocess.Popen]):
        self.procs = procs

    def poll(self) -> int | None:
        return None if all(p.poll() is None for p in self.procs) else 1

    def terminate(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()

    def wait(self, timeout: float | None = None) -> int:
        for p in self.procs:
            p.wait(timeout=timeout)
        return 0

    def kill(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()


def start_fleet(workdir: Path) -> Fleet:
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        raise SystemExit("nginx is not installed (apt-get install nginx-light)")
    url = f"{DATABASE}{'&' if '?' in DATABASE else '?'}options=-csearch_path%3D{SCHEMA}"
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "WEB_CONCURRENCY": "2",
        "TRUSTED_PROXIES": "1",
        "RATELIMIT_ENABLED": "false",
        "LOG_LEVEL": "WARNING",
    }
    for args in (["db", "upgrade"], ["catalog", "seed"]):
        subprocess.run([str(sb.BIN / "scalecost"), *args], env=env, check=True, capture_output=True)
    log = open(workdir / "gunicorn.log", "ab")  # noqa: SIM115  # both replicas; read by stall_bench.main
    ports = [free_port(), free_port()]
    procs = [
        subprocess.Popen(
            [str(sb.BIN / "gunicorn"), "-c", "service/gunicorn_conf.py", "scalecost:create_app()"],
            cwd=sb.ROOT,
            env={**env, "PORT": str(port)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for port in ports
    ]
    (workdir / "nginx").mkdir()
    conf = workdir / "nginx.conf"
    conf.write_text(nginx_conf(sb.PORT, ports, workdir))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    procs.append(
        subprocess.Popen(
            [nginx, "-p", str(workdir), "-c", str(conf), "-e", "stderr", "-g", "daemon off; user root;"],
            stdout=open(workdir / "nginx.log", "wb"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
    )
    fleet = Fleet(procs)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sb.call("GET", "/healthz", timeout=1)[0] == 200:
            return fleet
        time.sleep(0.3)
    fleet.kill()
    raise SystemExit(
        "the fleet did not start: " + (workdir / "gunicorn.log").read_text(errors="replace")[-2000:]
    )


def main() -> None:
    admin = create_engine(
        DATABASE.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{SCHEMA}"'))
    sb.start_server = start_fleet  # stall_bench.main starts (and stops) the fleet instead of one server
    try:
        print(
            f"compose shape: nginx (deploy/nginx.conf) on {sb.BASE}, 2 replicas x 2 gevent workers, PostgreSQL"
        )
        sb.main()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE'))
        admin.dispose()


if __name__ == "__main__":
    sys.exit(main())
