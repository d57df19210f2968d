"""Notes (Docs/notes.md): the second collection, with other field names (note_id, rev,
modified_at), "r<n>" tags, and the articles' semantics: ETag/304 lists, create-or-replace PUT,
428/409-with-current/422, DELETE, Idempotency-Key."""

import re
import uuid

from conftest import assert_error

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def new_id() -> str:
    return str(uuid.uuid4())


def create(client, auth, note_id=None, text="Hello", tags=None):
    note_id = note_id or new_id()
    body = {"text": text} if tags is None else {"text": text, "tags": tags}
    r = client.put(f"/notes/{note_id}", json=body, headers=auth)
    assert r.status_code == 201, r.text
    return r.json()


def check_note(n: dict) -> None:
    assert set(n) == {"note_id", "text", "tags", "rev", "modified_at"}, n
    assert isinstance(n["rev"], int) and isinstance(n["tags"], list)
    assert TIMESTAMP.match(n["modified_at"]), n["modified_at"]


def test_needs_auth(client):
    assert_error(client.get("/notes"), 401, "unauthorized")
    assert_error(client.put(f"/notes/{new_id()}", json={"text": "x"}), 401, "unauthorized")


def test_create_then_list_with_etag_and_304(client, auth):
    r = client.get("/notes", headers=auth)
    assert r.status_code == 200 and r.json() == []
    assert r.headers["cache-control"] == "max-age=5, stale-while-revalidate=30"
    etag = r.headers["etag"]
    assert client.get("/notes", headers={**auth, "If-None-Match": etag}).status_code == 304
    n = create(client, auth, text="first", tags=["a", "b"])
    check_note(n)
    assert n["rev"] == 1 and n["tags"] == ["a", "b"] and n["text"] == "first"
    r = client.get("/notes", headers={**auth, "If-None-Match": etag})
    assert r.status_code == 200 and r.headers["etag"] != etag
    assert [x["note_id"] for x in r.json()] == [n["note_id"]]
    assert create(client, auth)["tags"] == [], "tags default to an empty list"


def test_get_one_with_r_tags(client, auth):
    n = create(client, auth)
    r = client.get(f"/notes/{n['note_id']}", headers=auth)
    assert r.status_code == 200 and r.json() == n
    assert r.headers["etag"] == '"r1"'
    r304 = client.get(f"/notes/{n['note_id']}", headers={**auth, "If-None-Match": '"r1"'})
    assert r304.status_code == 304 and r304.content == b""
    assert_error(client.get(f"/notes/{new_id()}", headers=auth), 404, "not_found")


def test_update_needs_the_base_revision(client, auth):
    n = create(client, auth)
    path = f"/notes/{n['note_id']}"
    assert_error(client.put(path, json={"text": "x"}, headers=auth), 428, "precondition_required")
    r = client.put(path, json={"text": "second", "tags": ["t"]}, headers={**auth, "If-Match": '"r1"'})
    assert r.status_code == 200, r.text
    assert r.json()["rev"] == 2 and r.json()["tags"] == ["t"] and r.headers["etag"] == '"r2"'
    # The base in the body, as for articles.
    r = client.put(path, json={"text": "third", "rev": 2}, headers=auth)
    assert r.status_code == 200 and r.json()["rev"] == 3
    # The articles' tag is not a notes tag.
    assert_error(client.put(path, json={"text": "x"}, headers={**auth, "If-Match": '"v3"'}), 400,
                 "bad_request", field="If-Match")
    assert_error(client.put(path, json={"text": "x", "rev": 2}, headers={**auth, "If-Match": '"r3"'}), 400,
                 "bad_request", field="rev")


def test_stale_revision_is_409_with_current(client, auth):
    n = create(client, auth, text="base", tags=["x"])
    path = f"/notes/{n['note_id']}"
    client.put(path, json={"text": "theirs", "tags": ["x"]}, headers={**auth, "If-Match": '"r1"'})
    body = assert_error(client.put(path, json={"text": "mine"}, headers={**auth, "If-Match": '"r1"'}), 409,
                        "version_conflict")
    current = body["current"]
    check_note(current)
    assert current["rev"] == 2 and current["text"] == "theirs"


def test_validation(client, auth):
    path = f"/notes/{new_id()}"
    assert_error(client.put(path, json={"tags": []}, headers=auth), 422, "validation_failed", field="text")
    assert_error(client.put(path, json={"text": 3}, headers=auth), 422, "validation_failed", field="text")
    assert_error(client.put(path, json={"text": "x", "tags": "a,b"}, headers=auth), 422, "validation_failed",
                 field="tags")
    assert_error(client.put(path, json={"text": "x", "tags": ["ok", ""]}, headers=auth), 422,
                 "validation_failed", field="tags")
    assert_error(client.put(path, json={"text": "x", "title": "t"}, headers=auth), 422, "validation_failed",
                 field="title")
    assert_error(client.put(path, json={"text": "x" * 10_001}, headers=auth), 422, "validation_failed",
                 field="text")
    assert_error(client.put(path, json={"text": "x", "note_id": "other"}, headers=auth), 422,
                 "validation_failed", field="note_id")
    assert client.get("/notes", headers=auth).json() == [], "nothing was stored"


def test_delete(client, auth):
    n = create(client, auth)
    path = f"/notes/{n['note_id']}"
    client.put(path, json={"text": "v2"}, headers={**auth, "If-Match": '"r1"'})
    body = assert_error(client.delete(path, headers={**auth, "If-Match": '"r1"'}), 409, "version_conflict")
    assert body["current"]["rev"] == 2
    assert client.delete(path, headers={**auth, "If-Match": '"r2"'}).status_code == 204
    assert_error(client.delete(path, headers=auth), 404, "not_found")


def test_idempotency_key_replays_and_refuses_another_payload(client, auth):
    note_id = new_id()
    key = {"Idempotency-Key": str(uuid.uuid4())}
    first = client.put(f"/notes/{note_id}", json={"text": "once"}, headers={**auth, **key})
    assert first.status_code == 201
    again = client.put(f"/notes/{note_id}", json={"text": "once"}, headers={**auth, **key})
    assert again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert client.get(f"/notes/{note_id}", headers=auth).json()["rev"] == 1, "applied once"
    assert_error(client.put(f"/notes/{note_id}", json={"text": "other"}, headers={**auth, **key}), 422,
                 "idempotency_key_reused")


def test_reset_empties_notes(client, auth):
    create(client, auth)
    assert client.post("/__reset").status_code == 200
    fresh = {"Authorization": "Bearer " + client.post(
        "/auth/token", json={"username": "alice", "password": "secret"}).json()["access_token"]}
    assert client.get("/notes", headers=fresh).json() == []
