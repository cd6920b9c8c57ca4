"""A Hangul web font for browsers on machines without one: the font the charts use, made acceptable to browsers.

Browsers run fonts through a sanitizer (OTS) that rejects the bundled NanumGothic because of its empty ``TSI*``
tables (hinting sources of Microsoft's VTT, never used for rendering). Dropping those tables, copying the rest as
they are, gives a font every browser loads. The result is built once per process.
"""

from __future__ import annotations

import functools
import io
import logging

from ..fonts import find_cjk_font

logger = logging.getLogger(__name__)

_WEB_SUFFIXES = (".ttf", ".otf")


@functools.cache
def web_font() -> bytes | None:
    """The CJK font as bytes a browser accepts, or None when this machine has no usable one."""
    font = find_cjk_font()
    if font is None or font.path.suffix.lower() not in _WEB_SUFFIXES:
        return None
    try:
        from fontTools.ttLib import TTFont  # a matplotlib dependency

        parsed = TTFont(str(font.path), lazy=True)
        for tag in [t for t in parsed.reader.tables if t.startswith("TSI")]:
            del parsed[tag]
        out = io.BytesIO()
        parsed.save(out, reorderTables=False)
    except Exception:  # a font fontTools can't read: serve nothing rather than a font browsers reject
        logger.warning("could not prepare %s as a web font", font.path, exc_info=True)
        return None
    return out.getvalue()
