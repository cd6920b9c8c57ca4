"""The S3 artifact store against a real S3-protocol server on loopback (moto's), through boto3."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import boto3
import pytest

from insightloom.errors import BadInputError, ConfigError, JobNotFound
from insightloom.storage.s3 import S3Store, parse_s3_uri

JOB = "20260101T120000Z-0123456789ab"
OTHER = "20260102T120000Z-abcdef012345"
FILES = {
    "job.json": b'{"id": "%s", "status": "running"}\n' % JOB.encode(),
    "events.jsonl": b'{"id": 1}\n',
    "report/final_report.md": "# Report \u00e9\n".encode(),
    "data/blob.bin": bytes(range(256)) * 64,
}


def _keys(store: S3Store) -> list[str]:
    pages = store.client.get_paginator("list_objects_v2").paginate(Bucket=store.bucket)
    return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))


def _working_copy(store: S3Store, job_id: str = JOB, files: dict[str, bytes] = FILES) -> Path:
    job_dir = store.job_dir(job_id)
    for relative, data in files.items():
        (job_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        (job_dir / relative).write_bytes(data)
    return job_dir


def _real_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_push_then_pull_into_another_work_dir_gives_the_same_files(s3_uri: str, tmp_path: Path) -> None:
    a = S3Store(s3_uri, work_dir=tmp_path / "a")
    job_dir = _working_copy(a)
    (job_dir / "job.lock").write_text("{}")  # neither the local lock nor hidden/temp files are artifacts
    (job_dir / ".plan.md.1234.tmp").write_text("half")

    assert a.push(JOB) == len(FILES)

    assert _keys(a) == sorted(f"jobs/{JOB}/{relative}" for relative in FILES)
    assert a.list_files(JOB) == sorted(FILES)
    b = S3Store(s3_uri, work_dir=tmp_path / "b")
    assert b.pull(JOB) == tmp_path / "b" / JOB
    assert _real_files(tmp_path / "b" / JOB) == FILES
    assert not list((tmp_path / "b" / JOB).rglob(".*"))  # the manifest lives outside the job folder
    assert (tmp_path / "b" / ".manifests" / f"{JOB}.json").is_file()


def test_push_and_pull_send_only_what_changed(s3_uri: str, tmp_path: Path) -> None:
    a = S3Store(s3_uri, work_dir=tmp_path / "a")
    job_dir = _working_copy(a)
    assert a.push(JOB) == len(FILES)
    assert a.push(JOB) == 0
    (job_dir / "report" / "final_report.md").write_text("# Changed\n")
    (job_dir / "notes.md").write_text("new\n")
    assert a.push(JOB) == 2

    b = S3Store(s3_uri, work_dir=tmp_path / "b")
    b_dir = b.pull(JOB)
    assert b.push(JOB) == 0  # what was just pulled is not sent back
    inodes = {p.name: p.stat().st_ino for p in b_dir.rglob("*") if p.is_file()}
    (job_dir / "events.jsonl").write_bytes(FILES["events.jsonl"] + b'{"id": 2}\n')
    assert a.push(JOB) == 1
    b.pull(JOB)
    assert (b_dir / "events.jsonl").read_bytes().endswith(b'{"id": 2}\n')
    after = {p.name: p.stat().st_ino for p in b_dir.rglob("*") if p.is_file()}
    assert [name for name in after if after[name] != inodes[name]] == ["events.jsonl"]  # only it was fetched
    (b_dir / "notes.md").unlink()  # a file lost locally is fetched again even though S3 did not change
    b.pull(JOB)
    assert (b_dir / "notes.md").read_text() == "new\n"


def test_a_planted_symlink_is_never_uploaded_nor_written_through(s3_uri: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    secret = outside / "secret.txt"
    secret.write_text("host secret\n")
    a = S3Store(s3_uri, work_dir=tmp_path / "a")
    job_dir = _working_copy(a, files={"job.json": b"{}", "code/step.py": b"print(1)\n"})
    (job_dir / "leak.txt").symlink_to(secret)
    (job_dir / "leakdir").symlink_to(outside)
    a.push(JOB)
    assert a.list_files(JOB) == ["code/step.py", "job.json"]

    b = S3Store(s3_uri, work_dir=tmp_path / "b")
    b_dir = b.job_dir(JOB)
    b_dir.mkdir(parents=True)
    (b_dir / "job.json").symlink_to(secret)  # a script in b's copy redirected both names out of the job
    (b_dir / "code").symlink_to(outside / "dir")
    b.pull(JOB)

    assert secret.read_text() == "host secret\n"
    assert list((outside / "dir").iterdir()) == []
    assert not (b_dir / "job.json").is_symlink() and (b_dir / "job.json").read_bytes() == b"{}"
    assert not (b_dir / "code").is_symlink() and (b_dir / "code" / "step.py").read_bytes() == b"print(1)\n"


def test_write_bytes_replaces_a_planted_link_in_the_local_copy(s3_uri: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    job_dir = _working_copy(store, files={"job.json": b"{}"})
    (job_dir / "cancel.request").symlink_to(secret)

    store.write_bytes(JOB, "cancel.request", b"2026-01-01T00:00:00Z\n")

    assert secret.read_text() == "host secret\n"
    assert (job_dir / "cancel.request").read_bytes() == b"2026-01-01T00:00:00Z\n"
    assert store.read_bytes(JOB, "cancel.request") == b"2026-01-01T00:00:00Z\n"
    assert store.push(JOB) == 1  # job.json only: the written file is already recorded as sent


@pytest.mark.parametrize("job_id", ["../../etc", f"{JOB}/../{OTHER}", "", JOB.upper(), f"{JOB}\n"])
def test_bad_job_ids_are_refused_before_any_key_or_path(s3_uri: str, tmp_path: Path, job_id: str) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    for call in (
        lambda: store.pull(job_id),
        lambda: store.push(job_id),
        lambda: store.read_bytes(job_id, "job.json"),
        lambda: store.write_bytes(job_id, "x", b"x"),
        lambda: store.read_meta("owners", job_id),
        lambda: store.write_meta("owners", job_id, "alice"),
        lambda: store.lock(job_id),
        lambda: store.delete_job(job_id),
    ):
        with pytest.raises(JobNotFound):
            call()
    assert _keys(store) == []
    assert not (tmp_path / "work").exists() or list((tmp_path / "work").iterdir()) == []


@pytest.mark.parametrize("relative", ["../x", "/etc/passwd", "a//b", "a/./b", "a/", "", "a\0b", "..\\x"])
def test_relatives_that_leave_the_job_folder_are_refused(s3_uri: str, tmp_path: Path, relative: str) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    _working_copy(store, files={"job.json": b"{}"})
    with pytest.raises(BadInputError):
        store.write_bytes(JOB, relative, b"x")
    with pytest.raises(BadInputError):
        store.read_bytes(JOB, relative)
    with pytest.raises(BadInputError):
        store.read_from(JOB, relative, 0)
    assert _keys(store) == []


def test_read_from_tails_a_growing_file(s3_uri: str, tmp_path: Path) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    assert store.read_from(JOB, "events.jsonl", 0) == b""  # not there yet
    assert store.read_bytes(JOB, "events.jsonl") is None
    store.write_bytes(JOB, "events.jsonl", b"")
    assert store.read_from(JOB, "events.jsonl", 0) == b""  # empty: the ranged GET is refused, which means nothing
    store.write_bytes(JOB, "events.jsonl", b"one\n")
    assert store.read_from(JOB, "events.jsonl", 0) == b"one\n"
    assert store.read_from(JOB, "events.jsonl", 4) == b""
    store.write_bytes(JOB, "events.jsonl", b"one\ntwo\n")
    assert store.read_from(JOB, "events.jsonl", 4) == b"two\n"
    assert store.read_from(JOB, "events.jsonl", 2) == b"e\ntwo\n"
    assert store.read_bytes(JOB, "events.jsonl") == b"one\ntwo\n"


def test_meta_records_live_beside_the_jobs_and_go_with_delete(s3_uri: str, tmp_path: Path) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    assert store.read_meta("owners", JOB) is None
    store.write_meta("owners", JOB, "alice\n")
    store.write_meta("sweeps", JOB, "2026-01-01T00:00:00Z\n")
    assert store.read_meta("owners", JOB) == "alice\n"
    assert store.read_meta("sweeps", JOB) == "2026-01-01T00:00:00Z\n"
    with pytest.raises(BadInputError):
        store.write_meta("keys", JOB, "x")  # type: ignore[arg-type]
    _working_copy(store)
    store.push(JOB)
    assert f"jobs/.owners/{JOB}" in _keys(store)

    with store.lock(JOB):
        pass
    store.delete_job(JOB)

    assert _keys(store) == []
    assert store.read_meta("owners", JOB) is None
    assert not store.job_dir(JOB).exists()
    assert not (tmp_path / "work" / ".manifests" / f"{JOB}.json").exists()


def test_job_ids_lists_well_formed_jobs_with_a_job_json(s3_uri: str, tmp_path: Path) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    for job_id in (OTHER, JOB):
        store.write_bytes(job_id, "job.json", b"{}")
    store.write_bytes("20260103T120000Z-000000000000", "events.jsonl", b"")  # no job.json: not a job (yet)
    store.write_meta("owners", JOB, "alice")
    store.client.put_object(Bucket=store.bucket, Key="jobs/not-a-job/job.json", Body=b"{}")
    store.client.put_object(Bucket=store.bucket, Key=f"elsewhere/{JOB}x/job.json", Body=b"{}")

    assert store.job_ids() == [JOB, OTHER]


def test_a_store_at_the_bucket_root_keys_jobs_without_a_prefix(s3_uri: str, tmp_path: Path) -> None:
    bucket, prefix = parse_s3_uri(s3_uri)
    assert prefix == "jobs"
    store = S3Store(f"s3://{bucket}/", work_dir=tmp_path / "work")
    assert store.uri == f"s3://{bucket}"
    store.write_bytes(JOB, "job.json", b"{}")
    store.write_meta("owners", JOB, "alice")
    assert _keys(store) == [f".owners/{JOB}", f"{JOB}/job.json"]
    assert store.job_ids() == [JOB]


@pytest.mark.parametrize("uri", ["bucket/jobs", "s3://", "s3:///jobs", "s3://b/../x", "s3://b/a//c", "/tmp/x"])
def test_bad_store_uris_are_a_config_error(uri: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        S3Store(uri, work_dir=tmp_path, client=boto3.session.Session().client("s3", region_name="us-east-1"))


def test_a_file_name_that_cannot_be_a_key_is_skipped_and_the_rest_pushed(
    s3_uri: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    job_dir = _working_copy(store, files={"job.json": b"{}", "report/final_report.md": b"# R\n"})
    (job_dir / "a\\b.csv").write_bytes(b"backslash")  # names a script chose
    with open(os.path.join(os.fsencode(job_dir), b"caf\xe9.csv"), "wb") as handle:  # Latin-1, not UTF-8
        handle.write(b"latin-1")
    (job_dir / ("x" * 200)).mkdir()
    deep = job_dir / ("x" * 200) / ("y" * 200) / ("z" * 200) / ("w" * 200) / ("v" * 200)
    deep.mkdir(parents=True)
    (deep / "long.txt").write_bytes(b"a key over 1,024 bytes")

    with caplog.at_level(logging.WARNING, logger="insightloom.storage.s3"):
        assert store.push(JOB) == 2

    assert store.list_files(JOB) == ["job.json", "report/final_report.md"]
    warned = caplog.text
    assert "'a\\\\b.csv'" in warned and "caf\\udce9.csv" in warned and "long.txt" in warned
    assert store.push(JOB) == 0  # and the next push goes on the same way


def test_an_object_that_cannot_be_written_is_skipped_and_the_pull_goes_on(
    s3_uri: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = S3Store(s3_uri, work_dir=tmp_path / "writer")
    for relative, data in {"charts": b"an older file", "charts/x.png": b"png", "job.json": b"{}"}.items():
        writer.client.put_object(Bucket=writer.bucket, Key=f"jobs/{JOB}/{relative}", Body=data)

    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    job_dir = store.job_dir(JOB)
    (job_dir / "report").mkdir(parents=True)  # a folder where S3 now has a file
    (job_dir / "report" / "keep.md").write_text("kept\n")
    writer.client.put_object(Bucket=writer.bucket, Key=f"jobs/{JOB}/report", Body=b"a file")

    with caplog.at_level(logging.WARNING, logger="insightloom.storage.s3"):
        assert store.pull(JOB) == job_dir

    # the folder wins: the file charts was written first (keys come sorted), then made way for charts/x.png
    assert _real_files(job_dir) == {"charts/x.png": b"png", "job.json": b"{}", "report/keep.md": b"kept\n"}
    assert "not pulling report of job" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="insightloom.storage.s3"):
        store.pull(JOB)  # again: the same outcome, no error
    assert _real_files(job_dir) == {"charts/x.png": b"png", "job.json": b"{}", "report/keep.md": b"kept\n"}
    assert "not pulling charts of job" in caplog.text and "not pulling report of job" in caplog.text


def test_a_file_where_a_pulled_folder_belongs_makes_way_for_it(s3_uri: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    a = S3Store(s3_uri, work_dir=tmp_path / "a")
    _working_copy(a, files={"job.json": b"{}", "data/sub/t.csv": b"1\n"})
    a.push(JOB)
    b = S3Store(s3_uri, work_dir=tmp_path / "b")
    b_dir = b.job_dir(JOB)
    (b_dir / "data").mkdir(parents=True)
    (b_dir / "data" / "sub").write_text("a file a script left here\n")

    b.pull(JOB)

    assert _real_files(b_dir) == {"job.json": b"{}", "data/sub/t.csv": b"1\n"}
