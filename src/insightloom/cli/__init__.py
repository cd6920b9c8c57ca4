"""The ``insightloom`` command: run, demo, resume, jobs, usage, serve, schema, skills, doctor, ask, verify and audit.

stdout carries only answers and, as its last line, the job folder; progress and errors go to stderr.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from .. import __version__
from ..config import Settings, load_settings, resolve_auto_provider
from ..errors import BadInputError, InsightloomError
from ..fileio import is_regular_file, read_json
from ..jobs import JobFolder

if TYPE_CHECKING:
    from ..intake.database import DatabaseSource

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Data files + a request → a verified, cited report.")
skills_app = typer.Typer(help="Skills the Coder can load.", no_args_is_help=True)
app.add_typer(skills_app, name="skills")
err = Console(stderr=True, soft_wrap=True)
DEMO_REQUEST = "Analyze this sales data and write a DOCX report"


def _fail(exc: InsightloomError) -> typer.Exit:
    err.print(
        # Escaped: a fix such as "pip install 'insightloom[otel]'" is text, not Rich markup to strip.
        f"[red]error:[/red] {escape(exc.message)}" + (f" [bold]Fix:[/bold] {escape(exc.fix)}" if exc.fix else ""),
        highlight=False,
    )
    return typer.Exit(exc.exit_code)


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = (
        logging.DEBUG if verbose > 1 else logging.INFO if verbose == 1 else logging.ERROR if quiet else logging.WARNING
    )
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # Strands logs our own controlled stops (cancel, ceilings) as errors; the CLI reports those itself.
    logging.getLogger("strands").setLevel(logging.DEBUG if verbose > 1 else logging.CRITICAL)


def _settings(config: Path | None, provider: str | None, max_revisions: int | None, quiet: bool) -> Settings:
    settings = load_settings(config)
    if provider:
        settings = settings.with_provider(provider)
    if max_revisions is not None:
        if max_revisions < 0:
            raise BadInputError("--max-revisions must be 0 or more.", "e.g. --max-revisions 3")
        settings.max_revisions = max_revisions
    settings, banner = resolve_auto_provider(settings)
    if banner and not quiet:
        err.print(f"[yellow]{banner}[/yellow]")
    return settings


def _run(
    data: list[Path],
    request: str,
    *,
    settings: Settings,
    yes: bool,
    job_dir: Path | None,
    columns: Path | None,
    quiet: bool,
    verbose: int,
    source: DatabaseSource | None = None,
    tables: tuple[str, ...] = (),
) -> int:
    from ..intake import resolve_inputs
    from ..workflow import AutoApprove, JobOptions, run_job
    from .progress import ProgressPrinter, TerminalReviewer

    if not request.strip():
        raise BadInputError(
            "The request (-r) is empty.", 'say what you want, e.g. -r "Analyze this data and write a report".'
        )
    if source is None:
        inputs, columns_file = resolve_inputs(list(data), columns)
    elif columns is not None and not columns.is_file():
        raise BadInputError(
            f"{columns}: column definitions file not found.", "Check the path and spelling, then run again."
        )
    else:
        inputs, columns_file = [], columns
    if not yes and not sys.stdin.isatty():
        raise BadInputError(
            "Plan review needs a terminal, and stdin is not one.", "pass --yes to approve the plan automatically."
        )
    job = JobFolder.create(settings.artifacts, job_dir)
    _register(settings, job)
    _cancel_on_ctrl_c(job)
    if not quiet:
        job.events.subscribe(ProgressPrinter(err, verbose=verbose > 0))
        err.print(f"job {job.id} → {job.root}", highlight=False)
    reviewer = AutoApprove() if yes else TerminalReviewer(err)
    opts = JobOptions(
        inputs=inputs,
        request=request,
        settings=settings,
        job_dir=job_dir,
        columns_file=columns_file,
        cwd=Path.cwd(),
        source=source,
        tables=tables,
    )
    outcome = run_job(opts, reviewer, job=job)
    if outcome.answer:
        typer.echo(outcome.answer)
    if not quiet and is_regular_file(outcome.job_dir / "usage.json", beneath=outcome.job_dir):
        from ..telemetry.report import usage_table

        try:
            err.print(usage_table(_usage(outcome.job_dir)))
        except InsightloomError as exc:  # replaced or broken since the check: the run's outcome still prints
            err.print(f"usage: {exc}", highlight=False)
    colour = {"completed": "green", "needs_review": "yellow"}.get(outcome.status, "red")
    line = f"[{colour}]{outcome.status}[/{colour}] in {outcome.seconds:.1f}s"
    if outcome.report:
        line += f" — report: {outcome.report}"
    if outcome.error:
        line += f" — {outcome.error}"
    err.print(line, highlight=False)
    typer.echo(str(outcome.job_dir))
    return outcome.exit_code


def _register(settings: Settings, job: JobFolder) -> None:
    """Record the job's folder in the job registry, so `insightloom jobs` lists it from any folder."""
    if settings.jobs_registry is not None:
        from ..job_registry import record_job

        record_job(settings.jobs_registry, job.id, job.root)


