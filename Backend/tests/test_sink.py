"""courier_backend.sink: discards any body, answers {"received": N}."""

import socket
import subprocess
import sys
import time

import httpx
import pytest

from conftest import BACKEND_DIR, free_port


@pytest.fixture(scope="module")
def sink():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "courier_backend.sink", "--port", str(port)], cwd=BACKEND_DIR,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", port
    proc.terminate()
    proc.wait(10)


def test_content_length_and_keep_alive(sink):
    url, _ = sink
    with httpx.Client(base_url=url) as c:
        assert c.post("/x", content=b"a" * 12345).json() == {"received": 12345}
        assert c.put("/y", content=b"").json() == {"received": 0}
        assert c.get("/").json() == {"received": 0}


def test_chunked(sink):
    url, _ = sink

    def gen():
        for i in range(100):
            yield b"z" * (i * 997)

    with httpx.Client(base_url=url) as c:
        r = c.post("/", content=gen())
    assert r.json() == {"received": sum(i * 997 for i in range(100))}


def test_expect_100_continue_and_pipelining(sink):
    _, port = sink
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 100 Continue")
        s.sendall(b"hello" + b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    assert data.count(b"HTTP/1.1 200 OK") == 2
    assert b'{"received": 5}' in data and b'{"received": 3}' in data


def test_large_body_is_fast(sink):
    url, _ = sink
    size = 256 * 1024 * 1024
    block = b"\0" * (4 * 1024 * 1024)

    def gen():
        for _ in range(size // len(block)):
            yield block

    start = time.monotonic()
    with httpx.Client(base_url=url, timeout=60) as c:
        r = c.post("/", content=gen(), headers={"Content-Length": str(size)})
    assert r.json() == {"received": size}
    assert time.monotonic() - start < 20
