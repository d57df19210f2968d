"""Backend/tus-peer.sh: the independent tus server (tuspyserver from PyPI) the Swift interop tests use.

Started here the way those tests will start it, then driven with tuspy (another independent
implementation) and with plain HTTP, so we know the peer installs, serves and stores bytes whole.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import signal
import subprocess
import time

import httpx
import pytest

from conftest import BACKEND_DIR, free_port

# The first start builds Backend/.venv-tus-peer with pip: allow for that.
START_TIMEOUT = 240
TUS = {"Tus-Resumable": "1.0.0"}


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tus-peer")
    port = free_port()
    log_path = tmp / "peer.log"
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen([str(BACKEND_DIR / "tus-peer.sh"), str(port), str(tmp / "files")],
                                   stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"tus-peer.sh exited with {process.returncode}:\n{log_path.read_text(errors='replace')}")
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"tus-peer did not start in {START_TIMEOUT} s:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.1)
        yield base
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def stored(peer: str, upload_url: str) -> bytes:
    r = httpx.get(peer + "/__files/" + upload_url.rstrip("/").rsplit("/", 1)[1], timeout=10)
    assert r.status_code == 200, r.text
    return r.content


def meta(**pairs: str) -> str:
    return ",".join(f"{k} {base64.b64encode(v.encode()).decode()}" for k, v in pairs.items())


# tuspyserver's quirks, which the Swift tests must follow too (Docs/tus.md): OPTIONS answers only
# at /files/ (with the slash; POST works with and without it), and HEAD is a 400 unless the
# upload's metadata has `filename` and `filetype`.
CREATE_URL = "/files/"
META = {"Upload-Metadata": meta(filename="peer.bin", filetype="application/octet-stream")}


def test_peer_speaks_tus(peer):
    r = httpx.options(peer + CREATE_URL, headers=TUS, timeout=10)
    assert r.status_code == 204
    assert r.headers["tus-version"] == "1.0.0"
    assert {"creation", "termination"} <= set(r.headers["tus-extension"].split(","))


def test_tuspy_uploads_to_the_peer_in_chunks(peer):
    from tusclient import client as tus_client

    data = os.urandom(600_000)
    uploader = tus_client.TusClient(peer + CREATE_URL).uploader(
        file_stream=io.BytesIO(data), chunk_size=128 * 1024,
        metadata={"filename": "peer.bin", "filetype": "application/octet-stream"})
    uploader.upload()
    assert uploader.offset == len(data)
    assert hashlib.sha256(stored(peer, uploader.url)).hexdigest() == hashlib.sha256(data).hexdigest()


def test_peer_resume_and_offset_mismatch(peer):
    """The same moves the Swift client makes: create, PATCH part, 409 on a wrong offset, HEAD, the rest."""
    data = os.urandom(50_000)
    octets = {**TUS, "Content-Type": "application/offset+octet-stream"}
    with httpx.Client(timeout=10) as c:
        r = c.post(peer + CREATE_URL, headers={**TUS, **META, "Upload-Length": str(len(data))})
        assert r.status_code == 201, r.text
        url = r.headers["location"]
        r = c.patch(url, headers={**octets, "Upload-Offset": "0"}, content=data[:20_000])
        assert r.status_code == 204 and r.headers["upload-offset"] == "20000"
        assert c.patch(url, headers={**octets, "Upload-Offset": "0"}, content=data[:10]).status_code == 409
        # (A PATCH without Tus-Resumable gets its 412 only after tuspyserver has stored the body: not tested.)
        assert c.head(url).status_code == 412
        h = c.head(url, headers=TUS)
        assert h.status_code == 200 and h.headers["upload-offset"] == "20000"
        r = c.patch(url, headers={**octets, "Upload-Offset": "20000"}, content=data[20_000:])
        assert r.status_code == 204 and r.headers["upload-offset"] == str(len(data))
        assert stored(peer, url) == data
        # Termination: gone afterwards.
        r = c.post(peer + CREATE_URL, headers={**TUS, **META, "Upload-Length": "10"})
        assert c.delete(r.headers["location"], headers=TUS).status_code == 204
        assert c.head(r.headers["location"], headers=TUS).status_code in (404, 410)


def test_peer_holds_a_request_until_released(peer):
    """tus_peer.py's /__hold (holds.py): the answer of a processed PATCH waits, counted as held."""
    import threading

    data = os.urandom(5_000)
    with httpx.Client(timeout=30) as c:
        r = c.post(peer + CREATE_URL, headers={**TUS, **META, "Upload-Length": str(len(data))})
        url = r.headers["location"]
        assert c.post(peer + "/__hold", json={"after": 0, "when": "response", "method": "patch"}).json()["armed"]
        answers = []
        sender = threading.Thread(target=lambda: answers.append(httpx.patch(
            url, headers={**TUS, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"},
            content=data, timeout=30)))
        sender.start()
        deadline = time.monotonic() + 30
        while c.get(peer + "/__hold").json()["held"] < 1:
            assert time.monotonic() < deadline, "the PATCH was never held"
            time.sleep(0.01)
        assert stored(peer, url) == data, "processed before its answer was held"
        assert not answers
        assert c.post(peer + "/__hold", json={"release": True}).json()["armed"] is False
        sender.join(30)
        assert answers and answers[0].status_code == 204
        assert c.post(peer + "/__hold", json={"when": "later"}).status_code == 422


def peer_upload(peer: str, data: bytes, sent: int | None = None) -> str:
    with httpx.Client(timeout=10) as c:
        r = c.post(peer + CREATE_URL, headers={**TUS, **META, "Upload-Length": str(len(data))})
        assert r.status_code == 201, r.text
        url = r.headers["location"]
        part = data[:len(data) if sent is None else sent]
        if part:
            r = c.patch(url, headers={**TUS, "Content-Type": "application/offset+octet-stream",
                                      "Upload-Offset": "0"}, content=part)
            assert r.status_code == 204, r.text
        return url


def test_article_names_a_finished_upload_on_a_trusted_server(peer, client, auth):
    """Decision 2515: a photo that is the URL of a finished upload on a trusted tus server."""
    import uuid

    from conftest import assert_error

    finished = peer_upload(peer, os.urandom(3_000))
    unfinished = peer_upload(peer, os.urandom(3_000), sent=1_000)
    article_id = str(uuid.uuid4())
    put = lambda photo, **h: client.put(f"/articles/{article_id}", headers={**auth, **h},
                                        json={"title": "T", "body": "", "photo": photo})
    # Not trusted yet: refused as any string that is no photo id (2521 unchanged).
    assert_error(put(finished), 422, "validation_failed", "photo")
    r = client.post("/__config", json={"attachment_servers": [peer + CREATE_URL]})
    assert r.status_code == 200 and r.json()["attachment_servers"] == [peer + CREATE_URL]
    assert_error(client.post("/__config", json={"attachment_servers": ["ftp://x/"]}), 422, "validation_failed")
    body = assert_error(put(unfinished), 422, "validation_failed", "photo")
    assert "not finished" in body["message"]
    assert_error(put(peer + CREATE_URL + "0" * 32), 422, "validation_failed", "photo")
    assert_error(put(peer + CREATE_URL + "a/b"), 422, "validation_failed", "photo")
    r = put(finished)
    assert r.status_code == 201 and r.json()["photo"] == finished
    assert client.get(f"/articles/{article_id}", headers=auth).json()["photo"] == finished
    # /__reset forgets the trusted servers.
    assert client.post("/__reset").status_code == 200
    assert client.get("/__config").json()["attachment_servers"] == []
