"""The service's own settings: who may call it, how big uploads may be, how many jobs run at once.

Job settings (models, artifacts root, limits) stay in :mod:`insightloom.config`; these are the server-only knobs, read
from env vars because they are deployment secrets and sizes, not analysis choices:

- ``INSIGHTLOOM_API_TOKEN``: one bearer token (its user is ``default``).
- ``INSIGHTLOOM_TOKENS_FILE``: a YAML mapping of token to user name, for per-user ownership.
- ``INSIGHTLOOM_MAX_UPLOAD_MB``: the largest request body a submission may have (default 200).
- ``INSIGHTLOOM_WORKERS``: jobs that run at once in this process (default 4).
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..config import Settings, deployment_settings
from ..errors import BadInputError, ConfigError

logger = logging.getLogger(__name__)

DEFAULT_USER = "default"  # the owner of jobs submitted with INSIGHTLOOM_API_TOKEN
OPEN_USER = "local"  # the owner of jobs submitted to an open (token-less, loopback-only) server


@dataclass
class ServiceConfig:
    """Server-only settings.

    Attributes:
        tokens: Bearer token → user name; empty means an open server (loopback only).
        max_upload_mb: Largest accepted request body for ``POST /jobs``, in MB.
        workers: Jobs that run at once; more wait in the queue.
        max_queued: Work items that may wait before ``POST /jobs`` answers 503.
        keepalive_s: Seconds between SSE keepalive comments (proxies drop silent streams).
        poll_s: How often an SSE stream re-reads ``events.jsonl`` written by another process.
        session_hours: Lifetime of a browser sign-in cookie.
        deployment: The deployment mode this process runs in (``deployment_mode``), or None for a local one; in a
            deployment mode ``provider: auto`` never falls back to the offline model.
    """

    tokens: dict[str, str] = field(default_factory=dict)
    max_upload_mb: float = 200.0
    workers: int = 4
    max_queued: int = 1000
    keepalive_s: float = 15.0
    poll_s: float = 1.0
    session_hours: float = 12.0
    deployment: str | None = None

    @property
    def open(self) -> bool:
        """No token configured: anyone who can reach the (loopback) socket may use the server."""
        return not self.tokens

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ServiceConfig:
        """Read the service env vars.

        Raises:
            ConfigError: A value is not a number, or the tokens file is missing or malformed.
        """
        env = dict(os.environ if env is None else env)
        tokens: dict[str, str] = {}
        if env.get("INSIGHTLOOM_TOKENS_FILE"):
            tokens.update(load_tokens_file(Path(env["INSIGHTLOOM_TOKENS_FILE"]).expanduser()))
        if env.get("INSIGHTLOOM_API_TOKEN"):
            tokens[env["INSIGHTLOOM_API_TOKEN"].strip()] = DEFAULT_USER
        return cls(
            tokens=tokens,
            max_upload_mb=_number(env, "INSIGHTLOOM_MAX_UPLOAD_MB", 200.0, "200"),
            workers=int(_number(env, "INSIGHTLOOM_WORKERS", 4, "4")),
        )


#: Service variables that hold or point at credentials: read once at start-up, then dropped from the environment.
SECRET_ENV = ("INSIGHTLOOM_API_TOKEN", "INSIGHTLOOM_TOKENS_FILE")


def _number(env: dict[str, str], name: str, default: float, example: str) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, not {raw!r}.", f"e.g. {name}={example}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be above 0, not {raw!r}.", f"e.g. {name}={example}")
    return value


def load_tokens_file(path: Path) -> dict[str, str]:
    """Read a YAML mapping of token to user name.

    Raises:
        ConfigError: The file is missing, not YAML, not a mapping, or holds an empty token or user.
    """
    fix = "write one line per user, e.g. `s3cr3t-token-of-ana: ana`."
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"INSIGHTLOOM_TOKENS_FILE {path} cannot be read: {exc.strerror}.", fix) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"INSIGHTLOOM_TOKENS_FILE {path} is not valid YAML: {exc}.", fix) from None
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"INSIGHTLOOM_TOKENS_FILE {path} must be a non-empty mapping of token to user.", fix)
    tokens: dict[str, str] = {}
    for token, user in raw.items():
        if not isinstance(token, str):  # YAML reads `yes:` as True and `0123:` as 83: never guess a token
            raise ConfigError(
                f"INSIGHTLOOM_TOKENS_FILE {path}: the token {token!r} is read as {type(token).__name__}, not text.",
                "put every token in quotes, e.g. `'0123': ana`.",
            )
        if not token.strip() or not isinstance(user, str) or not user.strip():
            raise ConfigError(f"INSIGHTLOOM_TOKENS_FILE {path}: every token and user must be a non-empty string.", fix)
        tokens[token.strip()] = user.strip()
    return tokens


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, config: ServiceConfig) -> None:
    """An open server must stay on loopback.

    Raises:
        BadInputError: A non-loopback host with no token configured (the CLI exits 2).
    """
    if config.open and not is_loopback(host):
        raise BadInputError(
            f"Refusing to serve on {host} without an API token: anyone on the network could run jobs and read reports.",
            "set INSIGHTLOOM_API_TOKEN (or INSIGHTLOOM_TOKENS_FILE), or bind --host 127.0.0.1.",
        )


def deployment_mode(host: str, config: ServiceConfig) -> str | None:
    """The deployment mode of a server on ``host``: with a token or off loopback it serves others, not one user.

    Returns:
        ``"serve with a token"``, ``"serve on <host>"`` for a non-loopback bind, or None for a local (loopback,
        token-less) server, where ``auto`` may still fall back to the offline model with its notice.
    """
    if not config.open:
        return "serve with a token"
    if not is_loopback(host):
        return f"serve on {host}"
    return None


def prepare_serving(host: str, settings: Settings, config: ServiceConfig) -> Settings:
    """Start-up checks of a server, before it binds: the binding rule, then the provider of its deployment mode.

    Records the mode on ``config.deployment`` so that each job's ``auto`` is resolved the same way.

    Returns:
        The server's settings, ``auto`` resolved in a deployment mode (unchanged in a local one: jobs resolve it).

    Raises:
        BadInputError: A non-loopback ``host`` with no API token configured (exit 2).
        ConfigError: A deployment mode, ``provider: auto`` and no AWS credentials configured (exit 2).
    """
    check_binding(host, config)
    config.deployment = deployment_mode(host, config)
    if config.deployment is None:
        return settings
    return deployment_settings(settings, config.deployment)
