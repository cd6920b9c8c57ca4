"""What every way of asking shares: which jobs can be asked about, and what a session name may be."""

from __future__ import annotations

import re

#: Jobs that can be asked about: they ended with a report, unlike a failed or cancelled one, which has nothing to
#: answer from.
FINISHED = frozenset({"completed", "needs_review"})
#: A session name: short, and safe in a URL path and as a store key (the service's ``/ask/sessions/{name}`` too).
SESSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
SESSION_RE = re.compile(SESSION_PATTERN)
