"""Settings: per-agent model specs, limits and paths, from YAML, env vars and CLI flags.

Precedence, lowest to highest: built-in defaults → the config file (``--config PATH``, else ``INSIGHTLOOM_CONFIG``,
else ``./insightloom.yaml``) → ``INSIGHTLOOM_PROVIDER`` / ``INSIGHTLOOM_ARTIFACTS`` / ``INSIGHTLOOM_MAX_FILE_MB`` /
``INSIGHTLOOM_JOBS_REGISTRY`` (and the snapshot limits, ``SNAPSHOT_ENV``) → CLI flags. This is the only module that
reads env vars for settings, and for credentials (AWS, a database password).
"""

from __future__ import annotations

import configparser
import dataclasses
import getpass
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError

logger = logging.getLogger(__name__)

ROLES: tuple[str, ...] = (
    "coordinator",
    "planner",
    "supervisor",
    "coder",
    "validator",
    "reporter",
    "tracker",
    "auditor",
)
TOOL_AGENT_ROLES: tuple[str, ...] = ("coder", "validator", "reporter", "tracker", "auditor")
PROVIDERS: tuple[str, ...] = ("auto", "bedrock", "openai", "ollama", "anthropic", "litellm", "offline", "replay")

_STRONG = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
_CHEAP = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
#: Output room per role. A real model's report, scripts and verification scripts are long (Korean counts heavily in
#: Claude's tokenizer), and hitting the limit mid-answer only repeats the same failure on retry. Cost follows the
#: tokens actually produced, not this ceiling.
_DEFAULT_MAX_TOKENS = {
    "coordinator": 1024,
    "planner": 8000,
    "supervisor": 2048,
    "coder": 32000,
    "validator": 16000,
    "reporter": 32000,
    "tracker": 1024,
    "auditor": 1024,
}
#: Roles that must copy formats exactly: temperature 0 where the model family accepts it.
_DETERMINISTIC_ROLES = {"planner", "tracker", "auditor"}
_CHEAP_ROLES = {"coordinator", "tracker"}

#: Price keys, in USD per million tokens.
PRICE_KEYS: tuple[str, ...] = ("input", "output", "cache_read", "cache_write")
_SONNET_PRICE = {"input": 3.0, "output": 15.0, "cache_read": 0.30, "cache_write": 3.75}
_HAIKU_PRICE = {"input": 1.0, "output": 5.0, "cache_read": 0.10, "cache_write": 1.25}


def default_model_id(role: str) -> str:
    """The product's default Bedrock model id for ``role`` (a ``us.`` profile, refitted to the region at start)."""
    return _CHEAP if role in _CHEAP_ROLES else _STRONG


def default_pricing() -> dict[str, dict[str, float]]:
    """Bedrock on-demand list prices per model id (``fnmatch`` patterns allowed), USD per 1M tokens.

    ``offline-<role>`` is priced like the role's default hosted model (Haiku 4.5 for the Coordinator and Tracker,
    Sonnet 4.5 for the rest), so an offline run's cost is a dry-run estimate of a hosted one.
    """
    return {
        _STRONG: dict(_SONNET_PRICE),
        _CHEAP: dict(_HAIKU_PRICE),
        # Any provider's name for the model: Bedrock ids and profiles, Anthropic's API ids, LiteLLM's bedrock/...
        "*claude-sonnet-4-5*": dict(_SONNET_PRICE),
        "*claude-haiku-4-5*": dict(_HAIKU_PRICE),
        **{f"offline-{role}": dict(_HAIKU_PRICE) for role in sorted(_CHEAP_ROLES)},
        "offline-*": dict(_SONNET_PRICE),
    }


@dataclass
class AgentModelSpec:
    """How one agent's model is built.

    Attributes:
        provider: One of PROVIDERS; ``auto`` is resolved before models are built.
        model_id: The provider's model id; the offline provider ignores it.
        max_tokens: The agent's output budget, also stated in its prompt.
        cache: Whether prompt caching is requested for this agent.
        params: Extra inference parameters sent as they are (only what the model accepts).
        base_url: Endpoint for OpenAI-compatible servers, Ollama or LiteLLM proxies.
        temperature: Sampling temperature, sent only where the model family accepts it (``models.families``);
            None leaves the provider's default.
        thinking_tokens: Extended-thinking budget in tokens, asked for only where the family supports it (then
            no temperature is sent, as Claude requires); 0 is off.
    """

    provider: str = "auto"
    model_id: str = _STRONG
    max_tokens: int = 4096
    cache: bool = True
    params: dict[str, Any] = field(default_factory=dict)
    base_url: str | None = None
    temperature: float | None = None
    thinking_tokens: int = 0


