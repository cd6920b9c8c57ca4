"""The plan checklist: parse, check for the rules, filter per agent and tick items by exact wording.

Format (DESIGN): ``# Plan`` (or ``# Plan (Revised)``), ``## thought``, ``## title``, ``## steps``, then
``### N. Coder: subtitle`` sections of ``- [ ]`` items, each tool agent at most once and in a fixed order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AGENT_ORDER = ("coder", "validator", "reporter", "tracker", "auditor")
DISPLAY = {role: role.capitalize() for role in AGENT_ORDER}
_SECTION_RE = re.compile(r"^###\s*(\d+)\.\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")
_ITEM_RE = re.compile(r"^\s*-\s*\[( |x|X)\]\s+(.*?)\s*$")


@dataclass
class PlanItem:
    text: str
    checked: bool
    line: int


@dataclass
class PlanSection:
    number: int
    role: str
    subtitle: str
    heading_line: int
    items: list[PlanItem] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return all(item.checked for item in self.items)

    def unchecked(self) -> list[str]:
        return [item.text for item in self.items if not item.checked]

    def one_line(self) -> str:
        ticked = sum(item.checked for item in self.items)
        return f"{self.number}. {DISPLAY.get(self.role, self.role)}: {self.subtitle} ({ticked}/{len(self.items)} done)"


@dataclass
class Plan:
    text: str
    title: str
    sections: list[PlanSection]

    def section(self, role: str) -> PlanSection | None:
        return next((s for s in self.sections if s.role == role), None)

    def section_text(self, role: str) -> str:
        """The role's own section in full, as it stands in the plan."""
        section = self.section(role)
        if section is None:
            return ""
        lines = self.text.splitlines()
        end = section.items[-1].line if section.items else section.heading_line
        return "\n".join(lines[section.heading_line : end + 1])

    def others_one_line(self, role: str) -> str:
        """Every other section cut to one line, so an agent knows the context without the details."""
        return "\n".join(s.one_line() for s in self.sections if s.role != role)

    def status_lines(self) -> str:
        """One line per section with its progress, for the Supervisor."""
        rows = []
        for s in self.sections:
            state = "done" if s.done else "open"
            rows.append(f"- {DISPLAY.get(s.role, s.role)}: {sum(i.checked for i in s.items)}/{len(s.items)} ({state})")
        return "\n".join(rows)

    def blocking_items(self, role: str) -> list[str]:
        """Unchecked items of the sections before ``role``'s section (the agent may not start before them)."""
        blocking: list[str] = []
        for s in self.sections:
            if s.role == role:
                break
            if s.role != "tracker":
                blocking.extend(f"{DISPLAY.get(s.role, s.role)}: {text}" for text in s.unchecked())
        return blocking

    @property
    def complete(self) -> bool:
        return all(s.done for s in self.sections)


def parse_plan(text: str) -> Plan:
    """Parse plan Markdown; unknown lines are kept in ``text`` untouched."""
    lines = text.splitlines()
    title = ""
    sections: list[PlanSection] = []
    in_title = False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.lower() == "## title":
            in_title = True
            continue
        if in_title and stripped and not stripped.startswith("#"):
            title, in_title = stripped, False
            continue
        if stripped.startswith("#"):
            in_title = False
        match = _SECTION_RE.match(stripped)
        if match:
            sections.append(PlanSection(int(match.group(1)), match.group(2).lower(), match.group(3), number))
            continue
        item = _ITEM_RE.match(line)
        if item and sections:
            sections[-1].items.append(PlanItem(item.group(2), item.group(1) != " ", number))
    return Plan(text, title, sections)


def plan_problems(text: str) -> list[str]:
    """What breaks the plan rules; empty when the plan is valid."""
    plan = parse_plan(text)
    problems = []
    first = text.lstrip().splitlines()[0].strip() if text.strip() else ""
    if first not in ("# Plan", "# Plan (Revised)"):
        problems.append("the plan must start with '# Plan' or '# Plan (Revised)'")
    if not plan.sections:
        problems.append("the plan has no '### N. Agent: subtitle' sections")
    roles = [s.role for s in plan.sections]
    unknown = [r for r in roles if r not in AGENT_ORDER]
    if unknown:
        problems.append(f"unknown agent section(s): {', '.join(unknown)}")
    known = [r for r in roles if r in AGENT_ORDER]
    if len(set(known)) != len(known):
        problems.append("each agent may appear at most once")
    if known != sorted(known, key=AGENT_ORDER.index):
        problems.append("sections must follow the order Coder, Validator, Reporter, Tracker, Auditor")
    if "validator" not in roles:
        problems.append("the Validator section is required")
    for s in plan.sections:
        if not s.items:
            problems.append(f"section '{s.one_line()}' has no '- [ ]' item")
    return problems


def check_items(text: str, items: list[str]) -> tuple[str, list[str], list[str]]:
    """Flip ``- [ ]`` to ``- [x]`` for items whose wording matches exactly (surrounding spaces ignored).

    Returns:
        The new plan text, the items flipped, and the items not found among unchecked ones.
    """
    plan = parse_plan(text)
    lines = text.splitlines()
    by_text: dict[str, list[PlanItem]] = {}
    for section in plan.sections:
        for item in section.items:
            if not item.checked:
                by_text.setdefault(item.text.strip(), []).append(item)
    flipped, missing = [], []
    for wanted in items:
        candidates = by_text.get(wanted.strip())
        if not candidates:
            missing.append(wanted)
            continue
        item = candidates.pop(0)
        lines[item.line] = lines[item.line].replace("[ ]", "[x]", 1)
        flipped.append(item.text)
    trailing = "\n" if text.endswith("\n") else ""
    return "\n".join(lines) + trailing, flipped, missing
