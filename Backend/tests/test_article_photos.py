"""Articles' optional `photo` (the id of a stored photo of the writer's) and DELETE /photos/{id}."""

import os
import uuid

from conftest import assert_error, login


def bearer(client, username: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(client, username)['access_token']}"}

JPEG = b"\xff\xd8\xff\xe0" + os.urandom(2000) + b"\xff\xd9"


def store_photo(client, auth) -> str:
    r = client.post("/photos", headers=auth, data={"title": "Sunset"},
                    files={"file": ("sunset.jpg", JPEG, "image/jpeg")})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_put_with_photo_returns_and_lists_it(client, auth):
    photo = store_photo(client, auth)
    article_id = str(uuid.uuid4())
    r = client.put(f"/articles/{article_id}", headers=auth, json={"title": "T", "body": "", "photo": photo})
    assert r.status_code == 201, r.text
    assert r.json()["photo"] == photo
    assert client.get(f"/articles/{article_id}", headers=auth).json()["photo"] == photo
    listed = [a for a in client.get("/articles", headers=auth).json() if a["id"] == article_id]
    assert listed[0]["photo"] == photo


def test_article_without_photo_has_no_member(client, auth):
    article_id = str(uuid.uuid4())
    r = client.put(f"/articles/{article_id}", headers=auth, json={"title": "T", "body": ""})
    assert r.status_code == 201 and "photo" not in r.json()


def test_put_without_photo_removes_it_and_replacing_works(client, auth):
    first, second = store_photo(client, auth), store_photo(client, auth)
    article_id = str(uuid.uuid4())
    assert client.put(f"/articles/{article_id}", headers=auth,
                      json={"title": "T", "body": "", "photo": first}).status_code == 201
    r = client.put(f"/articles/{article_id}", headers={**auth, "If-Match": '"v1"'},
                   json={"title": "T", "body": "", "photo": second})
    assert r.status_code == 200 and r.json()["photo"] == second
    r = client.put(f"/articles/{article_id}", headers={**auth, "If-Match": '"v2"'},
                   json={"title": "T", "body": "", "photo": None})
    assert r.status_code == 200 and "photo" not in r.json()


def test_unknown_or_foreign_photo_is_refused_naming_the_field(client, auth):
    article_id = str(uuid.uuid4())
    r = client.put(f"/articles/{article_id}", headers=auth, json={"title": "T", "body": "", "photo": "nope"})
    assert_error(r, 422, "validation_failed", "photo")
    r = client.put(f"/articles/{article_id}", headers=auth, json={"title": "T", "body": "", "photo": 7})
    assert_error(r, 422, "validation_failed", "photo")
    bobs = store_photo(client, bearer(client, "bob"))
    r = client.put(f"/articles/{article_id}", headers=auth, json={"title": "T", "body": "", "photo": bobs})
    assert_error(r, 422, "validation_failed", "photo")
    r = client.post("/articles", headers=auth, json={"id": article_id, "title": "T", "body": "", "photo": bobs})
    assert_error(r, 422, "validation_failed", "photo")
    assert client.get(f"/articles/{article_id}", headers=auth).status_code == 404


def test_post_with_photo(client, auth):
    photo = store_photo(client, auth)
    article_id = str(uuid.uuid4())
    r = client.post("/articles", headers=auth, json={"id": article_id, "title": "T", "body": "", "photo": photo})
    assert r.status_code == 201 and r.json()["photo"] == photo


def test_delete_photo_owner_only_then_404(client, auth, server):
    photo = store_photo(client, auth)
    bob = bearer(client, "bob")
    assert_error(client.delete(f"/photos/{photo}", headers=bob), 404, "not_found")
    assert client.delete(f"/photos/{photo}", headers=auth).status_code == 204
    assert not (server.data_dir / "photos" / photo).exists()
    assert_error(client.delete(f"/photos/{photo}", headers=auth), 404, "not_found")
    assert client.get(f"/photos/{photo}", headers=auth).status_code == 404
    assert client.delete(f"/photos/{photo}").status_code == 401
