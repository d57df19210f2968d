"""The IETF resumable uploads protocol (draft-ietf-httpbis-resumable-upload) on a port of its own.

Docs/ietf-upload.md is the contract; Docs/decisions/2700-ietf-upload-server.md says why it is
built this way. uvicorn cannot send an informational response other than 100, and the draft's
point is the `104 (Upload Resumption Supported)` sent as soon as a creation's header section is
read, so this server speaks HTTP/1.1 itself with h11 (one thread per connection) and parses the
draft's structured fields with http-sfv. It runs inside the backend's process, beside uvicorn,
and shares its Store: the same users and tokens, and a finished upload becomes a photo as a tus
upload does. Every other request is passed to uvicorn, so this port is a whole base URL.

The rules it keeps, shared with tus.py:

- Bytes are streamed to `uploads/ietf-<id>` in the data dir, never held whole in memory.
- The offset in the database (the only one ever answered) moves only after the file is fsynced
  up to it. Before writing, the file is cut back to that offset.
- A request without `Content-Digest` keeps what arrived when it is cut short (committed every
  COMMIT_EVERY bytes, at the disconnect, and at the end); one with it keeps all or nothing.
- A newer request to an upload (HEAD, PATCH, DELETE) takes over from an older one still
  streaming: the older one stops before its next chunk and confirms nothing more itself. What it
  wrote before the takeover is confirmed by the takeover (fsynced first) when it carried no
  `Content-Digest`, as its disconnect would have kept it, and its connection is reset at once:
  no answer is owed to a request another one replaced, and a killed client's kernel would go on
  sending its queue over the link for nothing (Docs/decisions/2712-*.md).
"""

from __future__ import annotations

import asyncio
import base64
import http
import http.client
import hashlib
import ipaddress
import json
import logging
import os
import re
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

import h11
from http_sfv import Dictionary, Item

from .store import Store, now_rfc3339

log = logging.getLogger("courier_backend.ietf")

# Upload-Draft-Interop-Version values accepted, and the drafts that define them (from each
# draft's "Draft Version Identification" section and change log; Docs/ietf-upload.md).
INTEROP_VERSIONS: dict[int, str] = {3: "-01", 4: "-02", 5: "-03", 6: "-04, -05", 7: "-06 to -08",
                                    8: "-09 and later"}
CURRENT_INTEROP = 8
PARTIAL_UPLOAD = "application/partial-upload"
PROBLEM_BASE = "https://iana.org/assignments/http-problem-types#"
MISMATCHING_OFFSET = PROBLEM_BASE + "mismatching-upload-offset"
COMPLETED_UPLOAD = PROBLEM_BASE + "completed-upload"
INCONSISTENT_LENGTH = PROBLEM_BASE + "inconsistent-upload-length"
COMMIT_EVERY = 1024 * 1024  # fsync, confirm and (interop >= 5) announce a 104 at least this often
READ_SIZE = 64 * 1024
IDLE_TIMEOUT = 120.0  # seconds a connection may stay silent before it is dropped
DRAIN_LIMIT = 256 * 1024  # an early error reads and drops a body this small; a larger one closes
PHOTO_ID_HEADER = "Courier-Photo-Id"
DEFAULT_CONTENT_TYPE = "application/octet-stream"
MAX_TITLE = 200
DIGESTS: dict[str, Callable] = {"sha-256": hashlib.sha256, "sha-512": hashlib.sha512}
UPLOAD_PATH = re.compile(r"^/resumable/([0-9a-f]{32})$")
# Hop-by-hop fields a proxy does not pass on (RFC 9110, 7.6.1), and Expect (answered here).
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
              "expect", "content-length"}
DRAFT_FIELDS = ("upload-complete", "upload-incomplete", "upload-draft-interop-version")


class Problem(Exception):
    """An error answered as RFC 9457 problem details (application/problem+json)."""

    def __init__(self, status: int, type_: str, title: str, *, headers: dict[str, str] | None = None,
                 **members) -> None:
        super().__init__(title)
        self.status = status
        self.body = {"type": type_, "title": title, "status": status, **members}
        self.headers = headers or {}


def courier_problem(status: int, code: str, title: str, **kw) -> Problem:
    return Problem(status, f"urn:courier:problem:{code}", title, code=code, **kw)


class Disconnected(Exception):
    """The client went away (EOF, reset, or silence past IDLE_TIMEOUT) before the request ended."""


class Superseded(Exception):
    """A newer request took over the upload while this one was writing."""


@dataclass
class Limits:
    """What `Upload-Limit` advertises; changed at run time by `POST /__ietf/config`."""

    max_size: int
    max_append_size: int
    min_append_size: int = 0


# ---------------------------------------------------------------------- structured fields
def sf_integer(value: str | None) -> int | None:
    """A non-negative sf-integer, or None when absent or not one (the draft: ignore the field)."""
    if value is None:
        return None
    item = Item()
    try:
        item.parse(value.encode("latin-1"))
    except (ValueError, UnicodeEncodeError):
        return None
    v = item.value
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        return None
    return v


def sf_boolean(value: str | None) -> bool | None:
    if value is None:
        return None
    item = Item()
    try:
        item.parse(value.encode("latin-1"))
    except (ValueError, UnicodeEncodeError):
        return None
    return item.value if isinstance(item.value, bool) else None


def sf_bool_text(value: bool) -> str:
    return "?1" if value else "?0"


def parse_digest(value: str | None, header: str) -> dict[str, bytes] | None:
    """`sha-256=:<base64>:, ...` (RFC 9530) -> {algorithm: digest} of the algorithms known here."""
    if value is None:
        return None
    d = Dictionary()
    try:
        d.parse(value.encode("latin-1"))
    except (ValueError, UnicodeEncodeError):
        raise courier_problem(400, "bad-digest", f"{header} is not a structured Dictionary of byte sequences.")
    out = {k: v.value for k, v in d.items() if k in DIGESTS and isinstance(v.value, (bytes, bytearray))}
    if not out:
        raise courier_problem(400, "digest-algorithm-unsupported",
                              f"{header} names no algorithm this server computes ({', '.join(DIGESTS)}).")
    return {k: bytes(v) for k, v in out.items()}


