"""Test hooks: /__chaos (fail_next, status, Retry-After, delay, formats), /__log, /__reset."""

import socket
import threading
import time
import uuid

import httpx
import pytest

from conftest import assert_error


def test_chaos_fails_next_n_requests_with_retry_after(client):
    r = client.post("/__chaos", json={"fail_next": 2, "status": 503, "retry_after": 1, "delay_ms": 0})
    assert r.status_code == 200
    assert r.json()["fail_next"] == 2
    for _ in range(2):
        r = client.get("/health")
        assert_error(r, 503, "service_unavailable")
        assert r.headers["retry-after"] == "1"
        # Hooks are excepted: they neither fail nor use up the count.
        assert client.get("/__log").status_code == 200
    assert client.get("/health").status_code == 200
    assert client.get("/__chaos").json()["fail_next"] == 0


def test_chaos_fail_all_fails_every_request_until_cleared(client):
    r = client.post("/__chaos", json={"fail_all": True, "status": 503, "retry_after": 1})
    assert r.status_code == 200
    assert r.json()["fail_all"] is True
    for _ in range(5):
        r = client.get("/health")
        assert_error(r, 503, "service_unavailable")
        assert r.headers["retry-after"] == "1"
    # An outage is not a count: it stays armed until the chaos is set again.
    assert client.get("/__chaos").json()["fail_all"] is True
    assert client.post("/__chaos", json={}).json()["fail_all"] is False
    assert client.get("/health").status_code == 200
    statuses = [entry["status"] for entry in client.get("/__log").json() if entry["path"] == "/health"]
    assert statuses == [503] * 5 + [200]


def test_chaos_fail_all_must_be_a_boolean(client):
    assert_error(client.post("/__chaos", json={"fail_all": 1}), 422, "validation_failed")


@pytest.mark.parametrize("status,code", [(429, "too_many_requests"), (500, "internal_error"),
                                         (502, "bad_gateway"), (504, "gateway_timeout")])
def test_chaos_statuses(client, status, code):
    client.post("/__chaos", json={"fail_next": 1, "status": status})
    r = client.get("/health")
    assert_error(r, status, code)
    assert "retry-after" not in r.headers


def test_chaos_retry_after_http_date(client):
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    client.post("/__chaos", json={"fail_next": 1, "status": 429, "retry_after": date})
    assert client.get("/health").headers["retry-after"] == date


def test_chaos_applies_to_authenticated_routes_and_uploads(client, auth):
    client.post("/__chaos", json={"fail_next": 1, "status": 503, "retry_after": 2})
    r = client.post("/upload", files={"f": ("a", b"x" * 100_000, "image/png")})
    assert_error(r, 503, "service_unavailable")
    assert client.get("/articles", headers=auth).status_code == 200


def test_chaos_401_carries_the_challenge(client, auth):
    client.post("/__chaos", json={"fail_next": 1, "status": 401})
    r = client.get("/articles", headers=auth)
    assert_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == 'Bearer error="invalid_token"'


def test_chaos_other_body_formats(client):
    client.post("/__chaos", json={"fail_next": 1, "status": 502, "format": "html"})
    r = client.get("/health")
    assert r.status_code == 502 and r.headers["content-type"].startswith("text/html") and b"<html>" in r.content
    client.post("/__chaos", json={"fail_next": 1, "status": 503, "format": "problem"})
    r = client.get("/health")
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["status"] == 503 and r.json()["title"]
    client.post("/__chaos", json={"fail_next": 1, "status": 500, "format": "empty"})
    r = client.get("/health")
    assert r.status_code == 500 and r.content == b""


def test_chaos_path_filter(client, auth):
    client.post("/__chaos", json={"fail_next": 1, "status": 503, "path": "/articles"})
    assert client.get("/health").status_code == 200
    assert client.get("/articles", headers=auth).status_code == 503
    assert client.get("/articles", headers=auth).status_code == 200


def test_chaos_delay_applies_to_every_request(client):
    client.post("/__chaos", json={"delay_ms": 300})
    start = time.monotonic()
    assert client.get("/health").status_code == 200
    assert client.get("/nope").status_code == 404
    assert time.monotonic() - start >= 0.6
    start = time.monotonic()
    client.get("/__log")  # hooks are not delayed
    assert time.monotonic() - start < 0.3


