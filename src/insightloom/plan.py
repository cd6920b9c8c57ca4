"""The plan checklist: parse it leniently, check it strictly, filter it per agent, settle its items.

Format (DESIGN): ``# Plan`` (or ``# Plan (Revised)``), ``## thought``, ``## title``, ``## steps``, then
``### N. Coder: subtitle`` sections of ``- [ ]`` items, each tool agent at most once and in a fixed order.

Lenient in: a plan wrapped in a code fence or preceded by a preamble, headings such as ``### 1) **Coder** - x``,
``### Reporter – Report`` or ``### 1. 코더: 분석``, and ``* [ ]`` items are understood; :func:`normalise_plan` rewrites
such a plan in the canonical form before it is stored, so every agent sees one format. Strict out:
:func:`plan_problems` names each heading or checkbox line it could not place, so the Planner can fix it.

An item is open (``- [ ]``), done (``- [x]``) or not possible (``- [~] <item> — not possible: <reason>``); done and
not-possible items are *settled*, and a section whose items are all settled is done.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

AGENT_ORDER = ("coder", "validator", "reporter", "tracker", "auditor")
DISPLAY = {role: role.capitalize() for role in AGENT_ORDER}
DEFAULT_SUBTITLES = {
    "coder": "Data analysis",
    "validator": "Verification",
    "reporter": "Report",
    "tracker": "Tracking",
    "auditor": "Audit",
}
# Heading names a model may use for a role (matched case-insensitively), beyond the English display names.
ROLE_ALIASES = {
    **{role: role for role in AGENT_ORDER},
    "코더": "coder",
    "검증": "validator",
    "검증자": "validator",
    "밸리데이터": "validator",
    "리포터": "reporter",
    "보고서 작성자": "reporter",
    "트래커": "tracker",
    "감사": "auditor",
    "감사자": "auditor",
    "오디터": "auditor",
}
NOT_POSSIBLE_MARK = "~"
NOT_POSSIBLE_SEPARATOR = " — not possible: "
SECTION_FORMAT = "'### N. Agent: subtitle' (Agent one of Coder, Validator, Reporter, Auditor)"

_ROLE_NAMES = "|".join(re.escape(name) for name in sorted(ROLE_ALIASES, key=len, reverse=True))
_BOLD = r"(?:\*\*|__)?"
_SECTION_RE = re.compile(
    rf"^###\s*(?:(?P<number>\d+)\s*[.)]?\s*)?{_BOLD}\s*(?P<role>{_ROLE_NAMES})(?!\w)\s*{_BOLD}\s*"
    rf"(?:[:：\-–—]\s*{_BOLD}\s*(?P<subtitle>.*?))?\s*{_BOLD}\s*$",
    re.I,
)
_PLAN_HEADING_RE = re.compile(r"^#\s*(?:\*\*)?\s*plan\s*(?P<revised>\(\s*revised\s*\))?\s*(?:\*\*)?\s*$", re.I)
_KNOWN_HEADINGS = ("thought", "title", "steps", "revision_notes")
_LEVEL2_RE = re.compile(r"^##\s*(?P<name>[A-Za-z_ ]+?)\s*:?\s*$")
_HEADING_RE = re.compile(r"^#{1,6}(\s|$)")  # Markdown's ATX heading; "#1 priority" is text
_FENCE_RE = re.compile(r"^(```|~~~)[\w+-]*\s*$")
_BULLET = r"(?:[-*+]|\d+[.)])?"
_ITEM_RE = re.compile(rf"^\s*{_BULLET}\s*\[(?P<mark>[ xX~])\]\s*(?P<text>\S.*?)\s*$")
_CHECKBOX_LIKE_RE = re.compile(rf"^\s*{_BULLET}\s*\[\s*[^\]\s\d]?\s*\]")
_ITEM_PREFIX_RE = re.compile(rf"^\s*{_BULLET}\s*(?:\[[ xX~]\])?\s*")
_NOT_POSSIBLE_RE = re.compile(
    r"^(?P<item>.+?)\s*(?:—|–|--|-|:|\()\s*(?:not\s+possible|불가능)\s*(?:[:：—–-]\s*)?(?P<reason>.*?)\)?\s*$", re.I
)
_PARTIAL_MATCH_MIN_CHARS = 12


@dataclass
class PlanItem:
    """One checklist item; ``checked`` is ``[x]``, ``not_possible`` is ``[~]`` (with its reason)."""

    text: str
    checked: bool
    line: int
    not_possible: bool = False
    reason: str = ""

    @property
    def settled(self) -> bool:
        """Done or honestly not possible: either way nobody has to work on it any more."""
        return self.checked or self.not_possible

    def markdown(self) -> str:
        """The item's canonical line."""
        if self.not_possible:
            return f"- [{NOT_POSSIBLE_MARK}] {self.text}{NOT_POSSIBLE_SEPARATOR}{self.reason}"
        return f"- [{'x' if self.checked else ' '}] {self.text}"