class Digests:
    """Running hashes for the algorithms a digest field names."""

    def __init__(self, algorithms) -> None:
        self.hashers = {a: DIGESTS[a]() for a in algorithms}

    def update(self, data) -> None:
        for h in self.hashers.values():
            h.update(data)

    def matches(self, expected: dict[str, bytes]) -> bool:
        return all(self.hashers[a].digest() == d for a, d in expected.items())


def content_disposition_filename(value: str | None) -> str | None:
    if not value:
        return None
    star = re.search(r"filename\*\s*=\s*([^;]+)", value, re.I)
    if star:
        raw = star.group(1).strip()
        charset, _, rest = raw.partition("'")
        _, _, encoded = rest.partition("'")
        try:
            return unquote(encoded, encoding=charset or "utf-8", errors="strict")
        except (LookupError, UnicodeDecodeError):
            pass
    plain = re.search(r'filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;\s]+)', value, re.I)
    if plain:
        return plain.group(2).replace('\\"', '"') if plain.group(2) is not None else plain.group(1)
    return None


def reason_of(status: int) -> bytes:
    try:
        return http.HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


def is_multipart(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "multipart/form-data"


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


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


class IetfServer:
    """A threaded HTTP/1.1 server (h11) that answers with `IetfApp`."""

    def __init__(self, store: Store, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = IetfApp(store, self)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, port))
        self.listener.listen(128)
        self.host = host
        self.port = self.listener.getsockname()[1]
        self.thread: threading.Thread | None = None

    def start(self) -> "IetfServer":
        self.thread = threading.Thread(target=self._accept_loop, name="ietf-accept", daemon=True)
        self.thread.start()
        return self

    def _accept_loop(self) -> None:
        while True:
            try:
                sock, peer = self.listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=Connection(self, sock, peer).serve, name="ietf-conn", daemon=True).start()

    def close(self) -> None:
        try:
            self.listener.close()
        except OSError:
            pass


