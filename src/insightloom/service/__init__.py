"""The HTTP service: a job API with live progress (SSE), plan review, downloads and a web page.

``insightloom serve`` calls :func:`run_server`. :func:`create_app` builds the FastAPI app for other hosts (tests,
an ASGI server of your choice); :class:`JobQueue` is the seam where a distributed engine can replace the in-process
worker pool.
"""

from .app import create_app
from .queue import JobQueue, QueueFull, ThreadPoolJobQueue, WorkItem
from .server import ThreadedServer, run_server
from .service_settings import ServiceConfig

__all__ = [
    "JobQueue",
    "QueueFull",
    "ServiceConfig",
    "ThreadPoolJobQueue",
    "ThreadedServer",
    "WorkItem",
    "create_app",
    "run_server",
]
