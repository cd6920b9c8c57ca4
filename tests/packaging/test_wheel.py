"""The wheel ships the prompts and skills, and the public surface is what __all__ says."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import insightloom
from repo_paths import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation and no deps: the build uses the installed hatchling and needs no network.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return next(out.glob("insightloom-*.whl"))


def test_wheel_contains_prompts_and_skills(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    prompts = {n for n in names if n.startswith("insightloom/prompts/") and n.endswith(".md")}
    roles = (
        "coordinator",
        "planner",
        "planner_revise",
        "supervisor",
        "coder",
        "validator",
        "reporter",
        "tracker",
        "auditor",
        "summarization",
    )
    assert {f"insightloom/prompts/{r}.md" for r in roles} <= prompts
    skills = {n.split("/")[2] for n in names if n.startswith("insightloom/builtin_skills/") and n.endswith("SKILL.md")}
    assert len(skills) >= 3
    assert "insightloom/cli/__init__.py" in names
    from insightloom.contracts import SCHEMA_NAMES

    assert {f"insightloom/contracts/{n}.schema.json" for n in SCHEMA_NAMES} <= names
    assert not any("naive" in n for n in names)  # the ablation's baseline is benchmark code, not product
    assert not any(n.startswith(("tests/", "insightloom/data/")) or n.endswith(".csv") for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "insightloom = insightloom.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_top_level_folders_are_the_packaged_ones() -> None:
    assert (REPO / "prompts").resolve() == (REPO / "src" / "insightloom" / "prompts").resolve()
    assert (REPO / "skills").resolve() == (REPO / "src" / "insightloom" / "builtin_skills").resolve()


def test_public_all_matches_exports() -> None:
    assert insightloom.__all__ == sorted(insightloom.__all__)
    for name in insightloom.__all__:
        assert hasattr(insightloom, name), name
