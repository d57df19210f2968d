"""Behaviour a client can run into on a real network: aborted uploads, early 413, hooks off, concurrency."""

import os
import socket
import threading
import time
import uuid

import httpx

from conftest import assert_error, login, start_server, stop_server
from multipart_util import body, content_type, part


def test_aborted_upload_releases_key_and_leaves_no_file(client, server, auth):
    k = str(uuid.uuid4())
    payload = body(part("title", b"t"), part("file", b"\xff" * 2_000_000, "a.jpg", "image/jpeg"))
    head = (f"POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth['Authorization']}\r\n"
            f"Idempotency-Key: {k}\r\nContent-Type: {content_type()}\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(head + payload[:300_000])
        time.sleep(0.3)
    # The server notices the disconnect; the key is no longer in flight and nothing was stored.
    deadline = time.monotonic() + 10
    while True:
        r = client.post("/photos", content=payload,
                        headers={**auth, "Idempotency-Key": k, "Content-Type": content_type()})
        if r.status_code != 409 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r.status_code == 201, r.text
    assert "idempotent-replayed" not in r.headers
    leftovers = [n for n in os.listdir(server.data_dir / "photos") if n.startswith(".upload-")]
    assert leftovers == []
    statuses = [e["status"] for e in client.get("/__log").json() if e["path"] == "/photos"]
    assert statuses[0] == 499 and statuses[-1] == 201


def test_keep_alive_connection_survives_errors(client, auth):
    # One httpx client = one pooled connection: early errors must not break the next request.
    assert client.post("/photos", content=b"x" * 100_000, headers={**auth, "Content-Type": "text/plain"}).status_code == 400
    assert client.post("/photos", content=b"x" * 100_000).status_code == 401
    assert client.get("/health").status_code == 200


def test_concurrent_creates_of_one_id(client, server, auth):
    article_id = str(uuid.uuid4())
    statuses = []

    def attempt():
        with httpx.Client(base_url=server.base_url, timeout=30) as c:
            statuses.append(c.post("/articles", json={"id": article_id, "title": "t", "body": ""},
                                   headers=auth).status_code)

    threads = [threading.Thread(target=attempt) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(statuses) == [201] + [409] * 9


def test_concurrent_same_key_only_one_runs(client, server, auth):
    client.post("/__chaos", json={"delay_ms": 1000})
    k = str(uuid.uuid4())
    payload = {"id": str(uuid.uuid4()), "title": "t", "body": ""}
    responses = []
    clients = [httpx.Client(base_url=server.base_url, timeout=30) for _ in range(8)]
    barrier = threading.Barrier(len(clients))

    def attempt(c):
        barrier.wait(10)
        responses.append(c.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k}))

    threads = [threading.Thread(target=attempt, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for c in clients:
        c.close()
    assert sorted(r.status_code for r in responses) == [201] + [409] * 7
    assert not any("idempotent-replayed" in r.headers for r in responses)


def test_max_body_answers_413_before_the_body(tmp_path):
    srv = start_server(tmp_path, {"COURIER_BACKEND_MAX_BODY": "1000"})
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                      b"Content-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
            response = b""
            while b"\r\n\r\n" not in response or not response.rstrip().endswith(b"}"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                response += chunk
        assert response.startswith(b"HTTP/1.1 413"), response
        assert b"100 Continue" not in response
        assert b'"code":"payload_too_large"' in response
        with httpx.Client(base_url=srv.base_url) as c:
            assert c.post("/upload", files={"f": ("a", b"small")}).status_code == 200
    finally:
        stop_server(srv.process)


def test_hooks_can_be_turned_off(tmp_path):
    srv = start_server(tmp_path, {"COURIER_BACKEND_HOOKS": "off"})
    try:
        with httpx.Client(base_url=srv.base_url) as c:
            assert_error(c.post("/__reset"), 404, "not_found")
            assert_error(c.get("/__log"), 404, "not_found")
            assert c.get("/health").status_code == 200
    finally:
        stop_server(srv.process)


def test_state_survives_a_restart_with_the_same_data_dir(tmp_path):
    srv = start_server(tmp_path, {"COURIER_BACKEND_DATA": str(tmp_path / "persist")})
    try:
        with httpx.Client(base_url=srv.base_url) as c:
            auth = {"Authorization": f"Bearer {login(c)['access_token']}"}
            c.put("/articles/keep", json={"title": "t", "body": ""}, headers=auth)
    finally:
        stop_server(srv.process)
    srv = start_server(tmp_path, {"COURIER_BACKEND_DATA": str(tmp_path / "persist")})
    try:
        with httpx.Client(base_url=srv.base_url) as c:
            assert c.get("/articles/keep", headers=auth).json()["version"] == 1
    finally:
        stop_server(srv.process)