@dataclass
class Settings:
    """Everything a job needs to know about how to run.

    Attributes:
        provider: Default provider for all agents (``auto`` decides from credentials).
        agents: Per-role model specs.
        artifacts: Root folder for job folders; with an S3 ``artifact_store``, the local working copies.
        jobs_registry: The file where the CLI records every job folder it makes, wherever it is (``--job-dir``
            too), so ``insightloom jobs`` lists them all (:mod:`insightloom.job_registry`). :func:`load_settings`
            fills in the user's data directory (:func:`default_jobs_registry`) or ``INSIGHTLOOM_JOBS_REGISTRY``;
            None records nothing.
        artifact_store: ``s3://bucket/prefix`` when jobs live in S3 (``INSIGHTLOOM_ARTIFACTS=s3://...``), else None
            (the ``artifacts`` folder is the store).
        max_revisions: Plan revision rounds the reviewer may ask for.
        max_file_mb: Largest input file accepted (5 GB; ``INSIGHTLOOM_MAX_FILE_MB``).
        memory_budget_mb: The memory intake may use; a file whose intake would need more is refused up front with
            the fix (``intake/budget.py``). None is three quarters of the machine's memory
            (``INSIGHTLOOM_MEMORY_BUDGET_MB``).
        max_snapshot_rows: Most rows intake reads from one database table or query (``docs/sources.md``); more is
            refused, naming the fix, never cut silently.
        max_snapshot_mb: Most data (Arrow's in-memory size, in MB) intake reads from one table or query.
        sql_timeout_s: Seconds a database snapshot may take in all, and each of its statements on the server.
        runner: ``warm`` (fork server) or ``cold`` (fresh interpreter per script).
        script_timeout_s: Default wall-clock limit per script.
        prompts_dir: Folder whose ``<role>.md`` files override the built-in prompts.
        skills_dirs: Extra skill folders, scanned after the built-in ones and ``./skills``.
        max_reporter_retries: Reporter reruns after an Auditor ``retry``.
        min_verified_numbers: Fewest verified numbers the report must print for the job to end ``completed``;
            a report with fewer ends ``needs_review`` (0 turns the rule off).
        max_supervisor_rounds: Times the Supervisor is called in all while plan items stay open and each round made
            progress (a tick, a new calculation or a render).
        max_tool_calls_per_turn: Tool calls one agent may make in one turn before the turn is stopped.
        model_timeout_s: Read timeout on every hosted model call (a long report section streams for minutes).
        model_max_attempts: Attempts per model call, all made by the provider's client (botocore's adaptive mode
            for Bedrock); Strands' agent loop adds none (``insightloom.models.retries``).
        max_model_calls: Per-job ceiling on model calls, all agents together.
        max_total_tokens: Per-job ceiling on tokens (input, output, cache read and cache write).
        max_cost_usd: Per-job ceiling on the estimated cost from ``pricing``.
        max_wall_seconds: Per-job ceiling on running time (plan review waits excluded).
        max_job_mb: Per-job quota on the bytes in the job folder, enforced while each script runs.
        max_job_files: Per-job quota on the files in the job folder, enforced while each script runs.
        clue_budget_tokens: Most tokens the shared clues may hold; older clues are compressed into a digest.
        handoff_budget_tokens: Most tokens of a tool agent's input message (its task and the last agent's message).
        token_margin: Safety margin added to local counts for Claude models, whose tokenizer differs.
        exact_token_count: Ask Bedrock ``CountTokens`` for exact counts when AWS credentials are present.
        pricing: USD per 1M tokens by model id (``fnmatch`` patterns allowed): input, output, cache_read, cache_write.
        ask_max_cost_usd: Ceiling on the estimated cost of one follow-up question's ``--analyze`` run.
        ask_memory: Where follow-up conversations are kept: ``redis://...``, a SQLite file path, or None for
            ``<artifacts>/.ask/memory.sqlite3`` (``INSIGHTLOOM_ASK_MEMORY``).
        ask_embedder: Dense embeddings for follow-up retrieval, ``bedrock:MODEL_ID`` (Titan or Cohere) or
            ``openai:MODEL`` (an OpenAI-compatible ``/embeddings`` endpoint); None is BM25 alone, the offline
            default (``INSIGHTLOOM_ASK_EMBEDDER``).
        ask_embedder_url: The OpenAI-compatible endpoint's base URL; None is OpenAI's own
            (``INSIGHTLOOM_ASK_EMBEDDER_URL``).
        ask_alpha: The dense share of the hybrid retrieval score, ``alpha * dense + (1 - alpha) * bm25``, 0..1.
        record_model_io: Write every model request and response to ``transcripts/model_io.jsonl`` (``--record``).
        replay_from: The ``model_io.jsonl`` the ``replay`` provider answers from (``--replay-from``).
        trace: Export OpenTelemetry spans through Strands' telemetry, the exporter set by the ``OTEL_*`` variables
            (``--trace``; needs ``insightloom[otel]``; ``insightloom.telemetry.tracing``).
        offline_reply_size: ``compact`` (default) or ``real``: the offline model writes its replies at a hosted
            model's length (scripts, report notes, a sentence before each tool call), for estimates and
            benchmarks sized like a real job (``models.offline.real_size``).
    """

    provider: str = "auto"
    agents: dict[str, AgentModelSpec] = field(default_factory=dict)
    artifacts: Path = Path("artifacts")
    jobs_registry: Path | None = None
    artifact_store: str | None = None
    max_revisions: int = 3
    max_file_mb: float = 5120.0
    memory_budget_mb: float | None = None
    max_snapshot_rows: int = 5_000_000
    max_snapshot_mb: float = 1024.0
    sql_timeout_s: float = 300.0
    runner: str = "warm"
    script_timeout_s: int = 120
    prompts_dir: Path | None = None
    skills_dirs: list[Path] = field(default_factory=list)
    max_reporter_retries: int = 2
    min_verified_numbers: int = 3
    max_supervisor_rounds: int = 4
    max_tool_calls_per_turn: int = 100
    model_timeout_s: float = 900.0
    model_max_attempts: int = 50
    max_model_calls: int = 500
    max_total_tokens: int = 5_000_000
    max_cost_usd: float = 25.0
    max_wall_seconds: float = 7200.0
    max_job_mb: float = 2048.0
    max_job_files: int = 20_000
    clue_budget_tokens: int = 1200
    handoff_budget_tokens: int = 2000
    token_margin: float = 0.20
    exact_token_count: bool = False
    pricing: dict[str, dict[str, float]] = field(default_factory=default_pricing)
    ask_max_cost_usd: float = 1.0
    ask_memory: str | None = None
    ask_embedder: str | None = None
    ask_embedder_url: str | None = None
    ask_alpha: float = 0.5
    record_model_io: bool = False
    replay_from: str | None = None
    trace: bool = False
    offline_reply_size: str = "compact"
    source: str | None = None

    def __post_init__(self) -> None:
        for role in ROLES:
            if role not in self.agents:
                self.agents[role] = AgentModelSpec(
                    model_id=default_model_id(role),
                    max_tokens=_DEFAULT_MAX_TOKENS[role],
                    temperature=0.0 if role in _DETERMINISTIC_ROLES else None,
                )

    def spec(self, role: str) -> AgentModelSpec:
        """The model spec for a role, with the default provider filled in."""
        spec = self.agents[role]
        if spec.provider == "auto" and self.provider != "auto":
            return dataclasses.replace(spec, provider=self.provider)
        return spec

    def with_provider(self, provider: str) -> Settings:
        """A copy where every agent uses ``provider``, each model id mapped to that provider's name for it.

        Raises:
            ConfigError: The provider has no name for an agent's model id (a Bedrock id on an OpenAI endpoint).
        """
        from .models.model_ids import model_id_for

        _check_provider(provider, "--provider")
        agents = {
            role: dataclasses.replace(spec, provider=provider, model_id=model_id_for(provider, spec.model_id, role))
            for role, spec in self.agents.items()
        }
        return dataclasses.replace(self, provider=provider, agents=agents)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Rebuild settings recorded by :meth:`to_dict` (run_info.json), e.g. to resume a job as it was run."""
        raw = {k: v for k, v in data.items() if k in {f.name for f in dataclasses.fields(cls)}}
        raw["agents"] = {role: AgentModelSpec(**spec) for role, spec in (raw.get("agents") or {}).items()}
        raw["artifacts"] = Path(raw.get("artifacts") or "artifacts")
        raw["prompts_dir"] = Path(raw["prompts_dir"]) if raw.get("prompts_dir") else None
        raw["jobs_registry"] = Path(raw["jobs_registry"]) if raw.get("jobs_registry") else None
        raw["skills_dirs"] = [Path(p) for p in raw.get("skills_dirs") or []]
        return cls(**raw)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view, recorded in run_info.json."""
        data = dataclasses.asdict(self)
        data["artifacts"] = str(self.artifacts)
        data["prompts_dir"] = str(self.prompts_dir) if self.prompts_dir else None
        data["jobs_registry"] = str(self.jobs_registry) if self.jobs_registry else None
        data["skills_dirs"] = [str(p) for p in self.skills_dirs]
        return data


