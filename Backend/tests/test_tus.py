"""tus 1.0.0 at /uploads (Docs/tus.md): creation, resume, checksum, termination, chaos, interop."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import signal
import socket
import threading
import time

import httpx
import pytest

from conftest import assert_error, login

TUS = {"Tus-Resumable": "1.0.0"}
OCTETS = {"Content-Type": "application/offset+octet-stream"}


def meta(**pairs: str) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in pairs.items())


def create(client, auth, length: int, body: bytes | None = None, title: str = "Trip", filename: str = "trip.mp4",
           headers: dict | None = None) -> httpx.Response:
    h = {**auth, **TUS, "Upload-Length": str(length), "Upload-Metadata": meta(title=title, filename=filename)}
    if body is not None:
        h.update(OCTETS)
    h.update(headers or {})
    return client.post("/uploads", headers=h, content=body or b"")


def created(client, auth, length: int, body: bytes | None = None, **kw) -> str:
    r = create(client, auth, length, body, **kw)
    assert r.status_code == 201, r.text
    return r.headers["location"]


def patch(client, auth, url: str, offset: int, data, headers: dict | None = None) -> httpx.Response:
    return client.patch(url, headers={**auth, **TUS, **OCTETS, "Upload-Offset": str(offset), **(headers or {})},
                        content=data)


def head(client, auth, url: str) -> httpx.Response:
    return client.head(url, headers={**auth, **TUS})


def photos(client, auth) -> list[dict]:
    r = client.get("/photos", headers=auth)
    assert r.status_code == 200
    return r.json()


def wait_for(condition, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


# ---------------------------------------------------------------------- discovery and creation
def test_options_needs_no_version_or_auth(client):
    r = client.options("/uploads")
    assert r.status_code == 204
    assert r.headers["tus-resumable"] == "1.0.0"
    assert r.headers["tus-version"] == "1.0.0"
    assert set(r.headers["tus-extension"].split(",")) == {
        "creation", "creation-with-upload", "termination", "checksum", "expiration"}
    assert int(r.headers["tus-max-size"]) > 1024 ** 3
    assert r.headers["tus-checksum-algorithm"].split(",") == ["sha1", "sha256", "md5"]


def test_creation_then_head(client, auth, server):
    r = create(client, auth, 1000)
    assert r.status_code == 201, r.text
    url = r.headers["location"]
    assert url.startswith(server.base_url + "/uploads/")
    assert r.headers["upload-offset"] == "0" and r.headers["tus-resumable"] == "1.0.0"
    assert "upload-expires" in r.headers
    h = head(client, auth, url)
    assert h.status_code == 200
    assert h.headers["upload-offset"] == "0" and h.headers["upload-length"] == "1000"
    assert h.headers["cache-control"] == "no-store"
    assert h.headers["upload-metadata"] == meta(title="Trip", filename="trip.mp4")
    assert h.headers["courier-bytes-received"] == "0"
    assert "courier-photo-id" not in h.headers


def test_creation_refusals(client, auth):
    assert_error(client.post("/uploads", headers={**auth, **TUS}), 400, "bad_request", field="Upload-Length")
    assert_error(client.post("/uploads", headers={**auth, **TUS, "Upload-Length": "-1"}), 400, "bad_request")
    assert_error(client.post("/uploads", headers={**auth, **TUS, "Upload-Defer-Length": "1"}), 400, "bad_request")
    assert_error(create(client, auth, 10, headers={"Upload-Metadata": "filename " + b64(b"a")}), 422,
                 "validation_failed", field="title")
    assert_error(create(client, auth, 10, headers={"Upload-Metadata": "title not-base64!"}), 400, "bad_metadata")
    assert_error(create(client, auth, 10, headers={"Upload-Metadata": "title,title"}), 400, "bad_metadata")
    assert_error(create(client, auth, 10, title="x" * 201), 422, "validation_failed", field="title")
    client.post("/__config", json={"tus_max_size": 100})
    r = create(client, auth, 101)
    assert_error(r, 413, "upload_too_large")
    assert r.headers["tus-resumable"] == "1.0.0"
    r = create(client, {}, 10)
    assert_error(r, 401, "unauthorized")
    assert "www-authenticate" in r.headers
    # A body in another format than application/offset+octet-stream.
    r = client.post("/uploads", content=b"abc", headers={**auth, **TUS, "Upload-Length": "3",
                                                         "Upload-Metadata": meta(title="t"), "Content-Type": "text/plain"})
    assert_error(r, 415, "unsupported_media_type")
    assert client.get("/__uploads").json() == []


def test_missing_or_wrong_tus_resumable_is_412(client, auth):
    url = created(client, auth, 10)
    for version in (None, "0.2.2", "1.0"):
        h = {**auth, **({"Tus-Resumable": version} if version else {})}
        for r in (client.post("/uploads", headers={**h, "Upload-Length": "1", "Upload-Metadata": meta(title="t")}),
                  client.patch(url, headers={**h, **OCTETS, "Upload-Offset": "0"}, content=b"x"),
                  client.delete(url, headers=h)):
            assert_error(r, 412, "tus_version_unsupported")
            assert r.headers["tus-version"] == "1.0.0"
        r = client.head(url, headers=h)
        assert r.status_code == 412 and r.headers["tus-version"] == "1.0.0" and not r.content
    assert head(client, auth, url).headers["upload-offset"] == "0"  # nothing was written


# ---------------------------------------------------------------------- core: PATCH, resume, completion
def test_patch_in_pieces_completes_into_a_photo(client, auth, server):
    data = os.urandom(300_000)
    url = created(client, auth, len(data), title="Crème 🍮", filename="vidéo.mp4",
                  headers={"Upload-Metadata": meta(title="Crème 🍮", filename="vidéo.mp4", filetype="video/mp4")})
    r = patch(client, auth, url, 0, data[:100_000])
    assert r.status_code == 204, r.text
    assert r.headers["upload-offset"] == "100000" and "courier-photo-id" not in r.headers
    r = patch(client, auth, url, 100_000, data[100_000:])
    assert r.status_code == 204, r.text
    assert r.headers["upload-offset"] == str(len(data))
    photo_id = r.headers["courier-photo-id"]
    [p] = photos(client, auth)
    assert p == {"id": photo_id, "url": f"{server.base_url}/photos/{photo_id}", "title": "Crème 🍮",
                 "filename": "vidéo.mp4", "content_type": "video/mp4", "size": len(data),
                 "sha256": hashlib.sha256(data).hexdigest()}
    assert client.get(p["url"], headers=auth).content == data
    h = head(client, auth, url)
    assert h.status_code == 200 and h.headers["upload-offset"] == str(len(data))
    assert h.headers["courier-photo-id"] == photo_id and "upload-expires" not in h.headers
    # Completed: an empty PATCH at the end is fine, anything else is refused, DELETE is 409.
    assert patch(client, auth, url, len(data), b"").status_code == 204
    assert_error(patch(client, auth, url, 0, b"x"), 409, "offset_mismatch")
    assert_error(client.delete(url, headers={**auth, **TUS}), 409, "upload_complete")
    assert not os.listdir(server.data_dir / "uploads")


def test_creation_with_upload(client, auth):
    data = os.urandom(5000)
    r = create(client, auth, len(data), body=data)
    assert r.status_code == 201, r.text
    assert r.headers["upload-offset"] == "5000"
    [p] = photos(client, auth)
    assert p["id"] == r.headers["courier-photo-id"] and p["sha256"] == hashlib.sha256(data).hexdigest()
    assert p["content_type"] == "application/octet-stream"

    # A first part with the creation, the rest with PATCH.
    r = create(client, auth, len(data), body=data[:1234])
    assert r.status_code == 201 and r.headers["upload-offset"] == "1234"
    assert patch(client, auth, r.headers["location"], 1234, data[1234:]).status_code == 204
    assert len(photos(client, auth)) == 2


def test_empty_upload_completes_at_creation(client, auth):
    r = create(client, auth, 0)
    assert r.status_code == 201 and r.headers["upload-offset"] == "0"
    [p] = photos(client, auth)
    assert p["id"] == r.headers["courier-photo-id"] and p["size"] == 0


def test_offset_mismatch_is_409_and_changes_nothing(client, auth):
    url = created(client, auth, 10)
    assert patch(client, auth, url, 0, b"abcd").status_code == 204
    for offset in (0, 3, 5):
        r = patch(client, auth, url, offset, b"zz")
        assert_error(r, 409, "offset_mismatch")
        assert r.headers["upload-offset"] == "4"
    assert head(client, auth, url).headers["upload-offset"] == "4"
    assert patch(client, auth, url, 4, b"efghij").status_code == 204
    assert client.get(photos(client, auth)[0]["url"], headers=auth).content == b"abcdefghij"


def test_patch_refusals(client, auth):
    url = created(client, auth, 10)
    r = client.patch(url, headers={**auth, **TUS, "Upload-Offset": "0", "Content-Type": "application/octet-stream"},
                     content=b"x")
    assert_error(r, 415, "unsupported_media_type")
    assert_error(client.patch(url, headers={**auth, **TUS, **OCTETS}, content=b"x"), 400, "bad_request",
                 field="Upload-Offset")
    assert_error(patch(client, auth, url, 0, b"x" * 11), 413, "upload_too_large")
    assert_error(patch(client, {}, url, 0, b"x"), 401, "unauthorized")
    bob = {"Authorization": f"Bearer {login(client, 'bob')['access_token']}"}
    assert_error(patch(client, bob, url, 0, b"x"), 404, "not_found")  # another user's upload is not there
    assert head(client, bob, url).status_code == 404
    # A chunked body that runs past Upload-Length is refused whole.
    r = patch(client, auth, url, 0, iter([b"x" * 6, b"y" * 6]))
    assert_error(r, 413, "upload_too_large")
    assert head(client, auth, url).headers["upload-offset"] == "0"


def partial_patch(server, url: str, token: str, offset: int, total: int, sent: bytes,
                  headers: dict[str, str] | None = None) -> socket.socket:
    """A PATCH announcing `total` bytes that sends only `sent`, on a socket left open."""
    path = url[len(server.base_url):]
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall((f"PATCH {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
               f"Tus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\n"
               f"Upload-Offset: {offset}\r\nContent-Length: {total}\r\n{extra}\r\n").encode() + sent)
    return s


def read_response(s: socket.socket) -> str:
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536) or b"\r\n\r\n"
    head_part, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head_part.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        more = s.recv(65536)
        if not more:
            break
        body += more
    return (head_part + b"\r\n\r\n" + body).decode("latin-1")


def bytes_received(client, auth, url: str) -> int:
    return int(head(client, auth, url).headers["courier-bytes-received"])


def test_resume_after_the_client_goes_away_mid_patch(client, auth, server):
    data = os.urandom(2_000_000)
    token = auth["Authorization"].split()[1]
    url = created(client, auth, len(data))
    s = partial_patch(server, url, token, 0, len(data), data[:700_000])
    wait_for(lambda: bytes_received(client, auth, url) == 700_000, "the server to read the first part")
    s.close()  # the client dies
    wait_for(lambda: any(e["method"] == "PATCH" and e["status"] == 499 for e in client.get("/__log").json()),
             "the server to notice the disconnect")
    h = head(client, auth, url)
    assert h.headers["upload-offset"] == "700000"  # what arrived is kept (no checksum was asked)
    r = patch(client, auth, url, 700_000, data[700_000:])
    assert r.status_code == 204, r.text
    [p] = photos(client, auth)
    assert p["sha256"] == hashlib.sha256(data).hexdigest()
    assert int(head(client, auth, url).headers["courier-bytes-received"]) == len(data)


def test_a_newer_patch_takes_over_from_a_stalled_one(client, auth, server):
    """A killed client's PATCH the server has not seen end yet must not block the resumed one."""
    data = os.urandom(1_000_000)
    token = auth["Authorization"].split()[1]
    url = created(client, auth, len(data))
    stalled = partial_patch(server, url, token, 0, len(data), data[:300_000])
    try:
        wait_for(lambda: bytes_received(client, auth, url) == 300_000, "the server to read the first part")
        offset = int(head(client, auth, url).headers["upload-offset"])  # 0: nothing confirmed yet
        assert offset == 0
        r = patch(client, auth, url, offset, data[offset:])
        assert r.status_code == 204, r.text
        stalled.sendall(b"\0" * 700_000)  # the old request wakes up with garbage: it must write nothing
        answer = read_response(stalled)
        assert answer.startswith("HTTP/1.1 409"), answer
        assert "upload_superseded" in answer
    finally:
        stalled.close()
    [p] = photos(client, auth)
    assert p["sha256"] == hashlib.sha256(data).hexdigest()
    assert client.get(p["url"], headers=auth).content == data


