"""insightloom: data files plus a request in, a verified and cited DOCX report out."""

from importlib import metadata

try:
    __version__ = metadata.version("insightloom")
except metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