@dataclass
class PlanSection:
    number: int
    role: str
    subtitle: str
    heading_line: int
    items: list[PlanItem] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return all(item.settled for item in self.items)

    def unchecked(self) -> list[str]:
        """The open items (neither done nor not possible)."""
        return [item.text for item in self.items if not item.settled]

    def _progress(self) -> tuple[str, str]:
        """``3/4`` settled items, plus how many of them are not possible."""
        settled = sum(item.settled for item in self.items)
        impossible = sum(item.not_possible for item in self.items)
        extra = f", {impossible} not possible" if impossible else ""
        return f"{settled}/{len(self.items)}", extra

    def one_line(self) -> str:
        progress, extra = self._progress()
        return f"{self.number}. {DISPLAY.get(self.role, self.role)}: {self.subtitle} ({progress} done{extra})"

    def status_line(self) -> str:
        progress, extra = self._progress()
        return f"- {DISPLAY.get(self.role, self.role)}: {progress} ({'done' if self.done else 'open'}{extra})"


@dataclass
class Unparsed:
    """A heading or checkbox line the parser could not place (``plan_problems`` names it)."""

    line: int
    text: str
    kind: str  # "heading" or "checkbox"


@dataclass
class Plan:
    text: str
    title: str
    sections: list[PlanSection]
    heading_line: int | None = None
    revised: bool = False
    start: int = 0
    end: int = 0
    unparsed: list[Unparsed] = field(default_factory=list)

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
        return "\n".join(s.status_line() for s in self.sections)

    def blocking_items(self, role: str) -> list[str]:
        """Open items of the sections before ``role``'s section (the agent may not start before them)."""
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

    def items(self) -> list[tuple[PlanSection, PlanItem]]:
        """Every item with its section, in plan order."""
        return [(section, item) for section in self.sections for item in section.items]


def split_not_possible(entry: str) -> tuple[str, str] | None:
    """``(item, reason)`` from ``"<item> — not possible: <reason>"`` (any dash, or a colon), else None.

    The reason may be empty; callers refuse that and name the fix.
    """
    found = _NOT_POSSIBLE_RE.match(entry.strip())
    if not found:
        return None
    return found.group("item").strip(), found.group("reason").strip()


def _parse_item(line: str, number: int) -> PlanItem | None:
    found = _ITEM_RE.match(line)
    if not found:
        return None
    mark, text = found.group("mark"), found.group("text")
    if mark != NOT_POSSIBLE_MARK:
        return PlanItem(text, mark in "xX", number)
    split = split_not_possible(text)
    item, reason = split if split else (text, "")
    return PlanItem(item, False, number, not_possible=True, reason=reason)


def _plan_span(lines: list[str]) -> tuple[int | None, int, int]:
    """The ``# Plan`` line (None when missing), and the span of plan lines: a preamble before it and whatever
    follows the closing fence of a fenced plan are outside."""
    heading = next((i for i, line in enumerate(lines) if _PLAN_HEADING_RE.match(line.strip())), None)
    start = heading if heading is not None else 0
    end = len(lines)
    fenced = any(_FENCE_RE.match(line.strip()) for line in lines[:start])
    if fenced:
        closing = [i for i in range(start + 1, len(lines)) if _FENCE_RE.match(lines[i].strip())]
        end = closing[0] if closing else end
    return heading, start, end


