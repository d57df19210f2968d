"""GET/HEAD /photos/{id} for resumable downloads: validators, ranges, If-Range, 416, Repr-Digest, 304."""

import base64
import hashlib

import pytest


def place(client, size: int, seed: int = 0, photo_id: str | None = None) -> dict:
    body = {"size": size, "seed": seed}
    if photo_id:
        body["id"] = photo_id
    r = client.post("/__photos", json=body)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def photo(client, auth):
    p = place(client, 3 * 1024 * 1024 + 17, seed=7)
    full = client.get(f"/photos/{p['id']}", headers=auth)
    assert full.status_code == 200
    return p, full


def test_whole_photo_with_validators_and_digest(client, auth, photo):
    p, full = photo
    assert hashlib.sha256(full.content).hexdigest() == p["sha256"]
    assert len(full.content) == p["size"]
    assert full.headers["etag"] == f'"{p["sha256"]}"'
    assert full.headers["accept-ranges"] == "bytes"
    assert full.headers["cache-control"] == "public"  # any user may read it (Docs/contract.md)
    assert "last-modified" in full.headers
    digest = base64.b64encode(hashlib.sha256(full.content).digest()).decode()
    assert full.headers["repr-digest"] == f"sha-256=:{digest}:"


def test_head_has_the_same_fields_and_no_body(client, auth, photo):
    p, full = photo
    head = client.head(f"/photos/{p['id']}", headers=auth)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(p["size"])
    for name in ("etag", "last-modified", "repr-digest", "accept-ranges", "cache-control"):
        assert head.headers[name] == full.headers[name]


def test_one_range_is_206_with_content_range(client, auth, photo):
    p, full = photo
    url = f"/photos/{p['id']}"
    open_ended = client.get(url, headers={**auth, "Range": "bytes=1000-"})
    assert open_ended.status_code == 206
    assert open_ended.headers["content-range"] == f"bytes 1000-{p['size'] - 1}/{p['size']}"
    assert open_ended.content == full.content[1000:]
    closed = client.get(url, headers={**auth, "Range": "bytes=10-19"})
    assert closed.status_code == 206 and closed.content == full.content[10:20]
    suffix = client.get(url, headers={**auth, "Range": "bytes=-5"})
    assert suffix.status_code == 206 and suffix.content == full.content[-5:]
    # Several ranges are not served as multipart: the whole file instead.
    several = client.get(url, headers={**auth, "Range": "bytes=0-1,5-6"})
    assert several.status_code == 200 and several.content == full.content


def test_if_range_with_current_etag_or_date_keeps_the_range(client, auth, photo):
    p, full = photo
    url = f"/photos/{p['id']}"
    by_tag = client.get(url, headers={**auth, "Range": "bytes=100-", "If-Range": full.headers["etag"]})
    assert by_tag.status_code == 206 and by_tag.content == full.content[100:]
    by_date = client.get(url, headers={**auth, "Range": "bytes=100-", "If-Range": full.headers["last-modified"]})
    assert by_date.status_code == 206


def test_if_range_with_an_old_or_weak_validator_sends_the_whole_photo(client, auth, photo):
    p, full = photo
    url = f"/photos/{p['id']}"
    for validator in ('"0000"', "W/" + full.headers["etag"], "Mon, 01 Jan 2001 00:00:00 GMT"):
        r = client.get(url, headers={**auth, "Range": "bytes=100-", "If-Range": validator})
        assert r.status_code == 200, validator
        assert r.content == full.content


def test_replaced_content_changes_the_validators(client, auth, photo):
    p, full = photo
    again = place(client, p["size"], seed=8, photo_id=p["id"])
    assert again["sha256"] != p["sha256"]
    r = client.get(f"/photos/{p['id']}", headers={**auth, "Range": "bytes=100-", "If-Range": full.headers["etag"]})
    assert r.status_code == 200 and r.headers["etag"] == f'"{again["sha256"]}"'
    r = client.get(f"/photos/{p['id']}",
                   headers={**auth, "Range": "bytes=100-", "If-Range": full.headers["last-modified"]})
    assert r.status_code == 200


def test_unsatisfiable_range_is_416(client, auth, photo):
    p, _ = photo
    r = client.get(f"/photos/{p['id']}", headers={**auth, "Range": f"bytes={p['size']}-"})
    assert r.status_code == 416
    assert r.headers["content-range"] == f"bytes */{p['size']}"


def test_if_none_match_is_304(client, auth, photo):
    p, full = photo
    r = client.get(f"/photos/{p['id']}", headers={**auth, "If-None-Match": full.headers["etag"]})
    assert r.status_code == 304 and r.content == b""
    assert r.headers["etag"] == full.headers["etag"]
    assert r.headers["cache-control"] == "public"


def test_served_log_counts_body_bytes_and_ranges(client, auth, photo):
    p, _ = photo
    client.get(f"/photos/{p['id']}", headers={**auth, "Range": "bytes=1000-"})
    entries = [e for e in client.get("/__photos/served").json() if e["id"] == p["id"]]
    assert entries[-1:] == [{"id": p["id"], "method": "GET", "range": "bytes=1000-", "if_range": None,
                        "status": 206, "bytes": p["size"] - 1000, "done": True}]


def test_serve_settings_bad_digest_and_shifted_content_range(client, auth, photo):
    p, full = photo
    client.post(f"/__photos/{p['id']}/serve", json={"bad_digest": True, "content_range_shift": 1})
    r = client.get(f"/photos/{p['id']}", headers={**auth, "Range": "bytes=10-"})
    assert r.headers["repr-digest"] != full.headers["repr-digest"]
    assert r.headers["content-range"].startswith("bytes 11-")
    client.post(f"/__photos/{p['id']}/serve", json={})
    r = client.get(f"/photos/{p['id']}", headers=auth)
    assert r.headers["repr-digest"] == full.headers["repr-digest"]


def test_unknown_photo_is_404(client, auth):
    assert client.get("/photos/nope", headers=auth).status_code == 404
    assert client.head("/photos/nope", headers=auth).status_code == 404