def test_a_head_waits_for_a_patch_still_arriving(client, auth, server):
    """Decision 2713: a killed client's kernel still delivers its last checksummed piece when the
    resumed client asks where the upload stands. The HEAD waits for that PATCH to end, so the piece
    is kept and answered, not taken over and sent again."""
    data = os.urandom(600_000)
    token = auth["Authorization"].split()[1]
    url = created(client, auth, len(data))
    ghost = partial_patch(server, url, token, 0, len(data), data[:100_000],
                          {"Upload-Checksum": "sha256 " + b64(hashlib.sha256(data).digest())})
    try:
        wait_for(lambda: client.get("/__uploads").json()[0]["bytes_received"] == 100_000, "the first part")
        trickle = threading.Thread(target=lambda: [  # the dead client's queue, as a slow link delivers it
            (ghost.sendall(data[at:at + 50_000]), time.sleep(0.02)) for at in range(100_000, len(data), 50_000)])
        trickle.start()
        r = head(client, auth, url)
        trickle.join()
        assert r.headers["upload-offset"] == str(len(data)), "the HEAD answered before the piece arrived"
        assert read_response(ghost).startswith("HTTP/1.1 204")
    finally:
        ghost.close()
    assert photos(client, auth)[0]["sha256"] == hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------- checksum
