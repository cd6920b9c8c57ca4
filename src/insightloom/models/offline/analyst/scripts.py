"""The offline Coder's scripts: one ``run_standard(<plan item>)`` call into the product per planned analysis.

``run_standard`` is exported by ``coder_analysis_utils``, so an LLM Coder can write exactly the same script; every
analysis decision (columns, ids, units, wording, checks) is made by the product at run time.
"""

from __future__ import annotations

from typing import Any

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils.standard import script_name


def script_for(spec: AnalysisSpec, profile: dict[str, Any], language: str = "en") -> tuple[str, str]:
    """``(file name, Python source)`` of the script for one planned analysis, in ``language`` (``en`` or ``ko``).

    Raises:
        BadInputError: The spec names a table or column the profile lacks, or a personal/identifier column.
    """
    lang = "ko" if language == "ko" else "en"
    item = spec.item_text(lang)
    source = (
        f"# {' '.join(item.split())}\n# Written by the insightloom offline Coder.\n\n"
        "from coder_analysis_utils import run_standard\n\n"
        f"run_standard({item!r}, language={lang!r})\n"
    )
    return script_name(spec, profile), source
