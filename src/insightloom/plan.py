"""The plan checklist: parse it leniently, check it strictly, filter it per agent, settle its items.

Format (DESIGN): ``# Plan`` (or ``# Plan (Revised)``), ``## thought``, ``## title``, ``## steps``, then
``### N. Coder: subtitle`` sections of ``- [ ]`` items, each tool agent at most once and in a fixed order.

Lenient in: a plan wrapped in a code fence or preceded by a preamble, headings such as ``### 1) **Coder** - x``,
``## 1. Coder: x``, ``### Reporter – Report`` or ``### 1. 코더: 분석``, Korean meta headings (``## 생각``), ``* [ ]``
items and fenced code blocks inside the plan (their lines are no plan lines) are understood; :func:`normalise_plan`
rewrites such a plan in the canonical form before it is stored, so every agent sees one format. Strict out:
:func:`plan_problems` names each heading or checkbox line it could not place, and each item a new plan already
settled, so the Planner can fix it.

An item is open (``- [ ]``), done (``- [x]``) or not possible (``- [~] <item> — not possible: <reason>``); done and
not-possible items are *settled*, and a section whose items are all settled is done.
"""

from __future__ import annotations

import itertools
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
# The ``##`` headings of the format, by the names a model may give them (matched case-insensitively).
META_HEADINGS = {
    **{name: name for name in ("thought", "title", "steps", "revision_notes")},
    "생각": "thought",
    "제목": "title",
    "단계": "steps",
    "수정_사항": "revision_notes",
}
NOT_POSSIBLE_MARK = "~"
NOT_POSSIBLE_SEPARATOR = " — not possible: "
#: The reason of a ``[~]`` line that gives none (job.json and the report's limitations need one).
UNSTATED_REASON = "no reason was given"
SECTION_FORMAT = "'### N. Agent: subtitle' (Agent one of Coder, Validator, Reporter, Auditor)"

_ROLE_NAMES = "|".join(re.escape(name) for name in sorted(ROLE_ALIASES, key=len, reverse=True))
_BOLD = r"(?:\*\*|__)?"
# Levels 2 to 4 are sections; a number of at most six digits (int() refuses thousands of them).
_SECTION_RE = re.compile(
    rf"^#{{2,4}}\s*(?:(?P<number>\d{{1,6}})\s*[.)]?\s*)?{_BOLD}\s*(?P<role>{_ROLE_NAMES})(?!\w)\s*{_BOLD}\s*"
    rf"(?:[:：\-–—]\s*{_BOLD}\s*(?P<subtitle>.*?))?\s*{_BOLD}\s*$",
    re.I,
)
_PLAN_HEADING_RE = re.compile(r"^#\s*(?:\*\*)?\s*plan\s*(?P<revised>\(\s*revised\s*\))?\s*(?:\*\*)?\s*$", re.I)
_LEVEL2_RE = re.compile(r"^##\s*(?P<name>[^\W\d][\w ]*?)\s*:?\s*$")
_HEADING_RE = re.compile(r"^#{1,6}(\s|$)")  # Markdown's ATX heading; "#1 priority" is text
_FENCE_RE = re.compile(r"^(```|~~~)(?P<info>[\w+-]*)\s*$")
# Bullets a model writes besides Markdown's ("•", "·", "–", "—", "・"...), optionally inside a "> " quote.
_BULLET_MARK = r"(?:[-*+•·–—・‣◦▪]|\d+[.)])"
_QUOTED = r"(?:>\s*)*"
_BULLET = rf"{_QUOTED}{_BULLET_MARK}?"
# Ballot-box glyphs stand for a checkbox: "☐ x" is "- [ ] x", "☑ x" and "✅ x" are "- [x] x".
_OPEN_GLYPHS = "☐"
_DONE_GLYPHS = "☑☒✅✔✓"
_GLYPH = rf"[{_OPEN_GLYPHS}{_DONE_GLYPHS}]\ufe0f?"
_ITEM_RE = re.compile(rf"^\s*{_BULLET}\s*(?:\[(?P<mark>[ xX~])\]|(?P<glyph>{_GLYPH}))\s*(?P<text>\S.*?)\s*$")
_CHECKBOX_LIKE_RE = re.compile(rf"^\s*{_BULLET}\s*(?:\[\s*[^\]\s\d]?\s*\]|[{_OPEN_GLYPHS}{_DONE_GLYPHS}❌❎□⬜■])")
# A bullet only when a space follows it: "-5% change", "10.5% margin" and "---" are no bullets.
_BULLET_LINE_RE = re.compile(rf"^\s*{_QUOTED}{_BULLET_MARK}\s+\S")
# A bullet only when a space or a checkbox follows it: "-5% change" and "10.5% margin" keep their numbers.
_ITEM_PREFIX_RE = re.compile(rf"^\s*(?:{_BULLET}\s*(?:\[[ xX~]\]|{_GLYPH})|{_QUOTED}{_BULLET_MARK}(?=\s))\s*")
_QUOTES = str.maketrans("", "", "`'\"‘’“”«»")
_TRAILING_PUNCTUATION = ".,;:!?…。"
_SPACE_BEFORE_RE = re.compile(r"\s+([,.;:!?)\]}])")
_SPACE_AFTER_RE = re.compile(r"([(\[{])\s+")
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
    kind: str  # "heading", "checkbox" or "bullet" (a bullet under a section that is no item)


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
    code_lines: frozenset[int] = frozenset()  # lines of fenced code blocks inside the plan, fences included

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

    def open_items(self) -> list[str]:
        """``Role: item`` for every open item, in plan order. A Tracker section is skipped: nobody ticks the
        Tracker's own items, and they never block anything."""
        return _labelled_open(self.sections)

    def blocking_items(self, role: str) -> list[str]:
        """Open items (as :meth:`open_items`) of the sections before ``role``'s (the agent may not start before)."""
        return _labelled_open(list(itertools.takewhile(lambda s: s.role != role, self.sections)))

    @property
    def complete(self) -> bool:
        return all(s.done for s in self.sections)

    def items(self) -> list[tuple[PlanSection, PlanItem]]:
        """Every item with its section, in plan order."""
        return [(section, item) for section in self.sections for item in section.items]


