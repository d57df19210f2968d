"""In-process checks of helpers and of the 500 path, which no real route triggers on purpose."""

import re

import pytest
import asyncio

import httpx

from courier_backend.app import create_app, none_match, parse_version_tag
from courier_backend.config import Settings
from courier_backend.errors import ApiError, default_code
from courier_backend.middleware import CourierMiddleware, is_loopback, normalize_idempotency_key
from courier_backend.store import now_rfc3339


def test_timestamp_format():
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", now_rfc3339())


@pytest.mark.parametrize("value,expected", [('"v3"', 3), ('W/"v12"', 12), ("*", "*"), ('  "v0" ', 0)])
def test_parse_version_tag(value, expected):
    assert parse_version_tag(value) == expected


@pytest.mark.parametrize("value", ['"3"', '"v"', '"v1", "v2"', '"v-1"', '"v١"', ""])
def test_parse_version_tag_rejects(value):
    with pytest.raises(ApiError) as info:
        parse_version_tag(value)
    assert info.value.status == 400


def test_none_match():
    assert none_match('"v1"', '"v1"')
    assert none_match('W/"v1"', '"v1"')
    assert none_match('"a", "v1"', '"v1"')
    assert none_match("*", '"v1"')
    assert not none_match('"v2"', '"v1"')
    assert not none_match(None, '"v1"')


def test_idempotency_key_normalization():
    assert normalize_idempotency_key('"abc"') == "abc"
    assert normalize_idempotency_key(" abc ") == "abc"
    assert normalize_idempotency_key(None) is None


def test_loopback():
    assert is_loopback(("127.0.0.1", 1)) and is_loopback(("::1", 1)) and is_loopback(("::ffff:127.0.0.2", 1))
    assert not is_loopback(("10.0.0.1", 1)) and not is_loopback(None)


def test_default_codes():
    assert default_code(503) == "service_unavailable"
    assert default_code(429) == "too_many_requests"
    assert default_code(502) == "bad_gateway"
    assert default_code(599) == "http_599"


def test_unhandled_exception_is_json_500(tmp_path):
    settings = Settings(data_dir=str(tmp_path), token_ttl=60, refresh_ttl=60, max_upload=100, max_body=0,
                        hooks="loopback")
    api, store = create_app(settings)

    @api.get("/boom")
    async def boom():
        raise RuntimeError("boom")

    @api.post("/boom")
    async def boom_post():
        raise RuntimeError("boom")

    async def run():
        transport = httpx.ASGITransport(app=CourierMiddleware(api, store), raise_app_exceptions=False,
                                        client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            r = await c.get("/boom")
            assert r.status_code == 500
            assert r.json()["code"] == "internal_error"
            # A 5xx is not stored under an Idempotency-Key.
            for _ in range(2):
                r = await c.post("/boom", content=b"x", headers={"Idempotency-Key": "k"})
                assert r.status_code == 500 and "idempotent-replayed" not in r.headers
            assert (await c.get("/__log")).status_code == 200

    asyncio.run(run())
    assert [e["status"] for e in store.log_entries()] == [500, 500, 500]
