"""HTTP/1.1 for the IETF resumable uploads server (courier_backend/ietf.py), spoken with h11.

uvicorn cannot send an informational response other than 100, and the draft needs `104 (Upload
Resumption Supported)`, so the server reads and writes HTTP/1.1 itself: a `Connection` serves one
client socket (one thread each) request after request, hands each `Exchange` (the request's head,
its body read on demand, the interim answers sent) to the app's `handle`, and closes with a linger
so that an answer is not lost to a reset. `respond`, `respond_json` and `respond_problem` send the
final answer, reading and dropping a small unread body first (or closing instead).
"""

from __future__ import annotations

import http
import json
import socket
import struct
import time
from typing import TYPE_CHECKING, Iterator
from urllib.parse import parse_qs, urlsplit

import h11

from .ietf_problems import Problem

if TYPE_CHECKING:
    from .ietf import IetfServer

READ_SIZE = 64 * 1024
IDLE_TIMEOUT = 120.0  # seconds a connection may stay silent before it is dropped
DRAIN_LIMIT = 256 * 1024  # an early error reads and drops a body this small; a larger one closes


class Disconnected(Exception):
    """The client went away (EOF, reset, or silence past IDLE_TIMEOUT) before the request ended."""


def reason_of(status: int) -> bytes:
    try:
        return http.HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


# ---------------------------------------------------------------------- one exchange
class Exchange:
    """One request on a connection: its head, its body read on demand, the answers sent."""

    def __init__(self, conn: "Connection", request: h11.Request) -> None:
        self.conn = conn
        self.method = request.method.decode("ascii", "replace").upper()
        target = request.target.decode("latin-1")
        parts = urlsplit(target)
        self.path = parts.path
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.target = target
        self.raw_headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in request.headers]
        self.headers: dict[str, str] = {}
        for name, value in request.headers:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text
        self.interim_sent: list[int] = []
        # Read before any 104 goes out: h11 forgets the expectation once any 1xx is sent.
        self.expects_continue = conn.h11.they_are_waiting_for_100_continue
        self.body_done = False
        self.body_bytes = 0

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def content_length(self) -> int | None:
        value = self.header("content-length")
        return int(value) if value is not None and value.strip().isdigit() else None

    @property
    def chunked(self) -> bool:
        return "chunked" in (self.header("transfer-encoding") or "").lower()

    @property
    def has_body(self) -> bool:
        return self.chunked or (self.content_length or 0) > 0

    def peer_host(self) -> str:
        return self.conn.peer[0] if isinstance(self.conn.peer, tuple) else ""

    def base_url(self) -> str:
        host = self.header("host") or f"{self.conn.server.host}:{self.conn.server.port}"
        return f"http://{host}"

    def interim(self, status: int, headers: dict[str, str], reason: bytes = b"") -> None:
        self.conn.send(h11.InformationalResponse(status_code=status, headers=list(headers.items()),
                                                 reason=reason or reason_of(status)))
        self.interim_sent.append(status)

    def continue_if_asked(self) -> None:
        """Sends 100 Continue when the client waits for it (the draft: a 104 does not replace it)."""
        if self.expects_continue and 100 not in self.interim_sent and self.body_bytes == 0:
            self.interim(100, {})

    def chunks(self) -> Iterator[bytes]:
        """The body, chunk by chunk; raises Disconnected when the client goes away mid-body."""
        self.continue_if_asked()
        while not self.body_done:
            data = self.conn.next_body_event()
            if data is None:
                self.body_done = True
                return
            if data:
                self.body_bytes += len(data)
                yield data

    def drain(self) -> bool:
        """Reads and drops the rest of a small body; False when it is too large to be worth it."""
        if self.body_done:
            return True
        length = self.content_length
        if self.chunked or length is None or length > DRAIN_LIMIT:
            return False
        try:
            for _ in self.chunks():
                pass
        except Disconnected:
            return False
        return True


