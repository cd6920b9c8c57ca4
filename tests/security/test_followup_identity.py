"""A job's identity never comes from a file a script can write, and the follow-up's scratch copy never follows a link
(issue 24, holes 2 and 3: ``ask --analyze`` wrote outside the job through a rewritten ``id`` in job.json, and copied
another job's files through a ``data/`` or ``code/`` link).

A script of a job may rewrite its job.json or replace anything in its folder with a link. The job's id comes from
its folder (the artifacts store names folders by id); the scratch folder is a fresh ``mkdtemp`` folder; the copy takes
regular files only and refuses the follow-up, naming the link, at the first link it meets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from finished_jobs import MOON_EN, offline, run_finished_job
from insightloom.ask import analyze
from insightloom.ask.analyze import run_followup
from insightloom.errors import BadInputError, UnsafePathError
from insightloom.fileio import write_text_atomic
from insightloom.jobs import JobFolder, new_job_id
from insightloom.service import ServiceConfig, WorkItem, create_app
from insightloom.service.manager import OWNERS_DIR
from insightloom.workflow import JobOptions, create_job

QUESTION = "What is the total Amount by Region?"
#: What the other job holds, and nothing of this job: it must never appear in this job or its scratch copy.
SECRET = b"SECRET-LEDGER-of-the-other-job-7f3a"
TOKEN = "ana-token-0123456789abcdef"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A job run to ``completed`` on the offline model, in a folder named by its id."""
    return run_finished_job(tmp_path_factory.mktemp("followup-identity") / "artifacts")


def _copy_job(finished: Path, artifacts: Path) -> Path:
    """A copy of ``finished`` as a job of its own: a new id, which its folder is named by."""
    job_id = new_job_id()
    root = Path(shutil.copytree(finished, artifacts / job_id, symlinks=True))
    set_job_json(root, id=job_id)
    return root


def set_job_json(root: Path, **keys: object) -> None:
    """Rewrite job.json as a script of the job may."""
    path = root / "job.json"
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), **keys}), encoding="utf-8")


@pytest.fixture
def job(finished: Path, tmp_path: Path) -> Path:
    """This job: a finished job of the artifacts store, whose scripts turn against the host."""
    return _copy_job(finished, tmp_path / "artifacts")


@pytest.fixture
def other(finished: Path, tmp_path: Path) -> Path:
    """Another job beside it, holding a file no other job may see in its data/ and code/."""
    root = _copy_job(finished, tmp_path / "artifacts")
    (root / "data" / "secret_ledger.csv").write_bytes(b"account,balance\n" + SECRET + b",1\n")
    (root / "code" / "secret_helper.py").write_bytes(b"SECRET = " + repr(SECRET).encode() + b"\n")
    return root


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary root (TMPDIR) the follow-up makes its scratch folder in; nothing may be left in it."""
    root = tmp_path / "tmp-root"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", str(root))  # gettempdir() caches the first answer
    yield root


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every entry below ``folder`` without following links, a link recorded as such and read through on the host,
    as a script (or the host) reading the scratch copy could."""
    found: dict[str, bytes] = {}
    for base, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = Path(base) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                target = path.resolve()
                inside = target.read_bytes() if target.is_file() else b"".join(_read_all(target))
                found[rel] = b"LINK -> " + os.readlink(path).encode() + b"\n" + inside
            elif path.is_file():
                found[rel] = path.read_bytes()
    return found


def _read_all(folder: Path) -> Iterator[bytes]:
    return (p.read_bytes() for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else iter(())


def watch_scratch(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, bytes]]:
    """What the scratch copy held once copied (also when the copy was refused); the Coder itself does not run."""
    seen: list[dict[str, bytes]] = []
    real = analyze.copy_scratch

    def copy(job_dir: Path, scratch: Path, **kwargs: object) -> None:
        try:
            real(job_dir, scratch, **kwargs)  # type: ignore[arg-type]
        finally:
            seen.append(snapshot(scratch))

    monkeypatch.setattr(analyze, "copy_scratch", copy)
    monkeypatch.setattr(analyze, "run_coder", lambda rt, task: "")
    return seen


