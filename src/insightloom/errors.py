"""The one exception tree of insightloom.

Every error carries the fix to show the user, the CLI exit code it maps to, and (mapped in the service's HTTP layer
only, ``service.errors_http``) the HTTP status::

    InsightloomError                 exit 1    HTTP 500
    ├── BadInputError                exit 2    HTTP 400  (missing/empty/unreadable file, bad option, path escape)
    │   ├── UnknownSkillError
    │   ├── UnsafePathError                            (a job file or folder is a symlink the host won't follow)
    │   ├── JoinRefused                                (a joined view the relationships do not allow: many-to-many)
    │   └── JobNotFound              exit 2    HTTP 404  (no such job, or not the caller's)
    ├── JobConflict                  exit 2    HTTP 409  (the job is not in a state for this action)
    ├── ServiceBusy                  exit 1    HTTP 503  (no room to queue work now; try again later)
    │   ├── QueueFull
    │   └── BrokerUnavailable                  (the queue's broker cannot be reached; HTTP 503 with Retry-After)
    ├── ConfigError                  exit 2    HTTP 400  (bad config file, missing credentials, missing extra)
    ├── ModelError                   exit 1  (provider call failed)
    ├── ExecutionError               exit 1  (script runner failed to start)
    │   └── ServerUnavailable                  (the warm server is down: the runner falls back to cold)
    ├── ValidationError              exit 1  (bad calculation metadata, bad check)
    ├── RenderRefused                exit 1  (report references a value that is not verified)
    ├── BudgetExceeded               exit 1  (a per-job ceiling was reached)
    └── JobCancelled                 exit 130 (the job was cancelled while running)
"""

from __future__ import annotations


class InsightloomError(Exception):
    """Base of every insightloom error.

    Args:
        message: What went wrong, naming the file, field or row.
        fix: What the user should do about it.
    """

    exit_code = 1

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} Fix: {self.fix}" if self.fix else self.message


class BadInputError(InsightloomError):
    """Input the user gave cannot be used as it is."""

    exit_code = 2


class UnknownSkillError(BadInputError):
    """A skill name that no skills folder provides, or that is not a valid name."""


class UnsafePathError(BadInputError):
    """A path inside a job folder is a symbolic link (or escapes the folder), so the host refuses to follow it."""


class JoinRefused(BadInputError):
    """A joined view (``orders+customers``) that no foreign key of the profile allows, or one that would multiply
    rows (many-to-many, or one-to-many read the wrong way); the message names the tables and keys."""


class JobNotFound(BadInputError):
    """No job has that id, or it belongs to someone else (the two are not told apart)."""


class JobConflict(InsightloomError):
    """The job exists but is not in a state for this action (not awaiting review, already ended, locked)."""

    exit_code = 2


class ServiceBusy(InsightloomError):
    """The service cannot take more work right now."""


class QueueFull(ServiceBusy):
    """Too many work items are waiting, or the queue is shutting down."""


class BrokerUnavailable(ServiceBusy):
    """The queue's broker (Redis, SQS) cannot be reached, so no work can be queued now.

    Args:
        retry_after_s: Seconds after which a client may try again (the API's ``Retry-After``).
    """

    def __init__(self, message: str, fix: str = "", *, retry_after_s: int = 30) -> None:
        super().__init__(message, fix)
        self.retry_after_s = retry_after_s


class ConfigError(InsightloomError):
    """Configuration, credentials or optional dependencies are missing or wrong."""

    exit_code = 2


class ModelError(InsightloomError):
    """A model provider call failed."""


class ExecutionError(InsightloomError):
    """The script runner could not run a script."""


class ServerUnavailable(ExecutionError):
    """The warm script server could not be started or reached; the runner falls back to the cold path.

    Args:
        reason: What went wrong, for the log.
        permanent: True when the server cannot be started at all, so every later script should go cold too.
    """

    def __init__(self, reason: str, *, permanent: bool = True) -> None:
        super().__init__(reason)
        self.permanent = permanent


class ValidationError(InsightloomError):
    """Calculation metadata or a check is malformed."""


class RenderRefused(InsightloomError):
    """The report references a calculation that may not be printed."""


class BudgetExceeded(InsightloomError):
    """A per-job ceiling (calls, tokens, cost, wall time) was reached."""


class RepeatedCall(InsightloomError):
    """An agent kept re-sending a tool call that had already failed and been refused."""


class PlanStuck(InsightloomError):
    """The Supervisor stopped with plan items open and its last round changed nothing."""


class ModelRefused(PlanStuck):
    """A model refused its task (or answered nothing) twice, with plan items open."""


class JobCancelled(InsightloomError):
    """The job was cancelled (Ctrl-C, the review prompt, or the service) while it ran."""

    exit_code = 130