def test_checksum_verified_and_mismatch_is_460(client, auth):
    data = os.urandom(4000)
    url = created(client, auth, len(data))
    r = patch(client, auth, url, 0, data[:1000], {"Upload-Checksum": "sha1 " + b64(hashlib.sha1(data[:1000]).digest())})
    assert r.status_code == 204 and r.headers["upload-offset"] == "1000"
    r = patch(client, auth, url, 1000, data[1000:2000], {"Upload-Checksum": "sha256 " + b64(hashlib.sha256(b"no").digest())})
    assert_error(r, 460, "checksum_mismatch")
    assert r.headers["upload-offset"] == "1000"
    assert head(client, auth, url).headers["upload-offset"] == "1000"  # the chunk was discarded
    assert_error(patch(client, auth, url, 1000, data[1000:], {"Upload-Checksum": "crc32 AAAA"}), 400,
                 "checksum_algorithm_unsupported")
    assert_error(patch(client, auth, url, 1000, data[1000:], {"Upload-Checksum": "sha1 ***"}), 400, "bad_request")
    r = patch(client, auth, url, 1000, data[1000:], {"Upload-Checksum": "md5 " + b64(hashlib.md5(data[1000:]).digest())})
    assert r.status_code == 204, r.text
    assert photos(client, auth)[0]["sha256"] == hashlib.sha256(data).hexdigest()
    assert bytes_received(client, auth, url) == 11_000  # refused and discarded bodies crossed the wire too


