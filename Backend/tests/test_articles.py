"""Articles: list ETag/304/Cache-Control, versions, 201/200/428/409/422, POST, DELETE."""

import re
import threading
import uuid

import pytest

from conftest import assert_error

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def new_id() -> str:
    return str(uuid.uuid4())


def create(client, auth, article_id=None, title="Hello", body="World"):
    article_id = article_id or new_id()
    r = client.put(f"/articles/{article_id}", json={"title": title, "body": body}, headers=auth)
    assert r.status_code == 201, r.text
    return r.json()


def check_article(a: dict) -> None:
    assert set(a) == {"id", "title", "body", "version", "updated_at"}
    assert isinstance(a["version"], int)
    assert TIMESTAMP.match(a["updated_at"]), a["updated_at"]


# ---------------------------------------------------------------- GET /articles
def test_list_etag_304_and_cache_control(client, auth):
    r = client.get("/articles", headers=auth)
    assert r.status_code == 200
    assert r.json() == []
    assert r.headers["cache-control"] == "max-age=5, stale-while-revalidate=30"
    assert r.headers["content-type"] == "application/json; charset=utf-8"
    etag = r.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')

    r304 = client.get("/articles", headers={**auth, "If-None-Match": etag})
    assert r304.status_code == 304
    assert r304.content == b""
    assert r304.headers["etag"] == etag
    assert r304.headers["cache-control"] == "max-age=5, stale-while-revalidate=30"
    # Weak comparison and lists are honoured; another tag is not a match.
    assert client.get("/articles", headers={**auth, "If-None-Match": f'"x", W/{etag}'}).status_code == 304
    assert client.get("/articles", headers={**auth, "If-None-Match": '"other"'}).status_code == 200

    a = create(client, auth)
    r2 = client.get("/articles", headers={**auth, "If-None-Match": etag})
    assert r2.status_code == 200
    assert r2.headers["etag"] != etag
    assert [x["id"] for x in r2.json()] == [a["id"]]
    for item in r2.json():
        check_article(item)


def test_list_keeps_creation_order(client, auth):
    ids = [create(client, auth)["id"] for _ in range(3)]
    client.put(f"/articles/{ids[0]}", json={"title": "changed", "body": "", "version": 1}, headers=auth)
    assert [a["id"] for a in client.get("/articles", headers=auth).json()] == ids


# ---------------------------------------------------------------- GET /articles/{id}
def test_get_one_etag_and_304(client, auth):
    a = create(client, auth)
    r = client.get(f"/articles/{a['id']}", headers=auth)
    assert r.status_code == 200
    assert r.json() == a
    assert r.headers["etag"] == '"v1"'
    r304 = client.get(f"/articles/{a['id']}", headers={**auth, "If-None-Match": '"v1"'})
    assert r304.status_code == 304 and r304.content == b""
    assert r304.headers["etag"] == '"v1"'
    client.put(f"/articles/{a['id']}", json={"title": "t2", "body": "b"}, headers={**auth, "If-Match": '"v1"'})
    r = client.get(f"/articles/{a['id']}", headers={**auth, "If-None-Match": '"v1"'})
    assert r.status_code == 200 and r.headers["etag"] == '"v2"'


def test_get_missing_is_404(client, auth):
    assert_error(client.get(f"/articles/{new_id()}", headers=auth), 404, "not_found")


# ---------------------------------------------------------------- PUT
def test_put_new_id_creates_version_1(client, auth):
    article_id = new_id()
    r = client.put(f"/articles/{article_id}", json={"title": "T", "body": "B"}, headers=auth)
    assert r.status_code == 201
    a = r.json()
    check_article(a)
    assert (a["id"], a["title"], a["body"], a["version"]) == (article_id, "T", "B", 1)
    assert r.headers["etag"] == '"v1"'
    assert r.headers["location"].endswith(f"/articles/{article_id}")


def test_put_existing_without_base_version_is_428(client, auth):
    a = create(client, auth)
    assert_error(client.put(f"/articles/{a['id']}", json={"title": "x", "body": "y"}, headers=auth), 428,
                 "precondition_required")


def test_put_with_if_match_bumps_version(client, auth):
    a = create(client, auth)
    r = client.put(f"/articles/{a['id']}", json={"title": "T2", "body": "B2"}, headers={**auth, "If-Match": '"v1"'})
    assert r.status_code == 200
    b = r.json()
    assert (b["title"], b["body"], b["version"]) == ("T2", "B2", 2)
    assert r.headers["etag"] == '"v2"'
    assert b["updated_at"] >= a["updated_at"]
    assert client.get(f"/articles/{a['id']}", headers=auth).json() == b


def test_put_with_body_version(client, auth):
    a = create(client, auth)
    r = client.put(f"/articles/{a['id']}", json={"title": "T2", "body": "B2", "version": 1}, headers=auth)
    assert r.status_code == 200 and r.json()["version"] == 2
    r = client.put(f"/articles/{a['id']}", json={"title": "T3", "body": "B3", "version": 2}, headers=auth)
    assert r.status_code == 200 and r.json()["version"] == 3


@pytest.mark.parametrize("how", ["if-match", "body"])
def test_put_stale_version_is_409_with_current(client, auth, how):
    a = create(client, auth)
    client.put(f"/articles/{a['id']}", json={"title": "server", "body": "s", "version": 1}, headers=auth)
    headers, payload = dict(auth), {"title": "mine", "body": "m"}
    if how == "if-match":
        headers["If-Match"] = '"v1"'
    else:
        payload["version"] = 1
    body = assert_error(client.put(f"/articles/{a['id']}", json=payload, headers=headers), 409, "version_conflict")
    current = body["current"]
    check_article(current)
    assert (current["title"], current["version"]) == ("server", 2)


