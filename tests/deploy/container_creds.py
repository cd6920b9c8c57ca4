"""A loopback stand-in for the ECS/Fargate container credentials endpoint (``AWS_CONTAINER_CREDENTIALS_FULL_URI``).

boto3 reads task-role credentials from that endpoint: a GET answered with JSON ``AccessKeyId``, ``SecretAccessKey``,
``Token`` and ``Expiration``. Point ``AWS_CONTAINER_CREDENTIALS_FULL_URI`` at :attr:`ContainerCredentialsStub.url`
(botocore accepts plain http for loopback hosts) and count :attr:`~ContainerCredentialsStub.hits` to prove the
credentials came from here. Never use ``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`` in tests: it resolves to the
link-local 169.254.170.2.

    with ContainerCredentialsStub() as stub:
        monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", stub.url)
        ...
        assert stub.hits >= 1
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

PATH = "/creds"


class ContainerCredentialsStub:
    """The endpoint on 127.0.0.1 in a background thread, serving one fixed set of temporary credentials.

    Args:
        access_key: The ``AccessKeyId`` served (the secret and token are derived from it).
        token: An ``Authorization`` header value to require (``AWS_CONTAINER_AUTHORIZATION_TOKEN``), or None.
    """

    def __init__(self, access_key: str = "ASIASTUBCONTAINER000", token: str | None = None) -> None:
        self.access_key = access_key
        self.secret_key = f"secret-of-{access_key}"
        self.session_token = f"session-of-{access_key}"
        self.required_token = token
        self.hits = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The full URI to put in ``AWS_CONTAINER_CREDENTIALS_FULL_URI``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{PATH}"

    def start(self) -> ContainerCredentialsStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def __enter__(self) -> ContainerCredentialsStub:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def body(self) -> bytes:
        """The credentials document, valid for an hour (botocore refreshes ahead of ``Expiration``)."""
        expiration = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        document = {
            "AccessKeyId": self.access_key,
            "SecretAccessKey": self.secret_key,
            "Token": self.session_token,
            "Expiration": expiration,
        }
        return json.dumps(document).encode()

    def _count(self) -> None:
        with self._lock:
            self.hits += 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the http.server hook name
                if self.path != PATH or (
                    stub.required_token is not None and self.headers.get("Authorization") != stub.required_token
                ):
                    self.send_error(404 if self.path != PATH else 401)
                    return
                stub._count()
                payload = stub.body()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:  # quiet: the test output stays readable
                pass

        return Handler