def test_checksum_on_creation_with_upload(client, auth):
    data = b"hello tus"
    r = create(client, auth, 20, body=data, headers={"Upload-Checksum": "sha1 " + b64(hashlib.sha1(b"x").digest())})
    assert_error(r, 460, "checksum_mismatch")
    url = r.headers["location"]  # the upload exists, empty
    assert head(client, auth, url).headers["upload-offset"] == "0"


# ---------------------------------------------------------------------- termination and expiry
def test_termination(client, auth, server):
    url = created(client, auth, 100)
    assert patch(client, auth, url, 0, b"x" * 10).status_code == 204
    r = client.delete(url, headers={**auth, **TUS})
    assert r.status_code == 204 and r.headers["tus-resumable"] == "1.0.0"
    assert head(client, auth, url).status_code == 410
    assert_error(patch(client, auth, url, 10, b"y"), 410, "upload_gone")
    assert_error(client.delete(url, headers={**auth, **TUS}), 410, "upload_gone")
    assert not os.listdir(server.data_dir / "uploads")
    unknown = url.rsplit("/", 1)[0] + "/0123456789abcdef"
    assert head(client, auth, unknown).status_code == 404
    assert_error(patch(client, auth, unknown, 0, b"x"), 404, "not_found")
    assert_error(client.delete(unknown, headers={**auth, **TUS}), 404, "not_found")
    assert photos(client, auth) == []


def test_expiry(client, auth):
    url = created(client, auth, 100)
    upload_id = url.rsplit("/", 1)[1]
    assert client.post("/__uploads/expire", json={"id": upload_id}).json() == {"expired": [upload_id]}
    assert head(client, auth, url).status_code == 410
    assert_error(patch(client, auth, url, 0, b"x"), 410, "upload_gone")
    [u] = client.get("/__uploads").json()
    assert u["state"] == "expired"