# ---------------------------------------------------------------------- connections
class Connection:
    def __init__(self, server: "IetfServer", sock: socket.socket, peer) -> None:
        self.server = server
        self.sock = sock
        self.peer = peer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        self.reset = False  # a superseded request: closed with a reset, not read any further

    def send(self, event) -> None:
        data = self.h11.send(event)
        if data:
            try:
                self.sock.sendall(data)
            except OSError:
                raise Disconnected()

    def _read(self) -> None:
        try:
            data = self.sock.recv(READ_SIZE)
        except (socket.timeout, OSError):
            raise Disconnected()
        self.h11.receive_data(data)
        if not data:
            raise Disconnected()

    def next_body_event(self) -> bytes | None:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError:
                raise Disconnected()
            if event is h11.NEED_DATA:
                self._read()
                continue
            if isinstance(event, h11.Data):
                return bytes(event.data)
            if isinstance(event, h11.EndOfMessage):
                return None
            if isinstance(event, h11.ConnectionClosed):
                raise Disconnected()

    def serve(self) -> None:
        self.sock.settimeout(IDLE_TIMEOUT)
        try:
            while True:
                try:
                    event = self.h11.next_event()
                except h11.RemoteProtocolError as exc:
                    self._bad_request(exc)
                    return
                if event is h11.NEED_DATA:
                    try:
                        self._read()
                    except Disconnected:
                        return
                    continue
                if isinstance(event, h11.ConnectionClosed):
                    return
                if not isinstance(event, h11.Request):
                    return
                exchange = Exchange(self, event)
                keep = self.server.app.handle(exchange)
                if self.reset:
                    self._reset_close()
                    return
                if not keep or self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
                    self._linger_close()
                    return
                self.h11.start_next_cycle()
        except (Disconnected, OSError, h11.LocalProtocolError):
            pass
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

    def _bad_request(self, exc: Exception) -> None:
        try:
            body = json.dumps({"type": "about:blank", "title": "Bad Request", "status": 400,
                               "detail": str(exc)}).encode()
            self.send(h11.Response(status_code=400, headers=[
                ("Content-Type", "application/problem+json"), ("Content-Length", str(len(body))),
                ("Connection", "close")]))
            self.send(h11.Data(data=body))
            self.send(h11.EndOfMessage())
        except (h11.LocalProtocolError, OSError):
            pass
        self._linger_close()

    def _reset_close(self) -> None:
        """Closes with a reset (SO_LINGER 0): the peer's kernel drops what it still queued."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass

    def _linger_close(self) -> None:
        """Closes after the answer, reading (and dropping) what the client still sends for a while,
        so the kernel does not reset the connection and lose the answer."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(2.0)
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                if not self.sock.recv(READ_SIZE):
                    break
        except OSError:
            pass


# ---------------------------------------------------------------------- answers
def respond(ex: Exchange, status: int, headers: dict[str, str], body: bytes = b"",
            close: bool = False) -> bool:
    """Sends the final answer; returns whether the connection can carry another request."""
    if not ex.body_done:
        # A client still waiting for `100 Continue` is refused without being asked for the
        # content (and the connection closed); otherwise a small content is read and dropped.
        waiting = ex.expects_continue and 100 not in ex.interim_sent and ex.body_bytes == 0
        if waiting or not ex.drain():
            close = True
    hdrs = dict(headers)
    if ex.method != "HEAD" or body:
        hdrs["Content-Length"] = str(len(body))
    if close:
        hdrs["Connection"] = "close"
    ex.conn.send(h11.Response(status_code=status, headers=list(hdrs.items()), reason=reason_of(status)))
    if body and ex.method != "HEAD":
        ex.conn.send(h11.Data(data=body))
    ex.conn.send(h11.EndOfMessage())
    return not close


def respond_json(ex: Exchange, status: int, payload, headers: dict[str, str] | None = None,
                 content_type: str = "application/json; charset=utf-8") -> bool:
    body = json.dumps(payload).encode()
    return respond(ex, status, {"Content-Type": content_type, **(headers or {})}, body)


def respond_problem(ex: Exchange, problem: Problem, extra: dict[str, str] | None = None) -> bool:
    body = json.dumps(problem.body).encode()
    headers = {"Content-Type": "application/problem+json", **(extra or {}), **problem.headers}
    return respond(ex, problem.status, headers, body)
