"""Idempotency-Key on POST and PUT: replay, reuse, in flight, 5xx not stored, per-user scope."""

import threading
import time
import uuid

import httpx

from conftest import assert_error, login
from multipart_util import body, content_type, part


def key() -> str:
    return str(uuid.uuid4())


def test_post_replay_returns_stored_response(client, auth):
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "T", "body": "B"}
    first = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    second = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert second.status_code == 201
    assert second.headers["idempotent-replayed"] == "true"
    assert second.content == first.content
    assert second.headers["etag"] == first.headers["etag"]
    assert second.headers["content-type"] == first.headers["content-type"]
    # Without the key the same POST is a real second attempt.
    assert_error(client.post("/articles", json=payload, headers=auth), 409, "already_exists")


def test_put_replay_does_not_bump_version_twice(client, auth):
    article_id = str(uuid.uuid4())
    client.put(f"/articles/{article_id}", json={"title": "v1", "body": ""}, headers=auth)
    k = key()
    h = {**auth, "Idempotency-Key": k, "If-Match": '"v1"'}
    first = client.put(f"/articles/{article_id}", json={"title": "v2", "body": ""}, headers=h)
    second = client.put(f"/articles/{article_id}", json={"title": "v2", "body": ""}, headers=h)
    assert first.status_code == second.status_code == 200
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json() == first.json() and first.json()["version"] == 2
    assert client.get(f"/articles/{article_id}", headers=auth).json()["version"] == 2


def test_quoted_key_as_in_the_draft_is_the_same_key(client, auth):
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "T", "body": "B"}
    client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": f'"{k}"'})
    r = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert r.headers.get("idempotent-replayed") == "true"
    assert [e["idempotency_key"] for e in client.get("/__log").json() if e["path"] == "/articles"] == [k, k]


def test_same_key_other_payload_is_422(client, auth):
    k = key()
    client.post("/articles", json={"id": str(uuid.uuid4()), "title": "T", "body": "B"},
                headers={**auth, "Idempotency-Key": k})
    r = client.post("/articles", json={"id": str(uuid.uuid4()), "title": "T", "body": "B"},
                    headers={**auth, "Idempotency-Key": k})
    assert_error(r, 422, "idempotency_key_reused")
    # Other method or path with the same key is another payload too.
    r = client.put(f"/articles/{uuid.uuid4()}", json={"title": "T", "body": "B"},
                   headers={**auth, "Idempotency-Key": k})
    assert_error(r, 422, "idempotency_key_reused")


def test_errors_are_replayed_too(client, auth):
    k = key()
    h = {**auth, "Idempotency-Key": k}
    first = client.post("/articles", json={"id": "x", "title": "", "body": ""}, headers=h)
    assert_error(first, 422, "validation_failed")
    second = client.post("/articles", json={"id": "x", "title": "", "body": ""}, headers=h)
    assert second.status_code == 422 and second.headers["idempotent-replayed"] == "true"


def test_in_flight_is_409_then_replay(client, server, auth):
    client.post("/__chaos", json={"delay_ms": 1500})
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "slow", "body": ""}
    result = {}
    other = httpx.Client(base_url=server.base_url, timeout=30)

    def first():
        result["first"] = other.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})

    t = threading.Thread(target=first)
    t.start()
    time.sleep(0.5)
    second = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    t.join(30)
    other.close()
    assert_error(second, 409, "idempotency_in_flight")
    assert result["first"].status_code == 201
    client.post("/__chaos", json={})
    third = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert third.status_code == 201 and third.headers["idempotent-replayed"] == "true"
    assert third.content == result["first"].content


def test_5xx_is_not_stored(client, auth):
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "T", "body": "B"}
    h = {**auth, "Idempotency-Key": k}
    for status in (500, 503):
        client.post("/__chaos", json={"fail_next": 1, "status": status})
        r = client.post("/articles", json=payload, headers=h)
        assert r.status_code == status
        assert "idempotent-replayed" not in r.headers
    ok = client.post("/articles", json=payload, headers=h)
    assert ok.status_code == 201 and "idempotent-replayed" not in ok.headers
    again = client.post("/articles", json=payload, headers=h)
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"


def test_lost_response_is_replayed_on_retry(client, auth):
    """chaos `after`: the server commits the write but the client sees a 502; the retry replays the 201."""
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "T", "body": "B"}
    client.post("/__chaos", json={"fail_next": 1, "status": 502, "after": True})
    lost = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert_error(lost, 502, "bad_gateway")
    assert client.get(f"/articles/{payload['id']}", headers=auth).status_code == 200  # it was written
    retry = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert retry.status_code == 201 and retry.headers["idempotent-replayed"] == "true"


def test_401_is_not_stored(client, auth):
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "T", "body": "B"}
    r = client.post("/articles", json=payload, headers={"Authorization": "Bearer expired", "Idempotency-Key": k})
    assert r.status_code == 401
    r = client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    assert r.status_code == 201 and "idempotent-replayed" not in r.headers


def test_keys_are_scoped_per_user(client, auth):
    bob = {"Authorization": f"Bearer {login(client, 'bob')['access_token']}"}
    k = key()
    a1 = client.post("/articles", json={"id": str(uuid.uuid4()), "title": "alice", "body": ""},
                     headers={**auth, "Idempotency-Key": k})
    b1 = client.post("/articles", json={"id": str(uuid.uuid4()), "title": "bob", "body": ""},
                     headers={**bob, "Idempotency-Key": k})
    assert a1.status_code == b1.status_code == 201
    assert "idempotent-replayed" not in b1.headers


def test_multipart_photo_upload_replay(client, auth, server):
    k = key()
    data = body(part("title", b"t"), part("file", b"\xff\xd8jpeg", "a.jpg", "image/jpeg"))
    h = {**auth, "Idempotency-Key": k, "Content-Type": content_type()}
    first = client.post("/photos", content=data, headers=h)
    second = client.post("/photos", content=data, headers=h)
    assert first.status_code == second.status_code == 201
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["idempotent-replayed"] == "true"
    assert len(client.get("/photos", headers=auth).json()) == 1
    other = body(part("title", b"t"), part("file", b"\xff\xd8other", "a.jpg", "image/jpeg"))
    assert_error(client.post("/photos", content=other, headers=h), 422, "idempotency_key_reused")


def test_get_and_delete_ignore_the_key(client, auth):
    article_id = str(uuid.uuid4())
    client.put(f"/articles/{article_id}", json={"title": "t", "body": ""}, headers=auth)
    h = {**auth, "Idempotency-Key": key()}
    assert client.get(f"/articles/{article_id}", headers=h).status_code == 200
    assert client.delete(f"/articles/{article_id}", headers=h).status_code == 204
    assert client.delete(f"/articles/{article_id}", headers=h).status_code == 404


def test_invalid_key_is_400(client, auth):
    r = client.post("/articles", json={"id": "a", "title": "t", "body": ""},
                    headers={**auth, "Idempotency-Key": "x" * 300})
    assert_error(r, 400, "bad_request", field="Idempotency-Key")


def test_reset_forgets_keys(client, auth):
    k = key()
    payload = {"id": str(uuid.uuid4()), "title": "T", "body": "B"}
    client.post("/articles", json=payload, headers={**auth, "Idempotency-Key": k})
    client.post("/__reset")
    fresh = {"Authorization": f"Bearer {login(client)['access_token']}"}
    r = client.post("/articles", json=payload, headers={**fresh, "Idempotency-Key": k})
    assert r.status_code == 201 and "idempotent-replayed" not in r.headers