def _cancel_on_ctrl_c(job: JobFolder) -> None:
    """Ctrl-C stops the job at its next model or tool call, even inside Strands' worker threads.

    Strands runs each agent in a worker thread and waits for it, so a bare KeyboardInterrupt in the main thread
    would only land once the whole agent had finished. The cancel file reaches the job's CancelGuard at once.
    """

    def handler(signum: int, frame: object) -> None:
        job.request_cancel()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"insightloom {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """insightloom: analysis reports whose every number is re-computed and cited."""


def _split_sources(
    data: list[str], tables: list[str] | None, query: str | None, name: str | None
) -> tuple[list[Path], DatabaseSource | None]:
    """DATA as files, or as one database URL with its ``--table``/``--query`` (vetted before any job exists)."""
    from ..intake.database import DatabaseSource, is_database_url, require_extra
    from ..intake.database.source import vet_url

    urls = [arg for arg in data if is_database_url(arg)]
    if not urls:
        if query is not None or name is not None:  # --table also picks a SQLite file's tables
            raise BadInputError(
                "--query and --name read a database, and no database URL was given.",
                "pass a URL such as postgresql://USER@HOST:5432/DB as DATA, or drop those options.",
            )
        return [Path(arg) for arg in data], None
    for url in urls:
        vet_url(url)  # a password or an unknown scheme is refused first, whatever else is wrong
    if len(data) > 1:
        raise BadInputError(
            "A database URL is the job's only input: no files or second URL beside it.",
            "run one job per database, or load the files into the database and name them with --table.",
        )
    source = DatabaseSource.parse(urls[0], tables, query, name)
    require_extra()
    return [], source


@app.command()
def run(
    data: Annotated[
        list[str],
        typer.Argument(
            help="Data files (CSV, TSV, XLSX, Parquet, JSON, JSON Lines, SQLite), a folder of them, or a database "
            "URL (postgresql://USER@HOST:PORT/DB, no password).",
            metavar="DATA...",
        ),
    ],
    request: Annotated[str, typer.Option("-r", "--request", help="What you want, in plain language.")],
    table: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            help="A table to read: to snapshot from a database URL, or of a SQLite input (repeat for several; a "
            "SQLite file's default is all).",
        ),
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", help="With a database URL: a SELECT whose rows become one view.")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="The view name of --query's rows (default query).")] = None,
    provider: Annotated[
        str | None, typer.Option(help="Model provider for every agent (auto, bedrock, offline...).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve the plan without asking.")] = False,
    job_dir: Annotated[Path | None, typer.Option(help="Exact job folder (must be new or empty).")] = None,
    max_revisions: Annotated[int | None, typer.Option(help="Plan revision rounds (default 3).")] = None,
    columns: Annotated[Path | None, typer.Option(help="Column definitions JSON.")] = None,
    config: Annotated[Path | None, typer.Option(help="Config YAML (default ./insightloom.yaml).")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress output.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail (-vv for debug logs).")] = 0,
    record: Annotated[
        bool, typer.Option("--record", help="Write every model request and response to transcripts/model_io.jsonl.")
    ] = False,
    replay_from: Annotated[
        Path | None, typer.Option(help="Re-run a recorded job from its model_io.jsonl (the replay provider).")
    ] = None,
    trace: Annotated[
        bool, typer.Option("--trace", help="Export OpenTelemetry spans, exporter by the OTEL_* variables.")
    ] = False,
) -> None:
    """Analyse DATA as the request asks and write a verified, cited DOCX report.

    DATA is files, or one database URL with --table (or --query): its rows are snapshotted at intake, in one
    read-only transaction, and every later step reads that snapshot. The password comes from the environment
    (INSIGHTLOOM_DB_PASSWORD or PGPASSWORD) or ~/.pgpass, never from the URL.
    """
    _setup_logging(verbose, quiet)
    try:
        if replay_from is not None and provider not in (None, "replay"):
            raise BadInputError(f"--replay-from answers with the recording, not with --provider {provider}.",
                                "drop --provider, or drop --replay-from.")  # fmt: skip
        settings = _settings(config, "replay" if replay_from else provider, max_revisions, quiet)
        settings.record_model_io = settings.record_model_io or record
        settings.trace = settings.trace or trace
        if settings.trace:
            from ..telemetry.tracing import start_tracing

            start_tracing()  # a missing extra or a bad OTEL_* variable stops here (exit 2), before any work
        settings.replay_from = str(replay_from) if replay_from else settings.replay_from
        if settings.replay_from:
            from ..models.model_io import read_model_io

            read_model_io(Path(settings.replay_from))  # a missing or foreign file stops here, before any work
        paths, source = _split_sources(data, table, query, name)
        code = _run(
            paths,
            request,
            settings=settings,
            yes=yes,
            job_dir=job_dir,
            columns=columns,
            quiet=quiet,
            verbose=verbose,
            source=source,
            tables=() if source is not None else tuple(table or ()),
        )
    except InsightloomError as exc:
        raise _fail(exc) from None
    raise typer.Exit(code)


@app.command()
def demo(
    job_dir: Annotated[Path | None, typer.Option(help="Exact job folder (must be new or empty).")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress output.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True)] = 0,
) -> None:
    """Run the whole pipeline offline on the product's own sample data, plan approved automatically."""
    from ..demo_data import generate_demo_csv, write_column_definitions

    _setup_logging(verbose, quiet)
    try:
        settings = load_settings(None).with_provider("offline")
        with tempfile.TemporaryDirectory(prefix="insightloom-demo-") as tmp:
            csv_path = generate_demo_csv(Path(tmp) / "bakery_sales.csv")
            columns = write_column_definitions(Path(tmp) / "column_definitions.json")
            code = _run(
                [csv_path],
                DEMO_REQUEST,
                settings=settings,
                yes=True,
                job_dir=job_dir,
                columns=columns,
                quiet=quiet,
                verbose=verbose,
            )
    except InsightloomError as exc:
        raise _fail(exc) from None
    raise typer.Exit(code)


