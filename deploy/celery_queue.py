"""The service's JobQueue on Celery: the API puts work items on a broker, workers on other machines run them.

Documentation-grade: nothing in the test suite runs it (Celery is not a dependency of the product). It shows the
seam: ``WorkItem`` is plain data, ``JobManager.execute`` runs one item from the job folder alone, and ``job.lock``
keeps a job to one runner, so workers need only the shared artifacts volume (EFS, NFS, a compose volume).

    python deploy/celery_queue.py api --host 0.0.0.0 --port 8000       # the API + web page, queueing to Celery
    celery --app celery_queue:celery worker --queues insightloom      # a worker (run from deploy/)

Limits of this engine compared with the in-process pool: a cancel reaches jobs waiting for review, but not a job
queued for or running on a worker (the API answers 409 for those); two reviews of one plan sent at the same moment
are both queued, and the second is dropped by the worker (logged) because the job no longer awaits review.
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from celery import Celery

from insightloom.config import load_settings
from insightloom.joblock import lock_alive
from insightloom.service import ServiceConfig, WorkItem, create_app
from insightloom.service.manager import JobManager
from insightloom.service.server import build_server
from insightloom.service.service_settings import check_binding

logger = logging.getLogger(__name__)

QUEUE = "insightloom"
celery = Celery("insightloom", broker=os.environ.get("CELERY_BROKER_URL", "redis://localhost:6379/0"))
celery.conf.update(
    task_acks_late=True,  # a worker that dies mid-job leaves the item to be redelivered; resume picks up from disk
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_default_queue=QUEUE,
    task_serializer="json",
    accept_content=["json"],
)
_manager: JobManager | None = None


def manager() -> JobManager:
    """One manager per worker process, built from the same env as the API (artifacts root, provider...)."""
    global _manager
    if _manager is None:
        _manager = JobManager(load_settings(None), ServiceConfig.from_env())
    return _manager


@celery.task(name="insightloom.run_item", bind=True, max_retries=720)
def run_item(self: Any, data: dict[str, Any]) -> None:
    """Run one work item; an item whose job another runner holds waits and retries (items of a job run in order)."""
    item = WorkItem.from_dict(data)
    if lock_alive(manager().job_dir(item.job_id)):
        raise self.retry(countdown=5)
    manager().execute(item)


class CeleryJobQueue:
    """``JobQueue`` over Celery; items of one job are ordered by their job's lock and the retry above."""

    in_process = False

    def put(self, item: WorkItem) -> None:
        run_item.apply_async(args=[item.to_dict()], queue=QUEUE)

    def close(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description="insightloom API with a Celery queue")
    parser.add_argument("role", choices=["api"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = ServiceConfig.from_env()
    check_binding(args.host, config)
    app = create_app(load_settings(None), config, queue=CeleryJobQueue())
    build_server(app, args.host, args.port).run()


if __name__ == "__main__":
    main()
