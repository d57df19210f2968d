"""Same requests, two backends: is a refactoring of courier_backend/ invisible on the wire?

    Backend/.venv/bin/python Backend/tests/compare_trees.py OLD_TREE NEW_TREE

starts each tree's backend (uvicorn plus the IETF draft's port, a fresh data dir each) and sends
both the same sequence: the IETF draft at interop 3 to 8 (creation, HEAD, PATCH with a wrong
offset, a wrong Content-Digest, past the length, completion, DELETE, Repr-Digest, no token, a
method not allowed), multipart bodies to /photos and /upload on the main port and to the IETF
port, the /__ietf hooks and /__reset. It prints every answer (status, header fields in order,
body; ids, ports and times normalised) that differs, and exits 1 when any does. Not collected
by pytest (it needs two trees); Docs/testing.md says when to run it.
"""
import base64
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import httpx

PY = sys.executable
WORK = tempfile.mkdtemp(prefix="courier-compare-")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tree, tag, port):
    data = os.path.join(WORK, f"data-{tag}")
    os.makedirs(data)
    pf = os.path.join(WORK, f"port-{tag}")
    env = {**os.environ, "COURIER_BACKEND_DATA": data, "COURIER_BACKEND_IETF_PORT": "0",
           "COURIER_BACKEND_IETF_PORT_FILE": pf}
    p = subprocess.Popen([PY, "-m", "uvicorn", "courier_backend.app:app", "--app-dir", f"{tree}/Backend", "--port",
                          str(port), "--log-level", "warning"], cwd=f"{tree}/Backend", env=env,
                         stdout=open(os.path.join(WORK, f"{tag}.log"), "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise SystemExit(f"{tag}: the server exited ({os.path.join(WORK, tag + '.log')})")
        try:
            if os.path.exists(pf) and httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                return p, int(open(pf).read())
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # polling for the server to listen, bounded by the deadline
    p.terminate()
    raise SystemExit(f"{tag} did not start within 30 s")


def norm(s):
    """Ids, ports and times made the same in both runs."""
    s = re.sub(r"[0-9a-f]{32}", "<UPLOAD>", s)
    s = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<UUID>", s)
    s = re.sub(r"127\.0\.0\.1:\d+", "<HOST>", s)
    s = re.sub(r"(max-age|expires)=\d+", r"\1=<N>", s)
    s = re.sub(r'"(created_at|updated_at|expires_at|access_token|refresh_token)": ?"[^"]*"', r'"\1":"<X>"', s)
    return s

def run(port, ietf):
    """Sends the sequence to a backend (main port, IETF port); returns its normalised answers."""
    out = []
    c = httpx.Client(base_url=f"http://127.0.0.1:{ietf}", timeout=30)
    tok = c.post("/auth/token", json={"username": "alice", "password": "secret"}).json()["access_token"]
    A = {"Authorization": f"Bearer {tok}"}

    def rec(r):
        hs = [(k.decode(), norm(v.decode())) for k, v in r.headers.raw if k.lower() not in (b"date", b"server")]
        out.append((r.request.method, norm(str(r.request.url)), r.status_code, hs, norm(r.text)))
        return r

    data = bytes(range(256)) * 40

    def sha(b):
        return base64.b64encode(hashlib.sha256(b).digest()).decode()

    for v in (3, 4, 5, 6, 7, 8):
        V = {"Upload-Draft-Interop-Version": str(v)}
        inc = {"Upload-Incomplete": "?1"} if v == 3 else {"Upload-Complete": "?0"}
        fin = {"Upload-Incomplete": "?0"} if v == 3 else {"Upload-Complete": "?1"}
        P = {"Content-Type": "application/partial-upload"} if v >= 6 else {}
        rec(c.options("/photos", headers=V))
        r = rec(c.post("/photos?title=t", headers={**A, **V, **inc}, content=data[:3000]))
        loc = r.headers.get("location")
        rec(c.head(loc, headers={**A, **V}))
        rec(c.head(loc, headers={**A, **V, "Upload-Offset": "1"}))
        rec(c.patch(loc, headers={**A, **V, **P, **fin, "Upload-Offset": "5"}, content=data[3000:]))
        rec(c.patch(loc, headers={**A, **V, **P, **inc, "Upload-Offset": "3000"}, content=data[3000:6000]))
        rec(c.patch(loc, headers={**A, **V, **fin, "Upload-Offset": "6000"}, content=data[6000:]))
        rec(c.patch(loc, headers={**A, **V, **P, **fin, "Upload-Offset": "6000",
                                  "Content-Digest": "sha-256=:" + sha(b"x") + ":"}, content=data[6000:]))
        rec(c.patch(loc, headers={**A, **V, **P, **fin, "Upload-Offset": "6000"}, content=data[6000:]))
        rec(c.patch(loc, headers={**A, **V, **P, **fin, "Upload-Offset": "6000"}, content=b""))
        rec(c.head(loc, headers={**A, **V}))
        rec(c.delete(loc, headers={**A, **V}))
        r = rec(c.post("/photos?title=t", headers={**A, **V, **inc, "Upload-Length": "10"}, content=b"abc"))
        loc2 = r.headers.get("location")
        rec(c.patch(loc2, headers={**A, **V, **P, **inc, "Upload-Offset": "3"}, content=b"0123456789"))
        rec(c.head(loc2, headers={**A, **V}))
        r = rec(c.post("/photos?title=t", headers={**A, **V, **inc}, content=b"ab"))
        rec(c.delete(r.headers["location"], headers={**A, **V}))
        rec(c.head(r.headers["location"], headers={**A, **V}))
        rec(c.post("/photos?title=t", headers={**A, **V, **fin, "Repr-Digest": "sha-256=:" + sha(data) + ":"},
                   content=data))
        rec(c.post("/photos?title=t", headers={**A, **V, **fin, "Repr-Digest": "sha-256=:" + sha(b"") + ":"},
                   content=data))
        rec(c.post("/photos?title=t", headers={**A, **V, **fin, "Content-Digest": "md5=:AAAA:"}, content=data))
        rec(c.post("/photos?title=t", headers={**V, **fin}, content=data))
        rec(c.put(loc, headers={**A, **V}))
    rec(c.post("/photos", headers={**A, "Upload-Draft-Interop-Version": "99", "Upload-Complete": "?1"}, content=b"x"))
    rec(c.post("/photos", headers={**A, "Upload-Draft-Interop-Version": "x", "Upload-Complete": "?1"}, content=b"x"))
    rec(c.post("/photos?title=" + "x" * 201, headers={**A, "Upload-Complete": "?1"}, content=b"x"))
    m = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    B = "b0undary"
    def form(parts):
        body = b""
        for name, fn, ct, val in parts:
            body += f"--{B}\r\nContent-Disposition: form-data; name=\"{name}\"".encode()
            if fn: body += f"; filename=\"{fn}\"".encode()
            body += b"\r\n"
            if ct: body += f"Content-Type: {ct}\r\n".encode()
            body += b"\r\n" + val + b"\r\n"
        return body + f"--{B}--\r\n".encode()
    FT = {"Content-Type": f"multipart/form-data; boundary={B}"}
    for parts in ([("title", None, None, b"hello"), ("file", "a.jpg", "image/jpeg", data)],
                  [("title", None, None, b"hello"), ("file", "a.txt", "text/plain", data)],
                  [("title", None, None, b"x" * (1024 * 1024 + 1)), ("file", "a.jpg", "image/jpeg", data)],
                  [("file", "a.jpg", "image/jpeg", data)],
                  [("title", None, None, b"t" * 201), ("file", "a.jpg", "image/jpeg", data)]):
        rec(m.post("/photos", headers={**A, **FT}, content=form(parts)))
        rec(m.post("/upload", headers=FT, content=form(parts)))
        rec(c.post("/photos", headers={**A, **FT, "Upload-Draft-Interop-Version": "8", "Upload-Complete": "?1"},
                   content=form(parts)))
    rec(c.post("/photos", headers={**A, **FT, "Upload-Complete": "?1"}, content=b"garbage"))
    rec(m.post("/photos", headers={**A, **FT}, content=b"garbage"))
    rec(c.get("/__ietf/uploads"))
    rec(c.get("/__ietf/config"))
    rec(c.post("/__ietf/config", json={"max_size": 5000, "max_append_size": 2000, "interop_versions": [7, 8]}))
    rec(c.post("/__ietf/config", json={"max_size": -1}))
    rec(c.options("/photos", headers={"Upload-Draft-Interop-Version": "6"}))
    rec(c.post("/photos?title=t", headers={**A, "Upload-Complete": "?1"}, content=data))
    rec(c.post("/photos?title=t", headers={**A, "Upload-Complete": "?0"}, content=b"1" * 2500))
    rec(c.get("/__ietf/nope"))
    rec(c.get("/photos", headers=A))
    rec(c.get("/health"))
    rec(c.post("/__reset"))
    rec(c.get("/__ietf/config"))
    return out

def main() -> int:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    results = {}
    for tag, tree in (("old", sys.argv[1]), ("new", sys.argv[2])):
        port = free_port()
        p, ietf = start(os.path.abspath(tree), tag, port)
        try:
            results[tag] = run(port, ietf)
        finally:
            p.terminate()
            p.wait(10)
    a, b = results["old"], results["new"]
    bad = 0
    for x, y in zip(a, b):
        if x != y:
            bad += 1
            print("DIFF\n old", x, "\n new", y)
    if len(a) != len(b):
        bad += 1
    print(f"requests: {len(a)} and {len(b)}; answers that differ: {bad}")
    shutil.rmtree(WORK)  # kept (servers' logs, data dirs) only when a server failed to start
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
