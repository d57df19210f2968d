"""POST /upload: no auth, echoes one entry a part."""

import hashlib

from conftest import assert_error
from multipart_util import body, content_type, part


def post(client, data: bytes, ctype: str | None = None):
    return client.post("/upload", content=data, headers={"Content-Type": ctype or content_type()})


def test_echo_fields_and_files_in_order(client):
    f1 = b"\x00\x01binary\r\n--not-a-boundary\r\n"
    data = body(
        part("title", "Grüße".encode()),
        part("file", f1, "a.bin", "application/octet-stream"),
        part("note", b""),
        part("pic", b"", "empty.png", "image/png"),
    )
    r = post(client, data)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json; charset=utf-8"
    assert r.json() == [
        {"field": "title", "value": "Grüße"},
        {"field": "file", "filename": "a.bin", "content_type": "application/octet-stream", "size": len(f1),
         "sha256": hashlib.sha256(f1).hexdigest()},
        {"field": "note", "value": ""},
        {"field": "pic", "filename": "empty.png", "content_type": "image/png", "size": 0,
         "sha256": hashlib.sha256(b"").hexdigest()},
    ]


def test_with_httpx_encoder(client):
    r = client.post("/upload", data={"a": "1", "b": "two"}, files={"f": ("x.txt", b"hello", "text/plain")})
    assert r.status_code == 200
    assert r.json() == [
        {"field": "a", "value": "1"},
        {"field": "b", "value": "two"},
        {"field": "f", "filename": "x.txt", "content_type": "text/plain", "size": 5,
         "sha256": hashlib.sha256(b"hello").hexdigest()},
    ]


def test_file_without_content_type_reports_null(client):
    r = post(client, body(part("f", b"abc", "a.txt")))
    assert r.json() == [{"field": "f", "filename": "a.txt", "content_type": None, "size": 3,
                         "sha256": hashlib.sha256(b"abc").hexdigest()}]


def test_escaped_and_utf8_filenames(client):
    # Browsers and curl escape '"' as %22; the parser reports what was sent.
    data = body(part("f", b"x", "a%22b.txt", "text/plain"), part("g", b"y", "naïve ✓.txt", "text/plain"))
    names = [e["filename"] for e in post(client, data).json()]
    assert names == ["a%22b.txt", "naïve ✓.txt"]


def test_filename_star_alone_is_decoded(client):
    disp = "form-data; name=\"f\"; filename*=UTF-8''na%C3%AFve.txt"
    r = post(client, body(part("f", b"x", content_type="text/plain", disposition=disp)))
    assert r.json()[0]["filename"] == "naïve.txt"


def test_no_auth_needed_and_empty_form(client):
    assert post(client, body()).json() == []


def test_truncated_is_bad_multipart(client):
    assert_error(post(client, body(part("a", b"1"), close=False)), 400, "bad_multipart")
    assert_error(post(client, b"", "text/plain"), 400, "bad_multipart")


def test_large_file_is_hashed_in_a_stream(client, server):
    size = 32 * 1024 * 1024
    before = server.rss_peak_kb()

    def gen():
        yield b"--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"big\"\r\n\r\n"
        for _ in range(32):
            yield b"\x5a" * (1024 * 1024)
        yield b"\r\n--b--\r\n"

    r = client.post("/upload", content=gen(), headers={"Content-Type": "multipart/form-data; boundary=b"})
    assert r.status_code == 200
    assert r.json()[0]["size"] == size
    assert r.json()[0]["sha256"] == hashlib.sha256(b"\x5a" * size).hexdigest()
    assert (server.rss_peak_kb() - before) / 1024 < 32
