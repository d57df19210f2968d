"""The OpenAPI document: what the server serves is Backend/openapi.json, every public route is in
it, and real replies have the shapes it promises (so a client generated from it can read them)."""

import json
import uuid

from conftest import BACKEND_DIR

from courier_backend import openapi
from courier_backend.app import fastapi_app

CHECKED_IN = BACKEND_DIR / "openapi.json"
REGENERATE = "cd Backend && .venv/bin/python -m courier_backend.openapi > openapi.json"


def served(client) -> dict:
    r = client.get("/openapi.json")
    assert r.status_code == 200, r.text
    return r.json()


def test_served_document_is_the_checked_in_file(client):
    checked_in = json.loads(CHECKED_IN.read_text(encoding="utf-8"))
    assert served(client) == checked_in, f"Backend/openapi.json is stale: {REGENERATE}"


def test_checked_in_file_is_canonical():
    text = CHECKED_IN.read_text(encoding="utf-8")
    assert text == openapi.canonical(json.loads(text)), f"not canonical: {REGENERATE}"


def test_every_public_route_is_described():
    routed = openapi.public_operations(fastapi_app)
    described = set(openapi.OPERATIONS)
    assert routed - described == set(), "routes without an entry in courier_backend/openapi.py"
    assert described - routed == set(), "entries in courier_backend/openapi.py for no route"


def test_hooks_and_tus_are_left_out(client):
    paths = served(client)["paths"]
    assert not [p for p in paths if p.startswith("/__") or p.startswith("/uploads")]


def test_operation_ids_are_unique_and_named(client):
    ids = [op["operationId"] for item in served(client)["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids)) and all(ids)


def resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


TYPES = {"string": str, "integer": int, "boolean": bool, "array": list, "object": dict}


def conforms(doc: dict, schema: dict, value, where: str = "$") -> None:
    """The subset of JSON Schema the document uses: type, required, properties, items."""
    schema = resolve(doc, schema)
    kind = schema.get("type")
    if kind is not None:
        assert isinstance(value, TYPES[kind]) and not (kind == "integer" and isinstance(value, bool)), \
            f"{where}: {value!r} is not {kind}"
    for name in schema.get("required", []):
        assert name in value, f"{where}: no {name!r} in {value!r}"
    for name, sub in schema.get("properties", {}).items():
        if isinstance(value, dict) and name in value:
            conforms(doc, sub, value[name], f"{where}.{name}")
    if kind == "array":
        for index, item in enumerate(value):
            conforms(doc, schema.get("items", {}), item, f"{where}[{index}]")


def check(doc: dict, path: str, method: str, response) -> None:
    answers = doc["paths"][path][method]["responses"]
    assert str(response.status_code) in answers, (path, method, response.status_code)
    answer = answers[str(response.status_code)]
    content = answer.get("content", {}).get("application/json")
    if content is not None:
        conforms(doc, content["schema"], response.json())


def test_replies_have_the_documented_shapes(client):
    doc = served(client)
    check(doc, "/health", "get", client.get("/health"))
    check(doc, "/auth/token", "post",
          client.post("/auth/token", json={"username": "alice", "password": "wrong"}))
    r = client.post("/auth/token", json={"username": "alice", "password": "secret"})
    check(doc, "/auth/token", "post", r)
    tokens = r.json()
    check(doc, "/auth/refresh", "post",
          client.post("/auth/refresh", json={"refresh_token": tokens["refresh_token"]}))
    auth = {"Authorization": f"Bearer {client.post('/auth/token', json={'username': 'alice', 'password': 'secret'}).json()['access_token']}"}
    check(doc, "/articles", "get", client.get("/articles"))
    article_id = str(uuid.uuid4())
    check(doc, "/articles", "post",
          client.post("/articles", json={"id": article_id, "title": "T", "body": "B"}, headers=auth))
    check(doc, "/articles", "post",
          client.post("/articles", json={"id": article_id, "title": "T", "body": "B"}, headers=auth))
    check(doc, "/articles", "get", client.get("/articles", headers=auth))
    path = "/articles/{article_id}"
    check(doc, path, "get", client.get(f"/articles/{article_id}", headers=auth))
    check(doc, path, "put", client.put(f"/articles/{article_id}", json={"title": "U", "body": "B", "version": 1},
                                       headers=auth))
    check(doc, path, "put", client.put(f"/articles/{article_id}", json={"title": "U", "body": "B", "version": 1},
                                       headers=auth))
    check(doc, path, "put", client.put(f"/articles/{article_id}", json={"title": "", "body": "B"}, headers=auth))
    check(doc, path, "delete", client.delete(f"/articles/{article_id}", headers=auth))
    check(doc, path, "get", client.get(f"/articles/{article_id}", headers=auth))
    files = {"file": ("a.jpg", b"\xff\xd8\xff\xd9", "image/jpeg")}
    check(doc, "/photos", "post", client.post("/photos", data={"title": "P"}, files=files, headers=auth))
    check(doc, "/photos", "get", client.get("/photos", headers=auth))
    note_id = str(uuid.uuid4())
    check(doc, "/notes/{note_id}", "put",
          client.put(f"/notes/{note_id}", json={"text": "hi", "tags": ["a"]}, headers=auth))
    check(doc, "/notes", "get", client.get("/notes", headers=auth))
    check(doc, "/notes/{note_id}", "get", client.get(f"/notes/{note_id}", headers=auth))
