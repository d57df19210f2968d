"""Documents: free-form records kept as sent (Docs/contract.md, "Documents"): any members beside
id, version and updated_at; integers of any size exactly; nesting to 10,000 levels, deeper
refused with a 400; the articles' semantics otherwise (ETag/304 lists, create-or-replace PUT
with "v<n>" tags, 428/409-with-current/422, DELETE)."""

import json
import sys
import uuid

from conftest import assert_error

# This process reads the deep replies too.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 25_000))

BIG = 18446744073709551617


def deep(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def put(client, auth, document_id, text, headers=None):
    return client.put(f"/documents/{document_id}", content=text.encode(),
                      headers={**auth, "Content-Type": "application/json", **(headers or {})})


def test_needs_auth(client):
    assert_error(client.get("/documents"), 401, "unauthorized")


def test_any_members_kept_exactly(client, auth):
    document_id = str(uuid.uuid4())
    nested = deep(9_998, str(BIG))
    text = '{"big":%d,"meta":%s,"tags":["a"],"title":"T"}' % (BIG, nested)
    r = put(client, auth, document_id, text)
    assert r.status_code == 201, r.text[:200]
    assert r.headers["etag"] == '"v1"'
    assert f'"big":{BIG}' in r.text and f'"meta":{nested}' in r.text
    listed = client.get("/documents", headers=auth)
    assert listed.status_code == 200 and f'"meta":{nested}' in listed.text
    (document,) = json.loads(listed.text)
    assert document["big"] == BIG and document["id"] == document_id and document["version"] == 1
    etag = listed.headers["etag"]
    assert client.get("/documents", headers={**auth, "If-None-Match": etag}).status_code == 304
    one = client.get(f"/documents/{document_id}", headers=auth)
    assert one.status_code == 200 and json.loads(one.text) == document


def test_replace_needs_the_base_version_and_conflicts_carry_the_current(client, auth):
    document_id = str(uuid.uuid4())
    assert put(client, auth, document_id, '{"n":1}').status_code == 201
    assert_error(put(client, auth, document_id, '{"n":2}'), 428, "precondition_required")
    r = put(client, auth, document_id, '{"n":2}', {"If-Match": '"v1"'})
    assert r.status_code == 200 and r.json()["version"] == 2 and r.json()["n"] == 2
    body = assert_error(put(client, auth, document_id, '{"n":3}', {"If-Match": '"v1"'}), 409,
                        "version_conflict")
    assert body["current"]["n"] == 2 and body["current"]["version"] == 2
    assert_error(put(client, auth, document_id, '{"id":"other"}', {"If-Match": '"v2"'}), 422,
                 "validation_failed", field="id")
    assert client.delete(f"/documents/{document_id}", headers={**auth, "If-Match": '"v2"'}).status_code == 204
    assert_error(client.get(f"/documents/{document_id}", headers=auth), 404, "not_found")


def test_nesting_past_the_limit_and_numbers_past_a_double_are_refused(client, auth):
    document_id = str(uuid.uuid4())
    assert_error(put(client, auth, document_id, '{"meta":%s}' % deep(100_000)), 400, "bad_request")
    assert_error(put(client, auth, document_id, '{"n":1e400}'), 422, "validation_failed")
    assert client.get("/documents", headers=auth).json() == []
