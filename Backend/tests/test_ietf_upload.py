"""The IETF resumable uploads server (Docs/ietf-upload.md), checked against the draft's requirements.

Each test names the draft's rule it checks (draft-ietf-httpbis-resumable-upload, the editor's
copy after -11, interop version 8, unless a test says which older version it speaks).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
import httpx
import pytest

from conftest import BACKEND_DIR, login, start_server, stop_server
from multipart_util import body as multipart_body
from multipart_util import content_type as multipart_type
from multipart_util import part

V8 = {"Upload-Draft-Interop-Version": "8"}
PARTIAL = {"Content-Type": "application/partial-upload"}
MISMATCH = "https://iana.org/assignments/http-problem-types#mismatching-upload-offset"
INCONSISTENT = "https://iana.org/assignments/http-problem-types#inconsistent-upload-length"
COMPLETED = "https://iana.org/assignments/http-problem-types#completed-upload"


class Ietf:
    def __init__(self, server, port: int) -> None:
        self.server = server
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def ietf(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ietf")
    port_file = tmp / "ietf-port"
    server = start_server(tmp, {"COURIER_BACKEND_IETF_PORT": "0", "COURIER_BACKEND_IETF_PORT_FILE": str(port_file)})
    try:
        deadline = time.monotonic() + 10
        while not port_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        yield Ietf(server, int(port_file.read_text()))
    finally:
        stop_server(server.process)


@pytest.fixture
def main(ietf):
    with httpx.Client(base_url=ietf.server.base_url, timeout=30) as c:
        assert c.post("/__reset").status_code == 200
        yield c


@pytest.fixture
def client(ietf, main):
    with httpx.Client(base_url=ietf.base_url, timeout=30) as c:
        yield c


@pytest.fixture
def auth(main) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(main)['access_token']}"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def problem(r: httpx.Response, status: int, type_: str) -> dict:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["type"] == type_ and body["status"] == status and body["title"], body
    return body


def create_empty(client, auth, extra: dict | None = None) -> str:
    """Careful creation: Upload-Complete: ?0 without content; the 201's Location is the upload."""
    r = client.post("/photos?title=Trip", headers={**auth, **V8, "Upload-Complete": "?0", **(extra or {})})
    assert r.status_code == 201, r.text
    assert r.headers["upload-complete"] == "?0"
    assert r.headers["upload-offset"] == "0"
    return r.headers["location"]


def append(client, auth, url: str, offset: int, data: bytes, complete: bool, extra: dict | None = None):
    return client.patch(url, headers={**auth, **V8, **PARTIAL, "Upload-Offset": str(offset),
                                      "Upload-Complete": "?1" if complete else "?0", **(extra or {})}, content=data)


def head(client, auth, url: str) -> httpx.Response:
    return client.head(url, headers={**auth, **V8})


