"""Artifact stores: the local artifacts folder, or S3 with local working copies (see :mod:`.base`)."""

from __future__ import annotations

from pathlib import Path

from .base import LOCK_NAME, ArtifactStore, HeldLock, MetaKind, listed

__all__ = ["LOCK_NAME", "ArtifactStore", "HeldLock", "MetaKind", "listed", "open_store"]


def open_store(store: str | None, root: Path) -> ArtifactStore:
    """The store for settings: ``s3://bucket/prefix`` (``root`` holds the working copies), else the folder ``root``."""
    if store:
        from .s3 import S3Store

        return S3Store(store, work_dir=root)
    from .local import LocalStore

    return LocalStore(root)
