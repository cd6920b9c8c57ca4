"""Tests for skill discovery and the catalog."""

from __future__ import annotations

import importlib.resources
import logging
import shutil
from pathlib import Path

import pytest

from insightloom.errors import UnknownSkillError
from insightloom.skills import SkillCatalog, builtin_skills_dir, discover_skills, skill_folders

BUILTIN = {"duckdb-checks", "chart-legibility", "data-quality", "korean-business-data", "analysis-helpers"}


def write_skill(
    root: Path,
    name: str,
    description: str = "A test skill.",
    body: str = "Body text.",
    extra: str = "",
    folder: str | None = None,
) -> Path:
    """Write ``root/<folder or name>/SKILL.md`` and return the folder."""
    skill_dir = root / (folder or name)
    skill_dir.mkdir(parents=True, exist_ok=True)
    (skill_dir / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n", encoding="utf-8"
    )
    return skill_dir


def test_builtin_skills_ship_as_package_resources(tmp_path: Path) -> None:
    folder = importlib.resources.files("insightloom") / "builtin_skills"
    for name in BUILTIN:
        assert (folder / name / "SKILL.md").is_file()
    catalog = discover_skills(cwd=tmp_path)
    assert set(catalog.names()) >= BUILTIN
    for name in BUILTIN:
        skill = catalog.get(name)
        assert skill.description and skill.license == "MIT-0"
        assert len(catalog.load(name)) > 2000, f"{name} must carry real content"
        assert not catalog.load(name).startswith("---"), "the body excludes the frontmatter"


def test_builtin_skill_content_covers_the_domain(tmp_path: Path) -> None:
    catalog = discover_skills(cwd=tmp_path)
    assert "quantile_cont" in catalog.load("duckdb-checks")
    assert "fonts-noto-cjk" in catalog.load("chart-legibility")
    assert "PII" in catalog.load("data-quality")
    assert "ROAS" in catalog.load("korean-business-data")


def test_allowed_tools_accepts_string_and_list(tmp_path: Path) -> None:
    root = tmp_path / "extra"
    write_skill(root, "as-string", extra="allowed-tools: write_and_execute_tool file_read\n")
    write_skill(root, "as-list", extra="allowed-tools:\n  - bash_tool\n  - file_read\n")
    write_skill(root, "unrestricted")
    catalog = discover_skills([root], cwd=tmp_path)
    assert catalog.get("as-string").allowed_tools == ("write_and_execute_tool", "file_read")
    assert catalog.get("as-list").allowed_tools == ("bash_tool", "file_read")
    assert catalog.get("unrestricted").allowed_tools is None
    # Both built-in forms parse too.
    assert catalog.get("duckdb-checks").allowed_tools == ("write_and_execute_tool", "file_read", "skill_tool")
    assert catalog.get("data-quality").allowed_tools == ("write_and_execute_tool", "file_read", "skill_tool")


def test_order_and_override_with_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cwd = tmp_path / "work"
    write_skill(cwd / "skills", "chart-legibility", description="from cwd")
    write_skill(cwd / "skills", "only-cwd", description="cwd only")
    extra = tmp_path / "configured"
    write_skill(extra, "only-cwd", description="from extra")
    with caplog.at_level(logging.WARNING, logger="insightloom.skills"):
        catalog = discover_skills([extra], cwd=cwd)
    assert catalog.get("chart-legibility").description == "from cwd"  # cwd overrides built-in
    assert catalog.get("only-cwd").description == "from extra"  # config overrides cwd
    overrides = [r.getMessage() for r in caplog.records if "overrides" in r.getMessage()]
    assert len(overrides) == 2
    assert any("chart-legibility" in m and str(extra) not in m for m in overrides)