# ---------------------------------------------------------------------- idempotent creation
def test_creation_with_the_same_idempotency_key_is_the_same_upload(client, auth):
    key = {"Idempotency-Key": "create-1"}
    r1 = create(client, auth, 100, headers=key)
    r2 = create(client, auth, 100, headers=key)
    assert r1.status_code == r2.status_code == 201
    assert r1.headers["location"] == r2.headers["location"]
    assert r2.headers.get("idempotent-replayed") == "true"
    assert len(client.get("/__uploads").json()) == 1
    # Another key, another upload; another user with the same key, another upload.
    assert create(client, auth, 100, headers={"Idempotency-Key": "create-2"}).headers["location"] != r1.headers["location"]
    bob = {"Authorization": f"Bearer {login(client, 'bob')['access_token']}"}
    assert create(client, bob, 100, headers=key).headers["location"] != r1.headers["location"]


def test_creation_retried_after_its_answer_was_lost(client, auth, server):
    """The first creation-with-upload died mid-body (no stored answer): the retry finds the same upload."""
    data = os.urandom(400_000)
    token = auth["Authorization"].split()[1]
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall((f"POST /uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
               f"Tus-Resumable: 1.0.0\r\nUpload-Length: {len(data)}\r\nUpload-Metadata: {meta(title='t')}\r\n"
               f"Idempotency-Key: crash-1\r\nContent-Type: application/offset+octet-stream\r\n"
               f"Content-Length: {len(data)}\r\n\r\n").encode() + data[:100_000])
    wait_for(lambda: [u["bytes_received"] for u in client.get("/__uploads").json()] == [100_000], "the first part")
    s.close()
    wait_for(lambda: any(e["method"] == "POST" and e["status"] == 499 for e in client.get("/__log").json()),
             "the server to notice the disconnect")
    r = create(client, auth, len(data), body=data, headers={"Idempotency-Key": "crash-1"})
    assert r.status_code == 201, r.text
    assert r.headers["upload-offset"] == "100000"  # the body of the retry was not used: HEAD/PATCH go on
    assert len(client.get("/__uploads").json()) == 1
    assert patch(client, auth, r.headers["location"], 100_000, data[100_000:]).status_code == 204
    assert photos(client, auth)[0]["sha256"] == hashlib.sha256(data).hexdigest()


def test_creation_retried_while_the_first_is_still_open(client, auth, server):
    """The first creation-with-upload hangs (a dead link the server has not noticed): the retry with
    the same key is not told to wait (409 in flight) but gets that upload, and its PATCH takes over."""
    data = os.urandom(300_000)
    token = auth["Authorization"].split()[1]
    ghost = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        ghost.sendall((f"POST /uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                       f"Tus-Resumable: 1.0.0\r\nUpload-Length: {len(data)}\r\nUpload-Metadata: {meta(title='t')}\r\n"
                       f"Idempotency-Key: ghost-1\r\nContent-Type: application/offset+octet-stream\r\n"
                       f"Content-Length: {len(data)}\r\n\r\n").encode() + data[:100_000])
        wait_for(lambda: [u["bytes_received"] for u in client.get("/__uploads").json()] == [100_000], "the first part")
        r = create(client, auth, len(data), headers={"Idempotency-Key": "ghost-1"})
        assert r.status_code == 201, r.text
        [u] = client.get("/__uploads").json()
        assert r.headers["location"].endswith(u["id"])
        offset = int(r.headers["upload-offset"])
        assert offset == 0  # nothing confirmed yet: the ghost is still streaming
        assert patch(client, auth, r.headers["location"], offset, data[offset:]).status_code == 204
    finally:
        ghost.close()
    assert photos(client, auth)[0]["sha256"] == hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------- chaos
def test_chaos_offset_lies(client, auth):
    url = created(client, auth, 100)
    client.post("/__chaos", json={"tus_offset_mode": "beyond", "tus_offset_delta": 7, "tus_offset_method": "PATCH"})
    assert head(client, auth, url).headers["upload-offset"] == "0"  # HEAD is not targeted
    assert patch(client, auth, url, 0, b"x" * 10).headers["upload-offset"] == "17"
    assert patch(client, auth, url, 10, b"x" * 10).headers["upload-offset"] == "20"  # count 1: used up
    client.post("/__chaos", json={"tus_offset_mode": "behind", "tus_offset_delta": 15})
    assert head(client, auth, url).headers["upload-offset"] == "5"
    client.post("/__chaos", json={"tus_offset_mode": "missing", "tus_offset_count": 2})
    r = patch(client, auth, url, 20, b"x" * 10)
    assert r.status_code == 204 and "upload-offset" not in r.headers
    assert "upload-offset" not in head(client, auth, url).headers
    assert head(client, auth, url).headers["upload-offset"] == "30"  # the truth was stored all along