def _check_provider(value: str, where: str) -> None:
    if value not in PROVIDERS:
        raise ConfigError(f"Unknown provider {value!r} in {where}.", f"use one of: {', '.join(PROVIDERS)}.")


def _agent_spec(role: str, raw: Any, source: str) -> AgentModelSpec:
    if not isinstance(raw, dict):
        raise ConfigError(f"agents.{role} in {source} must be a mapping.", "give provider/model_id/max_tokens/cache.")
    base = Settings().agents[role]
    known = {f.name for f in dataclasses.fields(AgentModelSpec)}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(
            f"Unknown key(s) {sorted(unknown)} in agents.{role} of {source}.", f"use only: {', '.join(sorted(known))}."
        )
    spec = dataclasses.replace(base, **raw)
    _check_provider(spec.provider, f"agents.{role}.provider of {source}")
    if not isinstance(spec.max_tokens, int) or spec.max_tokens <= 0:
        raise ConfigError(f"agents.{role}.max_tokens in {source} must be a positive integer.", "e.g. max_tokens: 4096")
    temperature = spec.temperature
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, int | float)):
        raise ConfigError(
            f"agents.{role}.temperature in {source} must be a number or null.",
            "e.g. temperature: 0, or null for the model's default",
        )
    thinking = spec.thinking_tokens
    if isinstance(thinking, bool) or not isinstance(thinking, int) or thinking < 0 or 0 < thinking < 1024:
        raise ConfigError(
            f"agents.{role}.thinking_tokens in {source} must be 0 (off) or at least 1024 (Claude's smallest budget).",
            "e.g. thinking_tokens: 4000 for the planner, or 0",
        )
    if thinking >= spec.max_tokens:
        raise ConfigError(
            f"agents.{role}.thinking_tokens in {source} ({thinking}) must be below its max_tokens ({spec.max_tokens}).",
            f"raise agents.{role}.max_tokens or lower thinking_tokens",
        )
    return spec


