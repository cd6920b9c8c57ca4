"""The local artifact store: job files read and listed without following planted links, records beside the jobs."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from insightloom.errors import BadInputError, JobNotFound
from insightloom.joblock import JobLocked
from insightloom.storage import open_store
from insightloom.storage.local import LocalStore

JOB = "20260101T120000Z-0123456789ab"
OTHER = "20260101T120001Z-0123456789ac"


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    root = tmp_path / "artifacts"
    job = root / JOB
    (job / "report").mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"id": JOB, "status": "queued"}), encoding="utf-8")
    (job / "events.jsonl").write_bytes(b'{"id": 1}\n{"id": 2}\n')
    (job / "report" / "final_report.md").write_text("# Report\n", encoding="utf-8")
    return LocalStore(root)


def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("host secret\n", encoding="utf-8")
    return path


def served(store: LocalStore, relative: str) -> bytes | None:
    """What a download of ``relative`` streams: the bytes of the handle the store opened, or None (not found)."""
    opened = store.open_file(JOB, relative)
    if opened is None:
        return None
    handle, size = opened
    with handle:
        data = handle.read()
    assert len(data) == size
    return data


def test_open_store_without_a_uri_is_the_local_folder(tmp_path: Path) -> None:
    store = open_store(None, tmp_path / "a" / ".." / "artifacts")
    assert isinstance(store, LocalStore)
    assert store.remote is False and store.root == (tmp_path / "artifacts").resolve() and store.uri == str(store.root)
    assert store.job_dir(JOB) == store.root / JOB


def test_reads_lists_and_tails_real_job_files(store: LocalStore) -> None:
    assert store.job_ids() == [JOB]
    assert store.read_bytes(JOB, "report/final_report.md") == b"# Report\n"
    assert store.read_bytes(JOB, "missing.txt") is None
    assert store.read_from(JOB, "events.jsonl", 10) == b'{"id": 2}\n'
    assert store.read_from(JOB, "events.jsonl", 20) == b""
    assert store.read_from(JOB, "nothing-yet.jsonl", 0) == b""
    (store.job_dir(JOB) / "job.lock").write_text("{}", encoding="utf-8")
    (store.job_dir(JOB) / ".plan.md.1234.tmp").write_text("half", encoding="utf-8")
    assert store.list_files(JOB) == ["events.jsonl", "job.json", "report/final_report.md"]
    assert store.pull(JOB) == store.job_dir(JOB) and store.push(JOB) == 0


def test_job_ids_skip_folders_that_are_not_jobs(store: LocalStore, tmp_path: Path) -> None:
    (store.root / ".owners").mkdir()
    (store.root / "notes").mkdir()
    (store.root / "notes" / "job.json").write_text("{}", encoding="utf-8")
    linked = tmp_path / "elsewhere"
    linked.mkdir()
    (linked / "job.json").write_text("{}", encoding="utf-8")
    (store.root / OTHER).symlink_to(linked)
    assert store.job_ids() == [JOB]


def test_never_reads_or_lists_through_a_planted_link(store: LocalStore, tmp_path: Path) -> None:
    target = secret(tmp_path)
    job = store.job_dir(JOB)
    (job / "plan.md").symlink_to(target)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.csv").write_text("a,b\n", encoding="utf-8")
    (job / "linked").symlink_to(outside, target_is_directory=True)
    (job / "report" / "final_report.docx").symlink_to(target)
    assert store.read_bytes(JOB, "plan.md") is None
    assert store.read_from(JOB, "plan.md", 0) == b""
    assert store.read_bytes(JOB, "linked/data.csv") is None
    assert served(store, "plan.md") is None and served(store, "linked/data.csv") is None
    assert served(store, "report/final_report.docx") is None
    assert served(store, "report/final_report.md") == b"# Report\n"
    assert "plan.md" not in store.list_files(JOB) and "linked/data.csv" not in store.list_files(JOB)
    assert "report/final_report.docx" not in store.list_files(JOB)


def test_a_planted_fifo_is_not_read(store: LocalStore) -> None:
    os.mkfifo(store.job_dir(JOB) / "events.fifo")
    assert store.read_bytes(JOB, "events.fifo") is None  # returns at once instead of blocking on the pipe
    assert served(store, "events.fifo") is None


@pytest.mark.parametrize("relative", ["../secret.txt", "/etc/passwd", "a//b", "./job.json", "job.json\x00", ""])
def test_paths_that_could_leave_the_folder_are_refused(store: LocalStore, relative: str) -> None:
    assert store.read_bytes(JOB, relative) is None
    assert served(store, relative) is None
    with pytest.raises(BadInputError):
        store.write_bytes(JOB, relative, b"x")


@pytest.mark.parametrize("job_id", ["../../etc", ".owners", "x", f"{JOB}/..", ""])
def test_malformed_job_ids_never_become_paths(store: LocalStore, job_id: str) -> None:
    with pytest.raises(JobNotFound):
        store.job_dir(job_id)
    with pytest.raises(JobNotFound):
        store.write_meta("owners", job_id, "ana\n")
    assert store.read_bytes(job_id, "job.json") is None


def test_hidden_files_and_the_lock_are_not_served(store: LocalStore) -> None:
    job = store.job_dir(JOB)
    (job / "job.lock").write_text("{}", encoding="utf-8")
    (job / ".hidden").write_text("x", encoding="utf-8")
    assert served(store, "job.lock") is None and served(store, ".hidden") is None


def test_write_bytes_replaces_a_planted_link_instead_of_writing_through_it(store: LocalStore, tmp_path: Path) -> None:
    target = secret(tmp_path)
    job = store.job_dir(JOB)
    (job / "cancel.request").symlink_to(target)
    store.write_bytes(JOB, "cancel.request", b"2026-01-01T00:00:00Z\n")
    assert target.read_text(encoding="utf-8") == "host secret\n"
    assert not (job / "cancel.request").is_symlink()
    assert store.read_bytes(JOB, "cancel.request") == b"2026-01-01T00:00:00Z\n"
    (job / "code").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(BadInputError):
        store.write_bytes(JOB, "code/run.py", b"print(1)")
    assert not (tmp_path / "run.py").exists()


def test_owner_records_are_the_existing_owners_folder(store: LocalStore) -> None:
    (store.root / ".owners").mkdir()
    (store.root / ".owners" / JOB).write_text("ana\n", encoding="utf-8")  # as the service has always written it
    assert store.read_meta("owners", JOB) == "ana\n"
    assert store.read_meta("sweeps", JOB) is None
    store.write_meta("sweeps", JOB, "2026-01-01T00:00:00Z")
    assert (store.root / ".sweeps" / JOB).read_text(encoding="utf-8") == "2026-01-01T00:00:00Z"
    store.write_meta("owners", OTHER, "ben\n")
    assert (store.root / ".owners" / OTHER).read_text(encoding="utf-8") == "ben\n"


def test_delete_job_removes_the_folder_and_its_records(store: LocalStore) -> None:
    store.write_meta("owners", JOB, "ana\n")
    store.write_meta("sweeps", JOB, "now")
    store.write_meta("owners", OTHER, "ben\n")
    store.delete_job(JOB)
    assert not store.job_dir(JOB).exists() and store.job_ids() == []
    assert store.read_meta("owners", JOB) is None and store.read_meta("sweeps", JOB) is None
    assert store.read_meta("owners", OTHER) == "ben\n"


def test_delete_job_removes_a_linked_folder_not_its_target(store: LocalStore, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep", encoding="utf-8")
    (store.root / OTHER).symlink_to(elsewhere, target_is_directory=True)
    store.delete_job(OTHER)
    assert not (store.root / OTHER).is_symlink() and (elsewhere / "keep.txt").is_file()


def test_lock_is_the_job_lock(store: LocalStore) -> None:
    assert not store.lock_alive(JOB)
    with store.lock(JOB) as held:
        assert held.fence == 0 and isinstance(held.lost, threading.Event) and not held.lost.is_set()
        assert (store.job_dir(JOB) / "job.lock").is_file() and store.lock_alive(JOB)
        with pytest.raises(JobLocked), store.lock(JOB):
            pass
    assert not store.lock_alive(JOB) and not (store.job_dir(JOB) / "job.lock").exists()
