"""courier_backend.tus_sink: tus core + creation that discards the bytes, for benchmarks."""

import socket
import subprocess
import sys
import time

import httpx
import pytest

from conftest import BACKEND_DIR, free_port


@pytest.fixture(scope="module")
def tus_sink():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "courier_backend.tus_sink", "--port", str(port)],
                            cwd=BACKEND_DIR, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)


def test_options_offers_core_and_creation_only(tus_sink):
    with httpx.Client(base_url=tus_sink) as c:
        r = c.options("/files/")
    assert r.status_code == 204
    assert r.headers["Tus-Version"] == "1.0.0"
    assert r.headers["Tus-Extension"] == "creation"
    assert "Tus-Checksum-Algorithm" not in r.headers


def test_create_patch_head(tus_sink):
    headers = {"Tus-Resumable": "1.0.0"}
    with httpx.Client(base_url=tus_sink) as c:
        created = c.post("/files/", headers={**headers, "Upload-Length": "10"})
        assert created.status_code == 201
        assert created.headers["Upload-Offset"] == "0"
        location = created.headers["Location"]
        assert location.startswith("http://127.0.0.1:")
        patch = {**headers, "Content-Type": "application/offset+octet-stream"}
        first = c.patch(location, headers={**patch, "Upload-Offset": "0"}, content=b"a" * 6)
        assert first.status_code == 204 and first.headers["Upload-Offset"] == "6"
        # The wrong offset stores nothing and says where the upload stands.
        wrong = c.patch(location, headers={**patch, "Upload-Offset": "2"}, content=b"b" * 4)
        assert wrong.status_code == 409 and wrong.headers["Upload-Offset"] == "6"
        last = c.patch(location, headers={**patch, "Upload-Offset": "6"}, content=b"c" * 4)
        assert last.headers["Upload-Offset"] == "10"
        head = c.head(location, headers=headers)
        assert head.status_code == 200
        assert head.headers["Upload-Offset"] == "10" and head.headers["Upload-Length"] == "10"
        assert c.head("/files/999", headers=headers).status_code == 404