def _labelled_open(sections: list[PlanSection]) -> list[str]:
    return [f"{DISPLAY.get(s.role, s.role)}: {text}" for s in sections if s.role != "tracker" for text in s.unchecked()]


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
    if found.group("glyph"):
        mark = " " if found.group("glyph")[0] in _OPEN_GLYPHS else "x"
    if mark != NOT_POSSIBLE_MARK:
        return PlanItem(text, mark in "xX", number)
    split = split_not_possible(text)
    item, reason = split if split else (text, "")
    return PlanItem(item, False, number, not_possible=True, reason=reason or UNSTATED_REASON)


def _fence(line: str) -> re.Match[str] | None:
    return _FENCE_RE.match(line.strip())


def _last_structure_line(lines: list[str]) -> int:
    """The last section heading or checkbox item (-1 when none)."""
    structure = (i for i, line in enumerate(lines) if _SECTION_RE.match(line.strip()) or _ITEM_RE.match(line))
    return max(structure, default=-1)


def _plan_span(lines: list[str]) -> tuple[int | None, int, int, frozenset[int]]:
    """The ``# Plan`` line (None when missing), the span of plan lines and the lines of code blocks inside it.

    A preamble before ``# Plan`` and whatever follows the closing fence of a fenced plan are outside. Inside, a
    fence opens a code block when another fence closes it. In a fenced plan, a bare fence is the plan's closing
    fence unless plan lines (sections, items) follow the fence that would close it: a code block inside the plan
    never cuts the plan short.
    """
    heading = next((i for i, line in enumerate(lines) if _PLAN_HEADING_RE.match(line.strip())), None)
    start = heading if heading is not None else 0
    fenced = any(_fence(line) for line in lines[:start])
    fences = [(i, found) for i in range(start + 1, len(lines)) if (found := _fence(lines[i]))]
    last_structure = _last_structure_line(lines)
    code: set[int] = set()
    opened: int | None = None
    for k, (number, found) in enumerate(fences):
        following = fences[k + 1][0] if k + 1 < len(fences) else None
        if opened is not None:
            code.update(range(opened, number + 1))
            opened = None
        elif fenced and not found.group("info") and (following is None or last_structure < following):
            return heading, start, number, frozenset(code)
        elif following is not None:
            opened = number
    return heading, start, len(lines), frozenset(code)


def _section_heading(stripped: str, line: int, position: int) -> PlanSection | None:
    found = _SECTION_RE.match(stripped)
    role = ROLE_ALIASES.get(found.group("role").casefold()) if found else None
    if found is None or role is None:  # "AUDİTOR" matches with re.I but folds to no role: an unparsed heading
        return None
    number = int(found.group("number")) if found.group("number") else position
    subtitle = (found.group("subtitle") or "").strip().strip("*_").strip()
    return PlanSection(number, role, subtitle, line)


def _known_heading(stripped: str) -> str | None:
    """``thought``/``title``/``steps``/``revision_notes`` for their ``##`` headings (any case, or the Korean
    names in :data:`META_HEADINGS`), else None."""
    found = _LEVEL2_RE.match(stripped)
    name = "_".join(found.group("name").split()).casefold() if found else ""
    return META_HEADINGS.get(name)