def test_chaos_offset_lies_aimed_at_head(client, auth):
    """A HEAD-only lie leaves PATCH answers true, and rides along with a lost PATCH answer."""
    url = created(client, auth, 100)
    client.post("/__chaos", json={"tus_offset_mode": "beyond", "tus_offset_delta": 1000, "tus_offset_method": "HEAD"})
    assert patch(client, auth, url, 0, b"x" * 10).headers["upload-offset"] == "10"  # PATCH is not targeted
    assert head(client, auth, url).headers["upload-offset"] == "1010"  # past Upload-Length, too
    assert head(client, auth, url).headers["upload-offset"] == "10"  # count 1: used up
    # The lost answer of a PATCH (stored, then 503), then a HEAD that lies: one chaos setting.
    client.post("/__chaos", json={"fail_next": 1, "status": 503, "path": "/uploads/", "method": "PATCH",
                                  "after": True, "tus_offset_mode": "behind", "tus_offset_delta": 15,
                                  "tus_offset_method": "HEAD"})
    assert patch(client, auth, url, 10, b"x" * 10).status_code == 503
    assert head(client, auth, url).headers["upload-offset"] == "5"  # behind the 20 stored
    r = head(client, auth, url)
    assert r.status_code == 200 and r.headers["upload-offset"] == "20"  # the truth was stored all along
    client.post("/__chaos", json={"tus_offset_mode": "missing", "tus_offset_method": "HEAD"})
    r = head(client, auth, url)
    assert r.status_code == 200 and "upload-offset" not in r.headers and r.headers["upload-length"] == "100"
    assert patch(client, auth, url, 20, b"x" * 80).headers["upload-offset"] == "100"
    assert photos(client, auth)[0]["size"] == 100


def test_chaos_460_and_412_look_like_tus(client, auth):
    url = created(client, auth, 10)
    client.post("/__chaos", json={"fail_next": 1, "status": 460, "path": "/uploads/", "method": "PATCH"})
    assert head(client, auth, url).status_code == 200  # not a PATCH: not failed
    r = patch(client, auth, url, 0, b"abc")
    assert r.status_code == 460 and r.headers["tus-resumable"] == "1.0.0"
    assert head(client, auth, url).headers["upload-offset"] == "0"  # the chunk was discarded
    assert bytes_received(client, auth, url) == 3
    client.post("/__chaos", json={"fail_next": 1, "status": 412, "path": "/uploads"})
    r = patch(client, auth, url, 0, b"abc")
    assert r.status_code == 412 and r.headers["tus-version"] == "1.0.0"
    assert patch(client, auth, url, 0, b"abc").headers["upload-offset"] == "3"


def test_chaos_lost_answer_of_a_patch(client, auth):
    url = created(client, auth, 6)
    client.post("/__chaos", json={"fail_next": 1, "status": 503, "path": "/uploads/", "after": True})
    assert patch(client, auth, url, 0, b"abc").status_code == 503
    assert head(client, auth, url).headers["upload-offset"] == "3"  # stored for real; HEAD tells


def test_chaos_refuses_bad_tus_fields(client):
    assert_error(client.post("/__chaos", json={"tus_offset_mode": "sideways"}), 422, "validation_failed")
    assert_error(client.post("/__chaos", json={"tus_offset_method": "GET"}), 422, "validation_failed")
    assert_error(client.post("/__chaos", json={"method": 5}), 422, "validation_failed")


