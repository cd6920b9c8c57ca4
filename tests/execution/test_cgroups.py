"""Whole-sandbox cgroups: caps written where the controllers are, and groups left by dead processes swept."""

from __future__ import annotations

import subprocess

import pytest

from insightloom.execution import cgroups


@pytest.fixture
def support() -> cgroups.CgroupSupport:
    found = cgroups.cgroup_support()
    if found.version is None:
        pytest.skip(found.detail)
    return found


def test_a_group_holds_its_caps_and_is_removed_on_close(support: cgroups.CgroupSupport) -> None:
    group = cgroups.SandboxCgroup("test-caps", 256, 12)
    try:
        limit = "memory.max" if group.version == 2 else "memory.limit_in_bytes"
        assert int((group.dirs[0] / limit).read_text()) == 256 * 1024 * 1024
        assert (group.dirs[-1] / "pids.max").read_text().strip() == "12"
        group.set_memory(300)
        assert int((group.dirs[0] / limit).read_text()) == 300 * 1024 * 1024
    finally:
        group.close()
    assert not any(folder.exists() for folder in group.dirs)


def test_empty_groups_left_by_dead_processes_are_swept(support: cgroups.CgroupSupport) -> None:
    left = cgroups.SandboxCgroup("test-left-behind", 128, 8)  # never closed, like a process killed with -9
    busy = cgroups.SandboxCgroup("test-left-busy", 128, 8)
    sleeper = subprocess.Popen(["sleep", "60"])
    busy.add(sleeper.pid)  # a group that still holds a process must survive any sweep
    try:
        cgroups.sweep_stale(older_than=-1.0, match="test-left-")
        assert not any(folder.exists() for folder in left.dirs)
        assert all(folder.exists() for folder in busy.dirs)
    finally:
        busy.close()  # kills the sleeper too
        sleeper.wait(10)
        left.close()


def test_scratch_folders_left_by_dead_processes_are_swept(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import tempfile
    import time

    from insightloom.execution import runner_base

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(runner_base, "_scratch_base", lambda: str(tmp_path))
    old = tmp_path / "insightloom-job-runs-dead"
    new = tmp_path / "insightloom-job-runs-alive"
    other = tmp_path / "someone-elses"
    for folder in (old, new, other):
        folder.mkdir()
    long_ago = time.time() - runner_base.STALE_SCRATCH_S - 60
    os.utime(old, (long_ago, long_ago))
    os.utime(other, (long_ago, long_ago))
    assert runner_base.sweep_stale_scratch() == 1
    assert not old.exists() and new.exists() and other.exists()
