"""Discover SKILL.md folders and hold them in a catalog.

Skills are drop-in folders (``<skills folder>/<name>/SKILL.md``), so skill authors extend the product without a code
change or a redeploy. Only the catalog (names and descriptions) goes into a prompt; the full body is loaded on demand by
``skill_tool``. Parsing of the frontmatter is Strands' (:class:`strands.vended_plugins.skills.Skill`); the name rules,
the folder order and the path confinement are ours, because a skill name comes from a model and must never reach a
file outside a skills folder.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from strands.vended_plugins.skills import Skill as StrandsSkill

from insightloom.errors import UnknownSkillError
from insightloom.fileio import file_digest, iter_real_files

logger = logging.getLogger(__name__)

#: A valid skill name; it doubles as the skill's folder name.
SKILL_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
SKILL_FILE = "SKILL.md"
_DESCRIPTION_LIMIT = 240


@dataclass(frozen=True)
class Skill:
    """One discovered skill.

    Attributes:
        name: The validated skill name (equal to its folder name).
        description: One-paragraph description shown in the catalog.
        body: The Markdown instructions after the frontmatter.
        path: Resolved path of the SKILL.md file.
        root: Resolved skills folder the skill was found in.
        license: Optional license identifier from the frontmatter.
        allowed_tools: Tool names the agent may call once the skill is loaded; ``None`` means no restriction.
    """

    name: str
    description: str
    body: str
    path: Path
    root: Path
    license: str | None = None
    allowed_tools: tuple[str, ...] | None = None


def is_valid_skill_name(name: object) -> bool:
    """Return True when ``name`` is a string that may name a skill (and so a folder)."""
    return isinstance(name, str) and SKILL_NAME_RE.fullmatch(name) is not None


class SkillCatalog:
    """The skills available to one job, by name, in discovery order.

    Args:
        skills: Skills in the order they should be listed; later ones with the same name replace earlier ones.
    """

    def __init__(self, skills: Sequence[Skill] = ()) -> None:
        self._skills: dict[str, Skill] = {}
        for skill in skills:
            self._skills[skill.name] = skill

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._skills

    def names(self) -> list[str]:
        """Return the skill names, sorted, so prompts built from them are stable (cache-friendly)."""
        return sorted(self._skills)

    def get(self, name: str) -> Skill:
        """Return the skill called ``name``.

        Raises:
            UnknownSkillError: The name is invalid or no skills folder provides it; the message lists the available
                skills.
        """
        if not is_valid_skill_name(name):
            raise UnknownSkillError(
                f"Skill name {name!r} is not valid (lower-case letters, digits and '-', at most 64 characters). "
                f"Available skills: {self._available()}.",
                fix="Call skill_tool with one of the available skill names.",
            )
        skill = self._skills.get(name)
        if skill is None:
            raise UnknownSkillError(
                f"Unknown skill {name!r}. Available skills: {self._available()}.",
                fix=f"Use one of the available skills, or add a folder skills/{name}/SKILL.md.",
            )
        return skill

    def load(self, name: str) -> str:
        """Return the full instructions (the SKILL.md body) of a skill.

        Raises:
            UnknownSkillError: The name is invalid or unknown.
        """
        return self.get(name).body

    def prompt_block(self) -> str:
        """Return the compact catalog for a prompt: one line per skill, name and description only."""
        if not self._skills:
            return "(no skills available)"
        lines = [f"- {name}: {_compact(self._skills[name].description)}" for name in self.names()]
        return "\n".join(lines)

    def _available(self) -> str:
        return ", ".join(self.names()) or "(none)"


def _compact(text: str) -> str:
    """Collapse whitespace and cap the length so one long description cannot bloat every prompt."""
    flat = " ".join(text.split())
    if len(flat) <= _DESCRIPTION_LIMIT:
        return flat
    return flat[: _DESCRIPTION_LIMIT - 1].rstrip() + "…"


def builtin_skills_dir() -> Path | None:
    """Return the folder of the skills shipped in the package, or None when it is not on a real file system."""
    resource = importlib.resources.files("insightloom") / "builtin_skills"
    if isinstance(resource, Path):
        return resource
    candidate = Path(str(resource))
    if candidate.is_dir():
        return candidate
    logger.warning("Built-in skills folder %s is not on the file system; built-in skills are unavailable.", resource)
    return None


def _is_within(path: Path, root: Path) -> bool:
    """Return True when the resolved ``path`` lies inside (or is) the resolved ``root``."""
    return path.is_relative_to(root)


def _load_one(folder: Path, root: Path) -> Skill | None:
    """Parse ``folder/SKILL.md``; return None (with a warning naming the file) when it is unusable."""
    skill_md = folder / SKILL_FILE
    real_md = skill_md.resolve()
    if not _is_within(real_md, root):
        logger.warning("Skipping skill %s: it resolves to %s, outside the skills folder %s.", skill_md, real_md, root)
        return None
    try:
        parsed = StrandsSkill.from_content(real_md.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        logger.warning("Skipping skill %s: %s", skill_md, exc)
        return None
    if not is_valid_skill_name(parsed.name):
        logger.warning("Skipping skill %s: name %r must match %s.", skill_md, parsed.name, SKILL_NAME_RE.pattern)
        return None
    if parsed.name != folder.name:
        logger.warning(
            "Skipping skill %s: name %r differs from its folder name %r.", skill_md, parsed.name, folder.name
        )
        return None
    allowed = tuple(str(t).strip() for t in parsed.allowed_tools if str(t).strip()) if parsed.allowed_tools else None
    return Skill(
        name=parsed.name,
        description=parsed.description.strip(),
        body=parsed.instructions,
        path=real_md,
        root=root,
        license=parsed.license,
        allowed_tools=allowed or None,
    )


def scan_folder(folder: Path) -> list[Skill]:
    """Return the valid skills directly under one skills folder, sorted by folder name.

    Args:
        folder: A skills folder, already resolved to its real path.
    """
    skills: list[Skill] = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".") or not child.is_dir():
            continue
        if not (child / SKILL_FILE).is_file():
            logger.debug("Ignoring %s: no %s", child, SKILL_FILE)
            continue
        if not _is_within(child.resolve(), folder):
            logger.warning("Skipping skill folder %s: it resolves outside the skills folder %s.", child, folder)
            continue
        skill = _load_one(child, folder)
        if skill is not None:
            skills.append(skill)
    return skills


def skill_folders(extra_dirs: Sequence[Path] = (), cwd: Path | None = None) -> list[Path]:
    """Return the real paths of the skills folders to scan, in precedence order, each once.

    The order is built-in, ``<cwd>/skills``, then ``extra_dirs``. A folder whose real path was already listed (the
    repository's ``./skills`` symlink to the built-in folder, a config entry repeating ``./skills``) is skipped.
    """
    base = Path.cwd() if cwd is None else Path(cwd)
    builtin = builtin_skills_dir()
    candidates: list[tuple[Path, bool]] = []
    if builtin is not None:
        candidates.append((builtin, False))
    candidates.append((base / "skills", False))
    # Relative config entries are taken relative to the working directory the job was started from.
    candidates.extend(((d if Path(d).is_absolute() else base / d), True) for d in extra_dirs)
    seen: list[Path] = []
    for folder, configured in candidates:
        if not folder.is_dir():
            log = logger.warning if configured else logger.debug
            log("Skills folder %s does not exist; skipping it.", folder)
            continue
        real = folder.resolve()
        if real in seen:
            logger.debug("Skills folder %s is %s, already scanned; skipping it.", folder, real)
            continue
        seen.append(real)
    return seen


def folder_digest(folder: Path) -> str:
    """A SHA-256 of a skill folder's content: each file's relative path and bytes, hidden files and caches aside.

    Two folders with the same digest are the same skill wherever they sit, so one replacing the other changes nothing.
    """
    digest = hashlib.sha256()
    for path in sorted(iter_real_files(folder)):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
            continue
        digest.update(f"{relative.as_posix()}\0{file_digest(path, beneath=folder)}\0".encode())
    return digest.hexdigest()


def discover_skills(extra_dirs: Sequence[Path] = (), cwd: Path | None = None) -> SkillCatalog:
    """Scan every skills folder now and return the catalog.

    It re-scans on every call, so a folder added between jobs is found by the next job without a restart. A later
    folder's skill replaces an earlier one of the same name, with a warning naming both files, unless both folders
    hold the same content (:func:`folder_digest`).

    Args:
        extra_dirs: Configured skills folders, scanned last (highest precedence).
        cwd: Working directory whose ``skills/`` folder is scanned; defaults to the process's current directory.

    Returns:
        The catalog of valid skills.
    """
    found: dict[str, Skill] = {}
    for folder in skill_folders(extra_dirs, cwd):
        for skill in scan_folder(folder):
            previous = found.get(skill.name)
            if previous is not None and folder_digest(skill.path.parent) == folder_digest(previous.path.parent):
                # The same skill in two places (a non-editable install's built-ins beside the repository's
                # ./skills): nothing is overridden, so there is nothing to warn about.
                logger.debug("Skill %r in %s is the same as in %s.", skill.name, skill.path, previous.path)
            elif previous is not None:
                logger.warning("Skill %r from %s overrides the one from %s.", skill.name, skill.path, previous.path)
            found[skill.name] = skill
    logger.debug("Discovered %d skills: %s", len(found), ", ".join(sorted(found)))
    return SkillCatalog(list(found.values()))


def discover(extra_dirs: Sequence[Path] = (), cwd: Path | None = None) -> SkillCatalog:
    """Alias of :func:`discover_skills` under the name used in ``docs/internals.md``."""
    return discover_skills(extra_dirs, cwd)
