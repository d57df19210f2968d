"""Auth: /auth/token, one-use refresh tokens, 401 with WWW-Authenticate, expiry."""

import time

import httpx
import pytest

from conftest import assert_error, login, start_server, stop_server

CHALLENGE = 'Bearer error="invalid_token"'


def test_token_pair_shape(client):
    body = login(client)
    assert set(body) == {"access_token", "refresh_token", "token_type", "expires_in"}
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["access_token"] and body["refresh_token"] and body["access_token"] != body["refresh_token"]


@pytest.mark.parametrize("user", ["alice", "bob"])
def test_demo_users(client, user):
    token = login(client, user)["access_token"]
    assert client.get("/articles", headers={"Authorization": f"Bearer {token}"}).status_code == 200


@pytest.mark.parametrize("payload", [
    {"username": "alice", "password": "wrong"},
    {"username": "mallory", "password": "secret"},
    {"username": "", "password": ""},
])
def test_bad_credentials(client, payload):
    assert_error(client.post("/auth/token", json=payload), 401, "invalid_credentials")


def test_missing_credentials_field(client):
    assert_error(client.post("/auth/token", json={"username": "alice"}), 422, "validation_failed",
                 field="password")


def test_refresh_token_works_once(client):
    first = login(client)
    r = client.post("/auth/refresh", json={"refresh_token": first["refresh_token"]})
    assert r.status_code == 200
    second = r.json()
    assert second["token_type"] == "Bearer" and second["expires_in"] == 3600
    assert second["access_token"] != first["access_token"]
    assert second["refresh_token"] != first["refresh_token"]
    # The new access token works.
    assert client.get("/articles", headers={"Authorization": f"Bearer {second['access_token']}"}).status_code == 200
    # The old refresh token is spent; the new one works once too.
    assert_error(client.post("/auth/refresh", json={"refresh_token": first["refresh_token"]}), 401,
                 "invalid_refresh_token")
    assert client.post("/auth/refresh", json={"refresh_token": second["refresh_token"]}).status_code == 200


def test_unknown_refresh_token(client):
    assert_error(client.post("/auth/refresh", json={"refresh_token": "nope"}), 401, "invalid_refresh_token")
    # An access token is not a refresh token.
    access = login(client)["access_token"]
    assert_error(client.post("/auth/refresh", json={"refresh_token": access}), 401, "invalid_refresh_token")
    assert_error(client.post("/auth/refresh", json={}), 422, "validation_failed", field="refresh_token")


@pytest.mark.parametrize("method,path", [
    ("GET", "/articles"), ("GET", "/articles/x"), ("PUT", "/articles/x"), ("POST", "/articles"),
    ("DELETE", "/articles/x"), ("POST", "/photos"), ("GET", "/photos"),
])
@pytest.mark.parametrize("authorization", [None, "Bearer nope", "Basic YWxpY2U6c2VjcmV0", "Bearer"])
def test_protected_routes_need_a_valid_token(client, method, path, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    r = client.request(method, path, headers=headers, json={"id": "x", "title": "t", "body": "b"})
    assert_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == CHALLENGE


def test_reset_revokes_tokens(client, auth):
    assert client.get("/articles", headers=auth).status_code == 200
    client.post("/__reset")
    assert_error(client.get("/articles", headers=auth), 401, "unauthorized")


def test_expired_token_via_config_hook(client):
    assert client.post("/__config", json={"token_ttl": 1}).json()["token_ttl"] == 1
    pair = login(client)
    assert pair["expires_in"] == 1
    headers = {"Authorization": f"Bearer {pair['access_token']}"}
    assert client.get("/articles", headers=headers).status_code == 200
    time.sleep(1.2)
    r = client.get("/articles", headers=headers)
    assert_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == CHALLENGE
    # The refresh token outlives the access token: one refresh, then the request works again.
    fresh = client.post("/auth/refresh", json={"refresh_token": pair["refresh_token"]}).json()
    assert client.get("/articles", headers={"Authorization": f"Bearer {fresh['access_token']}"}).status_code == 200


def test_token_ttl_from_environment(tmp_path):
    srv = start_server(tmp_path, {"COURIER_BACKEND_TOKEN_TTL": "1"})
    try:
        with httpx.Client(base_url=srv.base_url, timeout=10) as c:
            pair = login(c)
            assert pair["expires_in"] == 1
            headers = {"Authorization": f"Bearer {pair['access_token']}"}
            assert c.get("/articles", headers=headers).status_code == 200
            time.sleep(1.2)
            assert_error(c.get("/articles", headers=headers), 401, "unauthorized")
            # /__reset restores the environment's values, not the defaults.
            c.post("/__config", json={"token_ttl": 50})
            c.post("/__reset")
            assert c.get("/__config").json()["token_ttl"] == 1
    finally:
        stop_server(srv.process)