def _section_heading(stripped: str, line: int, position: int) -> PlanSection | None:
    found = _SECTION_RE.match(stripped)
    if not found:
        return None
    role = ROLE_ALIASES[found.group("role").lower()]
    number = int(found.group("number")) if found.group("number") else position
    subtitle = (found.group("subtitle") or "").strip().strip("*_").strip()
    return PlanSection(number, role, subtitle, line)


def _known_heading(stripped: str) -> str | None:
    """``thought``/``title``/``steps``/``revision_notes`` for their ``##`` headings (any case), else None."""
    found = _LEVEL2_RE.match(stripped)
    name = found.group("name").strip().lower().replace(" ", "_") if found else ""
    return name if name in _KNOWN_HEADINGS else None


def parse_plan(text: str) -> Plan:
    """Parse plan Markdown leniently; unknown text lines are kept in ``text`` untouched.

    Line numbers refer to ``text``. Headings and checkbox lines that fit no rule are collected in
    ``Plan.unparsed`` (:func:`plan_problems` reports them).
    """
    lines = text.splitlines()
    heading, start, end = _plan_span(lines)
    plan = Plan(text, "", [], heading_line=heading, start=start, end=end)
    found = _PLAN_HEADING_RE.match(lines[heading].strip()) if heading is not None else None
    plan.revised = found is not None and found.group("revised") is not None
    in_title = False
    for number in range(start, end):
        line = lines[number]
        stripped = line.strip()
        if number == heading or _FENCE_RE.match(stripped):
            continue
        section = _section_heading(stripped, number, len(plan.sections) + 1)
        if section is not None or _HEADING_RE.match(stripped):
            in_title = _known_heading(stripped) == "title"
            if section is not None:
                plan.sections.append(section)
            elif _known_heading(stripped) is None:
                plan.unparsed.append(Unparsed(number, stripped, "heading"))
            continue
        if in_title and stripped:
            plan.title, in_title = stripped, False
            continue
        item = _parse_item(line, number)
        if item is not None and plan.sections:
            plan.sections[-1].items.append(item)
        elif _CHECKBOX_LIKE_RE.match(line):
            plan.unparsed.append(Unparsed(number, stripped, "checkbox"))
    return plan


def normalise_plan(text: str) -> str:
    """The plan in canonical form: no preamble or fence, ``# Plan``, lower-case ``##`` headings,
    ``### N. Coder: subtitle`` sections numbered from 1 and ``- [ ] item`` lines; other lines are kept."""
    plan = parse_plan(text)
    lines = text.splitlines()
    sections = {s.heading_line: (index, s) for index, s in enumerate(plan.sections, start=1)}
    items = {item.line: item for _, item in plan.items()}
    out: list[str] = []
    for number in range(plan.start, plan.end):
        stripped = lines[number].strip()
        if number == plan.heading_line:
            out.append("# Plan (Revised)" if plan.revised else "# Plan")
        elif number in sections:
            index, s = sections[number]
            out.append(f"### {index}. {DISPLAY[s.role]}: {s.subtitle or DEFAULT_SUBTITLES[s.role]}")
        elif number in items:
            out.append(items[number].markdown())
        elif _FENCE_RE.match(stripped):
            continue
        elif _HEADING_RE.match(stripped) and (name := _known_heading(stripped)):
            out.append(f"## {name}")
        else:
            out.append(lines[number].rstrip())
    return "\n".join(out).strip("\n") + "\n"


def _unparsed_problem(entry: Unparsed, in_section: bool) -> str:
    shown = entry.text if len(entry.text) <= 100 else entry.text[:100] + "…"
    if entry.kind == "heading":
        fix = (
            f"write a section heading as {SECTION_FORMAT}, use only the headings '# Plan', '## thought', "
            "'## title', '## steps' (and '## revision_notes'), or remove the line"
        )
    elif in_section:
        fix = "write an item as '- [ ] <task in exact words>'"
    else:
        fix = f"put items under a section heading {SECTION_FORMAT}, as '- [ ] <task>'"
    return f"line {entry.line + 1} '{shown}' is not part of the plan format: {fix}"


