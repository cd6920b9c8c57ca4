"""Claims: verdicts about the data ("rising", "main driver", "dominates") recorded, checked and cited like numbers.

``table`` is the one table of kinds, verdicts, thresholds and wording; ``stats`` the product's NumPy tests;
``wording`` the sentence a ``{{claim:ID}}`` prints; ``phrases`` finds free-text claim words; ``contradictions``
the claims that cannot both be printed; ``lead`` the summary's lead rule.
"""

from __future__ import annotations

from insightloom.claims.stats import Verdict, find_sentinels, run_test
from insightloom.claims.table import KINDS, ClaimKind, kind_of

__all__ = ["KINDS", "ClaimKind", "Verdict", "find_sentinels", "kind_of", "run_test"]
