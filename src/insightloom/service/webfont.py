"""A Hangul web font for browsers on machines without one: the font the charts use, cut down to what a page needs.

Why a new user's browser showed Korean as empty boxes: the page's ``@font-face`` used to fetch the whole bundled
NanumGothic (4.3 MB, Hanja and hinting included) the first time Korean text appeared, and the server built it on that
first request (about 5 s of fontTools work). With ``font-display: swap`` the browser painted the text meanwhile in a
font without Hangul, that is as boxes, for seconds; a screenshot or a first look at the job list saw only boxes.

So the served font is now small and ready before anyone asks for it:

- only the Hangul blocks, the CJK punctuation and the full-width forms (:data:`WEB_FONT_RANGES`, which is also the
  ``unicode-range`` that ``static/style.css`` declares: a test keeps the two in step), without hinting, as WOFF;
  about 0.4 MB instead of 4.3 MB;
- built once per process, in the background when the app starts (:func:`warm_in_background`), so the first request
  is answered from memory;
- the stylesheet declares it ``font-display: block``: while it loads, the text waits invisibly instead of being
  painted as boxes.

The sanitizer browsers run fonts through (OTS) rejects NanumGothic's empty ``TSI*`` tables (hinting sources of
Microsoft's VTT); subsetting drops them with the rest of the hinting. A system Noto CJK collection (``.ttc``) works
too: its Korean face is the one served.
"""

from __future__ import annotations

import functools
import io
import logging
import threading
from pathlib import Path
from typing import Any

from ..fonts import find_cjk_font

logger = logging.getLogger(__name__)

#: The code points the web font serves, and the ``unicode-range`` of its ``@font-face``: Hangul Jamo, CJK symbols
#: and punctuation, Hangul compatibility Jamo, Jamo extended A, Hangul syllables, Jamo extended B, full-width forms.
WEB_FONT_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),
    (0x3000, 0x303F),
    (0x3130, 0x318F),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xD7B0, 0xD7FF),
    (0xFF00, 0xFFEF),
)
MEDIA_TYPE = "font/woff"
_FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")
_BUILD_LOCK = threading.Lock()


def unicode_range() -> str:
    """:data:`WEB_FONT_RANGES` as CSS writes a ``unicode-range``: ``U+1100-11FF, U+3000-303F, ...``."""
    return ", ".join(f"U+{lo:04X}-{hi:04X}" for lo, hi in WEB_FONT_RANGES)


def web_font() -> bytes | None:
    """The CJK font as WOFF bytes a browser accepts, or None when this machine has no usable one.

    Thread-safe: a request that arrives while the background build runs waits for it rather than building again.
    """
    with _BUILD_LOCK:
        return _build()


def warm_in_background() -> threading.Thread:
    """Build the web font in a daemon thread now, so that no page waits for it (the app calls this at start-up)."""
    thread = threading.Thread(target=web_font, name="insightloom-webfont", daemon=True)
    thread.start()
    return thread


@functools.cache
def _build() -> bytes | None:
    font = find_cjk_font()
    if font is None or font.path.suffix.lower() not in _FONT_SUFFIXES:
        return None
    try:
        return _subset(_korean_face(font.path))
    except Exception:  # a font fontTools can't read: serve nothing rather than a font browsers reject
        logger.warning("could not prepare %s as a web font", font.path, exc_info=True)
        return None


def _korean_face(path: Path) -> Any:
    """The font at ``path``; in a collection, its Korean face (Noto's ``... CJK KR``), else its first."""
    from fontTools.ttLib import TTCollection, TTFont  # a matplotlib dependency, and one of ours

    if path.suffix.lower() not in (".ttc", ".otc"):
        return TTFont(str(path))
    faces = TTCollection(str(path)).fonts
    korean = [face for face in faces if " KR" in str(face["name"].getDebugName(1) or "")]
    return (korean or faces)[0]


def _subset(font: Any) -> bytes:
    from fontTools import subset

    options = subset.Options()
    options.hinting = False  # browsers hint themselves; the instructions are a third of the file
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.flavor = "woff"  # zlib, in the standard library (WOFF2 would need brotli)
    options.drop_tables += [tag for tag in font.reader.tables if tag.startswith("TSI")]  # VTT sources OTS rejects
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[code for lo, hi in WEB_FONT_RANGES for code in range(lo, hi + 1)])
    subsetter.subset(font)
    font.flavor = "woff"
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()