def _duplicate_items(plan: Plan) -> list[str]:
    seen: dict[str, str] = {}
    problems = []
    for _, item in plan.items():
        key = item_key(item.text)
        if key in seen:
            problems.append(
                f"two items read the same ('{seen[key]}' and '{item.text}'): make each item's wording unique"
            )
        seen.setdefault(key, item.text)
    return problems


def plan_problems(text: str) -> list[str]:
    """What breaks the plan rules, each naming the line or rule and the fix; empty when the plan is valid."""
    plan = parse_plan(text)
    problems = []
    if plan.heading_line is None:
        problems.append("the plan must start with '# Plan' or '# Plan (Revised)'")
    first_section = plan.sections[0].heading_line if plan.sections else plan.end
    problems += [_unparsed_problem(u, u.line > first_section) for u in plan.unparsed]
    if not plan.sections:
        problems.append(f"the plan has no {SECTION_FORMAT} sections")
    roles = [s.role for s in plan.sections]
    if len(set(roles)) != len(roles):
        problems.append("each agent may appear at most once")
    if roles != sorted(roles, key=AGENT_ORDER.index):
        problems.append("sections must follow the order Coder, Validator, Reporter, Tracker, Auditor")
    for role in ("coder", "validator"):
        if role not in roles:
            problems.append(f"the {DISPLAY[role]} section is required: add '### N. {DISPLAY[role]}: <subtitle>'")
    for s in plan.sections:
        if not s.items:
            problems.append(f"section '{s.one_line()}' has no '- [ ]' item")
    return problems + _duplicate_items(plan)


def item_key(text: str) -> str:
    """An item's wording reduced for matching: no checkbox prefix, case, backticks, punctuation or extra spaces."""
    clean = _ITEM_PREFIX_RE.sub("", unicodedata.normalize("NFKC", text), count=1).casefold()
    clean = re.sub(r"[^\w\s]", " ", clean.replace("`", ""))
    return " ".join(clean.split())


def same_item(wanted: str, item: str) -> bool:
    """Whether ``wanted`` names the plan item ``item`` (normalised wording, see :func:`item_key`)."""
    return bool(item_key(wanted)) and item_key(wanted) == item_key(item)


def _contains(longer: str, shorter: str) -> bool:
    return len(shorter) >= _PARTIAL_MATCH_MIN_CHARS and f" {shorter} " in f" {longer} "


def find_items(plan: Plan, wanted: str) -> list[tuple[PlanSection, PlanItem]]:
    """The plan items ``wanted`` may refer to.

    Items whose normalised wording is the same come first and alone; without one, items whose wording contains
    ``wanted`` or is contained in it (whole words, at least a few of them) are the candidates.
    """
    key = item_key(wanted)
    if not key:
        return []
    pairs = plan.items()
    exact = [(s, i) for s, i in pairs if item_key(i.text) == key]
    if exact:
        return exact
    return [(s, i) for s, i in pairs if _contains(item_key(i.text), key) or _contains(key, item_key(i.text))]


def set_items(text: str, items: list[PlanItem]) -> str:
    """The plan text with each given item's line replaced by the item's canonical line."""
    lines = text.splitlines()
    for item in items:
        lines[item.line] = item.markdown()
    trailing = "\n" if text.endswith("\n") else ""
    return "\n".join(lines) + trailing


def check_items(text: str, items: list[str]) -> tuple[str, list[str], list[str]]:
    """Flip ``- [ ]`` to ``- [x]`` for items that name exactly one open item (wording normalised, see
    :func:`find_items`); no evidence is checked here (``update_plan`` does that).

    Returns:
        The new plan text, the plan items flipped, and the wanted items that named no single open item.
    """
    plan = parse_plan(text)
    flipped: list[PlanItem] = []
    missing = []
    for wanted in items:
        candidates = [i for _, i in find_items(plan, wanted) if not i.settled and i not in flipped]
        if len(candidates) != 1:
            missing.append(wanted)
            continue
        candidates[0].checked = True
        flipped.append(candidates[0])
    return set_items(text, flipped), [i.text for i in flipped], missing


def not_possible_items(text: str) -> list[tuple[str, str]]:
    """The ``(item, reason)`` of every item marked not possible (``- [~]``), in plan order."""
    return [(item.text, item.reason) for _, item in parse_plan(text).items() if item.not_possible]
