"""The service's JobQueue on Celery: the API queues work items to a broker (Redis, SQS); workers elsewhere run them.

Every item names the job and the stage it expects to run (``start@intake``, ``review@rev2``, ``resume@supervise``).
A worker checks the job's stage under its lock before any work (:meth:`JobManager.run_item`): a redelivered or
repeated item whose stage the job has passed is acknowledged and does nothing, and a job whose runner died resumes
from the stage it stopped in, never from intake. So redelivery is safe, and it is what recovers a killed worker.

Why the visibility timeout is long: with late acks, an unacknowledged message is handed to another worker once the
broker's visibility timeout passes. A job's supervise stage may run up to ``max_wall_seconds`` (2 h by default), so
the timeout is set above that; a shorter one would redeliver running jobs (a no-op now, but a wasted worker slot
each time). A worker that dies with its container does not wait for that timeout: each worker runs a
:class:`~insightloom.service.sweeper.Sweeper` that re-queues jobs left ``running`` with a dead lock.

    python -m insightloom.service.celery_queue worker --concurrency 2     # a worker (refuses to start with exit 2
                                                                          # when provider auto finds no credentials)
    python -m insightloom.service.celery_queue api --host 0.0.0.0 --port 8000   # the API + web page

Celery is an optional extra (``pip install 'insightloom[celery]'``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from celery import Celery, signals
from kombu import Connection

from ..config import Settings, deployment_settings, load_settings
from ..errors import BrokerUnavailable, ConfigError, InsightloomError
from ..joblock import JobLocked
from ..storage import open_store
from .manager import JobManager
from .queue import WorkItem
from .service_settings import ServiceConfig
from .sweeper import Sweeper

logger = logging.getLogger(__name__)

QUEUE = "insightloom"
BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
#: Seconds between retries of an item whose job another live runner holds (its items run one at a time).
LOCKED_RETRY_S = 5
#: Above any job's running time (see the module docstring); margin for intake, planning and slow stores.
VISIBILITY_MARGIN_S = 3600


def _max_wall_seconds() -> float:
    try:
        return load_settings(None).max_wall_seconds
    except InsightloomError:  # the worker's own start reports a bad config; the default keeps this import working
        return Settings().max_wall_seconds


def env_seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment.

    Raises:
        ConfigError: The variable is set to something else (the worker exits 2 with this fix).
    """
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ConfigError(f"{name} must be a number of seconds above 0, not {raw!r}.", f"e.g. {name}={default:g}")
    return value


def visibility_timeout_s() -> int:
    """The broker's visibility timeout: ``INSIGHTLOOM_VISIBILITY_TIMEOUT_S``, else max_wall_seconds + an hour."""
    try:
        return int(env_seconds("INSIGHTLOOM_VISIBILITY_TIMEOUT_S", _max_wall_seconds() + VISIBILITY_MARGIN_S))
    except ConfigError:  # reported by the worker's start-up check, which exits 2; importing must not fail
        return int(_max_wall_seconds() + VISIBILITY_MARGIN_S)


def sweep_timings() -> tuple[float, float]:
    """The sweeper's interval and grace, in seconds (``INSIGHTLOOM_SWEEP_INTERVAL_S``, ``..._GRACE_S``)."""
    return env_seconds("INSIGHTLOOM_SWEEP_INTERVAL_S", 30.0), env_seconds("INSIGHTLOOM_SWEEP_GRACE_S", 120.0)


celery = Celery("insightloom", broker=BROKER_URL)
celery.conf.update(
    task_acks_late=True,  # a worker that dies mid-job leaves its item to be redelivered; the stage key makes it safe
    task_reject_on_worker_lost=True,  # a killed child's item goes back at once, instead of being lost
    worker_prefetch_multiplier=1,
    task_default_queue=QUEUE,
    task_serializer="json",
    accept_content=["json"],
    broker_connection_retry_on_startup=True,
    broker_connection_timeout=3,
    # Above max_wall_seconds, so a long supervise is never handed to a second worker while it runs (docstring).
    broker_transport_options={"visibility_timeout": visibility_timeout_s(), "socket_connect_timeout": 3},
    worker_hijack_root_logger=False,
)
_manager: JobManager | None = None
_sweeper: Sweeper | None = None


def safe_url(url: str) -> str:
    """The broker URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


_settings: Settings | None = None


def worker_settings() -> Settings:
    """The worker's settings: provider ``auto`` must find credentials here (exit 2 otherwise, never offline)."""
    global _settings
    if _settings is None:
        _settings = deployment_settings(load_settings(None), "celery worker")
    return _settings


def manager() -> JobManager:
    """One manager per worker process, built from the same env as the API (artifacts store, provider...)."""
    global _manager
    if _manager is None:
        _manager = JobManager(worker_settings(), ServiceConfig.from_env())
    return _manager