_POSITIVE_LIMITS = (
    "max_supervisor_rounds",
    "max_tool_calls_per_turn",
    "max_model_calls",
    "max_total_tokens",
    "max_cost_usd",
    "ask_max_cost_usd",
    "max_wall_seconds",
    "max_job_mb",
    "max_job_files",
    "max_snapshot_rows",
    "max_snapshot_mb",
    "sql_timeout_s",
    "memory_budget_mb",
    "clue_budget_tokens",
    "handoff_budget_tokens",
)


def _check_limits(raw: dict[str, Any], source: str) -> None:
    """Ceilings and budgets must be positive numbers; the margin a fraction; the flag a boolean."""
    for key in _POSITIVE_LIMITS:
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise ConfigError(f"{key} in {source} must be a positive number, not {value!r}.", f"e.g. {key}: 100")
    margin = raw.get("token_margin")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < 1):
        raise ConfigError(f"token_margin in {source} must be a fraction from 0 to 1.", "e.g. token_margin: 0.2")
    minimum = raw.get("min_verified_numbers")
    if minimum is not None and (isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0):
        raise ConfigError(
            f"min_verified_numbers in {source} must be a whole number of 0 or more, not {minimum!r}.",
            "e.g. min_verified_numbers: 3",
        )
    for key in ("exact_token_count", "record_model_io", "trace"):
        flag = raw.get(key)
        if flag is not None and not isinstance(flag, bool):
            raise ConfigError(f"{key} in {source} must be true or false.", f"e.g. {key}: true")
    _check_ask_retrieval(raw.get("ask_alpha"), raw.get("ask_embedder"), source)


#: Who can embed follow-up questions: the prefixes of ``ask_embedder``.
EMBEDDER_PROVIDERS: tuple[str, ...] = ("bedrock", "openai")


def _check_ask_retrieval(alpha: Any, embedder: Any, source: str) -> None:
    """``ask_alpha`` is a fraction from 0 to 1; ``ask_embedder`` is ``provider:model`` with a known provider."""
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1):
        raise ConfigError(
            f"ask_alpha in {source} must be a number from 0 to 1, not {alpha!r}.",
            "e.g. ask_alpha: 0.5 (0 is BM25 alone, 1 dense similarity alone)",
        )
    if embedder is None:
        return
    provider, _, model = str(embedder).partition(":")
    if not isinstance(embedder, str) or provider not in EMBEDDER_PROVIDERS or not model:
        raise ConfigError(
            f"ask_embedder in {source} must be 'bedrock:MODEL_ID' or 'openai:MODEL', not {embedder!r}.",
            "e.g. ask_embedder: bedrock:amazon.titan-embed-text-v2:0 (or openai:text-embedding-3-small)",
        )


def _check_pricing(raw: Any, source: str) -> dict[str, dict[str, float]]:
    if not isinstance(raw, dict):
        raise ConfigError(f"'pricing' in {source} must map model ids to prices.", "see README, Configuration.")
    for model_id, price in raw.items():
        if not isinstance(price, dict) or set(price) != set(PRICE_KEYS):
            raise ConfigError(
                f"pricing.{model_id} in {source} must give exactly: {', '.join(PRICE_KEYS)} (USD per 1M tokens).",
                "e.g. {input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75}",
            )
        if any(isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in price.values()):
            raise ConfigError(f"pricing.{model_id} in {source} holds a negative or non-numeric price.", "fix it.")
    return {str(k): {key: float(v) for key, v in price.items()} for k, price in raw.items()}


