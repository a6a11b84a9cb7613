"""A small stand-in for the Hugging Face Hub on 127.0.0.1, for huggingface_hub to talk to over real HTTP.

It serves ``/{repo_id}/resolve/{revision}/{filename}`` (HEAD, GET and byte ranges) the way
the Hub does, with the headers huggingface_hub reads (X-Repo-Commit, ETag, X-Error-Code),
and can play the Hub's failure modes: unknown repo, gated repo, missing file, unknown
revision, server error, and a hang. Tests point huggingface_hub at it with HF_ENDPOINT.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"
RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+|[^/]+)/resolve/(?P<revision>[^/]+)/(?P<filename>.+)$")


@dataclass
class FakeRepo:
    files: dict[str, bytes] = field(default_factory=dict)
    gated_token: str | None = None  # gated: only this bearer token gets in
    revisions: tuple[str, ...] = ("main",)
    status: int | None = None  # answer every request with this status (e.g. 500)
    delay: float = 0.0  # seconds to wait before answering (a hang)
    etag: str | None = None  # the ETag header instead of the content's hash (a hostile mirror's "../x")
    commit: str = COMMIT  # the X-Repo-Commit header
    redirect_loop: bool = False  # answer every request with a redirect to itself


class FakeHub:
    """Start with ``with FakeHub(repos) as hub:``; ``hub.url`` goes into HF_ENDPOINT."""

    def __init__(self, repos: dict[str, FakeRepo]):
        self.repos = repos
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, Authorization)
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self):
                hub._answer(self, body=False)

            def do_GET(self):
                hub._answer(self, body=True)

            def log_message(self, *args):  # keep test output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # shutdown() waits for the server's next poll: 0.05 s instead of socketserver's 0.5 s a test
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        authorization = handler.headers.get("Authorization")
        self.requests.append((handler.command, handler.path, authorization))
        match = RESOLVE.match(handler.path.split("?")[0])
        if match is None:
            return self._error(handler, 404, "RepoNotFound", "no such route")
        repo = self.repos.get(match["repo"])
        if repo is None:
            return self._error(handler, 401, "RepoNotFound", "Repository not found")
        if repo.delay:
            time.sleep(repo.delay)
        if repo.status is not None:
            return self._error(handler, repo.status, None, "Internal Error")
        if repo.redirect_loop:
            handler.send_response(302)
            handler.send_header("Location", handler.path)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return None
        if repo.gated_token is not None and authorization != f"Bearer {repo.gated_token}":
            # The Hub answers 401 without a token, 403 with one that has not been granted access.
            status = 403 if authorization else 401
            return self._error(handler, status, "GatedRepo", "Access to model is restricted")
        if match["revision"] not in repo.revisions and match["revision"] != COMMIT:
            return self._error(handler, 404, "RevisionNotFound", "Invalid rev id")
        content = repo.files.get(match["filename"])
        if content is None:
            return self._error(handler, 404, "EntryNotFound", "Entry not found")
        self._send_file(handler, content, body, repo)

    @staticmethod
    def _send_file(handler: BaseHTTPRequestHandler, content: bytes, body: bool, repo: FakeRepo) -> None:
        status, payload, extra = 200, content, {}
        ranged = re.match(r"bytes=(\d+)-(\d*)$", handler.headers.get("Range", ""))
        if ranged:
            start = int(ranged[1])
            end = int(ranged[2]) if ranged[2] else len(content) - 1
            payload = content[start : end + 1]
            status = 206
            extra["Content-Range"] = f"bytes {start}-{start + len(payload) - 1}/{len(content)}"
        handler.send_response(status)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Length", str(len(payload)))
        handler.send_header("ETag", f'"{repo.etag or hashlib.sha1(content).hexdigest()}"')
        handler.send_header("X-Repo-Commit", repo.commit)
        handler.send_header("Accept-Ranges", "bytes")
        for key, value in extra.items():
            handler.send_header(key, value)
        handler.end_headers()
        if body:
            handler.wfile.write(payload)

    @staticmethod
    def _error(handler: BaseHTTPRequestHandler, status: int, code: str | None, message: str) -> None:
        payload = f'{{"error": "{message}"}}'.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        if code:
            handler.send_header("X-Error-Code", code)
        handler.send_header("X-Error-Message", message)
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(payload)