@app.command()
def resume(
    job_dir: Annotated[Path, typer.Argument(help="A job folder that stopped before finishing.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve the plan without asking.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress output.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True)] = 0,
) -> None:
    """Continue a killed or failed job from its last completed stage (exit 2 if it runs elsewhere)."""
    from ..workflow import AutoApprove, drive, load_runtime
    from ..workflow import resume as resume_job
    from .progress import ProgressPrinter, TerminalReviewer

    _setup_logging(verbose, quiet)
    try:
        rt = load_runtime(JobFolder.open(job_dir).root)
        _cancel_on_ctrl_c(rt.job)
        if not quiet:
            rt.job.events.subscribe(ProgressPrinter(err, verbose=verbose > 0))
        outcome = resume_job(rt)
        if outcome is None:
            if not yes and not sys.stdin.isatty():
                raise BadInputError("The job awaits plan review and stdin is not a terminal.", "pass --yes.")
            outcome = drive(rt, None, AutoApprove() if yes else TerminalReviewer(err))
    except InsightloomError as exc:
        raise _fail(exc) from None
    err.print(f"{outcome.status}" + (f" — {outcome.error}" if outcome.error else ""), highlight=False)
    typer.echo(str(outcome.job_dir))
    raise typer.Exit(outcome.exit_code)


@app.command()
def usage(job_dir: Annotated[Path, typer.Argument(help="A job folder.")]) -> None:
    """Print a job's token usage and estimated cost per agent."""
    from ..telemetry.report import usage_table

    try:
        Console().print(usage_table(_usage(JobFolder.open(job_dir).root)))
    except InsightloomError as exc:
        raise _fail(exc) from None


def _usage(root: Path) -> dict[str, Any]:
    """A job's usage.json, read without following a link a script planted (a job file is hostile input).

    Raises:
        BadInputError: It is missing or not JSON; UnsafePathError: it is a link, not a regular file, or too large.
    """
    path = root / "usage.json"
    try:
        data = read_json(path, beneath=root)
    except FileNotFoundError:
        raise BadInputError(f"{path} not found.", "usage is recorded once an agent has run; run the job.") from None
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{path} is unreadable ({exc}).", "resume the job to write it again.") from exc
    if not isinstance(data, dict):
        raise BadInputError(f"{path} is not a usage record.", "resume the job to write it again.")
    return data


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind; non-loopback needs an API token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    config: Annotated[Path | None, typer.Option(help="Config YAML.")] = None,
    provider: Annotated[
        str | None, typer.Option(help="Default model provider of the jobs (auto, bedrock, offline...).")
    ] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True)] = 0,
) -> None:
    """Run the HTTP service and web page: submit jobs, review plans, watch progress, download reports.

    With a token or a non-loopback --host it is a deployment: `auto` needs AWS credentials (exit 2 without them)
    unless offline is chosen explicitly.
    """
    from ..service import run_server

    _setup_logging(verbose, False)
    try:
        settings = load_settings(config)
        run_server(host=host, port=port, settings=settings.with_provider(provider) if provider else settings)
    except InsightloomError as exc:
        raise _fail(exc) from None