def test_chaos_validation(client):
    assert_error(client.post("/__chaos", json={"fail_next": -1}), 422, "validation_failed", field="fail_next")
    assert_error(client.post("/__chaos", json={"status": 42}), 422, "validation_failed", field="status")
    assert_error(client.post("/__chaos", json={"format": "xml"}), 422, "validation_failed", field="format")


def test_log_records_every_request_in_order(client, auth):
    article_id = str(uuid.uuid4())
    client.put(f"/articles/{article_id}", json={"title": "t", "body": ""}, headers={**auth, "Idempotency-Key": "k1"})
    client.get(f"/articles/{article_id}", headers=auth)
    client.post("/__chaos", json={"fail_next": 1, "status": 503})
    client.get("/articles?page=2", headers=auth)
    client.delete(f"/articles/{article_id}", headers=auth)
    log = client.get("/__log").json()
    assert [(e["method"], e["path"], e["idempotency_key"], e["status"]) for e in log] == [
        ("POST", "/auth/token", None, 200),
        ("PUT", f"/articles/{article_id}", "k1", 201),
        ("GET", f"/articles/{article_id}", None, 200),
        ("GET", "/articles", None, 503),
        ("DELETE", f"/articles/{article_id}", None, 204),
    ]
    assert log[3]["query"] == "page=2"
    assert all(e["at"].endswith("Z") for e in log)


