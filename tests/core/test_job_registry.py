"""The CLI's job registry: recorded, pruned of folders that are gone, safe under concurrent runs and planted paths."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import sys
from pathlib import Path

import pytest

from insightloom.config import default_jobs_registry, load_settings
from insightloom.job_registry import RegistryIndex, known_jobs, record_job, registered_jobs
from insightloom.jobs import JobFolder


def _job(parent: Path, name: str = "job") -> JobFolder:
    return JobFolder.create(parent / "artifacts", parent / name)


def _entries(registry: Path) -> list[dict[str, str]]:
    return json.loads(registry.read_text(encoding="utf-8"))["jobs"]


def test_a_recorded_job_is_listed_with_its_job_json(tmp_path: Path) -> None:
    registry = tmp_path / "data" / "jobs.json"
    job = _job(tmp_path)
    record_job(registry, job.id, job.root)
    record_job(registry, job.id, job.root)  # recorded again (the same folder): still one entry
    [listed] = registered_jobs(registry)
    assert (listed.id, listed.root, listed.status["status"]) == (job.id, job.root, "queued")
    assert len(_entries(registry)) == 1


def test_a_vanished_folder_is_pruned_from_the_registry(tmp_path: Path) -> None:
    registry = tmp_path / "jobs.json"
    kept, vanished, emptied = _job(tmp_path, "kept"), _job(tmp_path, "vanished"), _job(tmp_path, "emptied")
    for job in (kept, vanished, emptied):
        record_job(registry, job.id, job.root)
    shutil.rmtree(vanished.root)
    shutil.rmtree(emptied.root)
    emptied.root.mkdir()  # the folder reused for something else: no job is left in it
    assert [job.id for job in registered_jobs(registry)] == [kept.id]
    assert len(_entries(registry)) == 3  # a plain read (a server's) leaves the file alone
    assert [job.id for job in registered_jobs(registry, prune=True)] == [kept.id]
    assert [e["id"] for e in _entries(registry)] == [kept.id]


def test_entries_the_host_cannot_check_are_skipped(tmp_path: Path) -> None:
    registry = tmp_path / "jobs.json"
    good, linked, renamed, planted = (_job(tmp_path, name) for name in ("good", "linked", "renamed", "planted"))
    for job in (good, linked, renamed, planted):
        record_job(registry, job.id, job.root)
    # A link where a recorded folder was, a job.json whose id a script rewrote, a job.json that is a link.
    target = linked.root.rename(tmp_path / "elsewhere")
    linked.root.symlink_to(target, target_is_directory=True)
    status = json.loads((renamed.root / "job.json").read_text())
    (renamed.root / "job.json").write_text(json.dumps({**status, "id": good.id}))
    (planted.root / "job.json").unlink()
    (planted.root / "job.json").symlink_to(good.root / "job.json")
    data = json.loads(registry.read_text())
    data["jobs"] += [
        {"id": good.id, "path": "relative/job"},
        {"id": good.id, "path": str(good.root / ".." / "good")},
        {"id": "../../etc", "path": str(good.root)},
        "not an entry",
    ]
    registry.write_text(json.dumps(data))
    assert [(job.id, job.root) for job in registered_jobs(registry, prune=True)] == [(good.id, good.root)]


def test_the_index_finds_a_job_by_its_recorded_id_and_sees_new_records(tmp_path: Path) -> None:
    registry = tmp_path / "jobs.json"
    index = RegistryIndex(registry)
    first = _job(tmp_path, "first")
    assert index.find(first.id) is None
    record_job(registry, first.id, first.root)
    assert index.find(first.id) == first.root
    second = _job(tmp_path, "second")
    record_job(registry, second.id, second.root)
    assert index.find(second.id) == second.root
    status = json.loads((second.root / "job.json").read_text())
    (second.root / "job.json").write_text(json.dumps({**status, "id": first.id}))  # a script claims another id
    assert index.find(second.id) is None and index.find(first.id) == first.root
    assert [job.id for job in index.jobs()] == [first.id]


def test_an_unreadable_registry_lists_nothing_and_is_written_again(tmp_path: Path) -> None:
    registry = tmp_path / "jobs.json"
    registry.write_text("{not json")
    assert registered_jobs(registry) == []
    job = _job(tmp_path)
    record_job(registry, job.id, job.root)
    assert [j.id for j in registered_jobs(registry)] == [job.id]


def test_a_registry_that_cannot_be_written_warns_and_never_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    job = _job(tmp_path)
    record_job(blocker / "jobs.json", job.id, job.root)  # its folder is a file
    assert "INSIGHTLOOM_JOBS_REGISTRY" in caplog.text


def _record_many(registry: str, parent: str, worker: int) -> None:
    for n in range(10):
        job = JobFolder.create(Path(parent), Path(parent) / f"w{worker}-{n}")
        record_job(Path(registry), job.id, job.root)


def test_concurrent_cli_runs_lose_no_entry(tmp_path: Path) -> None:
    registry = tmp_path / "jobs.json"
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    workers = [context.Process(target=_record_many, args=(str(registry), str(tmp_path), w)) for w in range(6)]
    for proc in workers:
        proc.start()
    for proc in workers:
        proc.join(60)
        assert proc.exitcode == 0
    assert len(registered_jobs(registry)) == 60


def test_known_jobs_lists_the_artifacts_folder_and_the_registry_each_once(tmp_path: Path) -> None:
    registry = tmp_path / "jobs.json"
    artifacts = tmp_path / "artifacts"
    inside = JobFolder.create(artifacts)
    outside = _job(tmp_path, "outside")
    for job in (inside, outside):
        record_job(registry, job.id, job.root)
    listed = [job.id for job in known_jobs(artifacts, registry)]
    assert sorted(listed) == sorted([inside.id, outside.id])  # each once; two ids of one second sort by their suffix
    assert [job.id for job in known_jobs(tmp_path / "none", None)] == []


def test_the_registry_location_is_a_setting(tmp_path: Path) -> None:
    assert load_settings(env={"INSIGHTLOOM_JOBS_REGISTRY": str(tmp_path / "r.json")}, cwd=tmp_path).jobs_registry == (
        tmp_path / "r.json"
    )
    (tmp_path / "insightloom.yaml").write_text(f"jobs_registry: {tmp_path / 'y.json'}\n")
    assert load_settings(env={}, cwd=tmp_path).jobs_registry == tmp_path / "y.json"
    if sys.platform != "darwin":
        xdg = default_jobs_registry({"XDG_DATA_HOME": str(tmp_path / "xdg")})
        assert xdg == tmp_path / "xdg" / "insightloom" / "jobs.json"
        assert default_jobs_registry({"XDG_DATA_HOME": "relative"}) == default_jobs_registry({})
    assert default_jobs_registry({}).parts[-2:] == ("insightloom", "jobs.json")
