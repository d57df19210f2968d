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

The server is split by job; this module starts it and keeps the names other code imports:

- ietf.py (here): `IetfServer` (the listening socket and its accept loop) and `start_from_env`.
- ietf_h11.py: HTTP/1.1 with h11: a connection's request loop, an `Exchange`, the answers sent.
- ietf_handlers.py: `IetfApp`, the draft's requests (create, HEAD, PATCH, DELETE, OPTIONS) and
  the `/__ietf/` test hooks.
- ietf_uploads.py: an upload's record and file, streaming bytes into it, the photo it becomes.
- ietf_interop.py: what differs between interop versions 3 to 8, and `Upload-Limit`.
- ietf_fields.py: structured fields (http-sfv), digests, Content-Disposition.
- ietf_problems.py: problem details (RFC 9457).
- ietf_proxy.py: every other request passed on to the main server.
"""

from __future__ import annotations

import os
import socket
import threading

from .ietf_fields import DIGESTS, Digests, parse_digest, sf_bool_text, sf_boolean, sf_integer
from .ietf_h11 import DRAIN_LIMIT, IDLE_TIMEOUT, READ_SIZE, Connection, Disconnected, Exchange
from .ietf_handlers import (DEFAULT_CONTENT_TYPE, DRAFT_FIELDS, MAX_TITLE, PARTIAL_UPLOAD, PHOTO_ID_HEADER,
                            UPLOAD_PATH, IetfApp)
from .ietf_interop import CURRENT_INTEROP, INTEROP_VERSIONS, Limits
from .ietf_problems import (COMPLETED_UPLOAD, INCONSISTENT_LENGTH, MISMATCHING_OFFSET, PROBLEM_BASE, Problem,
                            courier_problem)
from .ietf_proxy import HOP_BY_HOP, own_listening_ports
from .ietf_uploads import COMMIT_EVERY, Superseded
from .store import Store

__all__ = [
    "IetfServer", "start_from_env", "IetfApp", "Exchange", "Connection", "Disconnected", "Superseded", "Problem",
    "courier_problem", "Limits", "Digests", "parse_digest", "sf_integer", "sf_boolean", "sf_bool_text",
    "own_listening_ports", "INTEROP_VERSIONS", "CURRENT_INTEROP", "PARTIAL_UPLOAD", "PROBLEM_BASE",
    "MISMATCHING_OFFSET", "COMPLETED_UPLOAD", "INCONSISTENT_LENGTH", "COMMIT_EVERY", "READ_SIZE", "IDLE_TIMEOUT",
    "DRAIN_LIMIT", "PHOTO_ID_HEADER", "DEFAULT_CONTENT_TYPE", "MAX_TITLE", "DIGESTS", "UPLOAD_PATH", "HOP_BY_HOP",
    "DRAFT_FIELDS",
]


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