def _from_mapping(raw: dict[str, Any], source: str) -> Settings:
    raw = dict(raw)
    agents_raw = raw.pop("agents", None) or {}
    if not isinstance(agents_raw, dict):
        raise ConfigError(f"'agents' in {source} must be a mapping of role to settings.", "see README, Configuration.")
    unknown_roles = set(agents_raw) - set(ROLES)
    if unknown_roles:
        raise ConfigError(f"Unknown agent role(s) {sorted(unknown_roles)} in {source}.", f"roles: {', '.join(ROLES)}.")
    known = {f.name for f in dataclasses.fields(Settings)} - {"agents", "source"}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(
            f"Unknown setting(s) {sorted(unknown)} in {source}.", f"use only: {', '.join(sorted(known))}."
        )
    if str(raw.get("artifacts") or "").startswith(S3_SCHEME):
        raw["artifact_store"], raw["artifacts"] = str(raw["artifacts"]), default_work_dir()
    for key in ("artifacts", "prompts_dir", "jobs_registry"):
        if raw.get(key) is not None:
            raw[key] = Path(raw[key]).expanduser()
    raw["skills_dirs"] = [Path(p).expanduser() for p in raw.get("skills_dirs") or []]
    _check_limits(raw, source)
    if "pricing" in raw:
        raw["pricing"] = {**default_pricing(), **_check_pricing(raw["pricing"], source)}
    settings = Settings(**raw, agents={role: _agent_spec(role, spec, source) for role, spec in agents_raw.items()})
    _check_provider(settings.provider, f"provider in {source}")
    if settings.offline_reply_size not in ("compact", "real"):
        raise ConfigError(
            f"offline_reply_size in {source} is {settings.offline_reply_size!r}.", "use compact (default) or real."
        )
    settings.source = source
    return settings


S3_SCHEME = "s3://"


def default_work_dir(env: dict[str, str] | None = None) -> Path:
    """Where a process keeps its working copies of S3 jobs: ``INSIGHTLOOM_WORK_DIR``, else a cache folder."""
    env = dict(os.environ if env is None else env)
    return Path(env.get("INSIGHTLOOM_WORK_DIR") or Path.home() / ".cache" / "insightloom" / "work").expanduser()


def default_jobs_registry(env: dict[str, str] | None = None) -> Path:
    """The CLI's job registry in the user's data directory, where platformdirs' ``user_data_dir`` puts it.

    ``$XDG_DATA_HOME/insightloom/jobs.json`` (``~/.local/share`` when unset or relative, as the XDG spec says), and
    ``~/Library/Application Support/insightloom/jobs.json`` on macOS: the two systems the job lock (``fcntl``) runs
    on, so no dependency is needed for the others.
    """
    env = dict(os.environ if env is None else env)
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = Path(env.get("XDG_DATA_HOME") or "").expanduser()
        base = xdg if xdg.is_absolute() else Path.home() / ".local" / "share"
    return base / "insightloom" / "jobs.json"