def test_put_weak_if_match_is_accepted(client, auth):
    a = create(client, auth)
    r = client.put(f"/articles/{a['id']}", json={"title": "x", "body": "y"}, headers={**auth, "If-Match": 'W/"v1"'})
    assert r.status_code == 200


def test_put_malformed_if_match_is_400(client, auth):
    a = create(client, auth)
    assert_error(client.put(f"/articles/{a['id']}", json={"title": "x", "body": "y"},
                            headers={**auth, "If-Match": "banana"}), 400, "bad_request")


def test_put_if_match_and_body_version_disagree_is_400(client, auth):
    a = create(client, auth)
    r = client.put(f"/articles/{a['id']}", json={"title": "x", "body": "y", "version": 5},
                   headers={**auth, "If-Match": '"v1"'})
    assert_error(r, 400, "bad_request")


@pytest.mark.parametrize("title", ["", "   ", "x" * 201])
def test_put_invalid_title_is_422(client, auth, title):
    assert_error(client.put(f"/articles/{new_id()}", json={"title": title, "body": "b"}, headers=auth), 422,
                 "validation_failed", field="title")


def test_put_title_of_200_characters_is_fine(client, auth):
    r = client.put(f"/articles/{new_id()}", json={"title": "é" * 200, "body": "b"}, headers=auth)
    assert r.status_code == 201 and r.json()["title"] == "é" * 200


def test_put_validation_comes_before_version_checks(client, auth):
    a = create(client, auth)
    assert_error(client.put(f"/articles/{a['id']}", json={"title": "", "body": "b"}, headers=auth), 422,
                 "validation_failed", field="title")


def test_put_missing_fields_are_422(client, auth):
    assert_error(client.put(f"/articles/{new_id()}", json={"body": "b"}, headers=auth), 422, "validation_failed",
                 field="title")
    assert_error(client.put(f"/articles/{new_id()}", json={"title": "t"}, headers=auth), 422, "validation_failed",
                 field="body")


def test_put_body_id_must_match_url(client, auth):
    assert_error(client.put(f"/articles/{new_id()}", json={"id": "other", "title": "t", "body": "b"}, headers=auth),
                 422, "validation_failed", field="id")


def test_unicode_round_trip(client, auth):
    a = create(client, auth, title="Ünïcødé ✓ 🚀", body="line1\nline2 \"quoted\"")
    got = client.get(f"/articles/{a['id']}", headers=auth).json()
    assert got["title"] == "Ünïcødé ✓ 🚀" and got["body"] == "line1\nline2 \"quoted\""


def test_concurrent_updates_at_same_version_only_one_wins(client, server, auth):
    import httpx

    a = create(client, auth)
    results = []

    def attempt(i):
        with httpx.Client(base_url=server.base_url, timeout=30) as c:
            r = c.put(f"/articles/{a['id']}", json={"title": f"t{i}", "body": ""},
                      headers={**auth, "If-Match": '"v1"'})
            results.append(r.status_code)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == [200] + [409] * 11
    assert client.get(f"/articles/{a['id']}", headers=auth).json()["version"] == 2


# ---------------------------------------------------------------- POST
def test_post_creates(client, auth):
    article_id = new_id()
    r = client.post("/articles", json={"id": article_id, "title": "T", "body": "B"}, headers=auth)
    assert r.status_code == 201
    a = r.json()
    check_article(a)
    assert (a["id"], a["version"]) == (article_id, 1)
    assert r.headers["etag"] == '"v1"'
    assert client.get(f"/articles/{article_id}", headers=auth).json() == a


def test_post_existing_id_is_409_already_exists_with_current(client, auth):
    a = create(client, auth, title="original")
    body = assert_error(client.post("/articles", json={"id": a["id"], "title": "dup", "body": ""}, headers=auth),
                        409, "already_exists")
    assert body["current"] == a


def test_post_validation(client, auth):
    assert_error(client.post("/articles", json={"title": "t", "body": "b"}, headers=auth), 422,
                 "validation_failed", field="id")
    assert_error(client.post("/articles", json={"id": new_id(), "title": "", "body": "b"}, headers=auth), 422,
                 "validation_failed", field="title")
    assert_error(client.post("/articles", json={"id": new_id(), "title": "y" * 201, "body": "b"}, headers=auth),
                 422, "validation_failed", field="title")


# ---------------------------------------------------------------- DELETE
def test_delete_then_404(client, auth):
    a = create(client, auth)
    r = client.delete(f"/articles/{a['id']}", headers=auth)
    assert r.status_code == 204 and r.content == b""
    assert_error(client.get(f"/articles/{a['id']}", headers=auth), 404, "not_found")
    assert_error(client.delete(f"/articles/{a['id']}", headers=auth), 404, "not_found")


def test_delete_with_if_match(client, auth):
    a = create(client, auth)
    client.put(f"/articles/{a['id']}", json={"title": "v2", "body": "", "version": 1}, headers=auth)
    body = assert_error(client.delete(f"/articles/{a['id']}", headers={**auth, "If-Match": '"v1"'}), 409,
                        "version_conflict")
    assert body["current"]["version"] == 2
    assert client.delete(f"/articles/{a['id']}", headers={**auth, "If-Match": '"v2"'}).status_code == 204


def test_recreate_after_delete_starts_at_version_1(client, auth):
    a = create(client, auth)
    client.delete(f"/articles/{a['id']}", headers=auth)
    again = create(client, auth, article_id=a["id"])
    assert again["version"] == 1
