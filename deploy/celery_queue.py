"""The Celery worker and API for ``docker-compose.yml``: a shim over :mod:`insightloom.service.celery_queue`.

python deploy/celery_queue.py api --host 0.0.0.0 --port 8000     # the API + web page, queueing to Celery
python deploy/celery_queue.py worker --concurrency 2              # a worker (exit 2 when auto finds no credentials)
celery --app insightloom.service.celery_queue:celery worker --queues insightloom   # the same, by Celery
"""

from __future__ import annotations

from insightloom.service.celery_queue import celery, main

__all__ = ["celery", "main"]

if __name__ == "__main__":
    main()