@app.command()
def jobs(
    artifacts: Annotated[Path | None, typer.Option(help="Artifacts folder (default from config).")] = None,
) -> None:
    """List the jobs the CLI made, wherever their folder is, and those in the artifacts folder, with their status."""
    from ..job_registry import known_jobs

    try:
        settings = load_settings(None)
    except InsightloomError as exc:
        raise _fail(exc) from None
    root = (artifacts or settings.artifacts).expanduser()
    found = known_jobs(root, settings.jobs_registry)
    if not found:
        err.print(
            f"No jobs in the artifacts folder {root.resolve()} or in the job registry {settings.jobs_registry}. "
            "A job is listed once `insightloom run` or `insightloom demo` makes it (with --job-dir too); for jobs "
            "in another artifacts folder, pass --artifacts FOLDER.",
            highlight=False,
            markup=False,
        )
        return
    # Folded, never cut short with an ellipsis: the id and the folder are what a user copies into the next command.
    table = Table(Column("id", overflow="fold"), "status", "stage", "created_at", Column("folder", overflow="fold"))
    for job in found:
        status = job.status
        cells = (job.id, status.get("status", "?"), status.get("stage") or "", status.get("created_at", ""), job.root)
        table.add_row(*(escape(str(cell)) for cell in cells))  # job.json is the job's: text, never Rich markup
    Console().print(table)


@app.command()
def schema(
    name: Annotated[str | None, typer.Argument(help="A schema name (job, citations ...); omit to list them.")] = None,
) -> None:
    """Print the JSON Schema of a job-folder file (job, citations, usage, event ...), or list the schemas."""
    from ..contracts import SCHEMA_FILES, schema_text

    if name is None:
        table = Table("schema", "describes")
        for key, file in SCHEMA_FILES.items():
            table.add_row(key, file)
        Console().print(table)
        return
    try:
        text = schema_text(name)
    except InsightloomError as exc:
        raise _fail(exc) from None
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


@skills_app.command("list")
def skills_list(config: Annotated[Path | None, typer.Option(help="Config YAML.")] = None) -> None:
    """List the skills found: built-in, ./skills and the config's folders."""
    from ..skills import discover_skills

    try:
        catalog = discover_skills(load_settings(config).skills_dirs, Path.cwd())
    except InsightloomError as exc:
        raise _fail(exc) from None
    table = Table("name", "description", "allowed tools")
    for name in catalog.names():
        info = catalog.get(name)
        table.add_row(name, info.description, " ".join(info.allowed_tools or []) or "any")
    Console().print(table)