# ---------------------------------------------------------------------- size
def test_large_upload_is_streamed(client, auth, server):
    """24 MiB in two PATCHes of 12 MiB, each streamed: peak RSS must not grow by anything like that."""
    size = 24 * 1024 * 1024
    chunk = b"\xcd" * (1024 * 1024)
    url = created(client, auth, size)
    before = server.rss_peak_kb()

    def gen(n):
        for _ in range(n):
            yield chunk

    half = size // 2
    r = patch(client, auth, url, 0, gen(12), {"Content-Length": str(half)})
    assert r.status_code == 204 and r.headers["upload-offset"] == str(half)
    r = patch(client, auth, url, half, gen(12), {"Content-Length": str(half)})
    assert r.status_code == 204, r.text
    assert photos(client, auth)[0]["sha256"] == hashlib.sha256(chunk * 24).hexdigest()
    grown_mb = (server.rss_peak_kb() - before) / 1024
    assert grown_mb < 16, f"peak RSS grew by {grown_mb:.0f} MiB for a 24 MiB upload"


# ---------------------------------------------------------------------- an independent client
def test_tuspy_client_uploads_in_chunks_with_checksums(client, auth, server):
    from tusclient import client as tus_client

    data = os.urandom(700_000)
    tc = tus_client.TusClient(server.base_url + "/uploads", headers=auth)
    uploader = tc.uploader(file_stream=io.BytesIO(data), chunk_size=256 * 1024, upload_checksum=True,
                           metadata={"title": "From tuspy", "filename": "tuspy.bin", "filetype": "image/jpeg"})
    uploader.upload()
    assert uploader.offset == len(data)
    [p] = photos(client, auth)
    assert (p["title"], p["filename"], p["content_type"], p["size"]) == (
        "From tuspy", "tuspy.bin", "image/jpeg", len(data))
    assert p["sha256"] == hashlib.sha256(data).hexdigest()
    [u] = client.get("/__uploads").json()
    assert u["state"] == "completed" and u["bytes_received"] == len(data)
    patches = [e for e in client.get("/__log").json() if e["method"] == "PATCH"]
    assert len(patches) == 3 and all(e["status"] == 204 for e in patches)


def test_tuspy_resumes_a_stored_upload(client, auth, server):
    """tuspy given the URL of an upload already half sent asks HEAD and sends only the rest."""
    from tusclient import client as tus_client

    data = os.urandom(300_000)
    url = created(client, auth, len(data))
    assert patch(client, auth, url, 0, data[:120_000]).status_code == 204
    tc = tus_client.TusClient(server.base_url + "/uploads", headers=auth)
    uploader = tc.uploader(file_stream=io.BytesIO(data), url=url, chunk_size=1024 * 1024)
    uploader.upload()
    assert photos(client, auth)[0]["sha256"] == hashlib.sha256(data).hexdigest()
    assert bytes_received(client, auth, url) == len(data)  # nothing sent twice


# ---------------------------------------------------------------------- server crash
def test_server_killed_mid_patch_claims_only_what_it_stored(tmp_path):
    """kill -9 while a PATCH streams: after a restart on the same data, HEAD answers an offset whose
    bytes are all on disk, and the upload completes from there with the right SHA-256."""
    from conftest import start_server, stop_server

    data_dir = tmp_path / "data"
    env = {"COURIER_BACKEND_DATA": str(data_dir)}
    size = 20 * 1024 * 1024
    data = os.urandom(size)
    srv = start_server(tmp_path, env)
    try:
        with httpx.Client(base_url=srv.base_url, timeout=30) as c:
            token = login(c)["access_token"]
            auth = {"Authorization": f"Bearer {token}"}
            url = created(c, auth, size)
            sent = 12 * 1024 * 1024
            s = partial_patch(srv, url, token, 0, size, data[:sent])
            wait_for(lambda: c.get("/__uploads").json()[0]["bytes_received"] == sent, "the first 12 MiB")
            srv.process.send_signal(signal.SIGKILL)
            srv.process.wait(timeout=10)
            s.close()
    finally:
        stop_server(srv.process)
    srv = start_server(tmp_path, env)
    try:
        with httpx.Client(base_url=srv.base_url, timeout=30) as c:
            auth = {"Authorization": f"Bearer {login(c)['access_token']}"}
            url = srv.base_url + "/uploads/" + url.rsplit("/", 1)[1]  # the port changed
            h = head(c, auth, url)
            assert h.status_code == 200, h.text
            offset = int(h.headers["upload-offset"])
            # Committed every 8 MiB while streaming: at least that much survived, nothing unsent is claimed.
            assert 8 * 1024 * 1024 <= offset <= sent
            r = patch(c, auth, url, offset, data[offset:])
            assert r.status_code == 204, r.text
            assert photos(c, auth)[0]["sha256"] == hashlib.sha256(data).hexdigest()
    finally:
        stop_server(srv.process)