def parse_plan(text: str) -> Plan:
    """Parse plan Markdown leniently; unknown text lines are kept in ``text`` untouched.

    Line numbers refer to ``text``. Headings and checkbox lines that fit no rule are collected in
    ``Plan.unparsed`` (:func:`plan_problems` reports them).
    """
    lines = text.splitlines()
    heading, start, end, code = _plan_span(lines)
    plan = Plan(text, "", [], heading_line=heading, start=start, end=end, code_lines=code)
    found = _PLAN_HEADING_RE.match(lines[heading].strip()) if heading is not None else None
    plan.revised = found is not None and found.group("revised") is not None
    in_title = in_section = False
    for number in range(start, end):
        line = lines[number]
        stripped = line.strip()
        if number == heading or number in code or _fence(line):
            continue
        section = _section_heading(stripped, number, len(plan.sections) + 1)
        if section is not None or _HEADING_RE.match(stripped):
            in_title, in_section = _known_heading(stripped) == "title", section is not None
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
        elif in_section and _BULLET_LINE_RE.match(line):  # "- Break down revenue": a task nobody could tick
            plan.unparsed.append(Unparsed(number, stripped, "bullet"))
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
        elif number in plan.code_lines:
            out.append(lines[number].rstrip())
        elif _fence(stripped):
            continue  # a stray fence that opens no code block
        elif _HEADING_RE.match(stripped) and (name := _known_heading(stripped)):
            out.append(f"## {name}")
        else:
            out.append(lines[number].rstrip())
    return "\n".join(out).strip("\n") + "\n"


def _shown(text: str) -> str:
    return text if len(text) <= 100 else text[:100] + "…"


def _unparsed_problem(entry: Unparsed, in_section: bool) -> str:
    shown = _shown(entry.text)
    if entry.kind == "heading":
        fix = (
            f"write a section heading as {SECTION_FORMAT}, use only the headings '# Plan', '## thought', "
            "'## title', '## steps' (and '## revision_notes'), or remove the line"
        )
    elif entry.kind == "bullet":
        fix = (
            "a bullet under a section is no plan item and can never be ticked; write each task as "
            "'- [ ] <task in exact words>', and move notes to '## thought'"
        )
    elif in_section:
        fix = "write an item as '- [ ] <task in exact words>'"
    else:
        fix = f"put items under a section heading {SECTION_FORMAT}, as '- [ ] <task>'"
    return f"line {entry.line + 1} '{shown}' is not part of the plan format: {fix}"


def _settled_items(plan: Plan) -> list[str]:
    """A new plan (the Planner's, first or revised) has only open items: nobody has done any work yet."""
    lines = plan.text.splitlines()
    return [
        f"line {item.line + 1} '{_shown(lines[item.line].strip())}' is already "
        f"{'marked not possible' if item.not_possible else 'checked'}, but a new plan has only open items: "
        f"write it as '- [ ] {_shown(item.text)}'"
        for _, item in plan.items()
        if item.settled
    ]


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
    return problems + _settled_items(plan) + _duplicate_items(plan)


def item_key(text: str) -> str:
    """An item's wording reduced for matching: no checkbox prefix, case, backticks, quotes, extra spaces or
    trailing punctuation. Operators, signs and digits stay: "Amount > 100" and "Amount < 100" are two items."""
    clean = _ITEM_PREFIX_RE.sub("", unicodedata.normalize("NFKC", text), count=1).casefold()
    clean = " ".join(clean.translate(_QUOTES).split())
    clean = _SPACE_AFTER_RE.sub(r"\1", _SPACE_BEFORE_RE.sub(r"\1", clean))  # "Revenue : totals" = "Revenue: totals"
    return clean.rstrip(_TRAILING_PUNCTUATION).rstrip()


def same_item(wanted: str, item: str) -> bool:
    """Whether ``wanted`` names the plan item ``item`` (normalised wording, see :func:`item_key`)."""
    return bool(item_key(wanted)) and item_key(wanted) == item_key(item)


def _contains(longer: str, shorter: str) -> bool:
    """Whether ``shorter`` is whole words of ``longer`` ("amount > 100" is not in "amount > 1000")."""
    if len(shorter) < _PARTIAL_MATCH_MIN_CHARS:
        return False
    return re.search(rf"(?<!\w){re.escape(shorter)}(?!\w)", longer) is not None


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


def not_possible_items(text: str) -> list[tuple[str, str]]:
    """The ``(item, reason)`` of every item marked not possible (``- [~]``), in plan order."""
    return [(item.text, item.reason) for _, item in parse_plan(text).items() if item.not_possible]
