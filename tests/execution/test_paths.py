"""resolve_script_path: scripts live in the job's code/ folder and nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from insightloom.errors import BadInputError
from insightloom.execution import resolve_script_path


@pytest.fixture
def job(tmp_path: Path) -> Path:
    (tmp_path / "job" / "code").mkdir(parents=True)
    return tmp_path / "job"


def test_relative_name_lands_in_code(job: Path) -> None:
    assert resolve_script_path(job, "analysis_1.py") == (job / "code" / "analysis_1.py").resolve()


@pytest.mark.parametrize("given", ["code/analysis_1.py", "./code/analysis_1.py", "code\\analysis_1.py"])
def test_leading_code_is_not_doubled(job: Path, given: str) -> None:
    assert resolve_script_path(job, given) == (job / "code" / "analysis_1.py").resolve()


def test_subfolder_inside_code_is_allowed(job: Path) -> None:
    assert resolve_script_path(job, "steps/a.py") == (job / "code" / "steps" / "a.py").resolve()


def test_absolute_path_inside_code_is_allowed(job: Path) -> None:
    inside = (job / "code" / "x.py").resolve()
    assert resolve_script_path(job, str(inside)) == inside


@pytest.mark.parametrize(
    "given", ["../../x.py", "../x.py", "code/../../x.py", "steps/../../x.py", "/tmp/x.py", "/etc/passwd.py"]
)
def test_escapes_are_refused(job: Path, given: str) -> None:
    with pytest.raises(BadInputError) as info:
        resolve_script_path(job, given)
    assert "outside the job's code folder" in str(info.value)
    assert info.value.fix


def test_absolute_path_in_job_but_outside_code_is_refused(job: Path) -> None:
    with pytest.raises(BadInputError):
        resolve_script_path(job, str(job / "data" / "x.py"))


def test_symlink_pointing_out_is_refused(job: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (job / "code" / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(BadInputError):
        resolve_script_path(job, "link/x.py")


@pytest.mark.parametrize("given", ["", "   ", "code", "code/", "notes.txt"])
def test_empty_folder_or_non_python_is_refused(job: Path, given: str) -> None:
    with pytest.raises(BadInputError):
        resolve_script_path(job, given)