@app.command()
def doctor(
    live: Annotated[
        bool, typer.Option("--live", help="Also make one small call per configured Bedrock model (a few tokens).")
    ] = False,
    cache: Annotated[
        bool, typer.Option("--cache", help="With --live: send a prefix at the model's cache minimum twice.")
    ] = False,
    provider: Annotated[str | None, typer.Option(help="Model provider (auto, bedrock, offline...).")] = None,
    config: Annotated[Path | None, typer.Option(help="Config YAML (default ./insightloom.yaml).")] = None,
) -> None:
    """Show what script isolation, fonts and document tools are available here; --live checks the models."""
    from ..execution import isolation_level, isolation_report
    from ..fonts import INSTALL_HINT, find_cjk_font
    from ..report.pdf import find_libreoffice

    table = Table("feature", "active", "detail")
    for feature, active, detail in isolation_report():
        table.add_row(feature, "yes" if active else "no", detail)
    font = find_cjk_font()
    table.add_row("CJK font", "yes" if font else "no", str(font.path) if font else f"missing: {INSTALL_HINT}")
    office = find_libreoffice()
    table.add_row("PDF export", "yes" if office else "no", office or "missing: apt-get install libreoffice-writer")
    Console().print(table)
    level = isolation_level()
    hint = "" if level.startswith("bwrap") else "  (apt-get install bubblewrap for the per-job sandbox)"
    sys.stdout.write(f"isolation: {level}{hint}\n")
    if cache and not live:
        raise _fail(BadInputError("--cache is part of the live check.", "add --live: doctor --live --cache"))
    if live:
        try:
            settings = _settings(config, provider, None, quiet=True)
        except InsightloomError as exc:
            raise _fail(exc) from exc
        raise typer.Exit(_doctor_live(settings, cache))


def _doctor_live(settings: Settings, cache: bool) -> int:
    """Print one line per Bedrock model; 0 when every call worked, 2 when one did not (the fix is printed)."""
    from rich.markup import escape

    from ..models.live_check import bedrock_models, cache_test_tokens, check_models

    models = bedrock_models(settings)
    if not models:
        sys.stdout.write(f"live: no Bedrock model configured (provider {settings.provider}): nothing to call\n")
        return 0
    if cache:
        tokens = sum(cache_test_tokens(model_id) for model_id in models)
        err.print(f"The cache test sends about {tokens:,} input tokens in all (billed at each model's input price).")
    failed = 0
    for result in check_models(settings, cache=cache):
        roles = ", ".join(result.roles)
        if result.ok:
            extra = f"; {result.detail}" if result.detail else ""
            sys.stdout.write(
                f"live: {result.model_id} ({roles}) in {result.region}: ok, {result.round_trip_ms} ms{extra}\n"
            )
            continue
        failed += 1
        sys.stdout.write(f"live: {result.model_id} ({roles}) in {result.region}: {result.status}\n")
        detail, fix = escape(result.detail or result.status), escape(result.fix)
        err.print(f"[red]error:[/red] {detail} [bold]Fix:[/bold] {fix}", highlight=False)
    return 2 if failed else 0