def test_reset_empties_everything(client, auth):
    article_id = str(uuid.uuid4())
    client.put(f"/articles/{article_id}", json={"title": "t", "body": ""}, headers=auth)
    client.post("/__chaos", json={"fail_next": 5, "status": 500, "delay_ms": 10})
    r = client.post("/__reset")
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert client.get("/__log").json() == []
    assert client.get("/__chaos").json()["fail_next"] == 0
    assert client.get("/__chaos").json()["delay_ms"] == 0
    fresh = {"Authorization": f"Bearer {client.post('/auth/token', json={'username': 'alice', 'password': 'secret'}).json()['access_token']}"}
    assert client.get("/articles", headers=fresh).json() == []
    assert_error(client.get("/articles", headers=auth), 401, "unauthorized")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_answers_with_the_status_and_location_asked_for(client, status):
    r = client.post(f"/__redirect?status={status}&to=/articles%3Fx%3D1", content=b"dropped",
                    follow_redirects=False)
    assert r.status_code == status
    assert r.headers["location"] == "/articles?x=1"
    r = client.get("/__redirect?to=http://localhost:1/health", follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (302, "http://localhost:1/health")


def test_redirect_validation(client):
    assert_error(client.get("/__redirect?status=200", follow_redirects=False), 422, "validation_failed")
    assert_error(client.get("/__redirect?to=", follow_redirects=False), 422, "validation_failed")
    assert_error(client.get("/__redirect?to=/a%0D%0ASet-Cookie:x", follow_redirects=False), 422,
                 "validation_failed")


def wait_for(condition, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def create_article(server, auth, article_id: str, key: str, results: dict) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as other:
        results[article_id] = other.put(f"/articles/{article_id}", json={"title": "held", "body": ""},
                                        headers={**auth, "Idempotency-Key": key})


@pytest.mark.parametrize("when", ["before", "response"])
def test_hold_lets_k_requests_pass_then_holds_until_released(client, server, auth, when):
    r = client.post("/__hold", json={"after": 1, "when": when, "method": "put"})
    assert r.status_code == 200
    assert r.json() == {"armed": True, "remaining": 1, "when": when, "method": "PUT", "held": 0}
    assert client.put(f"/articles/{uuid.uuid4()}", json={"title": "passes", "body": ""},
                      headers={**auth, "Idempotency-Key": str(uuid.uuid4())}).status_code == 201
    results: dict = {}
    article_id, k = str(uuid.uuid4()), str(uuid.uuid4())
    t = threading.Thread(target=create_article, args=(server, auth, article_id, k, results))
    t.start()
    assert wait_for(lambda: client.get("/__hold").json()["held"] == 1)
    assert article_id not in results
    # Other methods pass. `before`: not processed yet; `response`: processed, answer withheld.
    stored = client.get(f"/articles/{article_id}", headers=auth).status_code
    assert stored == (404 if when == "before" else 200)
    assert client.post("/__hold", json={"release": True}).json()["armed"] is False
    t.join(30)
    assert results[article_id].status_code == 201
    assert client.get("/__hold").json()["held"] == 0


def test_hold_response_the_client_went_away_applied_once_and_replayed(client, server, auth):
    # The client dies while its processed request's answer is held: the write stays applied
    # once, and the same key gets the stored answer.
    client.post("/__hold", json={"after": 0, "when": "response", "method": "PUT"})
    article_id, k = str(uuid.uuid4()), str(uuid.uuid4())
    body = b'{"title":"held","body":""}'
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(f"PUT /articles/{article_id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Authorization: {auth['Authorization']}\r\nIdempotency-Key: {k}\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        assert wait_for(lambda: client.get("/__hold").json()["held"] == 1)
    client.post("/__hold", json={"release": True})
    h = {**auth, "Idempotency-Key": k}

    def replayed() -> bool:
        r = client.put(f"/articles/{article_id}", json={"title": "held", "body": ""}, headers=h)
        return r.status_code == 201 and r.headers.get("idempotent-replayed") == "true"

    assert wait_for(replayed)
    assert client.get(f"/articles/{article_id}", headers=auth).json()["version"] == 1


def test_hold_is_validated_and_reset_releases_it(client):
    assert_error(client.post("/__hold", json={"after": -1}), 422, "validation_failed", "after")
    assert_error(client.post("/__hold", json={"when": "later"}), 422, "validation_failed", "when")
    assert_error(client.post("/__hold", json={"release": 1}), 422, "validation_failed", "release")
    assert_error(client.post("/__hold", json={"method": "P T"}), 422, "validation_failed", "method")
    client.post("/__hold", json={"after": 0})
    client.post("/__reset")
    assert client.get("/__hold").json()["armed"] is False
    assert client.get("/health").status_code == 200


# ---------------------------------------------------------------- gone_answer (decision 2401)
def _deleted_article(client, auth) -> str:
    article_id = str(uuid.uuid4())
    r = client.put(f"/articles/{article_id}", json={"title": "t", "body": "b"}, headers=auth)
    assert r.status_code == 201, r.text
    assert client.delete(f"/articles/{article_id}", headers=auth).status_code == 204
    return article_id


def test_gone_answer_recreate_is_the_default(client, auth):
    assert client.get("/__config").json()["gone_answer"] == "recreate"
    article_id = _deleted_article(client, auth)
    r = client.put(f"/articles/{article_id}", json={"title": "again", "body": "b"},
                   headers={**auth, "If-Match": '"v1"'})
    assert r.status_code == 201 and r.json()["version"] == 1, r.text
    assert client.delete(f"/articles/{article_id}", headers={**auth, "If-Match": '"v1"'}).status_code == 204
    assert_error(client.delete(f"/articles/{article_id}", headers={**auth, "If-Match": '"v1"'}), 404, "not_found")


def test_gone_answer_conflict_answers_409_without_current(client, auth):
    assert client.post("/__config", json={"gone_answer": "conflict"}).json()["gone_answer"] == "conflict"
    article_id = _deleted_article(client, auth)
    based = {**auth, "If-Match": '"v1"'}
    body = assert_error(client.put(f"/articles/{article_id}", json={"title": "again", "body": "b"}, headers=based),
                        409, "version_conflict")
    assert "current" not in body
    body = assert_error(client.delete(f"/articles/{article_id}", headers=based), 409, "version_conflict")
    assert "current" not in body
    # Without a base version it is a create, and a delete of nothing is 404, as always.
    assert_error(client.delete(f"/articles/{article_id}", headers=auth), 404, "not_found")
    r = client.put(f"/articles/{article_id}", json={"title": "again", "body": "b"}, headers=auth)
    assert r.status_code == 201 and r.json()["version"] == 1, r.text
    # /__reset restores the contract's reading.
    client.post("/__reset")
    assert client.get("/__config").json()["gone_answer"] == "recreate"


def test_gone_answer_not_found_answers_404(client, auth):
    client.post("/__config", json={"gone_answer": "not_found"})
    article_id = _deleted_article(client, auth)
    assert_error(client.put(f"/articles/{article_id}", json={"title": "again", "body": "b"},
                            headers={**auth, "If-Match": '"v1"'}), 404, "not_found")


def test_gone_answer_is_validated(client):
    assert_error(client.post("/__config", json={"gone_answer": "maybe"}), 422, "validation_failed", "gone_answer")
