"""Helpers for the service tests: two users, offline settings, a queue that only records, ready-made job folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from insightloom.config import Settings
from insightloom.fileio import write_text_atomic
from insightloom.service import ServiceConfig, WorkItem, create_app
from insightloom.service.manager import OWNERS_DIR
from insightloom.workflow import JobOptions, create_job
from repo_paths import DATA

MOON_DIR = DATA / "moon-market-en"
MOON = MOON_DIR / "moon-market-fresh-food-sales.csv"
YUMMY = DATA / "yummy-food" / "yummy-food-market.csv"
ANA_TOKEN, BEN_TOKEN = "ana-token-0123456789abcdef", "ben-token-0123456789abcdef"
TOKENS = {ANA_TOKEN: "ana", BEN_TOKEN: "ben"}
ANA = {"Authorization": f"Bearer {ANA_TOKEN}"}
BEN = {"Authorization": f"Bearer {BEN_TOKEN}"}
REQUEST = "Analyze this data and write a DOCX report"


class RecordingQueue:
    """A JobQueue that runs nothing: API tests look at what would have run (as if the local pool were busy)."""

    in_process = True

    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def put(self, item: WorkItem) -> None:
        self.items.append(item)

    def close(self) -> None:
        pass


def offline_settings(root: Path) -> Settings:
    settings = Settings(artifacts=root).with_provider("offline")
    return settings


def make_app(root: Path, queue: Any = None, **config: Any) -> FastAPI:
    """The app over ``root`` with two users (ana, ben); ``config`` overrides ServiceConfig fields."""
    return create_app(offline_settings(root), ServiceConfig(tokens=dict(TOKENS), **config), queue=queue, cwd=root)


def make_job(root: Path, owner: str | None, **status: Any) -> Path:
    """A job folder as the service leaves it (without running anything); ``status`` keys go into job.json."""
    rt = create_job(JobOptions(inputs=[MOON], request=REQUEST, settings=offline_settings(root), cwd=root))
    extra = {"owner": owner} if owner else {}
    rt.job.update(**extra, **status)
    if owner:  # what the service records beside the jobs, out of the scripts' reach
        write_text_atomic(root / OWNERS_DIR / rt.job.id, owner + "\n")
    return rt.root


def upload(path: Path = MOON, name: str | None = None) -> tuple[str, tuple[str, bytes, str]]:
    return ("files", (name or path.name, path.read_bytes(), "application/octet-stream"))


def job_json(job_dir: Path) -> dict[str, Any]:
    return json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