@app.command(name="ask")
def ask_command(
    args: Annotated[
        list[str] | None,
        typer.Argument(
            help="One or more finished job folders, then the question (last).",
            metavar="JOB_DIR... QUESTION",
            show_default=False,
        ),
    ] = None,
    session: Annotated[str | None, typer.Option(help="Remember the conversation under this name.")] = None,
    jobs_from: Annotated[
        Path | None, typer.Option("--jobs-from", help="Also ask every finished job in this artifacts folder.")
    ] = None,
    analyze: Annotated[
        bool,
        typer.Option("--analyze", help="Compute a new verified number when no result holds it (costs model calls)."),
    ] = False,
    forget: Annotated[str | None, typer.Option(help="Delete this conversation session, then stop.")] = None,
    provider: Annotated[str | None, typer.Option(help="Model provider (auto, bedrock, offline...).")] = None,
    config: Annotated[Path | None, typer.Option(help="Config YAML (default ./insightloom.yaml).")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No timing or retrieval line on stderr.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True)] = 0,
) -> None:
    """Ask finished jobs a follow-up question; the answer streams to stdout, its cited fragments follow.

    Every number in the answer comes from a cited fragment or a verified calculation. Exit 0: answered; 3: abstained
    (nothing in the jobs answers it; the answer says what data would be needed); 2: bad input, e.g. not a job
    folder or a job that has not finished.
    """
    from ..ask.answer import ask
    from ..ask.memory import open_memory
    from .asking import EXIT_ABSTAINED, EXIT_ANSWERED, AnswerPrinter, check_session, citation_lines, split_arguments

    _setup_logging(verbose, quiet)
    try:
        settings = _settings(config, provider, None, quiet=True)
        if forget is not None:
            if args:
                raise BadInputError("--forget takes no job folders or question.", "run the question separately.")
            count = open_memory(settings.artifacts, settings.ask_memory).forget(
                "local", check_session(forget, "--forget")
            )
            err.print(f"forgot session {forget} ({count} turns)", highlight=False)
            raise typer.Exit(0)
        name = check_session(session) if session else None
        dirs, question = split_arguments(list(args or []), jobs_from)
        printer = AnswerPrinter()
        result = ask(
            dirs,
            question,
            settings=settings,
            session=name,
            memory=open_memory(settings.artifacts, settings.ask_memory) if name else None,
            analyze=analyze,
            on_text=printer,
        )
    except InsightloomError as exc:
        raise _fail(exc) from None
    printer.finish(result.answer)
    if result.citations:
        typer.echo("\nSources:")
        for line in citation_lines(result.citations):
            typer.echo(f"  {line}")
    if not quiet:
        calls = f"{result.model_calls} model call{'' if result.model_calls == 1 else 's'}"
        extra = f", new calculations: {', '.join(result.new_calc_ids)}" if result.new_calc_ids else ""
        state = f"abstained ({result.reason})" if result.abstained else "answered"
        err.print(f"{state} in {result.seconds:.2f}s · {result.retrieval} · {calls}{extra}", highlight=False)
    if verbose and result.computed:
        err.print(f"computed: {result.computed}", highlight=False, markup=False)
    if verbose and result.request:
        err.print(f"request: {json.dumps(result.request, ensure_ascii=False)}", highlight=False, markup=False)
    raise typer.Exit(EXIT_ABSTAINED if result.abstained else EXIT_ANSWERED)


@app.command()
def verify(job_dir: Annotated[Path, typer.Argument(help="A finished job folder.")]) -> None:
    """Re-run validation; exit 3 when a number the report cites (before a report: any number) needs review."""
    from ..validation import blocking_reviews, validate_job

    try:
        root = JobFolder.open(job_dir).root
        summary = validate_job(root)
        blocking, uncited = blocking_reviews(root)
    except InsightloomError as exc:
        raise _fail(exc) from None
    typer.echo(summary.to_text())
    if uncited:
        typer.echo(f"Not cited by the report, so not blocking ({len(uncited)}): {', '.join(uncited)}")
    if blocking:
        typer.echo(f"Blocking (cited by the report, or no report yet) ({len(blocking)}): {', '.join(blocking)}")
    raise typer.Exit(3 if blocking else 0)


@app.command()
def audit(job_dir: Annotated[Path, typer.Argument(help="A job folder with final_report.docx.")]) -> None:
    """Audit a finished report; exit 0 when the verdict is pass, 3 otherwise (a number uncited or wrong, an undefined
    marker, or an unsupported or contradicted claim: findings A, B, C or E)."""
    from ..report.audit import audit_report

    try:
        root = JobFolder.open(job_dir).root
        if not is_regular_file(root / "final_report.docx", beneath=root):
            raise BadInputError(f"{root} has no final_report.docx.", "run the job to completion first.")
        # A standalone re-audit has no Reporter to retry: defects mean needs_review, not retry.
        settings = load_settings(None)
        result = audit_report(
            root, retry_count=settings.max_reporter_retries, max_retries=settings.max_reporter_retries
        )
    except InsightloomError as exc:
        raise _fail(exc) from None
    typer.echo(result.to_text())
    raise typer.Exit(0 if result.verdict == "pass" else 3)


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    app()
