"""POST /photos: multipart upload, limits, formats, bad bodies, storage on disk."""

import hashlib
import os

import httpx
import pytest

from conftest import assert_error, start_server, stop_server
from multipart_util import body, content_type, part

JPEG = b"\xff\xd8\xff\xe0" + os.urandom(5000) + b"\xff\xd9"


def post_photo(client, auth, data: bytes, ctype: str | None = None, headers=None):
    return client.post("/photos", content=data, headers={**auth, "Content-Type": ctype or content_type(),
                                                          **(headers or {})})


def test_upload_photo(client, auth, server):
    r = client.post("/photos", headers=auth, data={"title": "Sunset"},
                    files={"file": ("sunset.jpg", JPEG, "image/jpeg")})
    assert r.status_code == 201, r.text
    p = r.json()
    assert set(p) == {"id", "url", "title", "filename", "content_type", "size", "sha256"}
    assert p["title"] == "Sunset"
    assert p["filename"] == "sunset.jpg"
    assert p["content_type"] == "image/jpeg"
    assert p["size"] == len(JPEG)
    assert p["sha256"] == hashlib.sha256(JPEG).hexdigest()
    assert p["url"].startswith(server.base_url) and p["id"] in p["url"]
    # Stored on disk in the data dir, and served back.
    assert (server.data_dir / "photos" / p["id"]).read_bytes() == JPEG
    got = client.get(p["url"], headers=auth)
    assert got.status_code == 200 and got.content == JPEG
    assert got.headers["content-type"].startswith("image/jpeg")
    assert [x["id"] for x in client.get("/photos", headers=auth).json()] == [p["id"]]


def test_other_image_types_and_parameters(client, auth):
    for ctype in ("image/png", "image/heic", "image/webp", "IMAGE/JPEG", "image/jpeg; name=x"):
        r = post_photo(client, auth, body(part("title", b"t"), part("file", b"img", "a.bin", ctype)))
        assert r.status_code == 201, (ctype, r.text)


def test_raw_utf8_filename_and_title(client, auth):
    data = body(part("title", "Crème brûlée 🍮".encode()), part("file", JPEG, "crème brûlée.jpg", "image/jpeg"))
    r = post_photo(client, auth, data)
    assert r.status_code == 201, r.text
    assert r.json()["filename"] == "crème brûlée.jpg"
    assert r.json()["title"] == "Crème brûlée 🍮"


def test_field_order_does_not_matter(client, auth):
    r = post_photo(client, auth, body(part("file", JPEG, "a.jpg", "image/jpeg"), part("title", b"after")))
    assert r.status_code == 201 and r.json()["title"] == "after"


def test_non_image_is_unsupported_format(client, auth):
    for ctype in ("application/pdf", "text/plain", "application/octet-stream", "image/", "imagefoo/bar"):
        r = post_photo(client, auth, body(part("title", b"t"), part("file", b"%PDF-1.4", "doc.pdf", ctype)))
        assert_error(r, 422, "unsupported_format")


def test_file_part_without_content_type_is_unsupported_format(client, auth):
    assert_error(post_photo(client, auth, body(part("title", b"t"), part("file", JPEG, "a.jpg"))), 422,
                 "unsupported_format")


def test_no_file_part_is_validation_failed(client, auth):
    assert_error(post_photo(client, auth, body(part("title", b"t"))), 422, "validation_failed", field="file")
    assert_error(post_photo(client, auth, body(part("title", b"t"), part("photo", JPEG, "a.jpg", "image/jpeg"))),
                 422, "validation_failed", field="file")
    # An empty form (just the close delimiter) parses fine: no file.
    assert_error(post_photo(client, auth, body()), 422, "validation_failed", field="file")


def test_missing_title_is_validation_failed(client, auth):
    assert_error(post_photo(client, auth, body(part("file", JPEG, "a.jpg", "image/jpeg"))), 422,
                 "validation_failed", field="title")


def test_over_limit_is_image_too_large_and_exact_limit_is_fine(client, auth, server):
    client.post("/__config", json={"max_upload": 4096})
    ok = post_photo(client, auth, body(part("title", b"t"), part("file", b"x" * 4096, "a.jpg", "image/jpeg")))
    assert ok.status_code == 201, ok.text
    r = post_photo(client, auth, body(part("title", b"t"), part("file", b"x" * 4097, "a.jpg", "image/jpeg")))
    assert_error(r, 422, "image_too_large")
    # Nothing half-written is left behind.
    leftovers = [n for n in os.listdir(server.data_dir / "photos") if n.startswith(".upload-")]
    assert leftovers == []


