"""Error shapes: every error is `{"code", "message"}` JSON, including framework-level ones."""

from conftest import assert_error


def test_health(client):
    r = client.get("/health")
    assert r.status_code == 200
    assert r.json() == {"ok": True}
    assert r.headers["content-type"] == "application/json; charset=utf-8"


def test_unknown_route_is_json_not_found(client):
    assert_error(client.get("/no/such/route"), 404, "not_found")
    assert_error(client.post("/nope", json={}), 404, "not_found")


def test_trailing_slash_is_not_redirected(client, auth):
    r = client.get("/articles/", headers=auth)
    assert r.status_code == 404
    assert_error(r, 404, "not_found")


def test_method_not_allowed_is_json(client):
    assert_error(client.delete("/health"), 405, "method_not_allowed")
    assert_error(client.get("/upload"), 405, "method_not_allowed")


def test_invalid_json_is_bad_request(client, auth):
    r = client.post("/articles", content=b"{not json", headers={**auth, "Content-Type": "application/json"})
    assert_error(r, 400, "bad_request")
    assert_error(client.post("/auth/token", content=b"[1,2]"), 400, "bad_request")
    assert_error(client.post("/auth/token", content=b""), 400, "bad_request")


def test_wrong_types_are_validation_failed_with_field(client, auth):
    assert_error(client.post("/auth/token", json={"username": 1, "password": "x"}), 422, "validation_failed",
                 field="username")
    r = client.put("/articles/a", json={"title": 5, "body": ""}, headers=auth)
    assert_error(r, 422, "validation_failed", field="title")
    r = client.put("/articles/a", json={"title": "t", "body": "", "version": "one"}, headers=auth)
    assert_error(r, 422, "validation_failed", field="version")


def test_hooks_are_not_logged_but_other_requests_are(client):
    client.get("/health")
    client.get("/missing")
    client.post("/__chaos", json={})
    log = client.get("/__log").json()
    assert [(e["method"], e["path"], e["status"]) for e in log] == [("GET", "/health", 200),
                                                                     ("GET", "/missing", 404)]
