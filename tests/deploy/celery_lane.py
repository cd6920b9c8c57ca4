"""Real processes for the Celery lane: a loopback ``redis-server`` and Celery workers running the product's task.

Shared by ``tests/deploy/test_celery_*.py`` and ``benchmarks/service_load.py --backend celery``. Nothing here fakes
the broker or the worker: the workers are ``python -m insightloom.service.celery_queue worker`` processes, as deployed.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_paths import child_env

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.1) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def stop_process(proc: subprocess.Popen[bytes] | None, kill: Callable[[], None]) -> None:
    """SIGTERM, then ``kill`` (kill -9 of the process or its group) when it has not exited within 30 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill()


def redis_available() -> bool:
    return Path(REDIS).is_file()


class RedisServer:
    """``redis-server`` on a loopback port, persisting to an append-only file so a restart keeps its queues."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        args = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"]
        args += ["--appendfsync", "always", "--dir", str(self.folder), "--protected-mode", "yes"]
        log = (self.folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        wait_until(self.answers, 15, "redis-server to answer")
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def worker_env(broker: str, artifacts: str, home: Path, **extra: str) -> dict[str, str]:
    """A clean worker environment: the broker, the store, offline chosen explicitly, no AWS credentials or probes."""
    env = child_env("AWS_", "INSIGHTLOOM_", "CELERY_")
    env.update(
        CELERY_BROKER_URL=broker,
        INSIGHTLOOM_ARTIFACTS=artifacts,
        INSIGHTLOOM_PROVIDER="offline",
        INSIGHTLOOM_SWEEP_INTERVAL_S="1",
        INSIGHTLOOM_SWEEP_GRACE_S="5",
        HOME=str(home),
        AWS_EC2_METADATA_DISABLED="true",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


class CeleryWorker:
    """One worker process (prefork, one child), its log in ``log_path``; kill -9 the child or the whole worker."""

    def __init__(self, name: str, env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.env = env
        self.log_path = log_dir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> CeleryWorker:
        args = [sys.executable, "-m", "insightloom.service.celery_queue", "worker", "--concurrency", "1"]
        args += ["--pool", "prefork", "--hostname", f"{self.name}@%h", "--without-gossip", "--without-mingle"]
        log = self.log_path.open("ab")
        proc = subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.proc = proc
        wait_until(lambda: "ready." in self.log() or proc.poll() is not None, 60, f"worker {self.name} to start")
        assert proc.poll() is None, f"worker {self.name} exited:\n{self.log()[-3000:]}"
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def children(self) -> list[int]:
        assert self.proc is not None
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True, check=False)
        return [int(pid) for pid in out.stdout.split()]

    def kill_child(self) -> int:
        """kill -9 the pool child (the process running the task); the worker's main process stays."""
        child = self.children()[0]
        os.kill(child, signal.SIGKILL)
        return child

    def kill(self) -> None:
        """kill -9 the whole worker (main process and children), as when its container dies."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)

    def stop(self) -> None:
        """A warm shutdown (SIGTERM): the worker finishes nothing new and exits."""
        stop_process(self.proc, self.kill)
