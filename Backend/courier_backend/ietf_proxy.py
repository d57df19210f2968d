"""The IETF upload port passes every request that is not the draft's to the main server.

So this port is a whole base URL (auth, /photos, tus, hooks) plus the draft: `proxy` sends the
request on to uvicorn (hop-by-hop fields dropped, `X-Forwarded-For` added) and streams its answer
back. `find_upstream` finds uvicorn: COURIER_BACKEND_IETF_UPSTREAM, or else the other TCP port this
process listens on (`own_listening_ports`, from /proc). Part of courier_backend/ietf.py's server.
"""

from __future__ import annotations

import http.client
import os

import h11

from .ietf_h11 import IDLE_TIMEOUT, READ_SIZE, Exchange
from .ietf_problems import courier_problem

# Hop-by-hop fields a proxy does not pass on (RFC 9110, 7.6.1), and Expect (answered here).
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
              "expect", "content-length"}


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


def find_upstream(own_port: int) -> tuple[str, int]:
    """The main server's address: COURIER_BACKEND_IETF_UPSTREAM (`host:port`), or else the
    other TCP port this process listens on (uvicorn's), found in /proc."""
    raw = os.environ.get("COURIER_BACKEND_IETF_UPSTREAM", "").strip()
    if raw:
        host, _, port = raw.removeprefix("http://").rstrip("/").rpartition(":")
        return (host or "127.0.0.1", int(port))
    ports = [p for p in own_listening_ports() if p != own_port]
    if not ports:
        raise courier_problem(502, "no-upstream", "The main server is not listening (yet).")
    return ("127.0.0.1", ports[0])


def proxy(ex: Exchange, upstream_address: tuple[str, int]) -> bool:
    """Passes a request that is not the draft's to the main server and streams its answer
    back: this port is then a whole base URL (auth, /photos, tus, hooks) plus the draft."""
    host, port = upstream_address
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