def test_the_same_skill_at_two_paths_is_no_override(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A non-editable install's built-ins beside the repository's ./skills: copies, not a link, so only the content
    # tells that they are the same skills.
    builtin = builtin_skills_dir()
    assert builtin is not None
    shutil.copytree(builtin, tmp_path / "skills")
    copy = write_skill(tmp_path / "team", "team-skill", description="Team rules")
    shutil.copytree(copy, tmp_path / "team-copy" / "team-skill")
    (tmp_path / "team-copy" / "team-skill" / ".DS_Store").write_bytes(b"\0")  # litter is not content
    changed = write_skill(tmp_path / "changed", "data-quality", description="Our own data checks")
    with caplog.at_level(logging.WARNING, logger="insightloom.skills"):
        catalog = discover_skills([tmp_path / "team", tmp_path / "team-copy"], cwd=tmp_path)
    assert not [r for r in caplog.records if "overrides" in r.getMessage()]
    assert set(catalog.names()) >= BUILTIN | {"team-skill"}
    with caplog.at_level(logging.WARNING, logger="insightloom.skills"):
        catalog = discover_skills([changed.parent], cwd=tmp_path)
    [override] = [r.getMessage() for r in caplog.records if "overrides" in r.getMessage()]
    assert "data-quality" in override and str(changed / "SKILL.md") in override
    assert catalog.get("data-quality").description == "Our own data checks"


def test_relative_extra_dir_is_taken_from_cwd(tmp_path: Path) -> None:
    write_skill(tmp_path / "team-skills", "team-skill")
    assert "team-skill" in discover_skills([Path("team-skills")], cwd=tmp_path)


def test_symlinked_builtin_folder_is_not_scanned_twice(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    builtin = builtin_skills_dir()
    assert builtin is not None
    (tmp_path / "skills").symlink_to(builtin, target_is_directory=True)
    (tmp_path / "alias").symlink_to(tmp_path / "skills", target_is_directory=True)
    with caplog.at_level(logging.WARNING, logger="insightloom.skills"):
        catalog = discover_skills([tmp_path / "alias", builtin], cwd=tmp_path)
    assert not [r for r in caplog.records if "overrides" in r.getMessage()]
    assert skill_folders([tmp_path / "alias", builtin], cwd=tmp_path) == [builtin.resolve()]
    assert set(catalog.names()) >= BUILTIN


def test_new_folder_is_found_on_rescan(tmp_path: Path) -> None:
    assert "fresh-skill" not in discover_skills(cwd=tmp_path)
    write_skill(tmp_path / "skills", "fresh-skill", description="added later")
    catalog = discover_skills(cwd=tmp_path)
    assert catalog.get("fresh-skill").description == "added later"


@pytest.mark.parametrize(
    ("name", "folder"),
    [("Bad_Name", "Bad_Name"), ("-leading", "-leading"), ("x" * 65, "x" * 65), ("good-name", "other-folder")],
)
def test_bad_skill_is_skipped_with_a_warning_naming_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str, folder: str
) -> None:
    root = tmp_path / "extra"
    skill_dir = write_skill(root, name, folder=folder)
    write_skill(root, "fine-skill")
    with caplog.at_level(logging.WARNING, logger="insightloom.skills"):
        catalog = discover_skills([root], cwd=tmp_path)
    assert name not in catalog and "fine-skill" in catalog
    assert any(str(skill_dir / "SKILL.md") in r.getMessage() for r in caplog.records)


def test_malformed_frontmatter_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "extra"
    (root / "no-front").mkdir(parents=True)
    (root / "no-front" / "SKILL.md").write_text("just text\n", encoding="utf-8")
    (root / "no-desc").mkdir()
    (root / "no-desc" / "SKILL.md").write_text("---\nname: no-desc\n---\nbody\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="insightloom.skills"):
        catalog = discover_skills([root], cwd=tmp_path)
    assert "no-front" not in catalog and "no-desc" not in catalog
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert str(root / "no-front" / "SKILL.md") in messages and str(root / "no-desc" / "SKILL.md") in messages


def test_skill_folder_symlinked_from_outside_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_skill(outside, "escaped", body="SECRET")
    root = tmp_path / "extra"
    root.mkdir()
    (root / "escaped").symlink_to(outside / "escaped", target_is_directory=True)
    catalog = discover_skills([root], cwd=tmp_path)
    assert "escaped" not in catalog


@pytest.mark.parametrize("bad", ["../etc", "UPPER", "", "a/b", "../../passwd"])
def test_invalid_name_raises_unknown_skill_listing_available(tmp_path: Path, bad: str) -> None:
    catalog = discover_skills(cwd=tmp_path)
    with pytest.raises(UnknownSkillError, match="duckdb-checks") as info:
        catalog.load(bad)
    assert info.value.fix and info.value.exit_code == 2


def test_unknown_name_raises_listing_available(tmp_path: Path) -> None:
    catalog = discover_skills(cwd=tmp_path)
    with pytest.raises(UnknownSkillError, match="Unknown skill 'nope'.*chart-legibility"):
        catalog.get("nope")


def test_prompt_block_is_compact(tmp_path: Path) -> None:
    root = tmp_path / "extra"
    write_skill(root, "long-one", description="word " * 200, body="UNIQUE_BODY_MARKER " * 50)
    block = discover_skills([root], cwd=tmp_path).prompt_block()
    lines = block.splitlines()
    assert len(lines) == len(BUILTIN) + 1
    assert all(line.startswith("- ") for line in lines)
    assert "UNIQUE_BODY_MARKER" not in block
    long_line = next(line for line in lines if line.startswith("- long-one: "))
    assert len(long_line) < 300 and long_line.endswith("…")
    assert SkillCatalog().prompt_block() == "(no skills available)"
