"""Eight jobs submitted at once through the API all complete, each with its own artifacts, seen by its owner only.

The wall time of this scenario is measured by ``benchmarks/service_load.py``; this test only checks correctness.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from servicekit import ANA_TOKEN, BEN_TOKEN, MOON, REQUEST, YUMMY, make_app

from insightloom.service import ThreadedServer
from insightloom.service.client import ServiceClient

pytestmark = pytest.mark.e2e
JOBS = 8


def test_eight_concurrent_jobs_complete_separately_and_stay_private(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    submitted: dict[int, tuple[str, Path]] = {}
    ends: dict[int, str] = {}
    errors: list[BaseException] = []
    go = threading.Event()

    def one(index: int, url: str) -> None:
        data = (MOON, YUMMY)[index % 2]
        try:
            with ServiceClient(url, ANA_TOKEN) as api:
                go.wait(60)
                job_id = api.submit([data], REQUEST, provider="offline", auto_approve=True)
                submitted[index] = (job_id, data)
                ends[index] = api.wait_for(job_id, ["completed", "needs_review", "failed", "cancelled"])[-1]["kind"]
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    with ThreadedServer(make_app(root, workers=4, keepalive_s=2)) as server:
        threads = [threading.Thread(target=one, args=(i, server.url)) for i in range(JOBS)]
        for thread in threads:
            thread.start()
        go.set()
        for thread in threads:
            thread.join(900)
        assert not errors, errors
        with ServiceClient(server.url, BEN_TOKEN) as ben, ServiceClient(server.url, ANA_TOKEN) as ana:
            assert ben.jobs() == []
            assert {j["id"] for j in ana.jobs()} == {job_id for job_id, _ in submitted.values()}
            for job_id, _ in submitted.values():
                assert ben.http.get(f"/jobs/{job_id}").status_code == 404
                assert ben.http.get(f"/jobs/{job_id}/artifacts/final_report.docx").status_code == 404

    assert sorted(ends) == list(range(JOBS)) and set(ends.values()) == {"completed"}, ends
    ids = {job_id for job_id, _ in submitted.values()}
    assert len(ids) == JOBS
    for job_id, data in submitted.values():
        job = root / job_id
        calcs = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
        assert calcs and {c["source_file"] for c in calcs} == {data.name}
        other = (YUMMY if data == MOON else MOON).name
        assert other not in (job / "all_results.txt").read_text(encoding="utf-8")
        assert [p.name for p in (job / "data").iterdir()] == [data.name]
        events = [json.loads(line) for line in (job / "events.jsonl").read_text(encoding="utf-8").splitlines()]
        assert {e["job_id"] for e in events} == {job_id}
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))
        assert (job / "final_report.docx").is_file()
