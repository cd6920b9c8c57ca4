"""Limits for one script run, the result of a run, and the short summary the model sees.

The summary is deliberately small (about 1,500 characters of output in all): the Coder's context must not fill up
with logs, and it must never contain the script it just wrote (the model already has it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from insightloom.printable import printable_name

logger = logging.getLogger(__name__)

#: Possible ``RunResult.status`` values.
STATUSES = (
    "ok", "error", "timeout", "memory", "processes", "cpu", "file_size", "quota", "output_cut", "killed",
    "runner_error",
)  # fmt: skip
_MAX_FILES_LISTED = 20


@dataclass(frozen=True)
class Limits:
    """What one script may use.

    Attributes:
        timeout_s: Wall-clock seconds before the script and everything it spawned are killed.
        memory_mb: Address-space cap (RLIMIT_AS) per process, in MiB.
        cpu_s: CPU-time cap (RLIMIT_CPU) in seconds.
        output_chars: Characters of stdout+stderr shown to the model (head and tail).
        file_size_mb: Largest file the script may write (RLIMIT_FSIZE), in MiB.
        max_output_bytes: Bytes of each stream kept by the runner (head and tail); the rest is counted, not kept.
        max_job_mb: The job-folder quota on bytes (setting ``max_job_mb``), watched by the host while the script
            runs; None for none.
        max_job_files: The job-folder quota on files (setting ``max_job_files``), watched the same way.
    """

    timeout_s: float = 120
    memory_mb: int = 4096
    cpu_s: int = 300
    output_chars: int = 1500
    file_size_mb: int = 512
    max_output_bytes: int = 1_000_000
    max_job_mb: float | None = None
    max_job_files: int | None = None

    def as_spec(self) -> dict:
        """The subset the sandbox enforces, as plain JSON."""
        return {
            "timeout_s": float(self.timeout_s),
            "memory_mb": int(self.memory_mb),
            "cpu_s": int(self.cpu_s),
            "file_size_mb": int(self.file_size_mb),
            "max_output_bytes": int(self.max_output_bytes),
        }


def human_mb(mb: float) -> str:
    """``2048`` -> ``"2 GiB"``, ``500`` -> ``"500 MiB"`` (limits are easier to read in the largest unit)."""
    if mb >= 1024:
        gib = mb / 1024
        return f"{gib:g} GiB" if gib == int(gib) else f"{gib:.1f} GiB"
    return f"{mb:g} MiB"


def human_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


def head_tail(text: str, budget: int, *, tail_share: float = 0.5) -> tuple[str, int]:
    """Keep the start and end of ``text`` within ``budget`` characters.

    Returns:
        (shortened text with a marker saying how much was cut, number of characters cut).
    """
    if len(text) <= budget:
        return text, 0
    budget = max(budget, 2)
    tail_len = int(budget * tail_share)
    head_len = budget - tail_len
    cut = len(text) - head_len - tail_len
    tail = text[-tail_len:] if tail_len else ""
    return f"{text[:head_len]}\n... [{cut:,} chars cut] ...\n{tail}", cut


@dataclass
class RunResult:
    """What happened when one script ran.

    Attributes:
        exit_code: The process exit code; negative for a signal; None when it never started.
        status: One of :data:`STATUSES`.
        duration_s: Wall-clock seconds as seen by the caller (includes runner overhead).
        stdout: Captured stdout; the middle is cut when longer than ``Limits.max_output_bytes``.
        stderr: Captured stderr, cut the same way.
        cut_chars: Characters of output the runner did not keep (both streams).
        new_files: Files that appeared in the job folder, relative to it, POSIX style.
        killed_reason: A short human sentence when a limit ended the run ("killed after 30 s timeout") or killed
            some of its processes (the memory cap), with the fix where there is one.
        runner: ``"warm"`` or ``"cold"``: which path actually ran the script.
        cpu_s: CPU seconds used by the script process.
        notes: Isolation that was requested but not available for this run.
        output_chars: Default output budget of :meth:`summary` (from ``Limits.output_chars``).
    """

    exit_code: int | None
    status: str
    duration_s: float
    stdout: str = ""
    stderr: str = ""
    cut_chars: int = 0
    new_files: list[str] = field(default_factory=list)
    killed_reason: str | None = None
    runner: str = "cold"
    cpu_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    output_chars: int = 1500

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "output_cut")

    def summary(self, *, lines_written: int = 0, script: str | Path = "", output_chars: int | None = None) -> str:
        """The short text returned to the model: never the script's content.

        Args:
            lines_written: Lines in the script that was written.
            script: The script's path (only its path is shown; anything that looks like code is ignored).
            output_chars: Budget for stdout+stderr together; defaults to the run's ``Limits.output_chars``.
        """
        output_chars = self.output_chars if output_chars is None else output_chars
        name = _display_name(script)
        wrote = f"Wrote {name} ({lines_written} lines). " if name else f"Wrote {lines_written} lines. "
        code = "not started" if self.exit_code is None else f"exit code {self.exit_code}"
        parts = [f"{wrote}Status: {self.status} ({code}) in {self.duration_s:.2f} s."]
        if self.killed_reason:
            # A cap that killed only some of the script's processes did not stop the script itself.
            label = "Stopped" if self.exit_code is None or self.exit_code < 0 else "Limit hit"
            parts.append(f"{label}: {self.killed_reason.rstrip('.')}.")
        if self.cut_chars:
            parts.append(f"The runner kept only the head and tail of the output ({self.cut_chars:,} chars dropped).")
        out_budget, err_budget = _split_budget(len(self.stdout), len(self.stderr), output_chars, self.ok)
        parts.append(_stream_block("stdout", self.stdout, out_budget, tail_share=0.5))
        parts.append(_stream_block("stderr", self.stderr, err_budget, tail_share=0.7))
        parts.append(_files_block(self.new_files))
        return "\n".join(p for p in parts if p)


def _display_name(script: str | Path) -> str:
    text = str(script)
    if not text or "\n" in text or len(text) > 300:
        return ""  # not a path: never echo script text
    path = Path(text)
    if "code" in path.parts:
        return Path(*path.parts[path.parts.index("code") :]).as_posix()
    return path.name


def _split_budget(out_len: int, err_len: int, total: int, ok: bool) -> tuple[int, int]:
    """Share the character budget: errors get most of it when the run failed, unused room goes to the other."""
    err_share = total // 3 if ok else (total * 2) // 3
    err_budget = min(err_len, err_share)
    out_budget = min(out_len, total - err_budget)
    err_budget = min(err_len, total - out_budget)
    return out_budget, err_budget


def _stream_block(name: str, text: str, budget: int, *, tail_share: float) -> str:
    if not text.strip():
        return f"{name}: (empty)"
    shown, cut = head_tail(text, budget, tail_share=tail_share)
    note = f", {cut:,} chars not shown" if cut else ""
    return f"{name} ({len(text):,} chars{note}):\n{shown.rstrip()}"


def _files_block(files: list[str]) -> str:
    if not files:
        return "New files: none."
    # The script chose these names: escaped, none can start a line of its own and pass for a status line.
    listed = ", ".join(printable_name(name) for name in files[:_MAX_FILES_LISTED])
    more = f" and {len(files) - _MAX_FILES_LISTED} more" if len(files) > _MAX_FILES_LISTED else ""
    return f"New files ({len(files)}): {listed}{more}."