def load_settings(
    config_path: Path | None = None, *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Settings:
    """Build Settings from the config file and env vars.

    Args:
        config_path: An explicit ``--config`` file; it must exist.
        env: Environment to read, defaulting to ``os.environ`` (tests pass their own).
        cwd: Folder searched for ``insightloom.yaml``; defaults to the current directory.

    Raises:
        ConfigError: The file is missing, is not YAML, or holds unknown keys or values.
    """
    env = dict(os.environ if env is None else env)
    cwd = cwd or Path.cwd()
    path = config_path or (Path(env["INSIGHTLOOM_CONFIG"]) if env.get("INSIGHTLOOM_CONFIG") else None)
    if path is None and (cwd / "insightloom.yaml").is_file():
        path = cwd / "insightloom.yaml"
    if path is not None:
        if not path.is_file():
            raise ConfigError(f"Config file {path} does not exist.", "pass an existing file to --config.")
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"Config file {path} is not valid YAML: {exc}.", "fix the YAML syntax.") from exc
        if not isinstance(raw, dict):
            raise ConfigError(f"Config file {path} must hold a mapping at the top.", "see README, Configuration.")
        settings = _from_mapping(raw, str(path))
    else:
        settings = Settings()
    if env.get("INSIGHTLOOM_PROVIDER"):
        settings = settings.with_provider(env["INSIGHTLOOM_PROVIDER"])
    if env.get("INSIGHTLOOM_ARTIFACTS", "").startswith(S3_SCHEME):
        settings.artifact_store = env["INSIGHTLOOM_ARTIFACTS"]
        settings.artifacts = default_work_dir(env)
    elif env.get("INSIGHTLOOM_ARTIFACTS"):
        settings.artifacts = Path(env["INSIGHTLOOM_ARTIFACTS"]).expanduser()
        settings.artifact_store = None
    if env.get("INSIGHTLOOM_JOBS_REGISTRY"):
        settings.jobs_registry = Path(env["INSIGHTLOOM_JOBS_REGISTRY"]).expanduser()
    elif settings.jobs_registry is None:
        settings.jobs_registry = default_jobs_registry(env)
    if env.get("INSIGHTLOOM_ASK_MEMORY"):
        settings.ask_memory = env["INSIGHTLOOM_ASK_MEMORY"]
    if env.get("INSIGHTLOOM_ASK_EMBEDDER"):
        _check_ask_retrieval(None, env["INSIGHTLOOM_ASK_EMBEDDER"], "INSIGHTLOOM_ASK_EMBEDDER")
        settings.ask_embedder = env["INSIGHTLOOM_ASK_EMBEDDER"]
    if env.get("INSIGHTLOOM_ASK_EMBEDDER_URL"):
        settings.ask_embedder_url = env["INSIGHTLOOM_ASK_EMBEDDER_URL"]
    if env.get("INSIGHTLOOM_MAX_FILE_MB"):
        try:
            settings.max_file_mb = float(env["INSIGHTLOOM_MAX_FILE_MB"])
        except ValueError as exc:
            raise ConfigError("INSIGHTLOOM_MAX_FILE_MB must be a number.", "e.g. INSIGHTLOOM_MAX_FILE_MB=200") from exc
    for key, name in SNAPSHOT_ENV.items():
        if env.get(name):
            setattr(settings, key, _env_limit(env[name], name, int if key == "max_snapshot_rows" else float))
    return settings


#: Env vars for the database snapshot limits and intake's memory budget, by setting.
SNAPSHOT_ENV: dict[str, str] = {
    "max_snapshot_rows": "INSIGHTLOOM_MAX_SNAPSHOT_ROWS",
    "max_snapshot_mb": "INSIGHTLOOM_MAX_SNAPSHOT_MB",
    "sql_timeout_s": "INSIGHTLOOM_SQL_TIMEOUT_S",
    "memory_budget_mb": "INSIGHTLOOM_MEMORY_BUDGET_MB",
}


def _env_limit(text: str, name: str, kind: type[int] | type[float]) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if value <= 0:
        example = "1000000" if kind is int else "300"
        raise ConfigError(f"{name} must be a positive {'whole number' if kind is int else 'number'}, not {text!r}.",
                          f"e.g. {name}={example}")  # fmt: skip
    return value


#: Env vars that may hold a database password, first set wins; the command line never may (``docs/sources.md``).
DB_PASSWORD_ENV_VARS: tuple[str, ...] = ("INSIGHTLOOM_DB_PASSWORD", "PGPASSWORD")


def database_password(
    host: str | None,
    port: int | None,
    database: str | None,
    user: str | None,
    *,
    env: dict[str, str] | None = None,
    home: Path | None = None,
) -> tuple[str | None, str]:
    """The password for a database connection, and where it came from (for the log and a refusal's fix).

    ``DB_PASSWORD_ENV_VARS`` first, then the password file libpq reads (``PGPASSFILE``, else ``~/.pgpass``), matched
    on host, port, database and user with libpq's defaults for what the URL leaves out. None: no password is sent,
    for servers that trust the client or check a certificate.
    """
    from .intake.database.pgpass import passfile_password

    env = dict(os.environ if env is None else env)
    for name in DB_PASSWORD_ENV_VARS:
        if env.get(name):
            return env[name], name
    path = Path(env.get("PGPASSFILE") or (home or Path.home()) / ".pgpass").expanduser()
    user = user or env.get("PGUSER") or getpass.getuser()
    host = host or env.get("PGHOST") or "localhost"
    found = passfile_password(
        path,
        host="localhost" if host.startswith("/") else host,  # libpq's name for a Unix-socket connection
        port=str(port or env.get("PGPORT") or 5432),
        database=database or env.get("PGDATABASE") or user,
        user=user,
    )
    return (found, f"password file {path}") if found is not None else (None, "none")


#: Env vars that point boto3 at a container credentials endpoint (ECS/Fargate task roles, EKS Pod Identity).
CONTAINER_CREDENTIAL_VARS: tuple[str, ...] = (
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
)
#: Every env var that gives boto3 credentials or points it at them (what a clean test or probe must clear).
CREDENTIAL_ENV_VARS: tuple[str, ...] = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_CREDENTIAL_FILE",
    *CONTAINER_CREDENTIAL_VARS,
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
)
#: Keys that give a shared-file profile credentials of its own (keys, a process, SSO, sign-in, assumed roles).
_PROFILE_CREDENTIAL_KEYS = (
    "aws_access_key_id",
    "credential_process",
    "sso_session",
    "sso_start_url",
    "login_session",
    "web_identity_token_file",
    "role_arn",
)