def test_default_limit_is_10_mib(client, auth):
    ten = 10 * 1024 * 1024
    assert client.get("/__config").json()["max_upload"] == ten
    r = post_photo(client, auth, body(part("title", b"t"), part("file", b"\0" * (ten + 1), "a.jpg", "image/jpeg")))
    assert_error(r, 422, "image_too_large")
    r = post_photo(client, auth, body(part("title", b"t"), part("file", b"\0" * ten, "a.jpg", "image/jpeg")))
    assert r.status_code == 201 and r.json()["size"] == ten


def test_limit_from_environment(tmp_path):
    srv = start_server(tmp_path, {"COURIER_BACKEND_MAX_UPLOAD": "1000"})
    try:
        with httpx.Client(base_url=srv.base_url, timeout=10) as c:
            token = c.post("/auth/token", json={"username": "bob", "password": "secret"}).json()["access_token"]
            auth = {"Authorization": f"Bearer {token}"}
            r = post_photo(c, auth, body(part("title", b"t"), part("file", b"x" * 1001, "a.png", "image/png")))
            assert_error(r, 422, "image_too_large")
            r = post_photo(c, auth, body(part("title", b"t"), part("file", b"x" * 1000, "a.png", "image/png")))
            assert r.status_code == 201
    finally:
        stop_server(srv.process)


@pytest.mark.parametrize("name,data,ctype", [
    ("truncated, no close delimiter", body(part("title", b"t"), part("file", JPEG, "a.jpg", "image/jpeg"),
                                           close=False), None),
    ("cut in the middle of a part", body(part("title", b"t"), part("file", JPEG, "a.jpg", "image/jpeg"))[:3000],
     None),
    ("LF instead of CRLF", body(part("title", b"t"), part("file", JPEG, "a.jpg", "image/jpeg")).replace(b"\r\n", b"\n"),
     None),
    ("wrong boundary", body(part("title", b"t"), boundary="other"), None),
    ("empty body", b"", None),
    ("garbage", b"hello world", None),
    ("no boundary parameter", body(part("title", b"t")), "multipart/form-data"),
    ("not multipart", b'{"title": "t"}', "application/json"),
    ("part without Content-Disposition", body(b"Content-Type: image/jpeg\r\n\r\nxx"), None),
    ("part without name", body(part("x", b"v", disposition="form-data; filename=\"a.jpg\"")), None),
])
def test_unparseable_body_is_bad_multipart(client, auth, name, data, ctype):
    assert_error(post_photo(client, auth, data, ctype), 400, "bad_multipart")


def test_no_content_type_is_bad_multipart(client, auth):
    r = client.post("/photos", content=b"abc", headers=auth)
    assert_error(r, 400, "bad_multipart")


def test_preamble_and_epilogue_are_ignored(client, auth):
    data = b"\r\n" + body(part("title", b"t"), part("file", JPEG, "a.jpg", "image/jpeg")) + b"epilogue\r\n"
    assert post_photo(client, auth, data).status_code == 201


def test_large_upload_is_streamed_not_buffered(client, auth, server):
    """64 MiB through /photos: the server's peak RSS must not grow by anything like the body size."""
    size = 64 * 1024 * 1024
    client.post("/__config", json={"max_upload": size})
    before = server.rss_peak_kb()

    def gen():
        yield f"--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbig\r\n".encode()
        yield b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.jpg\"\r\n"
        yield b"Content-Type: image/jpeg\r\n\r\n"
        chunk = b"\xab" * (1024 * 1024)
        for _ in range(size // len(chunk)):
            yield chunk
        yield b"\r\n--b--\r\n"

    r = client.post("/photos", content=gen(), headers={**auth, "Content-Type": "multipart/form-data; boundary=b"})
    assert r.status_code == 201, r.text
    expected = hashlib.sha256(b"\xab" * size).hexdigest()
    assert r.json()["size"] == size and r.json()["sha256"] == expected
    grown_mb = (server.rss_peak_kb() - before) / 1024
    assert grown_mb < 32, f"peak RSS grew by {grown_mb:.0f} MiB for a 64 MiB upload"
