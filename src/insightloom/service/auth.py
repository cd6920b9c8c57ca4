"""Who is calling: a bearer token (API clients) or a signed session cookie (the web page).

The browser can't put a header on ``EventSource`` or a download link, so the page trades its token for an HttpOnly,
SameSite=Strict cookie. The cookie is ``<user>.<expiry>.<signature>``, signed with a key derived from every configured
token: changing or revoking any token signs everyone out, and nothing needs storing on the server.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import time

from fastapi import HTTPException, Request

from .service_settings import OPEN_USER, ServiceConfig

logger = logging.getLogger(__name__)

COOKIE = "insightloom_session"


class Authenticator:
    """Checks bearer tokens and session cookies against the configured tokens."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        material = "\n".join(sorted(f"{t}\t{u}" for t, u in config.tokens.items()))
        self._key = hashlib.sha256(b"insightloom-session\n" + material.encode("utf-8")).digest()

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
        body = f"{name}.{expiry}"
        return f"{body}.{self._sign(body)}"

    def user_for_session(self, value: str, *, now: float | None = None) -> str | None:
        """The user of a valid, unexpired cookie, else None."""
        try:
            name, expiry, signature = value.split(".")
            if not hmac.compare_digest(signature, self._sign(f"{name}.{expiry}")):
                return None
            if int(expiry) < (now or time.time()):
                return None
            user = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
        return user if user in self.config.tokens.values() else None

    def user(self, request: Request) -> str:
        """The caller's user name.

        Raises:
            HTTPException: 401 when a token is configured and neither a valid bearer token nor a session came.
        """
        if self.config.open:
            return OPEN_USER
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            user = self.user_for_token(token.strip())
            if user is not None:
                return user
        elif (cookie := request.cookies.get(COOKIE)) and (user := self.user_for_session(cookie)):
            return user
        raise HTTPException(
            status_code=401,
            detail="Missing or invalid token. Send 'Authorization: Bearer <token>' or sign in on the web page.",
            headers={"WWW-Authenticate": "Bearer"},
        )