def aws_credentials_present(env: dict[str, str] | None = None, home: Path | None = None) -> bool:
    """Whether AWS credentials are configured, from env vars and files alone (:func:`aws_credential_source`)."""
    return aws_credential_source(env, home) is not None


def aws_credential_source(env: dict[str, str] | None = None, home: Path | None = None) -> str | None:
    """The credential source boto3 would use here, described for a log line; None when none is configured.

    Follows botocore's chain in its order (env keys, web identity, the profile in the shared files, the legacy boto
    files, the container endpoint) but only reads env vars and files: it never runs the chain itself, which would
    call the container endpoint and probe the instance-metadata address (slow to time out, off-loopback traffic).
    An EC2 instance role alone is therefore not seen: choose ``bedrock`` explicitly there.
    """
    env = dict(os.environ if env is None else env)
    home = home or Path.home()
    if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        token = " + AWS_SESSION_TOKEN" if env.get("AWS_SESSION_TOKEN") or env.get("AWS_SECURITY_TOKEN") else ""
        return f"env keys: AWS_ACCESS_KEY_ID{token}"
    if env.get("AWS_WEB_IDENTITY_TOKEN_FILE") and env.get("AWS_ROLE_ARN"):
        return "web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN"
    found = _shared_files_source(env, home) or _legacy_files_source(env, home)
    if found:
        return found
    for name in CONTAINER_CREDENTIAL_VARS:
        if env.get(name):
            return f"container credentials: {name}"
    return None


def aws_profile(env: dict[str, str]) -> str:
    """The shared-file profile boto3 selects: ``AWS_DEFAULT_PROFILE``, then ``AWS_PROFILE``, else ``default``."""
    return env.get("AWS_DEFAULT_PROFILE") or env.get("AWS_PROFILE") or "default"


def _shared_files_source(env: dict[str, str], home: Path) -> str | None:
    """``shared files: <path> [<profile>]`` when the selected profile holds credentials in either shared file."""
    profile = aws_profile(env)
    # The credentials file names profiles `[NAME]`; the config file `[profile NAME]`, and also `[default]`.
    config_sections = [f"profile {profile}"] + (["default"] if profile == "default" else [])
    files = [
        (Path(env.get("AWS_SHARED_CREDENTIALS_FILE") or home / ".aws" / "credentials").expanduser(), [profile]),
        (Path(env.get("AWS_CONFIG_FILE") or home / ".aws" / "config").expanduser(), config_sections),
    ]
    for path, sections in files:
        if _profile_has_credentials(path, sections):
            return f"shared files: {path} [{profile}]"
    return None


def _profile_has_credentials(path: Path, sections: list[str]) -> bool:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False
    except configparser.Error:  # botocore refuses such a file too: say "present", and the provider names the error
        return _mentions(path, _PROFILE_CREDENTIAL_KEYS)
    return any(
        parser.has_section(name) and any(parser.has_option(name, key) for key in _PROFILE_CREDENTIAL_KEYS)
        for name in sections
    )


def _legacy_files_source(env: dict[str, str], home: Path) -> str | None:
    """The two legacy files botocore still reads: ``AWS_CREDENTIAL_FILE`` and the boto config."""
    if env.get("AWS_CREDENTIAL_FILE") and _mentions(Path(env["AWS_CREDENTIAL_FILE"]).expanduser(), ("awsaccesskeyid",)):
        return f"legacy file: AWS_CREDENTIAL_FILE={env['AWS_CREDENTIAL_FILE']}"
    boto = [Path(env["BOTO_CONFIG"])] if env.get("BOTO_CONFIG") else [Path("/etc/boto.cfg"), home / ".boto"]
    for path in boto:
        if _mentions(path.expanduser(), ("aws_access_key_id",)):
            return f"legacy boto config: {path}"
    return None


