"""Find a CJK-capable font for charts and the DOCX.

Korean labels drawn with matplotlib's default font come out as empty boxes, so charts and the report need a font that
covers Hangul. The PyPI package ``koreanize-matplotlib`` ships NanumGothic; system Noto CJK or Nanum fonts work too.
Nothing here touches global matplotlib state: callers pass the font to the figure they draw.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install koreanize-matplotlib, or apt-get install fonts-noto-cjk"
_SYSTEM_FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path.home() / ".fonts")
_SYSTEM_PATTERNS = ("NotoSansCJK*", "NotoSansKR*", "Nanum*", "NotoSerifCJK*")
_CJK_RE = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True)
class CJKFont:
    """A font file that covers Hangul, and the family name Word and matplotlib know it by."""

    family: str
    path: Path


def has_cjk(text: str) -> bool:
    """Whether the text holds Korean, Japanese or Chinese characters."""
    return bool(_CJK_RE.search(text))


def _bundled_nanum() -> CJKFont | None:
    # find_spec does not import the package, whose import would change global rcParams.
    spec = importlib.util.find_spec("koreanize_matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / "NanumGothic.ttf"
    return CJKFont("NanumGothic", path) if path.is_file() else None


def _system_font() -> CJKFont | None:
    for folder in _SYSTEM_FONT_DIRS:
        if not folder.is_dir():
            continue
        for pattern in _SYSTEM_PATTERNS:
            for path in sorted(folder.rglob(pattern)):
                if path.suffix.lower() in {".ttf", ".otf", ".ttc"}:
                    family = "Noto Sans CJK KR" if path.name.startswith("Noto") else path.stem.split("-")[0]
                    return CJKFont(family, path)
    return None


@functools.cache
def find_cjk_font() -> CJKFont | None:
    """The first CJK font found: the bundled NanumGothic, then system Noto CJK or Nanum fonts.

    Returns:
        The font, or None (after logging how to install one) when the machine has none.
    """
    font = _bundled_nanum() or _system_font()
    if font is None:
        logger.warning("No CJK font found: Korean text in charts would be unreadable. Fix: %s", INSTALL_HINT)
    return font
