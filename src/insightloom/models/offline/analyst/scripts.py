"""The offline Coder's scripts: one ``run_standard(<plan item>)`` call into the product per planned analysis.

``run_standard`` is exported by ``coder_analysis_utils``, so an LLM Coder can write exactly the same script; every
analysis decision (columns, ids, units, wording, checks) is made by the product at run time.
"""

from __future__ import annotations

import hashlib
from typing import Any

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils.standard import script_name
from insightloom.statistics.request import StatRequest
from insightloom.statistics.request import item_text as stat_item


def script_for(spec: AnalysisSpec | StatRequest, profile: dict[str, Any], language: str = "en") -> tuple[str, str]:
    """``(file name, Python source)`` of the script for one planned analysis, in ``language`` (``en`` or ``ko``).

    A statistics request gets one ``run_statistics(<plan item>)`` call, as an LLM Coder would write it.

    Raises:
        BadInputError: The spec names a table or column the profile lacks, or a personal/identifier column.
    """
    if isinstance(spec, StatRequest):
        item = stat_item(spec)
        digest = hashlib.sha1(item.encode()).hexdigest()[:8]
        source = ("# A statistics-catalog request.\n# Written by the insightloom offline Coder.\n\n"
                  f"from coder_analysis_utils import run_statistics\n\nrun_statistics({item!r})\n")  # fmt: skip
        return f"statistics_{digest}.py", source
    lang = "ko" if language == "ko" else "en"
    item = spec.item_text(lang)
    source = (
        f"# {' '.join(item.split())}\n# Written by the insightloom offline Coder.\n\n"
        "from coder_analysis_utils import run_standard\n\n"
        f"run_standard({item!r}, language={lang!r})\n"
    )
    return script_name(spec, profile), source
