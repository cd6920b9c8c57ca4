"""Who is calling: a bearer token (API clients) or a signed session cookie (the web page).

The browser can't put a header on ``EventSource`` or a download link, so the page trades its token for an HttpOnly,
SameSite=Strict cookie. The cookie is ``<user>.<expiry>.<nonce>.<signature>``, signed with a key derived from every
configured token: changing or revoking any token signs everyone out. Signing out revokes the cookie's nonce on the
server (kept in a file beside the jobs, so it survives a restart).

A cookie is sent by the browser whoever made the page, so a state-changing request (POST, PUT, PATCH, DELETE) that
authenticates by cookie must come from this server's own origin (``Origin``) and carry the session's CSRF token in
``X-CSRF-Token`` (``GET /session`` returns it). Bearer requests are exempt: no browser adds that header by itself.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from ..fileio import write_json
from .service_settings import OPEN_USER, ServiceConfig

logger = logging.getLogger(__name__)

COOKIE = "insightloom_session"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Authenticator:
    """Checks bearer tokens and session cookies against the configured tokens.

    Args:
        config: The service settings (tokens, session lifetime).
        revoked_path: Where signed-out session nonces are kept (None: in memory only).
    """

    def __init__(self, config: ServiceConfig, revoked_path: Path | None = None) -> None:
        self.config = config
        material = "\n".join(sorted(f"{t}\t{u}" for t, u in config.tokens.items()))
        self._key = hashlib.sha256(b"insightloom-session\n" + material.encode("utf-8")).digest()
        self._revoked_path = revoked_path
        self._revoked_lock = threading.Lock()
        self._revoked: dict[str, int] = self._load_revoked()

    def _load_revoked(self) -> dict[str, int]:
        if self._revoked_path is None or not self._revoked_path.is_file():
            return {}
        try:
            data = json.loads(self._revoked_path.read_text(encoding="utf-8"))
            return {str(k): int(v) for k, v in data.items()}
        except (OSError, ValueError, AttributeError):
            logger.warning("revoked-session file %s unreadable; starting it again", self._revoked_path)
            return {}

    def user_for_token(self, token: str) -> str | None:
        """The user a token belongs to; every token is compared in constant time."""
        found = None
        for known, user in self.config.tokens.items():
            if hmac.compare_digest(known.encode("utf-8"), token.encode("utf-8")):
                found = user
        return found

    def _sign(self, body: str) -> str:
        digest = hmac.new(self._key, body.encode("utf-8"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

    def make_session(self, user: str, *, now: float | None = None) -> str:
        """A cookie value for ``user``, valid for ``session_hours``."""
        name = base64.urlsafe_b64encode(user.encode("utf-8")).decode("ascii").rstrip("=")
        expiry = int((now or time.time()) + self.config.session_hours * 3600)
        body = f"{name}.{expiry}.{secrets.token_urlsafe(12)}"
        return f"{body}.{self._sign(body)}"

    def user_for_session(self, value: str, *, now: float | None = None) -> str | None:
        """The user of a valid, unexpired, not signed-out cookie, else None."""
        try:
            name, expiry, nonce, signature = value.split(".")
            if not hmac.compare_digest(signature, self._sign(f"{name}.{expiry}.{nonce}")):
                return None
            if int(expiry) < (now or time.time()) or nonce in self._revoked:
                return None
            user = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        return user if user in self.config.tokens.values() else None

    def csrf_token(self, value: str) -> str:
        """The CSRF token that goes with a session cookie (derived from it, so nothing is stored)."""
        return self._sign(f"csrf\n{value}")

    def revoke(self, value: str, *, now: float | None = None) -> None:
        """Sign a session out on the server: its cookie stops working even where the browser kept it."""
        if self.user_for_session(value, now=now) is None:
            return
        _name, expiry, nonce, _signature = value.split(".")
        clock = now or time.time()
        with self._revoked_lock:
            self._revoked = {n: e for n, e in self._revoked.items() if e >= clock}  # expired ones need no entry
            self._revoked[nonce] = int(expiry)
            if self._revoked_path is not None:
                write_json(self._revoked_path, self._revoked)

    def check_origin(self, request: Request) -> None:
        """Refuse a state-changing request that a browser sent from another origin.

        Raises:
            HTTPException: 403 when ``Origin`` names another scheme, host or port than this server's.
        """
        origin = request.headers.get("origin")
        if request.method not in UNSAFE_METHODS or origin is None:
            return
        own = f"{request.url.scheme}://{request.url.netloc}"
        if origin.rstrip("/") != own:
            raise HTTPException(403, f"Cross-origin request refused ({origin} is not {own}).")

    def user(self, request: Request) -> str:
        """The caller's user name.

        Raises:
            HTTPException: 401 when a token is configured and neither a valid bearer token nor a session came;
                403 for a cross-origin state-changing request, or a cookie one without its CSRF token.
        """
        self.check_origin(request)
        if self.config.open:
            return OPEN_USER
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            user = self.user_for_token(token.strip())
            if user is not None:
                return user
        elif (cookie := request.cookies.get(COOKIE)) and (user := self.user_for_session(cookie)):
            sent = request.headers.get(CSRF_HEADER, "")
            if request.method in UNSAFE_METHODS and not hmac.compare_digest(sent, self.csrf_token(cookie)):
                raise HTTPException(
                    403, "Missing or wrong X-CSRF-Token: send the csrf_token that GET /session returns."
                )
            return user
        raise HTTPException(
            status_code=401,
            detail="Missing or invalid token. Send 'Authorization: Bearer <token>' or sign in on the web page.",
            headers={"WWW-Authenticate": "Bearer"},
        )


async def current_user(request: Request) -> str:
    """The caller's user name (401 when a token is configured and none came): every route's dependency."""
    user: str = request.app.state.auth.user(request)
    return user


User = Annotated[str, Depends(current_user)]