@celery.task(name="insightloom.run_item", bind=True, max_retries=None)
def run_item(self: Any, data: dict[str, Any]) -> str:
    """Run one work item; an item whose job another live runner holds is retried (items of a job run in order)."""
    item = WorkItem.from_dict(data)
    info = self.request.delivery_info or {}
    logger.info(
        "delivery task=%s key=%s job=%s redelivered=%s retries=%d",
        self.request.id,
        item.key,
        item.job_id,
        bool(info.get("redelivered")),
        self.request.retries or 0,
    )
    try:
        return manager().run_item(item)
    except JobLocked as exc:
        if (self.request.retries or 0) >= max_locked_retries():
            logger.error("job %s: %s dropped: the job stayed locked for too long (%s)", item.job_id, item.key, exc)
            return "skip"  # the sweeper queues the job again if its runner is gone
        raise self.retry(countdown=LOCKED_RETRY_S) from None


def max_locked_retries() -> int:
    """Retries of a locked job's item: long enough for the longest job to finish, then the item is dropped."""
    return int(visibility_timeout_s() / LOCKED_RETRY_S) + 1


class CeleryJobQueue:
    """``JobQueue`` over Celery; items of one job are ordered by their job's lock and the retry above."""

    in_process = False

    def __init__(self, broker_url: str = BROKER_URL) -> None:
        self.broker_url = broker_url

    def put(self, item: WorkItem) -> None:
        """Queue an item.

        Raises:
            BrokerUnavailable: The broker did not take the message (it is down or unreachable).
        """
        try:
            with Connection(self.broker_url, connect_timeout=2) as conn:
                celery.send_task(
                    run_item.name,
                    args=[item.to_dict()],
                    queue=QUEUE,
                    connection=conn,
                    retry=True,
                    retry_policy={"max_retries": 1, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1},
                )
        except Exception as exc:  # kombu and redis raise their own connection errors
            raise BrokerUnavailable(
                f"The job queue's broker ({safe_url(self.broker_url)}) cannot be reached, so the job was not queued "
                f"({type(exc).__name__}).",
                "try again in a minute; operators: check that the broker runs and CELERY_BROKER_URL points at it.",
            ) from exc

    def broker_ok(self) -> bool:
        """Whether the broker accepts a connection within a second."""
        try:
            with Connection(self.broker_url, connect_timeout=1, transport_options={"socket_timeout": 1}) as conn:
                conn.ensure_connection(max_retries=0, timeout=1)
            return True
        except Exception:
            return False

    def close(self) -> None:
        pass


@signals.worker_init.connect
def _check_worker(**_: Any) -> None:
    """Refuse to start a worker whose provider cannot be resolved (exit 2 with the fix), before it takes work."""
    try:
        worker_settings()
        sweep_timings()
        env_seconds("INSIGHTLOOM_VISIBILITY_TIMEOUT_S", 1.0)
    except InsightloomError as exc:
        print(f"error: {exc.message} Fix: {exc.fix}", file=sys.stderr, flush=True)
        os._exit(exc.exit_code)  # Celery turns exceptions here into a traceback and exit 1; the fix must show


@signals.worker_ready.connect
def _start_sweeper(**_: Any) -> None:
    """Each worker sweeps for jobs no live runner holds (a dead worker's), so no API restart is needed."""
    global _sweeper
    settings = worker_settings()
    store = open_store(settings.artifact_store, settings.artifacts.expanduser().resolve())
    interval, grace = sweep_timings()
    _sweeper = Sweeper(store, CeleryJobQueue().put, interval_s=interval, grace_s=grace).start()
    logger.info("sweeper started: every %.0f s, grace %.0f s, store %s", interval, grace, store.uri)


def main(argv: list[str] | None = None) -> None:
    """``worker [celery worker options]`` or ``api --host H --port P``."""
    from .server import build_server, forget_secret_env

    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if argv[:1] == ["worker"]:
        celery.worker_main(["worker", "--queues", QUEUE, "--loglevel", "INFO", *argv[1:]])
        return
    parser = argparse.ArgumentParser(description="insightloom API with a Celery queue, or a Celery worker")
    parser.add_argument("role", choices=["api", "worker"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    from . import create_app
    from .service_settings import prepare_serving

    config = ServiceConfig.from_env()
    try:
        settings = prepare_serving(args.host, load_settings(None), config)
        app = create_app(settings, config, queue=CeleryJobQueue())
        forget_secret_env()  # read once: nothing this process starts later inherits the token
    except InsightloomError as exc:
        print(f"error: {exc.message} Fix: {exc.fix}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    build_server(app, args.host, args.port).run()


if __name__ == "__main__":
    main()
