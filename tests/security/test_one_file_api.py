"""One rule for host code: a job folder is hostile input, so every host read or write of a job file goes through
``insightloom.fileio`` (no-follow walk, regular files only, non-blocking open, size caps).

This test scans every module under ``src/insightloom`` (its syntax tree, not its text) for direct file calls:
``open``, ``.open()``, ``read_text``/``read_bytes``/``write_text``/``write_bytes``, ``glob``/``rglob``/``iterdir``,
``os.walk``/``os.listdir``/``os.scandir``/``os.open``, ``shutil.copytree``/``shutil.copy*``, data readers
(``pd.read_*``, ``pq.read_table``...), and, in a function that also makes a direct read, a ``.resolve()`` before it
or an ``.exists()``/``.is_file()``/``.is_dir()`` gate. Each one outside ``fileio.py`` must be named in ``ALLOWED``
with the reason it is not a job file (or is read inside the sandbox). An allowance names the module, the function
and the kind of call, never a line number, so edits elsewhere do not break it; one that matches nothing is stale
and fails too.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import insightloom

SRC = Path(insightloom.__file__).parent  # the sources under test (PYTHONPATH may point at another checkout)
API_MODULE = "insightloom.fileio"

# Kinds of direct call; the gate and resolve kinds are only reported beside a direct read in the same function.
READS = {"open", "os.open", "read_text", "read_bytes", "data-read"}
# Path's own signatures tell it from a store's ``read_bytes(job_id, name)``: at most this many positional arguments.
_PATH_CALL_ARGS = {"read_text": 0, "read_bytes": 0, "iterdir": 0, "write_text": 1, "write_bytes": 1, "glob": 1}
_PATH_CALLS = {"read_text", "read_bytes", "write_text", "write_bytes", "glob", "rglob", "iterdir"}
_OPENER_MODULES = {"io", "codecs", "gzip", "bz2", "lzma", "tarfile", "zipfile", "Image"}  # ``X.open(path)``
_OS_CALLS = {"walk", "listdir", "scandir", "open"}
_SHUTIL_CALLS = {"copytree", "copy", "copy2", "copyfile"}
_DATA_LIBS = {"pd", "pandas", "pq", "pa", "pyarrow", "pl", "polars", "np", "numpy"}
_DATA_CALLS = {"read_table", "ParquetFile", "load", "loadtxt", "genfromtxt", "fromfile", "OSFile", "memory_map"}
_GATES = {"exists", "is_file", "is_dir"}
_OPTIONAL_BENEATH = {"read_json", "write_json", "write_text_atomic"}  # the API's plain-path mode: host files only
# python-docx, matplotlib and Starlette open a path they are given, following links; given an open file or bytes
# under one of the _STREAM_NAMES they read only what fileio opened.
_LIBRARY_OPENERS = {"Document", "add_picture", "savefig", "FileResponse"}
_STREAM_NAMES = {"handle", "stream", "image", "buffer", "fileobj"}


@dataclass(frozen=True)
class Finding:
    """One direct file call: where it is (module, dotted function) and what it is."""

    module: str
    function: str
    kind: str
    line: int


@dataclass(frozen=True)
class Allowed:
    """A direct call the rule permits, and why it cannot be turned against the host."""

    module: str
    function: str
    kind: str
    why: str


class _Scanner(ast.NodeVisitor):
    """Collects the direct file calls of one module, each under the function (or class method) holding it."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []
        self.api_names: set[str] = set()  # local names bound to the fileio module
        self.findings: list[Finding] = []
        self._gates: dict[str, list[tuple[str, int]]] = {}

    def _function(self) -> str:
        return ".".join(self.scope) or "<module>"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == API_MODULE and alias.asname:
                self.api_names.add(alias.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "fileio" and (node.module in (None, "insightloom") or node.level > 0):
                self.api_names.add(alias.asname or alias.name)

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Call(self, node: ast.Call) -> None:
        kind = self._kind(node)
        name = self._api_name(node.func)
        if kind is None and name in _OPTIONAL_BENEATH and not any(k.arg == "beneath" for k in node.keywords):
            kind = f"{name}-without-beneath"
        if kind is None and name in _LIBRARY_OPENERS and isinstance(node.func, ast.Name) and not _given_a_stream(node):
            kind = f"library:{name}"
        if kind is not None:
            self.findings.append(Finding(self.module, self._function(), kind, node.lineno))
        elif isinstance(node.func, ast.Attribute) and (node.func.attr in _GATES or node.func.attr == "resolve"):
            gate = "resolve-then-open" if node.func.attr == "resolve" else "exists-gate"
            self._gates.setdefault(self._function(), []).append((gate, node.lineno))
        self.generic_visit(node)

    def _api_name(self, func: ast.expr) -> str | None:
        """The name of a function called bare (``read_json(...)``, imported from the API or ``jobs``) or through an
        alias of the API (``fileio.read_json(...)``); None for a method of another object (``job.write_json``)."""
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.api_names:
            return func.attr
        return None

    def _kind(self, node: ast.Call) -> str | None:
        func = node.func
        if isinstance(func, ast.Name):
            return "open" if func.id == "open" else None
        if not isinstance(func, ast.Attribute):
            return None
        base = func.value.id if isinstance(func.value, ast.Name) else None
        if base in self.api_names:
            return None  # the one file API itself
        if func.attr in _LIBRARY_OPENERS:
            return None if _given_a_stream(node) else f"library:{func.attr}"
        if base == "os":
            return f"os.{func.attr}" if func.attr in _OS_CALLS else None
        if base == "shutil":
            return f"shutil.{func.attr}" if func.attr in _SHUTIL_CALLS else None
        if base in _DATA_LIBS:
            return "data-read" if func.attr.startswith("read_") or func.attr in _DATA_CALLS else None
        if func.attr == "open":
            return "open" if base in _OPENER_MODULES or _path_open(node) else None
        if func.attr in _PATH_CALLS and len(node.args) <= _PATH_CALL_ARGS.get(func.attr, 1):
            return func.attr
        return None

    def results(self) -> list[Finding]:
        """The direct calls, plus a gate or resolve finding for each function that also reads directly."""
        reading = {f.function for f in self.findings if f.kind in READS}
        extra = [
            Finding(self.module, function, gate, line)
            for function, gates in self._gates.items()
            if function in reading
            for gate, line in gates
        ]
        return self.findings + extra


def _given_a_stream(node: ast.Call) -> bool:
    """Whether a library call gets an open file or bytes (an argument named as in ``_STREAM_NAMES``), or nothing."""
    args = [*node.args, *(k.value for k in node.keywords)]
    return not args or any(isinstance(a, ast.Name) and a.id in _STREAM_NAMES for a in args)


def _path_open(node: ast.Call) -> bool:
    """``path.open()``, ``path.open("rb")``: no argument or a mode, unlike ``JobFolder.open(root)``."""
    first = node.args[0] if node.args else None
    return first is None or (isinstance(first, ast.Constant) and isinstance(first.value, str))


def scan_source(source: str, module: str) -> list[Finding]:
    """Every direct file call in ``source`` (a module's text), attributed to ``module``."""
    scanner = _Scanner(module)
    scanner.visit(ast.parse(source))
    return scanner.results()


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def scan_package() -> Iterator[Finding]:
    """Every direct file call in the package, outside the one file API."""
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        if module != API_MODULE:
            yield from scan_source(path.read_text(encoding="utf-8"), module)


def unallowed(findings: list[Finding], allowed: tuple[Allowed, ...]) -> list[Finding]:
    """The findings no allowance covers."""
    keys = {(a.module, a.function, a.kind) for a in allowed}
    return [f for f in findings if (f.module, f.function, f.kind) not in keys]


def stale(findings: list[Finding], allowed: tuple[Allowed, ...]) -> list[Allowed]:
    """The allowances that match no finding any more (the call moved to the API or was removed)."""
    keys = {(f.module, f.function, f.kind) for f in findings}
    return [a for a in allowed if (a.module, a.function, a.kind) not in keys]


# Reasons a direct call may stay. None of them touches a file a script can write on the host's behalf.
USER_FILES = "a file the user names (the CLI's uploads and downloads, the demo's sample files), outside any job"
INPUTS = (
    "the user's input files, read at intake where the user named them, or on resume from data/ entries that "
    "workflow.job_inputs listed as regular files through fileio, while no script of the job runs"
)
PACKAGE_DATA = "package data shipped in the wheel or an installed package (prompts, schemas, tokenizer, web page)"
SANDBOX_SIDE = "script-side code (coder_analysis_utils) that runs inside the sandbox, confined by it, not on the host"
HOST_OWNED = (
    "a host-owned file or folder outside every job folder (config, AWS shared files, tokens, sessions, store records "
    "and manifests, the artifacts folder's own listing): the sandbox never sees it"
)
PROMPTS = "the built-in prompts or the user's prompts override folder (settings), never inside a job folder"
SKILLS = "a skills folder (built-in or the user's ./skills), never inside a job folder"
SYSTEM_FILES = "system files (installed fonts, /proc) that no script can write"
IN_MEMORY = "decodes bytes already read and hash-checked by jobfiles.load_views (a pa.BufferReader), never a path"
NO_FOLLOW_WALK = (
    "itself a descriptor walk with O_DIRECTORY | O_NOFOLLOW from the job folder's fd, making way for a pulled "
    "file's folders (removes what stands there, never follows it)"
)
KERNEL = (
    "kernel interfaces (/proc/self, uid maps, Landlock path handles) opened by the script's own process before its "
    "code runs"
)
NAMES_ONLY = (
    "walks the job folder for names and lstat/lchown only (os.walk never descends into a linked folder); no file is "
    "opened or read through it"
)


def _each(why: str, module: str, *calls: tuple[str, str]) -> tuple[Allowed, ...]:
    """Allowances for ``(function, kind)`` calls of one module, for one reason."""
    return tuple(Allowed(f"insightloom.{module}", function, kind, why) for function, kind in calls)


ALLOWED: tuple[Allowed, ...] = (
    *_each(USER_FILES, "demo_data", ("write_column_definitions", "write_text")),
    *_each(USER_FILES, "service.client", ("ServiceClient.submit", "open"), ("ServiceClient.download", "write_bytes")),
    *_each(PACKAGE_DATA, "contracts", ("schema_text", "read_text")),
    *_each(PACKAGE_DATA, "context.tokens", ("encoding", "read_bytes")),
    *_each(PACKAGE_DATA, "service.app", ("create_app.page", "library:FileResponse")),
    *_each(
        HOST_OWNED,
        "config",
        ("load_settings", "read_text"),
        ("load_settings", "exists-gate"),
        ("_profile_has_credentials", "read_text"),
        ("_mentions", "read_text"),
    ),
    *_each(
        HOST_OWNED,
        "service.auth",
        ("Authenticator._load_revoked", "read_text"),
        ("Authenticator._load_revoked", "exists-gate"),
        ("Authenticator.revoke", "write_json-without-beneath"),
    ),
    *_each(HOST_OWNED, "service.service_settings", ("load_tokens_file", "read_text")),
    *_each(
        HOST_OWNED,
        "storage.local",
        ("LocalStore.job_ids", "glob"),
        ("LocalStore.read_meta", "read_text"),
        ("LocalStore.write_meta", "write_text_atomic-without-beneath"),
    ),
    *_each(
        HOST_OWNED,
        "storage.s3",
        ("S3Store._load_manifest", "read_text"),
        ("S3Store._record", "write_json-without-beneath"),
    ),
    *_each(NO_FOLLOW_WALK, "storage.s3", ("_real_parents", "os.open")),
    *_each(
        PROMPTS,
        "prompting",
        ("_read_override", "read_text"),
        ("_read_override", "exists-gate"),
        ("load_prompt", "read_text"),
        ("load_prompt", "exists-gate"),
    ),
    *_each(
        SKILLS,
        "skills.catalog",
        ("_load_one", "read_text"),
        ("_load_one", "resolve-then-open"),
        ("scan_folder", "iterdir"),
    ),
    *_each(SYSTEM_FILES, "fonts", ("_system_font", "rglob")),
    *_each(SYSTEM_FILES, "joblock", ("process_start", "read_text")),
    *_each(
        SANDBOX_SIDE,
        "analysis_utils.calculations",
        ("_locked", "open"),
        ("_read", "read_text"),
        ("_read", "exists-gate"),
        ("_write_records", "write_json-without-beneath"),
    ),
    *_each(
        SANDBOX_SIDE,
        "analysis_utils.charts",
        ("save_chart", "library:savefig"),
        ("save_chart", "write_json-without-beneath"),
    ),
    *_each(SANDBOX_SIDE, "analysis_utils.standard._common", ("planned_specs", "read_text")),
    *_each(
        SANDBOX_SIDE,
        "analysis_utils.jobdir",
        ("read_profile", "read_text"),
        ("load_df", "data-read"),
        ("load_df", "exists-gate"),
    ),
    *_each(
        SANDBOX_SIDE,
        "analysis_utils.result_notes",
        ("append_result", "read_text"),
        ("append_result", "open"),
        ("append_result", "exists-gate"),
        ("read_results", "read_text"),
        ("read_results", "exists-gate"),
    ),
    # Owned by the changes running beside this one (execution, intake, validation, jobs): the lead settles each.
    *_each(
        SANDBOX_SIDE,
        "execution._child",
        ("_redirect_stdio", "os.open"),
        ("_redirect_stdio", "open"),
        ("_seed_mpl_cache", "os.listdir"),
        ("_seed_mpl_cache", "shutil.copyfile"),
    ),
    *_each(
        KERNEL,
        "execution._kernel",
        ("enter_own_user_namespace", "open"),
        ("reset_pid_namespace_for_children", "os.open"),
        ("_add_path_rule", "os.open"),
    ),
    *_each(SYSTEM_FILES, "execution._sandbox", ("_children_of", "os.listdir"), ("_children_of", "open")),
    *_each(SANDBOX_SIDE, "execution._sandbox", ("_write_pid", "open")),
    *_each(
        SYSTEM_FILES, "execution._server", ("_thread_count", "os.listdir"), ("_Server._start_supervisor", "os.open")
    ),
    *_each(HOST_OWNED, "execution.bwrap", ("seed_mpl_cache", "glob"), ("seed_mpl_cache", "shutil.copyfile")),
    *_each(NAMES_ONLY, "execution.bwrap", ("give_to_sandbox", "os.walk")),
    *_each(
        SYSTEM_FILES,
        "execution.cgroups",
        ("_v2_root", "read_text"),
        ("_v2_root", "exists-gate"),
        ("cgroup_support", "write_text"),
        ("_v2_parent", "write_text"),
        ("SandboxCgroup.__init__", "write_text"),
        ("SandboxCgroup.set_memory", "write_text"),
        ("SandboxCgroup.add", "write_text"),
        ("SandboxCgroup.pids", "read_text"),
        ("_counter", "read_text"),
        ("_children", "os.listdir"),
        ("_children", "open"),
        ("sweep_stale", "iterdir"),
    ),
    *_each(NO_FOLLOW_WALK, "execution.quota", ("job_usage", "os.open"), ("_list", "os.scandir")),
    *_each(HOST_OWNED, "execution.runner_base", ("sweep_stale_scratch", "os.scandir")),
    *_each(NAMES_ONLY, "execution.runner_base", ("snapshot", "os.walk")),
    *_each(SYSTEM_FILES, "execution.runner_base", ("kill_leftovers", "read_text")),
    *_each(HOST_OWNED, "execution.warm", ("WarmRunner._start_locked", "open")),
    *_each(
        INPUTS,
        "intake.coldefs",
        ("load_column_definitions", "read_bytes"),
        ("load_column_definitions", "exists-gate"),
    ),
    *_each(
        INPUTS,
        "intake.ingest",
        ("_copy_columns_file", "read_bytes"),
        ("_copy_columns_file", "write_bytes"),
        ("_copy_columns_file", "exists-gate"),
        ("_copy_columns_file", "resolve-then-open"),
    ),
    *_each(
        INPUTS,
        "intake.inputs",
        ("_folder_files", "iterdir"),
        ("_check_text_bytes", "open"),
        ("copy_into", "shutil.copy2"),
        ("_head_lines", "open"),
        ("is_column_definitions", "open"),
        ("is_column_definitions", "exists-gate"),
        ("_has_magic", "open"),
    ),
    *_each(INPUTS, "intake.readers_json", ("_array", "read_bytes"), ("_lines", "open")),
    *_each(INPUTS, "intake.readers_parquet", ("read_parquet", "data-read")),
    *_each(HOST_OWNED, "intake.database.pgpass", ("passfile_password", "open")),  # the user's libpq password file
    # the snapshot's Parquet file, opened through fileio.open_regular (no link, a regular file) and read from its handle
    *_each(INPUTS, "intake.database.store", ("read_raw", "data-read")),
    *_each(INPUTS, "intake.csv_columnar", ("scan_bytes", "open"), ("read_cells", "data-read")),
    *_each(IN_MEMORY, "validation.checks", ("_decoded", "data-read")),
    *_each(
        INPUTS,
        "intake.readers",
        ("read_csv", "read_bytes"),
        ("_parse_csv", "data-read"),
        ("decode_text", "read_bytes"),
    ),
    *_each(HOST_OWNED, "jobs", ("iter_jobs", "glob")),
    *_each(USER_FILES, "jobs", ("JobFolder.create", "iterdir")),
)


def test_no_direct_file_call_outside_the_api_unless_allowed() -> None:
    findings = list(scan_package())
    missing = unallowed(findings, ALLOWED)
    assert not missing, "direct file calls outside insightloom.fileio (use the API, or allow with a reason):\n" + (
        "\n".join(f"  {f.module}:{f.line} {f.function} {f.kind}" for f in missing)
    )


def test_every_allowance_still_matches_a_call() -> None:
    gone = stale(list(scan_package()), ALLOWED)
    assert not gone, "stale ALLOWED entries (remove them):\n" + "\n".join(
        f"  {a.module} {a.function} {a.kind}" for a in gone
    )


def test_every_allowance_is_unique_and_gives_a_reason() -> None:
    keys = Counter((a.module, a.function, a.kind) for a in ALLOWED)
    assert [k for k, n in keys.items() if n > 1] == []
    assert all(a.why.strip() for a in ALLOWED)


SYNTHETIC = """
import os, shutil
import pandas as pd
from pathlib import Path
from insightloom import fileio

def reads(job):
    p = (job / "report.md").resolve()
    if p.exists():
        return p.read_text()

class Store:
    def copy(self, job, dest):
        shutil.copytree(job / "data", dest)
        for name in os.listdir(job):
            open(job / name).close()
        return list(job.glob("*.parquet")), pd.read_parquet(job / "cache" / "v.parquet")

def library(job, doc):
    Document(str(job / "final_report.docx"))
    doc.add_picture(str(job / "charts" / "a.png"))
    os.open(job / "job.lock", os.O_RDONLY)
    return read_json(job / "job.json")

def safe(job, doc):
    if (job / "x").exists():
        with fileio.open_regular(job / "final_report.docx", beneath=job) as (handle, _):
            Document(handle)
        doc.add_picture(image, width=1)
        JobFolder.open(job).write_json("request.json", {})
        return fileio.read_text(job / "x", beneath=job), read_json(job / "y", beneath=job), Document()
"""


def test_the_scanner_flags_each_kind_of_direct_call_and_not_the_api() -> None:
    found = {(f.function, f.kind) for f in scan_source(SYNTHETIC, "m")}
    assert found == {
        ("reads", "read_text"),
        ("reads", "resolve-then-open"),
        ("reads", "exists-gate"),
        ("Store.copy", "shutil.copytree"),
        ("Store.copy", "os.listdir"),
        ("Store.copy", "open"),
        ("Store.copy", "glob"),
        ("Store.copy", "data-read"),
        ("library", "library:Document"),
        ("library", "library:add_picture"),
        ("library", "os.open"),
        ("library", "read_json-without-beneath"),
    }


def test_a_new_direct_call_fails_and_a_removed_one_makes_its_allowance_stale() -> None:
    allowed = (Allowed("m", "reads", "read_text", "why"), Allowed("m", "gone", "open", "why"))
    findings = scan_source("def reads(p):\n    return p.read_text()\n\ndef new(p):\n    return open(p)\n", "m")
    assert [(f.function, f.kind) for f in unallowed(findings, allowed)] == [("new", "open")]
    assert [a.function for a in stale(findings, allowed)] == ["gone"]


@pytest.mark.parametrize("line", ["import insightloom.fileio as fio", "from .. import fileio as fio"])
def test_calls_through_an_alias_of_the_api_are_not_flagged(line: str) -> None:
    source = f"{line}\ndef f(p, job):\n    return fio.read_text(p, beneath=job), fio.write_text(p, 'x')\n"
    assert scan_source(source, "m") == []