def assert_no_leak(job: Path, seen: list[dict[str, bytes]]) -> None:
    """The other job's file reached neither this job (its real files) nor any scratch copy, which held no link."""
    for copy in seen:
        assert not any(value.startswith(b"LINK -> ") for value in copy.values()), sorted(copy)
        assert not any(SECRET in value for value in copy.values())
    for base, _dirs, names in os.walk(job):  # os.walk does not descend into the planted link itself
        for name in names:
            path = Path(base) / name
            assert path.is_symlink() or SECRET not in path.read_bytes(), path


def replace_with_link(path: Path, target: Path) -> None:
    """What a script of the job may do to any file or folder in it."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target, target_is_directory=target.is_dir())


# ---------------------------------------------------------------------------------------------------------------
# Identity from the store


def test_a_job_json_id_that_disagrees_with_its_folder_is_refused_naming_the_file(tmp_path: Path) -> None:
    job = JobFolder.create(tmp_path / "artifacts")
    set_job_json(job.root, id=new_job_id())  # a valid id, but not this folder's: another job's, say
    with pytest.raises(BadInputError) as refused:
        JobFolder.open(job.root)
    assert str(job.root / "job.json") in refused.value.message and job.id in refused.value.fix
    set_job_json(job.root, id=job.id)
    assert JobFolder.open(job.root).id == job.id


@pytest.mark.parametrize("forged", ["/tmp/x", "../20260101T120000Z-0123456789ab", "ok\n## Status\nDONE", 7, None])
def test_a_job_dir_folder_takes_its_id_from_job_json_only_when_it_is_a_strict_id(
    tmp_path: Path, forged: object
) -> None:
    job = JobFolder.create(tmp_path / "artifacts", tmp_path / "any-name")
    assert JobFolder.open(job.root).id == job.id
    set_job_json(job.root, id=forged)
    with pytest.raises(BadInputError) as refused:
        JobFolder.open(job.root)
    assert str(job.root / "job.json") in refused.value.message and "not a job id" in refused.value.message


@pytest.mark.e2e
def test_an_absolute_job_id_is_refused_and_nothing_is_made_at_that_path(
    job: Path, tmp_path: Path, temp_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "outside-the-job"  # Path(tmp) / job.id made the scratch copy here and left it
    set_job_json(job, id=str(target))
    seen = watch_scratch(monkeypatch)
    with pytest.raises(BadInputError) as refused:
        run_followup(job, QUESTION, settings=offline(tmp_path / "artifacts"))
    assert str(job / "job.json") in refused.value.message
    assert not target.exists() and seen == []
    assert list(temp_root.iterdir()) == []


@pytest.mark.e2e
def test_a_job_id_naming_an_existing_folder_exits_2_without_a_traceback(job: Path, tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("untouched\n", encoding="utf-8")
    set_job_json(job, id=str(existing))
    run = subprocess.run(
        [sys.executable, "-m", "insightloom", "ask", "--provider", "offline", "--analyze", str(job), QUESTION],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and "FileExistsError" not in run.stderr
    assert str(job / "job.json") in run.stderr and "Fix:" in run.stderr
    assert sorted(p.name for p in existing.iterdir()) == ["keep.txt"]


# ---------------------------------------------------------------------------------------------------------------
# The scratch copy takes regular files only


@pytest.mark.e2e
@pytest.mark.parametrize("folder", ["data", "code"])
def test_a_job_folder_linked_to_another_job_refuses_the_follow_up_and_copies_nothing_of_it(
    job: Path, other: Path, tmp_path: Path, temp_root: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    replace_with_link(job / folder, other / folder)
    seen = watch_scratch(monkeypatch)
    with pytest.raises(UnsafePathError) as refused:
        run_followup(job, QUESTION, settings=offline(tmp_path / "artifacts"))
    message = refused.value.message
    assert message.startswith("The follow-up analysis was refused") and str(job / folder) in message
    assert "symbolic link" in message and "remove the link" in refused.value.fix
    assert_no_leak(job, seen)
    assert list(temp_root.iterdir()) == []


def _folder_link(job: Path, other: Path) -> tuple[Path, Path]:
    return job / "code" / "lib", other / "code"


def _file_link(job: Path, other: Path) -> tuple[Path, Path]:
    return job / "code" / "helpers.py", other / "code" / "secret_helper.py"


def _data_file_link(job: Path, other: Path) -> tuple[Path, Path]:
    return job / "data" / "extra" / "ledger.csv", other / "data" / "secret_ledger.csv"


@pytest.mark.e2e
@pytest.mark.parametrize("plant", [_folder_link, _file_link, _data_file_link], ids=["folder", "file", "nested-file"])
def test_a_link_nested_in_a_copied_folder_refuses_the_follow_up(
    job: Path,
    other: Path,
    tmp_path: Path,
    temp_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    plant: Callable[[Path, Path], tuple[Path, Path]],
) -> None:
    link, target = plant(job, other)
    link.parent.mkdir(exist_ok=True)
    replace_with_link(link, target)
    seen = watch_scratch(monkeypatch)
    with pytest.raises(UnsafePathError) as refused:
        run_followup(job, QUESTION, settings=offline(tmp_path / "artifacts"))
    assert str(link) in refused.value.message and "symbolic link" in refused.value.message
    assert_no_leak(job, seen)
    assert list(temp_root.iterdir()) == []


def test_the_copy_takes_regular_files_skips_fifos_and_never_writes_outside_its_destination(tmp_path: Path) -> None:
    from insightloom.fileio import copy_regular_tree  # new with this change: the failure on old code is this test's

    job = tmp_path / "job"
    (job / "data" / "sub").mkdir(parents=True)
    (job / "data" / "a.csv").write_bytes(b"x,y\n1,2\n")
    (job / "data" / "sub" / "b.txt").write_bytes(b"deep\n")
    os.mkfifo(job / "data" / "pipe")  # reading it would block the host for good
    dest_root = tmp_path / "scratch"
    dest_root.mkdir()
    assert copy_regular_tree(job / "data", dest_root / "data", beneath=job) == 13
    assert snapshot(dest_root) == {"data/a.csv": b"x,y\n1,2\n", "data/sub/b.txt": b"deep\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job", "scratch"]
    with pytest.raises(UnsafePathError, match="more than the 4 bytes"):
        copy_regular_tree(job / "data", dest_root / "capped", beneath=job, max_bytes=4)


# ---------------------------------------------------------------------------------------------------------------
# Through the service


class _NoWorkers:
    """A queue that runs nothing: the follow-up runs in the request, as on an in-process server."""

    in_process = True

    def put(self, item: WorkItem) -> None:
        pass

    def close(self) -> None:
        pass


def _client(artifacts: Path) -> TestClient:
    config = ServiceConfig(tokens={TOKEN: "ana"})
    return TestClient(create_app(offline(artifacts), config, queue=_NoWorkers(), cwd=artifacts))


@pytest.mark.e2e
def test_post_ask_with_a_data_link_to_another_job_answers_an_error_body_and_leaks_nothing(
    job: Path, other: Path, tmp_path: Path, temp_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifacts = tmp_path / "artifacts"
    write_text_atomic(artifacts / OWNERS_DIR / job.name, "ana\n")
    write_text_atomic(artifacts / OWNERS_DIR / other.name, "ben\n")
    replace_with_link(job / "data", other / "data")
    seen = watch_scratch(monkeypatch)
    with _client(artifacts) as client:
        answer = client.post(
            f"/jobs/{job.name}/ask",
            headers={"Authorization": f"Bearer {TOKEN}"},
            json={"question": QUESTION, "analyze": True},
        )
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert set(body) == {"detail", "fix"} and body["fix"]
    assert "follow-up analysis was refused" in body["detail"] and "symbolic link" in body["detail"]
    assert SECRET.decode() not in answer.text
    assert_no_leak(job, seen)
    assert list(temp_root.iterdir()) == []


def test_the_service_answers_the_stores_job_id_not_the_one_job_json_claims(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    settings = offline(artifacts)
    rt = create_job(JobOptions(inputs=[MOON_EN], request="r", settings=settings, cwd=tmp_path))
    write_text_atomic(artifacts / OWNERS_DIR / rt.job.id, "ana\n")
    set_job_json(rt.root, id="\x1b[2Jforged")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with _client(artifacts) as client:
        described = client.get(f"/jobs/{rt.job.id}", headers=headers).json()
        listed = client.get("/jobs", headers=headers).json()
    assert described["id"] == rt.job.id
    assert [job["id"] for job in listed["jobs"]] == [rt.job.id]