def _mentions(path: Path, keys: tuple[str, ...]) -> bool:
    """Whether a line of the file starts with one of ``keys`` (case-insensitive); an unreadable file does not."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.strip().lower().startswith(keys) for line in text.splitlines())


def resolve_auto_provider(
    settings: Settings, env: dict[str, str] | None = None, *, deployment: str | None = None
) -> tuple[Settings, str | None]:
    """Replace ``auto`` by ``bedrock`` or ``offline``.

    Args:
        settings: The settings to resolve.
        env: Environment to read, defaulting to ``os.environ``.
        deployment: The deployment mode, a label such as ``"celery worker"`` or ``"serve with a token"``; None for
            the local modes (``run``, ``demo``, a loopback ``serve`` with no token). In a deployment mode ``auto``
            never falls back to offline, and an explicit offline choice is logged as a warning.

    Returns:
        The resolved settings and, in the local modes only, a one-line banner to show when falling back to offline.

    Raises:
        ConfigError: A deployment mode, ``auto`` and no credentials configured (exit 2).
    """
    environ = dict(os.environ if env is None else env)
    resolved, banner, reason = _resolve_provider(settings, environ, deployment)
    if deployment:
        logger.info("%s", reason)
    return _fit_regions(resolved, environ), banner


def deployment_settings(settings: Settings, mode: str, env: dict[str, str] | None = None) -> Settings:
    """Resolve ``auto`` for a deployment entry point at start-up, logging which provider was chosen and why.

    Args:
        settings: The process's settings.
        mode: The deployment mode, e.g. ``"celery worker"`` or ``"AgentCore entrypoint"``.
        env: Environment to read, defaulting to ``os.environ``.

    Raises:
        ConfigError: ``auto`` and no credentials configured (exit 2): the process must refuse to start.
    """
    environ = dict(os.environ if env is None else env)
    resolved, _, reason = _resolve_provider(settings, environ, mode)
    logger.info("%s", reason)  # an explicit offline choice was already warned about, once
    return _fit_regions(resolved, environ)


def _fit_regions(settings: Settings, env: dict[str, str]) -> Settings:
    """Every Bedrock agent's id callable from the region (``insightloom.models.regions``)."""
    from .models.regions import with_region_profiles

    return with_region_profiles(settings, env)


_OFFLINE_BANNER = (
    "No AWS credentials found: running with the deterministic offline model. "
    "To use Bedrock, configure AWS credentials or pass --provider bedrock."
)


def _resolve_provider(
    settings: Settings, env: dict[str, str], deployment: str | None
) -> tuple[Settings, str | None, str]:
    """The resolved settings, the local offline banner (or None) and a one-line reason for the log."""
    where = f" ({deployment})" if deployment else ""
    if deployment:
        _warn_explicit_offline(settings, env, deployment)
    if all(settings.spec(role).provider != "auto" for role in ROLES):
        chosen = ", ".join(sorted({settings.spec(role).provider for role in ROLES}))
        return settings, None, f"provider {chosen} (chosen explicitly){where}"
    source = aws_credential_source(env)
    if source is None and deployment:
        raise _no_credentials(deployment, env)
    chosen = "bedrock" if source else "offline"
    agents = {
        role: dataclasses.replace(spec, provider=chosen)
        if settings.spec(role).provider == "auto"
        else settings.spec(role)
        for role, spec in settings.agents.items()
    }
    resolved = dataclasses.replace(settings, agents=agents, provider=chosen)
    reason = f"provider auto → {chosen} ({source or 'no AWS credentials configured'}){where}"
    return resolved, (_OFFLINE_BANNER if chosen == "offline" else None), reason


def _warn_explicit_offline(settings: Settings, env: dict[str, str], deployment: str) -> None:
    """One warning line when a deployment runs agents on the offline model by choice, naming where it came from."""
    roles = [role for role in ROLES if settings.spec(role).provider == "offline"]
    if not roles:
        return
    if env.get("INSIGHTLOOM_PROVIDER") == "offline":
        origin = "INSIGHTLOOM_PROVIDER=offline"
    elif settings.source:
        origin = f"--provider offline, the job's provider or `provider: offline` in {settings.source}"
    else:
        origin = "--provider offline or the job's provider"
    agents = "every agent answers" if len(roles) == len(ROLES) else "the " + ", ".join(roles) + " agent(s) answer"
    logger.warning(
        "provider offline chosen explicitly (%s) in a deployment (%s): %s with the deterministic offline model, "
        "not a real one",
        origin,
        deployment,
        agents,
    )


def _no_credentials(deployment: str, env: dict[str, str]) -> ConfigError:
    named = env.get("AWS_PROFILE") or env.get("AWS_DEFAULT_PROFILE")
    profile = f" (the profile {aws_profile(env)!r} holds none in the shared files)" if named else ""
    return ConfigError(
        f"Refusing to start ({deployment}): the provider is auto and no AWS credentials are configured{profile}; "
        "a deployment never falls back to the offline model silently.",
        "configure credentials boto3 can use (a container role: AWS_CONTAINER_CREDENTIALS_FULL_URI or "
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI; env keys: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY; web identity: "
        "AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN; or a profile in the shared files ~/.aws/credentials, "
        "~/.aws/config), choose bedrock explicitly where only an EC2 instance role provides them (--provider bedrock "
        "or INSIGHTLOOM_PROVIDER=bedrock), or choose offline explicitly: --provider offline, "
        "INSIGHTLOOM_PROVIDER=offline or `provider: offline` in the config.",
    )