# ---------------------------------------------------------------------- raw HTTP/1.1
class Raw:
    """A socket speaking HTTP/1.1 by hand, to see interim responses and when they come."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request_head(self, method: str, target: str, headers: dict[str, str]) -> None:
        lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"] + [f"{k}: {v}" for k, v in headers.items()]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def response(self) -> tuple[int, dict[str, str], bytes]:
        """The next response (interim or final): status, headers (lower-case names), body."""
        while b"\r\n\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError(f"connection closed; buffered: {self.buffer!r}")
            self.buffer += data
        head_bytes, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head_bytes.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        if status >= 200:
            length = int(headers.get("content-length", "0"))
            while len(self.buffer) < length:
                data = self.sock.recv(65536)
                if not data:
                    break
                self.buffer += data
            body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def final(self) -> tuple[list[tuple[int, dict]], int, dict[str, str], bytes]:
        """Interim responses in order, then the final one."""
        interims = []
        while True:
            status, headers, body = self.response()
            if status >= 200:
                return interims, status, headers, body
            interims.append((status, headers))

    def close(self) -> None:
        self.sock.close()


# ---------------------------------------------------------------------- discovery
def test_the_config_hook_lists_the_interop_versions(client):
    r = client.get("/__ietf/config")
    assert r.status_code == 200
    assert r.json()["interop_versions"] == [3, 4, 5, 6, 7, 8]


def test_options_advertises_partial_upload_and_limits(client):
    # OPTIONS: Accept-Patch MUST include application/partial-upload; Upload-Limit SHOULD be there.
    r = client.options("/photos")
    assert r.status_code == 204
    assert "application/partial-upload" in r.headers["accept-patch"]
    assert "max-size=" in r.headers["upload-limit"] and "max-append-size=" in r.headers["upload-limit"]


# ---------------------------------------------------------------------- creation and 104
def test_104_with_location_arrives_before_the_content_is_sent(ietf, auth):
    # Upload creation: the server SHOULD send 104 with Location (and Upload-Limit) once it created
    # the resource; interop: the 104 MUST carry Upload-Draft-Interop-Version.
    data = os.urandom(200_000)
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos?title=Raw", {**auth, **V8, "Upload-Complete": "?1",
                                                       "Content-Length": str(len(data))})
        status, headers, _ = raw.response()  # not one byte of content sent yet
        assert status == 104
        assert headers["location"].startswith(ietf.base_url + "/resumable/")
        assert headers["upload-draft-interop-version"] == "8"
        assert "max-size=" in headers["upload-limit"] and "max-age=" in headers["upload-limit"]
        raw.send(data)
        interims, status, final_headers, body = raw.final()
        assert all(code == 104 for code, _ in interims)
        assert status == 201
        assert final_headers["upload-complete"] == "?1"
        assert final_headers["upload-offset"] == str(len(data))
        assert final_headers["repr-digest"] == f"sha-256=:{base64.b64encode(hashlib.sha256(data).digest()).decode()}:"
        assert json.loads(body)["sha256"] == sha(data)
    finally:
        raw.close()


def test_104_progress_offsets_are_confirmed_and_increasing(ietf, auth):
    # While processing content the server MAY send 104 with Upload-Offset: only confirmed bytes.
    data = os.urandom(3 * 1024 * 1024 + 5)
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos?title=P", {**auth, **V8, "Upload-Complete": "?1",
                                                     "Content-Length": str(len(data))})
        raw.send(data)
        interims, status, headers, _ = raw.final()
        assert status == 201
        assert "location" in interims[0][1]
        offsets = [int(h["upload-offset"]) for code, h in interims[1:] if code == 104]
        assert offsets and offsets == sorted(offsets) and offsets[-1] < len(data)
        assert all("location" not in h for _, h in interims[1:])  # progress 104s carry no Location
        assert all(h["upload-draft-interop-version"] == "8" for _, h in interims)
    finally:
        raw.close()


def test_no_104_without_an_interop_version(ietf, auth):
    # Draft servers MUST NOT send 104 when Upload-Draft-Interop-Version is missing.
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos?title=x", {**auth, "Upload-Complete": "?1", "Content-Length": "5"})
        raw.send(b"hello")
        interims, status, headers, _ = raw.final()
        assert interims == [] and status == 201 and headers["upload-complete"] == "?1"
    finally:
        raw.close()


def test_an_unknown_interop_version_is_refused(client, auth):
    for version in ("2", "9", "abc"):
        r = client.post("/photos", headers={**auth, "Upload-Draft-Interop-Version": version, "Upload-Complete": "?1"},
                        content=b"x")
        body = problem(r, 400, "urn:courier:problem:unsupported-interop-version")
        assert body["supported"] == [3, 4, 5, 6, 7, 8]


def test_the_versions_accepted_can_be_narrowed_and_each_uploads_versions_are_listed(client, main, auth):
    # A test aid (Docs/ietf-upload.md): the server takes only some versions, or only ones it does
    # not implement; /__reset takes all again. The hook lists the versions each upload's requests named.
    assert client.post("/__ietf/config", json={"interop_versions": [3, 4]}).json()["interop_versions"] == [3, 4]
    r = client.post("/photos", headers={**auth, **V8, "Upload-Complete": "?1"}, content=b"x")
    assert problem(r, 400, "urn:courier:problem:unsupported-interop-version")["supported"] == [3, 4]
    r = client.post("/photos?title=v4", headers={**auth, "Upload-Draft-Interop-Version": "4",
                                                 "Upload-Complete": "?0"}, content=b"ab")
    assert r.status_code == 201, r.text
    assert client.head(r.headers["location"], headers={**auth, "Upload-Draft-Interop-Version": "4"}).status_code == 204
    assert client.get("/__ietf/uploads").json()[0]["versions"] == [4]
    client.post("/__ietf/config", json={"interop_versions": [9]})
    r = client.post("/photos", headers={**auth, "Upload-Draft-Interop-Version": "9", "Upload-Complete": "?1"},
                    content=b"x")
    assert problem(r, 400, "urn:courier:problem:unsupported-interop-version")["supported"] == [9]
    assert client.post("/__ietf/config", json={"interop_versions": "3"}).status_code == 400
    assert main.post("/__reset").status_code == 200
    assert client.get("/__ietf/config").json()["interop_versions"] == [3, 4, 5, 6, 7, 8]


def test_creation_needs_a_token(client, auth):
    r = client.post("/photos", headers={**V8, "Upload-Complete": "?1"}, content=b"x")
    problem(r, 401, "urn:courier:problem:unauthorized")
    assert r.headers["www-authenticate"] == 'Bearer error="invalid_token"'


def test_an_upload_is_its_owners_only(client, auth, main):
    url = create_empty(client, auth)
    other = {"Authorization": f"Bearer {login(main, 'bob')['access_token']}"}
    assert head(client, other, url).status_code == 404
    problem(append(client, other, url, 0, b"x", False), 404, "urn:courier:problem:not-found")


# ---------------------------------------------------------------------- offset retrieval and append
def test_careful_creation_appends_and_completes_into_a_photo(client, auth, main):
    data = os.urandom(300_000)
    url = create_empty(client, auth, {"Upload-Length": str(len(data))})
    r = head(client, auth, url)
    # HEAD: MUST carry Upload-Offset, Upload-Complete, Upload-Length (known), Upload-Limit; SHOULD no-store.
    assert r.status_code == 204
    assert r.headers["upload-offset"] == "0" and r.headers["upload-complete"] == "?0"
    assert r.headers["upload-length"] == str(len(data)) and "max-age=" in r.headers["upload-limit"]
    assert r.headers["cache-control"] == "no-store"
    r = append(client, auth, url, 0, data[:100_000], False)
    assert r.status_code == 204 and r.headers["upload-complete"] == "?0" and r.headers["upload-offset"] == "100000"
    assert head(client, auth, url).headers["upload-offset"] == "100000"
    r = append(client, auth, url, 100_000, data[100_000:], True)
    assert r.status_code == 200, r.text
    assert r.headers["upload-complete"] == "?1"
    photo = r.json()
    assert photo["sha256"] == sha(data) and photo["size"] == len(data) and photo["title"] == "Trip"
    assert r.headers["courier-photo-id"] == photo["id"]
    done = head(client, auth, url)
    assert done.headers["upload-complete"] == "?1" and done.headers["courier-photo-id"] == photo["id"]
    # The same store: the main server lists and serves the photo.
    assert [p["id"] for p in main.get("/photos", headers=auth).json()] == [photo["id"]]
    assert main.get(f"/photos/{photo['id']}", headers=auth).content == data
    assert client.get(f"/photos/{photo['id']}", headers=auth).content == data


def test_a_wrong_offset_is_409_with_problem_details(client, auth):
    url = create_empty(client, auth)
    assert append(client, auth, url, 0, b"abcde", False).status_code == 204
    r = append(client, auth, url, 3, b"zz", False)
    body = problem(r, 409, MISMATCH)
    assert body["expected-offset"] == 5 and body["provided-offset"] == 3
    assert r.headers["upload-offset"] == "5"
    assert head(client, auth, url).headers["upload-offset"] == "5"


def test_append_needs_the_partial_upload_media_type_and_the_fields(client, auth):
    url = create_empty(client, auth)
    r = client.patch(url, headers={**auth, **V8, "Content-Type": "application/offset+octet-stream",
                                   "Upload-Offset": "0", "Upload-Complete": "?0"}, content=b"x")
    problem(r, 415, "urn:courier:problem:unsupported-media-type")
    r = client.patch(url, headers={**auth, **V8, **PARTIAL, "Upload-Complete": "?0"}, content=b"x")
    problem(r, 400, "urn:courier:problem:bad-upload-offset")
    r = client.patch(url, headers={**auth, **V8, **PARTIAL, "Upload-Offset": "0"}, content=b"x")
    problem(r, 400, "urn:courier:problem:missing-upload-complete")
    assert head(client, auth, url).headers["upload-offset"] == "0"


def test_over_the_limits_is_413_with_upload_limit(client, auth):
    assert client.post("/__ietf/config", json={"max_size": 1000, "max_append_size": 100}).status_code == 200
    r = client.post("/photos", headers={**auth, **V8, "Upload-Complete": "?1"}, content=b"x" * 1001)
    assert r.status_code == 413 and "max-size=1000" in r.headers["upload-limit"]
    url = create_empty(client, auth)
    r = append(client, auth, url, 0, b"y" * 101, False)
    assert r.status_code == 413 and "max-append-size=100" in r.headers["upload-limit"]
    assert head(client, auth, url).headers["upload-offset"] == "0"
    assert append(client, auth, url, 0, b"y" * 100, False).status_code == 204
    r = append(client, auth, url, 100, b"y" * 50, True)
    assert r.status_code == 200 and r.json()["size"] == 150


def test_the_limits_come_back_after_reset(client, main):
    client.post("/__ietf/config", json={"max_append_size": 7})
    main.post("/__reset")
    assert client.get("/__ietf/config").json()["max_append_size"] > 7


def test_inconsistent_lengths_are_refused(client, auth):
    r = client.post("/photos", headers={**auth, **V8, "Upload-Complete": "?1", "Upload-Length": "9"}, content=b"12345")
    problem(r, 400, INCONSISTENT)
    url = create_empty(client, auth, {"Upload-Length": "10"})
    problem(append(client, auth, url, 0, b"12345", True), 400, INCONSISTENT)  # ?1 at 5 of 10
    problem(append(client, auth, url, 0, b"12345", False, {"Upload-Length": "11"}), 400, INCONSISTENT)
    problem(append(client, auth, url, 0, b"x" * 11, False), 400, INCONSISTENT)  # past the length
    assert head(client, auth, url).headers["upload-offset"] == "0"


def test_a_chunked_body_past_the_length_deactivates_the_upload(client, auth):
    # "the server MUST prevent the offset from exceeding the upload length by rejecting the request
    # once the offset exceeds the length, marking the upload resource invalid"
    url = create_empty(client, auth, {"Upload-Length": "10"})

    def body():
        yield b"0123456789"
        yield b"ABC"

    r = append(client, auth, url, 0, body(), False)
    problem(r, 400, INCONSISTENT)
    assert head(client, auth, url).status_code == 410


def test_a_completed_upload_takes_no_more(client, auth):
    url = create_empty(client, auth)
    assert append(client, auth, url, 0, b"done", True).status_code == 200
    problem(append(client, auth, url, 4, b"more", False), 400, INCONSISTENT)
    problem(append(client, auth, url, 4, b"", True), 400, COMPLETED)
    problem(client.delete(url, headers={**auth, **V8}), 400, COMPLETED)


def test_delete_cancels_the_upload(client, auth):
    url = create_empty(client, auth)
    assert append(client, auth, url, 0, b"abc", False).status_code == 204
    assert client.delete(url, headers={**auth, **V8}).status_code == 204
    assert head(client, auth, url).status_code == 410
    problem(client.delete(url, headers={**auth, **V8}), 410, "urn:courier:problem:upload-gone")
    problem(append(client, auth, url, 3, b"d", True), 410, "urn:courier:problem:upload-gone")


# ---------------------------------------------------------------------- digests (RFC 9530)
def digest_field(data: bytes) -> str:
    return f"sha-256=:{base64.b64encode(hashlib.sha256(data).digest()).decode()}:"


def test_content_digest_is_verified_per_request(client, auth):
    url = create_empty(client, auth)
    r = append(client, auth, url, 0, b"hello", False, {"Content-Digest": digest_field(b"HELLO")})
    problem(r, 400, "urn:courier:problem:content-digest-mismatch")
    assert head(client, auth, url).headers["upload-offset"] == "0"  # nothing of it kept
    r = append(client, auth, url, 0, b"hello", False, {"Content-Digest": digest_field(b"hello")})
    assert r.status_code == 204 and r.headers["upload-offset"] == "5"
    r = append(client, auth, url, 5, b"!", True, {"Content-Digest": "md5=:AAAA:"})
    problem(r, 400, "urn:courier:problem:digest-algorithm-unsupported")


def test_repr_digest_is_checked_when_the_upload_completes(client, auth, main):
    data = b"the whole representation"
    url = create_empty(client, auth, {"Repr-Digest": digest_field(data)})
    assert append(client, auth, url, 0, data, True).status_code == 200
    url = create_empty(client, auth, {"Repr-Digest": digest_field(b"something else")})
    r = append(client, auth, url, 0, data, True)
    problem(r, 400, "urn:courier:problem:repr-digest-mismatch")
    assert r.headers["upload-complete"] == "?1"
    assert head(client, auth, url).status_code == 410
    assert len(main.get("/photos", headers=auth).json()) == 1


# ---------------------------------------------------------------------- interruption and concurrency
def wait_for(condition, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_creation_cut_short_keeps_what_arrived_and_resumes(ietf, client, auth):
    # "the server SHOULD append as much of the request content as possible"; the offset is only
    # ever what was confirmed (fsynced), never more than what was sent.
    data = os.urandom(4 * 1024 * 1024)
    sent = 2_500_000
    raw = Raw(ietf.port)
    raw.request_head("POST", "/photos?title=Cut", {**auth, **V8, "Upload-Complete": "?1",
                                                   "Content-Length": str(len(data))})
    status, headers, _ = raw.response()
    assert status == 104
    url = headers["location"]
    raw.send(data[:sent])
    # A progress 104 says the server has read and confirmed at least that much: reset only then,
    # so the bytes the reset throws away in the server's kernel cannot be all of them.
    status, progress, _ = raw.response()
    assert status == 104 and int(progress["upload-offset"]) >= 1024 * 1024
    raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    raw.close()  # a reset, as when the client is killed
    uploads = lambda: client.get("/__ietf/uploads").json()  # noqa: E731
    wait_for(lambda: uploads()[0]["offset"] >= int(progress["upload-offset"]), "the kept bytes")
    offset = int(head(client, auth, url).headers["upload-offset"])
    assert int(progress["upload-offset"]) <= offset <= sent
    assert head(client, auth, url).headers["upload-length"] == str(len(data))  # from Content-Length + ?1
    r = append(client, auth, url, offset, data[offset:], True)
    assert r.status_code == 200 and r.json()["sha256"] == sha(data)


def test_a_newer_request_takes_over_from_one_still_streaming(ietf, client, auth):
    # Concurrency: a new HEAD/PATCH terminates the previous append; the offset it answers MUST be
    # accepted by the next append.
    url = create_empty(client, auth, {"Upload-Length": "3000000"})
    path = url.split(str(ietf.port), 1)[1]
    ghost = Raw(ietf.port)
    try:
        ghost.request_head("PATCH", path, {**auth, **V8, **PARTIAL, "Upload-Offset": "0", "Upload-Complete": "?1",
                                           "Content-Length": "3000000"})
        ghost.send(os.urandom(1_500_000))
        wait_for(lambda: client.get("/__ietf/uploads").json()[0]["offset"] >= 1024 * 1024, "a confirmed MiB")
        offset = int(head(client, auth, url).headers["upload-offset"])  # takes over from the ghost
        ghost.send(os.urandom(100_000))  # the ghost's later bytes are not confirmed
        rest = os.urandom(3_000_000 - offset)
        r = append(client, auth, url, offset, rest, True)
        assert r.status_code == 200, r.text
        assert r.json()["size"] == 3_000_000
    finally:
        ghost.close()


def test_a_takeover_keeps_what_the_older_request_wrote_and_resets_it(ietf, client, auth):
    # Decision 2712: a killed client's append still arriving when the resumed client's HEAD takes
    # over. What arrived before the takeover is kept (the request had no Content-Digest, so a
    # disconnect would have kept it too), not only what the last 1 MiB commit confirmed; and the
    # older connection is reset at once instead of being read and dropped for two seconds.
    url = create_empty(client, auth, {"Upload-Length": "3000000"})
    path = url.split(str(ietf.port), 1)[1]
    sent = 1_500_000  # past one commit (1 MiB), short of the next
    ghost = Raw(ietf.port)
    try:
        ghost.request_head("PATCH", path, {**auth, **V8, **PARTIAL, "Upload-Offset": "0", "Upload-Complete": "?1",
                                           "Content-Length": "3000000"})
        ghost.send(os.urandom(sent))
        wait_for(lambda: client.get("/__ietf/uploads").json()[0]["bytes_received"] == sent, "the ghost's bytes")
        offset = int(head(client, auth, url).headers["upload-offset"])  # takes over from the ghost
        assert offset == sent
        ghost.send(os.urandom(65536))  # its next chunk: the ghost learns it was replaced
        ghost.sock.settimeout(1.0)  # the reset comes at once; a lingering close would take 2 s
        with pytest.raises(ConnectionResetError):
            while ghost.sock.recv(65536):
                pass
    finally:
        ghost.close()
    r = append(client, auth, url, offset, os.urandom(3_000_000 - offset), True)
    assert r.status_code == 200, r.text
    assert r.json()["size"] == 3_000_000


# ---------------------------------------------------------------------- older interop versions
def test_interop_3_speaks_upload_incomplete(ietf, client, auth):
    # draft -01 (interop 3): Upload-Incomplete instead of Upload-Complete, and a request without
    # it is complete; no media type for appends; HEAD and DELETE with Upload-Offset or
    # Upload-Incomplete are 400; an upload that is not active is 404.
    v3 = {"Upload-Draft-Interop-Version": "3"}
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos?title=v3", {**auth, **v3, "Upload-Incomplete": "?1", "Content-Length": "3"})
        status, headers, _ = raw.response()
        assert status == 104 and headers["upload-draft-interop-version"] == "3"
        assert "upload-limit" not in headers  # Upload-Limit came with -04 (interop 6)
        raw.send(b"abc")
        _, status, headers, _ = raw.final()
        assert status == 201 and headers["upload-incomplete"] == "?1" and "upload-complete" not in headers
    finally:
        raw.close()
    url = headers["location"]
    r = client.head(url, headers={**auth, **v3})
    assert r.status_code == 204 and r.headers["upload-incomplete"] == "?1" and r.headers["upload-offset"] == "3"
    assert client.head(url, headers={**auth, **v3, "Upload-Offset": "3"}).status_code == 400
    r = client.patch(url, headers={**auth, **v3, "Upload-Offset": "3", "Upload-Incomplete": "?1",
                                   "Content-Type": "application/offset+octet-stream"}, content=b"de")
    assert r.status_code == 201 and r.headers["upload-offset"] == "5" and r.headers["upload-incomplete"] == "?1"
    r = client.patch(url, headers={**auth, **v3, "Upload-Offset": "5"}, content=b"f")  # no field: complete
    assert r.status_code == 200 and r.headers["upload-incomplete"] == "?0" and r.json()["size"] == 6
    # A creation with the version alone is resumable and complete.
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos?title=v3b", {**auth, **v3, "Content-Length": "2"})
        assert raw.response()[0] == 104
        raw.send(b"ok")
        assert raw.final()[1] == 201
    finally:
        raw.close()


def test_interop_6_names_the_lifetime_expires_and_answers_404_when_gone(client, auth):
    v6 = {"Upload-Draft-Interop-Version": "6"}
    r = client.post("/photos", headers={**auth, **v6, "Upload-Complete": "?0"})
    assert r.status_code == 201
    assert "expires=" in r.headers["upload-limit"] and "max-age" not in r.headers["upload-limit"]
    url = r.headers["location"]
    r = client.patch(url, headers={**auth, **v6, **PARTIAL, "Upload-Offset": "0", "Upload-Complete": "?0"},
                     content=b"abc")
    assert r.status_code == 201 and r.headers["upload-offset"] == "3"
    problem(client.delete(url, headers={**auth, **v6, "Upload-Length": "3"}), 400,
            "urn:courier:problem:unexpected-field")
    assert client.delete(url, headers={**auth, **v6}).status_code == 204
    assert client.head(url, headers={**auth, **v6}).status_code == 404
    assert client.head(url, headers={**auth, **V8}).status_code == 410


# ---------------------------------------------------------------------- a multipart upload made resumable
def test_a_multipart_photo_upload_becomes_resumable_and_is_processed_as_post_photos(ietf, client, auth, main):
    # "Upgrading to resumable uploads": the same request as a plain POST /photos plus
    # Upload-Complete: ?1; once complete, the representation is processed as that route would.
    jpeg = b"\xff\xd8\xff\xe0" + os.urandom(400_000) + b"\xff\xd9"
    form = multipart_body(part("title", b"Form title"), part("file", jpeg, "cat.jpg", "image/jpeg"))
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos", {**auth, **V8, "Upload-Complete": "?1", "Content-Type": multipart_type(),
                                             "Content-Length": str(len(form))})
        status, headers, _ = raw.response()
        assert status == 104
        url = headers["location"]
        raw.send(form[:150_000])
    finally:
        raw.close()  # cut short
    # Polling with HEAD would take over from the creation still draining its socket: ask the hook.
    wait_for(lambda: not client.get("/__ietf/uploads").json()[0]["writing"], "the cut creation to end")
    offset = int(head(client, auth, url).headers["upload-offset"])
    assert offset == 150_000
    r = append(client, auth, url, offset, form[offset:], True)
    assert r.status_code == 200, r.text
    photo = r.json()
    assert (photo["title"], photo["filename"], photo["content_type"]) == ("Form title", "cat.jpg", "image/jpeg")
    assert photo["size"] == len(jpeg) and photo["sha256"] == sha(jpeg)
    assert r.headers["repr-digest"] == digest_field(form) and r.headers["upload-offset"] == str(len(form))
    assert main.get(f"/photos/{photo['id']}", headers=auth).content == jpeg
    # What POST /photos refuses is refused at completion, as "transferred, but processing failed".
    bad = multipart_body(part("title", b"t"), part("file", b"%PDF-1.4", "a.pdf", "application/pdf"))
    r = client.post("/photos", headers={**auth, **V8, "Upload-Complete": "?1", "Content-Type": multipart_type()},
                    content=bad)
    problem(r, 422, "urn:courier:problem:unsupported-format")
    assert r.headers["upload-complete"] == "?1"
    assert len(main.get("/photos", headers=auth).json()) == 1


# ---------------------------------------------------------------------- the rest of the API, proxied
def test_the_ietf_port_serves_the_whole_api_through_to_the_main_server(ietf, client, main):
    # One origin for everything, so a client's token goes to it (credentials only to the base
    # origin): auth, multipart /photos, tus and the hooks reach the main server unchanged.
    r = client.post("/auth/token", json={"username": "alice", "password": "secret"})
    assert r.status_code == 200
    auth = {"Authorization": f"Bearer {r.json()['access_token']}"}
    assert client.get("/health").json() == {"ok": True}
    jpeg = b"\xff\xd8\xff\xe0" + b"\x00" * 60
    form = multipart_body(part("title", b"Plain"), part("file", jpeg, "a.jpg", "image/jpeg"))
    r = client.post("/photos", headers={**auth, "Content-Type": multipart_type()}, content=form)
    assert r.status_code == 201, r.text  # no draft field: the main server's multipart upload
    assert r.json()["size"] == len(jpeg)
    assert r.headers["location"].startswith(ietf.base_url)  # built from the Host the client sent
    assert [p["title"] for p in client.get("/photos", headers=auth).json()] == ["Plain"]
    r = client.options("/uploads")
    assert r.status_code == 204 and r.headers["tus-version"] == "1.0.0"
    tus = {**auth, "Tus-Resumable": "1.0.0"}
    r = client.post("/uploads", headers={**tus, "Upload-Length": "6", "Upload-Metadata": "title VHVz"})
    assert r.status_code == 201 and r.headers["location"].startswith(ietf.base_url + "/uploads/")

    def chunked():
        yield b"tus"
        yield b"tus"

    r = client.patch(r.headers["location"], headers={**tus, "Content-Type": "application/offset+octet-stream",
                                                     "Upload-Offset": "0"}, content=chunked())
    assert r.status_code == 204 and r.headers["upload-offset"] == "6"
    assert any(e["path"] == "/auth/token" for e in client.get("/__log").json())
    assert len(main.get("/photos", headers=auth).json()) == 2


# ---------------------------------------------------------------------- curl, by hand
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_drives_the_draft_by_hand(ietf, main, tmp_path):
    script = BACKEND_DIR / "tests" / "ietf_curl.sh"
    result = subprocess.run(["bash", str(script), ietf.server.base_url, ietf.base_url, str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ietf_curl: ok" in result.stdout
    print(result.stdout)


def test_expect_100_continue_is_answered_after_the_104_and_a_refusal_does_not_ask_for_the_content(ietf, auth):
    # 104 section: "the server MUST NOT omit the 100 (Continue) response because it has sent an
    # interim response with the 104 status code".
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos?title=e", {**auth, **V8, "Upload-Complete": "?1", "Content-Length": "4",
                                                     "Expect": "100-continue"})
        assert raw.response()[0] == 104
        assert raw.response()[0] == 100
        raw.send(b"data")
        assert raw.final()[1] == 201
    finally:
        raw.close()
    raw = Raw(ietf.port)
    try:
        raw.request_head("POST", "/photos", {**auth, **V8, "Upload-Complete": "?1", "Content-Length": str(2 ** 40),
                                             "Expect": "100-continue"})
        interims, status, headers, _ = raw.final()
        assert interims == [] and status == 413 and headers["connection"] == "close"
    finally:
        raw.close()


def test_no_offset_is_recorded_before_its_bytes_are_fsynced(tmp_path, monkeypatch):
    # "only fsynced bytes are ever reported": run the server in this process, record how far each
    # upload file was fsynced, and check every offset written to the database against it.
    from courier_backend import ietf as ietf_module
    from courier_backend.config import Settings
    from courier_backend.store import Store

    settings = Settings(data_dir=str(tmp_path), token_ttl=3600, refresh_ttl=3600, max_upload=1 << 20, max_body=0,
                        hooks="loopback")
    store = Store(settings)
    synced: dict[str, int] = {}
    checked: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        real_fsync(fd)
        target = os.readlink(f"/proc/self/fd/{fd}")
        if "/uploads/ietf-" in target:
            synced[os.path.basename(target)[len("ietf-"):]] = os.fstat(fd).st_size

    real_set_offset = ietf_module.IetfApp.set_offset

    def checked_set_offset(self, upload_id: str, offset: int) -> None:
        assert offset <= synced.get(upload_id, 0), (offset, synced)
        checked.append(offset)
        real_set_offset(self, upload_id, offset)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(ietf_module.IetfApp, "set_offset", checked_set_offset)
    server = ietf_module.IetfServer(store, "127.0.0.1", 0).start()
    try:
        token = store.issue_tokens("alice")["access_token"]
        data = os.urandom(3 * 1024 * 1024 + 17)
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=30) as c:
            r = c.post("/photos?title=s", headers={"Authorization": f"Bearer {token}", **V8, "Upload-Complete": "?0"},
                       content=data[:1_500_000])
            assert r.status_code == 201
            r = c.patch(r.headers["location"], headers={"Authorization": f"Bearer {token}", **V8, **PARTIAL,
                                                        "Upload-Offset": "1500000", "Upload-Complete": "?1"},
                        content=data[1_500_000:])
            assert r.status_code == 200 and r.json()["sha256"] == sha(data)
        assert len(checked) >= 4 and checked[-1] == len(data)
    finally:
        server.close()
