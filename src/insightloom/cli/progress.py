"""Live progress on stderr, and the terminal plan reviewer."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel

from ..events import Event
from ..workflow.review import Decision, parse_answer


class ProgressPrinter:
    """Prints stage, agent and tool events with the elapsed time; ``-q`` silences it, ``-v`` adds tool results."""

    def __init__(self, console: Console, *, verbose: bool = False) -> None:
        self.console = console
        self.verbose = verbose
        self.started = time.perf_counter()
        self.depth = 0

    def _line(self, text: str) -> None:
        elapsed = time.perf_counter() - self.started
        self.console.print(f"[dim]{elapsed:7.1f}s[/dim] {'  ' * self.depth}{text}", highlight=False)

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.kind == "stage":
            self.depth = 0
            self._line(f"[bold cyan]▶ {data['name']}[/bold cyan]")
        elif event.kind == "agent_start":
            self._line(f"[bold]{data['agent']}[/bold] started")
            self.depth += 1
        elif event.kind == "agent_end":
            self.depth = max(0, self.depth - 1)
            self._line(f"[bold]{data['agent']}[/bold] done")
        elif event.kind == "tool_call":
            self._line(f"→ {data['tool']}")
        elif event.kind == "tool_result" and (self.verbose or data.get("status") == "error"):
            style = "red" if data.get("status") == "error" else "green"
            self._line(f"[{style}]← {data['tool']} {data.get('status', '')}[/{style}]")
        elif event.kind == "usage" and self.verbose:
            self._line(
                f"[dim]tokens in={data['input_tokens']:,} out={data['output_tokens']:,} calls={data['calls']}[/dim]"
            )
        elif event.kind == "progress":
            self._line(f"[yellow]{data['message']}[/yellow]")
        elif event.kind == "error":
            self._line(f"[red]error: {data['message']}[/red]")


class TerminalReviewer:
    """Shows the plan and reads the decision: Enter or ``y`` approves, ``q`` cancels, other text is feedback."""

    def __init__(self, console: Console, read: Callable[[str], str] | None = None) -> None:
        self.console = console
        self.read = read or console.input  # the prompt goes to stderr with the console, keeping stdout clean

    def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
        title = "Plan" if revision == 0 else f"Plan (revision {revision} of {max_revisions})"
        self.console.print(Panel(Markdown(plan), title=title))
        can_revise = revision < max_revisions
        hint = (
            "Enter or y approves, q cancels, anything else is feedback for a revised plan"
            if can_revise
            else "No revisions left: Enter or y approves, q cancels"
        )
        while True:
            self.console.print(f"[bold]Review the plan[/bold] ({hint}):")
            try:
                answer = self.read("> ")
            except EOFError:
                return Decision("cancel")
            decision = parse_answer(answer, can_revise)
            if decision is not None:
                return decision
            self.console.print("[yellow]No revisions left: answer y to approve or q to cancel.[/yellow]")