def own_listening_ports() -> list[int]:
    """TCP ports this process listens on (Linux: its socket inodes matched in /proc/net/tcp*)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh)
                for line in fh:
                    fields = line.split()
                    if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                        ports.append(int(fields[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return sorted(set(ports))


def start_from_env(store: Store) -> IetfServer | None:
    """Starts the server when COURIER_BACKEND_IETF_PORT is set (0: any free port)."""
    raw = os.environ.get("COURIER_BACKEND_IETF_PORT", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) > 65535:
        raise SystemExit(f"COURIER_BACKEND_IETF_PORT must be a port number, got {raw!r}")
    host = (os.environ.get("COURIER_BACKEND_IETF_HOST") or os.environ.get("COURIER_BACKEND_HOST")
            or "127.0.0.1").strip()
    try:
        server = IetfServer(store, host, int(raw)).start()
    except OSError as exc:
        raise SystemExit(f"the IETF upload server cannot listen on {host}:{raw}: {exc}")
    port_file = os.environ.get("COURIER_BACKEND_IETF_PORT_FILE", "").strip()
    if port_file:
        tmp = port_file + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(f"{server.port}\n")
        os.replace(tmp, port_file)
    print(f"[courier-backend] IETF resumable uploads on http://{host}:{server.port}", flush=True)
    return server


def _default_interop_versions() -> set[int]:
    """The versions accepted: all of INTEROP_VERSIONS, or COURIER_BACKEND_IETF_INTEROP_VERSIONS
    (`3,4,5`; a test aid: a server that speaks only some, or only versions it does not implement, which
    it then refuses as well)."""
    raw = os.environ.get("COURIER_BACKEND_IETF_INTEROP_VERSIONS", "").strip()
    if not raw:
        return set(INTEROP_VERSIONS)
    try:
        return {int(v) for v in raw.split(",") if v.strip()}
    except ValueError:
        raise SystemExit(f"COURIER_BACKEND_IETF_INTEROP_VERSIONS must list integers, got {raw!r}")


# ---------------------------------------------------------------------- the protocol
class IetfApp:
    def __init__(self, store: Store, server: IetfServer) -> None:
        self.store = store
        self.server = server
        self.generation = store.generation
        self.limits = self._default_limits()
        self.accepted = _default_interop_versions()
        # The interop versions each upload's requests named (GET /__ietf/uploads: a test sees that a
        # resumed upload kept its creation's version).
        self.versions_seen: dict[str, set[int]] = {}
        self.locks: dict[str, threading.Lock] = {}
        # The request writing each upload (its token, start, bytes written, whether it keeps a cut
        # part), changed under the upload's lock: a takeover confirms what it wrote (`take_over`).
        self.streams: dict[str, dict] = {}
        self.locks_guard = threading.Lock()
        self._upstream: tuple[str, int] | None = None

    # ------------------------------------------------------------ helpers
    def _default_limits(self) -> Limits:
        size = self.store.config.tus_max_size
        return Limits(max_size=size, max_append_size=size)

    def _sync_generation(self) -> None:
        if self.store.generation != self.generation:  # /__reset: limits back to the defaults
            self.generation = self.store.generation
            self.limits = self._default_limits()
            self.accepted = _default_interop_versions()
            self.versions_seen = {}

    def lock_for(self, upload_id: str) -> threading.Lock:
        with self.locks_guard:
            return self.locks.setdefault(upload_id, threading.Lock())

    def writer_key(self, upload_id: str) -> str:
        return "ietf:" + upload_id

    def take_over(self, upload_id: str) -> str:
        """Makes the caller the upload's only writer, and confirms what an older request still
        streaming wrote before it (when that request keeps a cut part: no Content-Digest). That
        request stops at its next chunk without confirming anything itself."""
        token = self.store.claim_upload(self.writer_key(upload_id))
        with self.lock_for(upload_id):
            older = self.streams.pop(upload_id, None)
            if older is not None and older["keeps"] and older["start"] + older["written"] > older["committed"]:
                fd = os.open(self.path_of(upload_id), os.O_WRONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                older["committed"] = older["start"] + older["written"]
                self.set_offset(upload_id, older["committed"])
        return token

    def path_of(self, upload_id: str) -> str:
        return os.path.join(self.store.upload_dir, "ietf-" + upload_id)

    def limit_header(self, interop: int, upload: dict | None = None) -> dict[str, str]:
        if interop < 6:
            return {}
        d = Dictionary()
        d["max-size"] = Item(self.limits.max_size)
        d["max-append-size"] = Item(self.limits.max_append_size)
        if self.limits.min_append_size:
            d["min-append-size"] = Item(self.limits.min_append_size)
        if upload is not None and upload["state"] == "active":
            d["expires" if interop == 6 else "max-age"] = Item(max(0, int(upload["expires_at"] - time.time())))
        return {"Upload-Limit": str(d)}

    def complete_header(self, interop: int, complete: bool) -> dict[str, str]:
        if interop == 3:
            return {"Upload-Incomplete": sf_bool_text(not complete)}
        return {"Upload-Complete": sf_bool_text(complete)}

    def request_complete(self, ex: Exchange, interop: int) -> bool | None:
        """The request's completeness flag in its interop version's field; None when absent.

        Interop 3 (-01) has `Upload-Incomplete`, and there a missing field means complete.
        """
        if interop == 3:
            incomplete = sf_boolean(ex.header("upload-incomplete"))
            return True if incomplete is None else not incomplete
        return sf_boolean(ex.header("upload-complete"))

    def refuse_state_fields(self, ex: Exchange, interop: int) -> None:
        """Interop 3 to 6: a HEAD or DELETE carrying Upload-Offset or the completeness field (or,
        from interop 6, Upload-Length) MUST be rejected with 400."""
        if interop > 6:
            return
        names = ["upload-offset", "upload-incomplete" if interop == 3 else "upload-complete"]
        if interop == 6:
            names.append("upload-length")
        present = [n for n in names if ex.header(n) is not None]
        if present:
            raise courier_problem(400, "unexpected-field", f"A {ex.method} must not carry {', '.join(present)}.")

    def interop_of(self, ex: Exchange) -> int | None:
        raw = ex.header("upload-draft-interop-version")
        if raw is None:
            return None
        version = sf_integer(raw)
        if version not in INTEROP_VERSIONS or version not in self.accepted:
            raise courier_problem(400, "unsupported-interop-version",
                                  f"Upload-Draft-Interop-Version {raw.strip()} is not supported.",
                                  supported=sorted(self.accepted))
        return version

    def note_version(self, upload_id: str, ex: Exchange) -> None:
        """Remembers the interop version a request for the upload named (test aid)."""
        version = sf_integer(ex.header("upload-draft-interop-version"))
        if version is not None:
            self.versions_seen.setdefault(upload_id, set()).add(version)

    def authorize(self, ex: Exchange) -> str:
        header = ex.header("authorization")
        token = None
        if header and header[:7].lower() == "bearer ":
            token = header[7:].strip()
        user = self.store.user_for_access_token(token) if token else None
        if user is None:
            raise courier_problem(401, "unauthorized",
                                  "Sign in first." if not header else "The access token is invalid or expired.",
                                  headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return user

    def load(self, upload_id: str, user: str, interop: int | None) -> dict:
        """The caller's upload; 404 unknown (or another user's); gone: 410, or 404 up to interop 6,
        whose text says an upload that is not active is 404."""
        upload = self.get(upload_id)
        if upload is None or upload["owner"] != user:
            raise courier_problem(404, "not-found", "No such upload.")
        if upload["state"] == "active" and upload["expires_at"] <= time.time():
            self.set_state(upload_id, "expired")
            _remove(self.path_of(upload_id))
            upload["state"] = "expired"
        if upload["state"] in ("cancelled", "expired", "invalid", "failed"):
            raise courier_problem(404 if (interop or upload["interop"]) <= 6 else 410, "upload-gone", {
                "cancelled": "The upload was cancelled.", "expired": "The upload expired; create a new one.",
                "invalid": "The upload went past its length and was deactivated.",
                "failed": "The upload's representation failed its Repr-Digest or could not be processed; create a"
                          " new one."}[upload["state"]],
                state=upload["state"])
        return upload

    # ------------------------------------------------------------ records
    def get(self, upload_id: str) -> dict | None:
        with self.store.lock:
            row = self.store.db.execute("SELECT * FROM ietf_uploads WHERE id=?", (upload_id,)).fetchone()
        return dict(row) if row else None

    def set_state(self, upload_id: str, state: str) -> None:
        with self.store._tx() as db:
            db.execute("UPDATE ietf_uploads SET state=? WHERE id=?", (state, upload_id))

    def set_length(self, upload_id: str, length: int) -> None:
        with self.store._tx() as db:
            db.execute("UPDATE ietf_uploads SET length=? WHERE id=? AND length IS NULL", (length, upload_id))

    def set_offset(self, upload_id: str, offset: int) -> None:
        """Called only once the file's bytes up to `offset` are fsynced."""
        with self.store._tx() as db:
            db.execute("UPDATE ietf_uploads SET upload_offset=?, expires_at=? WHERE id=? AND state='active'",
                       (offset, time.time() + self.store.config.tus_ttl, upload_id))

    def count_bytes(self, upload_id: str, n: int) -> None:
        self.store.count_upload_bytes(self.writer_key(upload_id), n)

    # ------------------------------------------------------------ answers
    def respond(self, ex: Exchange, status: int, headers: dict[str, str], body: bytes = b"",
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

    def respond_json(self, ex: Exchange, status: int, payload, headers: dict[str, str] | None = None,
                     content_type: str = "application/json; charset=utf-8") -> bool:
        body = json.dumps(payload).encode()
        return self.respond(ex, status, {"Content-Type": content_type, **(headers or {})}, body)

    def respond_problem(self, ex: Exchange, problem: Problem, extra: dict[str, str] | None = None) -> bool:
        body = json.dumps(problem.body).encode()
        headers = {"Content-Type": "application/problem+json", **(extra or {}), **problem.headers}
        return self.respond(ex, problem.status, headers, body)

    def handle(self, ex: Exchange) -> bool:
        self._sync_generation()
        try:
            return self.route(ex)
        except Problem as problem:
            if ex.conn.h11.our_state is not h11.SEND_RESPONSE:
                return False
            return self.respond_problem(ex, problem)
        except Disconnected:
            return False
        except Exception:
            log.exception("IETF upload server: unhandled error")
            if ex.conn.h11.our_state is not h11.SEND_RESPONSE:
                return False
            return self.respond_problem(ex, courier_problem(500, "internal-error",
                                                            "The server failed to handle the request."))

    def route(self, ex: Exchange) -> bool:
        """The draft's requests here; everything else goes to the main server (see `proxy`)."""
        if ex.path.startswith("/__ietf/"):
            return self.hooks(ex)
        if ex.path == "*" or (ex.path == "/photos" and ex.method == "OPTIONS"):
            return self.options(ex)
        if ex.path == "/photos" and ex.method == "POST" and any(ex.header(f) is not None for f in DRAFT_FIELDS):
            return self.create(ex)
        match = UPLOAD_PATH.match(ex.path)
        if match:
            upload_id = match.group(1)
            self.note_version(upload_id, ex)
            if ex.method == "HEAD":
                return self.head(ex, upload_id)
            if ex.method == "PATCH":
                return self.append(ex, upload_id)
            if ex.method == "DELETE":
                return self.cancel(ex, upload_id)
            if ex.method == "OPTIONS":
                return self.options(ex)
            raise courier_problem(405, "method-not-allowed", "Method not allowed for an upload resource.",
                                  headers={"Allow": "HEAD, PATCH, DELETE, OPTIONS"})
        if ex.path.startswith("/__") and not self.hooks_allowed(ex):
            raise courier_problem(404, "not-found", "No such resource.")
        return self.proxy(ex)

    # ------------------------------------------------------------ the rest of the API
    def upstream(self) -> tuple[str, int]:
        """The main server's address: COURIER_BACKEND_IETF_UPSTREAM (`host:port`), or else the
        other TCP port this process listens on (uvicorn's), found in /proc."""
        if self._upstream is None:
            raw = os.environ.get("COURIER_BACKEND_IETF_UPSTREAM", "").strip()
            if raw:
                host, _, port = raw.removeprefix("http://").rstrip("/").rpartition(":")
                self._upstream = (host or "127.0.0.1", int(port))
            else:
                ports = [p for p in own_listening_ports() if p != self.server.port]
                if not ports:
                    raise courier_problem(502, "no-upstream", "The main server is not listening (yet).")
                self._upstream = ("127.0.0.1", ports[0])
        return self._upstream

    def proxy(self, ex: Exchange) -> bool:
        """Passes a request that is not the draft's to the main server and streams its answer
        back: this port is then a whole base URL (auth, /photos, tus, hooks) plus the draft."""
        host, port = self.upstream()
        upstream = http.client.HTTPConnection(host, port, timeout=IDLE_TIMEOUT)
        try:
            try:
                upstream.putrequest(ex.method, ex.target, skip_host=True, skip_accept_encoding=True)
                for name, value in ex.raw_headers:
                    if name.lower() not in HOP_BY_HOP:
                        upstream.putheader(name, value)
                if ex.peer_host():
                    upstream.putheader("X-Forwarded-For", ex.peer_host())
                chunked = ex.chunked
                if ex.content_length is not None and not chunked:
                    upstream.putheader("Content-Length", str(ex.content_length))
                elif chunked:
                    upstream.putheader("Transfer-Encoding", "chunked")
                upstream.endheaders()
                for chunk in ex.chunks():
                    upstream.send(b"%x\r\n%b\r\n" % (len(chunk), chunk) if chunked else chunk)
                if chunked:
                    upstream.send(b"0\r\n\r\n")
                response = upstream.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                raise courier_problem(502, "upstream-failed", f"The main server did not answer: {exc}.")
            headers = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP - {"content-length"}]
            ex.conn.send(h11.Response(status_code=response.status, headers=headers,
                                      reason=(response.reason or "").encode("latin-1", "replace")))
            if ex.method != "HEAD":
                while True:
                    block = response.read1(READ_SIZE) if response.status not in (204, 304) else b""
                    if not block:
                        break
                    ex.conn.send(h11.Data(data=block))
            ex.conn.send(h11.EndOfMessage())
            return True  # h11 closes when the framing needs it (no length, an HTTP/1.0 client)
        finally:
            upstream.close()

    # ------------------------------------------------------------ OPTIONS
    def options(self, ex: Exchange) -> bool:
        interop = self.interop_of(ex) or CURRENT_INTEROP
        return self.respond(ex, 204, {"Accept-Patch": PARTIAL_UPLOAD, "Allow": "POST, HEAD, PATCH, DELETE, OPTIONS",
                                      **self.limit_header(max(interop, 6))})

    # ------------------------------------------------------------ writing bytes
    def receive(self, ex: Exchange, upload: dict, start: int, content_digest: dict[str, bytes] | None,
                token: str, interop: int, progress: bool, cap: int | None, over_cap: Callable[[], Problem]) -> int:
        """Streams the body into the upload's file from `start`; returns the confirmed offset.

        `cap` is the most bytes this request may carry (max-append-size, or what is left of the
        upload's length). Past it the request is refused with `over_cap()`; the bytes before the
        cap are kept as a cut request's would be (all or nothing with Content-Digest).
        """
        upload_id = upload["id"]
        key = self.writer_key(upload_id)
        lock = self.lock_for(upload_id)
        digests = Digests(content_digest) if content_digest else None
        fd = os.open(self.path_of(upload_id), os.O_WRONLY | os.O_CREAT, 0o600)
        written = 0
        committed = start
        announce: list[int] = []
        began = time.time()
        outcome = "error"

        stream = {"token": token, "start": start, "written": 0, "committed": start, "keeps": digests is None}

        def commit() -> None:  # under `lock`
            nonlocal committed
            os.fsync(fd)
            if start + written != committed:
                committed = start + written
                stream["committed"] = committed
                self.set_offset(upload_id, committed)
                if progress:
                    announce.append(committed)

        def announce_progress() -> None:  # not under `lock`: a slow client must not block a new request
            while announce:
                ex.interim(104, {"Upload-Offset": str(announce.pop(0)), "Upload-Draft-Interop-Version": str(interop)},
                           b"Upload Resumption Supported")

        try:
            with lock:
                if (self.get(upload_id) or {}).get("state") != "active":
                    raise Superseded()  # completed or cancelled since this request was checked
                os.ftruncate(fd, start)  # bytes past the confirmed offset were never confirmed
                os.lseek(fd, start, os.SEEK_SET)
                if self.store.owns_upload(key, token):
                    self.streams[upload_id] = stream
            try:
                for chunk in ex.chunks():
                    with lock:
                        # Counted under the lock: a takeover that sees the count sees the bytes.
                        self.count_bytes(upload_id, len(chunk))
                        if not self.store.owns_upload(key, token):
                            raise Superseded()
                        if cap is not None and written + len(chunk) > cap:
                            keep = cap - written
                            if digests is not None:
                                os.ftruncate(fd, start)
                            elif keep > 0:
                                self._write(fd, memoryview(chunk)[:keep])
                                written += keep
                                stream["written"] = written
                                commit()
                            raise over_cap()
                        self._write(fd, memoryview(chunk))
                        written += len(chunk)
                        stream["written"] = written
                        if digests is not None:
                            digests.update(chunk)
                        elif start + written - committed >= COMMIT_EVERY:
                            commit()
                    announce_progress()
            except Disconnected:
                outcome = "disconnected"
                with lock:
                    if digests is None and self.store.owns_upload(key, token):
                        commit()  # a request cut short keeps what arrived
                    else:
                        outcome = "disconnected, superseded"
                raise
            except Superseded:
                outcome = "superseded"
                ex.conn.reset = True
                raise
            with lock:
                if not self.store.owns_upload(key, token):
                    outcome = "superseded"
                    ex.conn.reset = True
                    raise Superseded()
                if digests is not None and not digests.matches(content_digest):
                    outcome = "digest mismatch"
                    os.ftruncate(fd, start)
                    raise courier_problem(400, "content-digest-mismatch",
                                          "Content-Digest does not match the content; nothing of it was kept.",
                                          headers={"Upload-Offset": str(start)})
                commit()
            outcome = "complete"
            announce.clear()  # the final answer carries the offset
            return committed
        finally:
            with lock:
                if self.streams.get(upload_id) is stream:
                    del self.streams[upload_id]
            os.close(fd)
            self.store.trace_upload(server="ietf", upload=upload_id, method=ex.method, start=start,
                                    length=ex.content_length, received=ex.body_bytes, written=written,
                                    kept=stream["committed"] - start, outcome=outcome, peer=list(ex.conn.peer)[1:2],
                                    began=round(began, 4))

    @staticmethod
    def _write(fd: int, view: memoryview) -> None:
        while view:
            n = os.write(fd, view)
            view = view[n:]

    def past_length(self, upload: dict) -> Callable[[], Problem]:
        def problem() -> Problem:
            # The draft: an offset past the known length deactivates the upload.
            self.set_state(upload["id"], "invalid")
            _remove(self.path_of(upload["id"]))
            return Problem(400, INCONSISTENT_LENGTH, "The content goes past the upload's length; the upload is"
                           " deactivated.")
        return problem

    def past_append_limit(self, upload: dict, interop: int) -> Callable[[], Problem]:
        return lambda: Problem(413, "about:blank", "The content goes past max-append-size (or the upload past"
                               " max-size).", headers=self.limit_header(max(interop, 6), upload))

    def capped(self, upload: dict, offset: int, interop: int) -> tuple[int, Callable[[], Problem]]:
        """The most bytes a request from `offset` may carry, and the problem past them."""
        cap = self.limits.max_append_size
        if upload["length"] is not None and upload["length"] - offset <= cap:
            return upload["length"] - offset, self.past_length(upload)
        if upload["length"] is None and self.limits.max_size - offset < cap:
            return max(0, self.limits.max_size - offset), self.past_append_limit(upload, interop)
        return cap, self.past_append_limit(upload, interop)

    def finish(self, upload: dict) -> dict:
        """The client said complete and every byte is here: the file becomes the photo. Idempotent."""
        upload_id = upload["id"]
        if upload["state"] == "completed":
            return upload
        path = self.path_of(upload_id)
        hasher = hashlib.sha256()
        extra = {a: DIGESTS[a]() for a in json.loads(upload["repr_digest"] or "{}")}
        size = 0
        with open(path, "rb") as fh:
            while True:
                block = fh.read(1024 * 1024)
                if not block:
                    break
                hasher.update(block)
                for h in extra.values():
                    h.update(block)
                size += len(block)
        expected = {a: base64.b64decode(v) for a, v in json.loads(upload["repr_digest"] or "{}").items()}
        if expected and any(extra[a].digest() != d for a, d in expected.items()):
            self.set_state(upload_id, "failed")
            _remove(path)
            raise courier_problem(400, "repr-digest-mismatch",
                                  "The uploaded bytes do not match the Repr-Digest sent at creation; the upload"
                                  " failed and was deleted.", headers={"Upload-Complete": "?1"})
        record = {"id": upload["photo_id"], "owner": upload["owner"], "title": upload["title"],
                  "filename": upload["filename"], "content_type": upload["content_type"], "size": size,
                  "sha256": hasher.hexdigest(), "created_at": now_rfc3339()}
        if is_multipart(upload["content_type"]):
            record = self.photo_from_form(upload, path, record)  # as POST /photos would have made it
        with self.lock_for(upload_id):  # a request that slipped in since sees the upload completed
            if not is_multipart(upload["content_type"]):
                os.replace(path, self.store.photo_path(upload["photo_id"]))
            _fsync_dir(self.store.photo_dir)
            with self.store._tx() as db:
                db.execute("INSERT OR IGNORE INTO photos(id, owner, title, filename, content_type, size, sha256,"
                           " created_at) VALUES (:id, :owner, :title, :filename, :content_type, :size, :sha256,"
                           " :created_at)", record)
                db.execute("UPDATE ietf_uploads SET state='completed', length=?, upload_offset=? WHERE id=?",
                           (size, size, upload_id))
        return {**upload, "state": "completed", "length": size, "upload_offset": size,
                "repr_sha256": hasher.hexdigest()}

    def photo_from_form(self, upload: dict, path: str, record: dict) -> dict:
        """A multipart/form-data representation (the body `POST /photos` takes on the main port) is
        processed as that route processes it: its `title` field and first `file` part, the same
        checks (an image type, COURIER_BACKEND_MAX_UPLOAD). A failure is final: the draft's
        "transferred, but processing failed" (`Upload-Complete: ?1`), and the upload is deleted."""
        from .app import MAX_TITLE as PHOTO_MAX_TITLE, PhotoParts  # app imports this module
        from .errors import ApiError
        from .multipart import MultipartError, parse_multipart

        async def chunks():
            with open(path, "rb") as fh:
                while block := fh.read(1024 * 1024):
                    yield block

        def fail(status: int, code: str, title: str) -> Problem:
            self.set_state(upload["id"], "failed")
            _remove(path)
            return courier_problem(status, code, title, headers={"Upload-Complete": "?1"})

        parts = PhotoParts(self.store, self.store.config.max_upload)
        try:
            asyncio.run(parse_multipart(upload["content_type"], chunks(), parts))
        except MultipartError as exc:
            parts.discard()
            raise fail(400, "bad-multipart", str(exc))
        except ApiError as exc:
            parts.discard()
            raise fail(exc.status, exc.code.replace("_", "-"), exc.message)
        if parts.file is None or parts.file_info is None:
            parts.discard()
            raise fail(422, "validation-failed", "A file part named 'file' is required.")
        if parts.title is None or len(parts.title.value) > PHOTO_MAX_TITLE:
            parts.discard()
            raise fail(422, "validation-failed", "A text field named 'title' is required, at most"
                       f" {PHOTO_MAX_TITLE} characters.")
        parts.file.end()
        os.replace(parts.file.path, self.store.photo_path(upload["photo_id"]))
        _remove(path)
        return {**record, "title": parts.title.value, "filename": parts.file_info.filename,
                "content_type": (parts.file_info.content_type or "").strip(), "size": parts.file.size,
                "sha256": parts.file.hasher.hexdigest()}

    def photo_answer(self, ex: Exchange, upload: dict, interop: int) -> bool:
        photo = self.store.get_photo(upload["photo_id"])
        url = f"{ex.base_url()}/photos/{upload['photo_id']}"
        payload = {"id": photo["id"], "url": url, "title": photo["title"], "filename": photo["filename"],
                   "content_type": photo["content_type"], "size": photo["size"], "sha256": photo["sha256"]}
        digest = base64.b64encode(bytes.fromhex(upload["repr_sha256"])).decode()
        return self.respond_json(ex, 201 if ex.method == "POST" else 200, payload, {
            **self.complete_header(interop, True), PHOTO_ID_HEADER: photo["id"],
            "Upload-Offset": str(upload["upload_offset"]), "Repr-Digest": f"sha-256=:{digest}:",
            "Content-Location": url})

    # ------------------------------------------------------------ creation
    def create(self, ex: Exchange) -> bool:
        interop = self.interop_of(ex)
        semantics = interop or CURRENT_INTEROP
        complete = self.request_complete(ex, semantics)
        # Interop 3 marks a creation by its version alone (no Upload-Incomplete: complete); later
        # ones by Upload-Complete. Without either this is a plain upload: the whole photo at once.
        resumable = complete is not None
        if not resumable:
            complete = True
        user = self.authorize(ex)
        title = ex.query.get("title", "")
        if len(title) > MAX_TITLE:
            raise courier_problem(422, "validation-failed", f"The title must be at most {MAX_TITLE} characters.")
        upload_length = sf_integer(ex.header("upload-length"))
        content_length = None if ex.chunked else ex.content_length
        length = upload_length
        if complete and content_length is not None:
            if length is not None and length != content_length:
                raise Problem(400, INCONSISTENT_LENGTH, "Upload-Length and Content-Length with Upload-Complete: ?1"
                              " disagree.", **{"upload-length": length, "content-length": content_length})
            length = content_length
        limits = self.limits
        if length is not None and length > limits.max_size:
            raise Problem(413, "about:blank", "The upload is larger than max-size.",
                          headers=self.limit_header(max(semantics, 6)))
        if content_length is not None and content_length > limits.max_append_size:
            raise Problem(413, "about:blank", "The content is larger than max-append-size.",
                          headers=self.limit_header(max(semantics, 6)))
        content_digest = parse_digest(ex.header("content-digest"), "Content-Digest")
        repr_digest = parse_digest(ex.header("repr-digest"), "Repr-Digest")
        content_type = (ex.header("content-type") or "").strip() or DEFAULT_CONTENT_TYPE

        upload_id = uuid.uuid4().hex
        upload = {"id": upload_id, "owner": user, "interop": semantics, "length": length, "upload_offset": 0,
                  "state": "active", "title": title,
                  "filename": content_disposition_filename(ex.header("content-disposition")),
                  "content_type": content_type, "photo_id": str(uuid.uuid4()),
                  "repr_digest": json.dumps({a: base64.b64encode(d).decode() for a, d in (repr_digest or {}).items()}),
                  "created_at": now_rfc3339(), "expires_at": time.time() + self.store.config.tus_ttl}
        with open(self.path_of(upload_id), "wb") as fh:
            os.fsync(fh.fileno())
        _fsync_dir(self.store.upload_dir)
        with self.store._tx() as db:
            db.execute("INSERT INTO ietf_uploads(id, owner, interop, length, upload_offset, state, title, filename,"
                       " content_type, photo_id, repr_digest, created_at, expires_at) VALUES (:id, :owner, :interop,"
                       " :length, :upload_offset, :state, :title, :filename, :content_type, :photo_id,"
                       " :repr_digest, :created_at, :expires_at)", upload)
        location = f"{ex.base_url()}/resumable/{upload_id}"
        self.note_version(upload_id, ex)
        if resumable and interop is not None:
            # The draft: announce the upload resource as soon as the request's header section is read.
            ex.interim(104, {"Location": location, "Upload-Draft-Interop-Version": str(interop),
                             **self.limit_header(interop, upload)}, b"Upload Resumption Supported")
        key = self.writer_key(upload_id)
        token = self.store.claim_upload(key)
        cap, over_cap = self.capped(upload, 0, semantics)
        try:
            offset = self.receive(ex, upload, 0, content_digest, token, semantics,
                                  progress=resumable and interop is not None and interop >= 5, cap=cap,
                                  over_cap=over_cap)
        except Superseded:
            return False  # a newer request took over; this client is gone
        except Problem as problem:
            if resumable:
                problem.headers.setdefault("Location", location)
            raise
        finally:
            self.store.release_upload(key, token)
        upload = self.get(upload_id) or upload
        if complete:
            if upload["length"] is not None and offset != upload["length"]:
                raise Problem(400, INCONSISTENT_LENGTH, "The content is shorter than the upload's length.",
                              headers={"Location": location} if resumable else {})
            upload = self.finish(upload)
            return self.photo_answer(ex, upload, semantics)
        return self.respond(ex, 201, {"Location": location, **self.complete_header(semantics, False),
                                      "Upload-Offset": str(offset), **self.limit_header(semantics, upload)})

    # ------------------------------------------------------------ offset retrieval
    def head(self, ex: Exchange, upload_id: str) -> bool:
        requested = self.interop_of(ex)
        user = self.authorize(ex)
        upload = self.load(upload_id, user, requested)
        interop = requested or upload["interop"]
        self.refuse_state_fields(ex, interop)
        key = self.writer_key(upload_id)
        token = self.take_over(upload_id)  # an older request still streaming stops here
        try:
            with self.lock_for(upload_id):
                upload = self.load(upload_id, user, interop)
        finally:
            self.store.release_upload(key, token)
        complete = upload["state"] == "completed"
        headers = {"Upload-Offset": str(upload["upload_offset"]), **self.complete_header(interop, complete),
                   "Cache-Control": "no-store", **self.limit_header(interop, upload),
                   "Courier-Bytes-Received": str(self.store.upload_bytes.get(key, 0))}
        if upload["length"] is not None:
            headers["Upload-Length"] = str(upload["length"])
        if complete:
            headers[PHOTO_ID_HEADER] = upload["photo_id"]
        return self.respond(ex, 204, headers)

    # ------------------------------------------------------------ append
    def append(self, ex: Exchange, upload_id: str) -> bool:
        requested = self.interop_of(ex)
        user = self.authorize(ex)
        upload = self.load(upload_id, user, requested)
        interop = requested or upload["interop"]
        media = (ex.header("content-type") or "").split(";", 1)[0].strip().lower()
        if interop >= 6 and media != PARTIAL_UPLOAD:
            raise courier_problem(415, "unsupported-media-type",
                                  f"An append needs Content-Type: {PARTIAL_UPLOAD}.", headers={"Accept-Patch": PARTIAL_UPLOAD})
        offset = sf_integer(ex.header("upload-offset"))
        if offset is None:
            raise courier_problem(400, "bad-upload-offset", "Upload-Offset must be a non-negative sf-integer.")
        complete = self.request_complete(ex, interop)
        if complete is None:
            name = "Upload-Incomplete" if interop == 3 else "Upload-Complete"
            raise courier_problem(400, "missing-upload-complete", f"An append needs {name} (?0 or ?1).")
        content_digest = parse_digest(ex.header("content-digest"), "Content-Digest")
        key = self.writer_key(upload_id)
        token = self.take_over(upload_id)  # from here on, an older request still running stops
        try:
            with self.lock_for(upload_id):
                upload = self.load(upload_id, user, interop)
            confirmed = upload["upload_offset"]
            content_length = None if ex.chunked else ex.content_length
            if upload["state"] == "completed":
                if ex.has_body:
                    raise Problem(400, INCONSISTENT_LENGTH, "The upload is complete; no content can be appended.")
                raise Problem(400, COMPLETED_UPLOAD, "The upload is already completed.",
                              headers={PHOTO_ID_HEADER: upload["photo_id"]})
            if offset != confirmed:
                raise Problem(409, MISMATCHING_OFFSET, "offset from request does not match offset of resource",
                              headers={"Upload-Offset": str(confirmed)},
                              **{"expected-offset": confirmed, "provided-offset": offset})
            length = upload["length"]
            declared = sf_integer(ex.header("upload-length"))
            if declared is not None and length is not None and declared != length:
                raise Problem(400, INCONSISTENT_LENGTH, "Upload-Length differs from the upload's length.",
                              **{"upload-length": length, "provided-length": declared})
            if complete and content_length is not None:
                implied = offset + content_length
                if (length is not None and implied != length) or (declared is not None and implied != declared):
                    raise Problem(400, INCONSISTENT_LENGTH, "Upload-Offset + Content-Length with Upload-Complete: ?1"
                                  " is not the upload's length.", **{"upload-length": length or declared,
                                                                     "implied-length": implied})
                declared = implied
            if length is None and declared is not None:
                if declared < confirmed:
                    raise Problem(400, INCONSISTENT_LENGTH, "Upload-Length is less than the bytes already stored.")
                if declared > self.limits.max_size:
                    raise Problem(413, "about:blank", "The upload is larger than max-size.",
                                  headers=self.limit_header(max(interop, 6), upload))
                self.set_length(upload_id, declared)
                upload["length"] = length = declared
            if content_length is not None:
                if length is not None and offset + content_length > length:
                    raise Problem(400, INCONSISTENT_LENGTH, "The content goes past the upload's length.",
                                  **{"upload-length": length})
                if content_length > self.limits.max_append_size:
                    raise Problem(413, "about:blank", "The content is larger than max-append-size.",
                                  headers=self.limit_header(max(interop, 6), upload))
            cap, over_cap = self.capped(upload, offset, interop)
            try:
                new_offset = self.receive(ex, upload, offset, content_digest, token, interop,
                                          progress=interop >= 5, cap=cap, over_cap=over_cap)
            except Superseded:
                return False
            upload = self.get(upload_id) or upload
            if complete:
                if upload["length"] is not None and new_offset != upload["length"]:
                    raise Problem(400, INCONSISTENT_LENGTH, "Upload-Complete: ?1, but the upload's length is not"
                                  " reached.", **{"upload-length": upload["length"], "offset": new_offset})
                upload = self.finish(upload)
                return self.photo_answer(ex, upload, interop)
            # Up to interop 6 an append that does not complete is answered 201 (the text says so).
            return self.respond(ex, 201 if interop <= 6 else 204, {
                **self.complete_header(interop, False), "Upload-Offset": str(new_offset),
                **self.limit_header(interop, upload)})
        finally:
            self.store.release_upload(key, token)

    # ------------------------------------------------------------ cancellation
    def cancel(self, ex: Exchange, upload_id: str) -> bool:
        requested = self.interop_of(ex)
        user = self.authorize(ex)
        upload = self.load(upload_id, user, requested)
        self.refuse_state_fields(ex, requested or upload["interop"])
        if upload["state"] == "completed":
            raise Problem(400, COMPLETED_UPLOAD, "The upload is completed: it is the photo in Courier-Photo-Id.",
                          headers={PHOTO_ID_HEADER: upload["photo_id"]})
        key = self.writer_key(upload_id)
        token = self.take_over(upload_id)  # a request still streaming stops
        try:
            with self.lock_for(upload_id):
                self.set_state(upload_id, "cancelled")
                _remove(self.path_of(upload_id))
        finally:
            self.store.release_upload(key, token)
        return self.respond(ex, 204, {})

    # ------------------------------------------------------------ test hooks
    def hooks_allowed(self, ex: Exchange) -> bool:
        """The main server's rule for `/__*` hooks, applied to the client of this port (the main
        server sees every proxied request coming from loopback)."""
        mode = self.store.settings.hooks
        try:
            loopback = ipaddress.ip_address(ex.peer_host().split("%", 1)[0]).is_loopback
        except ValueError:
            loopback = False
        return mode == "all" or (mode == "loopback" and loopback)

    def hooks(self, ex: Exchange) -> bool:
        if not self.hooks_allowed(ex):
            raise courier_problem(404, "not-found", "No such resource.")
        if ex.path == "/__ietf/uploads" and ex.method == "GET":
            with self.store.lock:
                rows = [dict(r) for r in self.store.db.execute(
                    "SELECT * FROM ietf_uploads ORDER BY created_at, id").fetchall()]
            return self.respond_json(ex, 200, [{
                "id": r["id"], "owner": r["owner"], "interop": r["interop"], "length": r["length"],
                "offset": r["upload_offset"], "state": r["state"], "photo_id": r["photo_id"], "title": r["title"],
                "filename": r["filename"], "versions": sorted(self.versions_seen.get(r["id"], ())),
                "bytes_received": self.store.upload_bytes.get(self.writer_key(r["id"]), 0),
                "writing": self.writer_key(r["id"]) in self.store.upload_writers} for r in rows])
        if ex.path == "/__ietf/config" and ex.method in ("GET", "POST"):
            if ex.method == "POST":
                raw = b"".join(ex.chunks())
                try:
                    body = json.loads(raw or b"{}")
                    if not isinstance(body, dict):
                        raise ValueError
                    values = {}
                    accepted = body.get("interop_versions", sorted(self.accepted))
                    if not isinstance(accepted, list) or any(
                            isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in accepted):
                        raise ValueError
                    for name in ("max_size", "max_append_size", "min_append_size"):
                        if name in body:
                            v = body[name]
                            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                                raise ValueError
                            values[name] = v
                except ValueError:
                    raise courier_problem(400, "bad-request", "Send {\"max_size\", \"max_append_size\","
                                          " \"min_append_size\"}: non-negative integers, and"
                                          " \"interop_versions\": a list of them.")
                for name, v in values.items():
                    setattr(self.limits, name, v)
                self.accepted = set(accepted)
            return self.respond_json(ex, 200, {"max_size": self.limits.max_size,
                                               "max_append_size": self.limits.max_append_size,
                                               "min_append_size": self.limits.min_append_size,
                                               "interop_versions": sorted(self.accepted)})
        raise courier_problem(404, "not-found", "No such hook.")
