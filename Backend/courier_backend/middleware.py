"""The plain-ASGI layer around the FastAPI app: request log, chaos, Idempotency-Key, delay.

For a non-hook request (hooks are paths under /__, loopback only, never logged or failed):
  1. log the request (arrival order); its status is filled in when the response starts
  2. optional early 413 from Content-Length (COURIER_BACKEND_MAX_BODY), before reading the body
  3. chaos: take one armed failure, if any
  4. Idempotency-Key (POST/PUT): in flight -> 409, done -> replay or 422 (an armed failure wins
     over both), new -> mark in flight, run (the app, or the injected failure), store the answer
     unless it is a 5xx, 401, 408, 425 or 429 (a tus creation, POST /uploads, in flight goes to the
     handler instead, which answers with the upload of that key)
  5. delay_ms, then the app (or the injected failure; with `after`, the app runs for real and
     the client gets the failure instead of its response)

A `POST /__hold` makes requests past a count wait before step 2 (`before`) or before their
response starts (`response`), until released: a test's kill point that does not depend on speed.

The request body is always read to its end before a response starts (the send wrapper drains
what the handler left), so the client never sees a response while it is still sending, and the
idempotency fingerprint, sha256(method, path?query, sha256(body)), covers the whole body.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import logging
import re
from typing import Any, Callable

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect

from .errors import JSON_MEDIA_TYPE, default_code, default_message, dumps, send_error, send_raw
from .store import ChaosDecision, IdemBegin, Store

log = logging.getLogger("courier_backend")

IDEMPOTENT_METHODS = ("POST", "PUT")
MAX_STORED_BODY = 4 * 1024 * 1024
# Not stored: the client is meant to retry these with the same key.
UNSTORED_STATUSES = {401, 408, 425, 429}
# Body bytes sent to one tus upload are counted here, whatever the handler (or chaos) does with them.
TUS_UPLOAD_PATH = re.compile(r"^/uploads/([^/]+)$")
TUS_CREATION_PATH = "/uploads"


class _Disconnected(Exception):
    pass


class BodyTap:
    """Wraps `receive`: hashes every body byte and remembers whether the body is complete."""

    def __init__(self, receive, on_bytes: Callable[[int], None] | None = None) -> None:
        self._receive = receive
        self.on_bytes = on_bytes
        self.hasher = hashlib.sha256()
        self.complete = False
        self.disconnected = False
        self.size = 0

    async def receive(self) -> dict:
        if self.complete or self.disconnected:
            # Whoever asks after the end only waits for a disconnect; hand that over directly.
            if self.disconnected:
                return {"type": "http.disconnect"}
            return await self._receive()
        message = await self._receive()
        if message["type"] == "http.request":
            body = message.get("body", b"")
            if body:
                self.hasher.update(body)
                self.size += len(body)
                if self.on_bytes is not None:
                    self.on_bytes(len(body))
            if not message.get("more_body", False):
                self.complete = True
        elif message["type"] == "http.disconnect":
            self.disconnected = True
        return message

    async def drain(self) -> None:
        while not self.complete and not self.disconnected:
            await self.receive()

    def digest(self) -> str:
        return self.hasher.hexdigest()


def normalize_idempotency_key(raw: str | None) -> str | None:
    """The draft sends the key as a structured-field string (`"abc"`); plain tokens are accepted too."""
    if raw is None:
        return None
    key = raw.strip()
    if len(key) >= 2 and key[0] == '"' and key[-1] == '"':
        key = key[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return key


def is_loopback(client: Any) -> bool:
    if not client:
        return False
    host = client[0]
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return host in ("localhost", "testclient")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


class CourierMiddleware:
    def __init__(self, app, store: Store) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path.startswith("/__"):
            await self._hook(scope, receive, send)
            return

        method: str = scope["method"]
        headers = Headers(scope=scope)
        key = normalize_idempotency_key(headers.get("idempotency-key"))
        query = scope.get("query_string", b"").decode("latin-1")
        seq = self.store.log_start(method, path, query, key)

        tus_upload = TUS_UPLOAD_PATH.match(path)
        if tus_upload is not None:
            upload_id = tus_upload.group(1)
            tap = BodyTap(receive, lambda n: self.store.count_upload_bytes(upload_id, n))
        else:
            tap = BodyTap(receive)
        state = {"started": False, "status": None, "completed": False}
        hold = self.store.take_hold(method)

        async def logged_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                if hold is not None and hold.when == "response" and not state["started"]:
                    # Processed (and its idempotency record about to be stored): the answer waits.
                    await self.store.wait_hold(hold)
                if not state["started"]:
                    # Read what the handler left of the body before answering (see module doc).
                    if not tap.complete and not state.get("early"):
                        await tap.drain()
                    state["started"] = True
                    state["status"] = message["status"]
                    self.store.log_status(seq, message["status"])
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                state["completed"] = True
            await send(message)

        try:
            if hold is not None and hold.when == "before":
                await self.store.wait_hold(hold)
            await self._dispatch(scope, tap, logged_send, state, method, path, headers, key)
        except (ClientDisconnect, _Disconnected):
            if not state["started"]:
                self.store.log_status(seq, 499)
        except Exception:
            log.exception("unhandled error in %s %s", method, path)
            if not state["started"]:
                await send_error(logged_send, 500, "internal_error", "The server failed to handle the request.")
            elif not state["completed"]:
                raise  # uvicorn closes the connection: the response cannot be finished
            # else: a complete response went out (Starlette's 500 handler re-raises); keep the connection

    # ------------------------------------------------------------------ hooks
    async def _hook(self, scope, receive, send) -> None:
        mode = self.store.settings.hooks
        if mode == "off" or (mode == "loopback" and not is_loopback(scope.get("client"))):
            tap = BodyTap(receive)
            await tap.drain()
            await send_error(send, 404, "not_found", "No such resource.")
            return
        await self.app(scope, receive, send)

    # ------------------------------------------------------------------ dispatch
    async def _dispatch(self, scope, tap: BodyTap, send, state, method, path, headers, key) -> None:
        max_body = self.store.settings.max_body
        if max_body:
            length = headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > max_body:
                # Like a proxy: refuse before reading the body (no 100 Continue is sent).
                state["early"] = True
                await send_error(send, 413, "payload_too_large",
                                 f"The request body is over the server's limit of {max_body} bytes.",
                                 headers=[("connection", "close")])
                return

        chaos = self.store.take_chaos(path, method)
        if key is not None and method in IDEMPOTENT_METHODS:
            await self._idempotent(scope, tap, send, method, path, headers, key, chaos)
            return
        await self._plain(scope, tap, send, chaos)

    async def _plain(self, scope, tap: BodyTap, send, chaos: ChaosDecision) -> None:
        """No Idempotency-Key: the injected failure or the app."""
        if chaos.fail and not chaos.after:
            await tap.drain()
            await self._sleep(chaos)
            await self._send_chaos(send, chaos)
            return
        await self._sleep(chaos)
        if chaos.fail:  # after: run for real, lose the response
            await self.app(scope, tap.receive, self._swallow(tap))
            await self._send_chaos(send, chaos)
            return
        await self.app(scope, tap.receive, send)

    @staticmethod
    async def _sleep(chaos: ChaosDecision) -> None:
        if chaos.delay_ms:
            await asyncio.sleep(chaos.delay_ms / 1000)

    @staticmethod
    def _swallow(tap: BodyTap):
        async def swallow(message: dict) -> None:
            if message["type"] == "http.response.start":
                await tap.drain()
        return swallow

    def _chaos_app(self, chaos: ChaosDecision):
        async def app(scope, receive, send) -> None:
            await self._send_chaos(send, chaos)
        return app

    async def _send_chaos(self, send, chaos: ChaosDecision) -> None:
        status, retry_after, fmt = chaos.status, chaos.retry_after, chaos.format
        extra: list[tuple[str, str]] = []
        if retry_after is not None:
            extra.append(("retry-after", str(retry_after)))
        code = default_code(status)
        message = "Injected failure: " + default_message(status)
        if status == 401:
            extra.append(("www-authenticate", 'Bearer error="invalid_token"'))
        if chaos.tus:
            extra.append(("tus-resumable", "1.0.0"))
            if status == 412:
                extra.append(("tus-version", "1.0.0"))
        if fmt == "problem":
            body = dumps({"type": "about:blank", "title": default_message(status), "status": status,
                          "detail": message, "code": code})
            await send_raw(send, status, body, "application/problem+json", extra)
        elif fmt == "html":
            body = (f"<html><head><title>{status} {default_message(status)}</title></head>"
                    f"<body><center><h1>{status} {default_message(status)}</h1></center>"
                    "<hr><center>nginx</center></body></html>\n").encode()
            await send_raw(send, status, body, "text/html", extra)
        elif fmt == "empty":
            await send_raw(send, status, b"", None, extra)
        else:
            await send_raw(send, status, dumps({"code": code, "message": message}), JSON_MEDIA_TYPE, extra)

    # ------------------------------------------------------------------ idempotency
    async def _idempotent(self, scope, tap: BodyTap, send, method, path, headers, key,
                          chaos: ChaosDecision) -> None:
        if not key or len(key) > 255 or any(ord(c) < 0x20 or ord(c) > 0x7E for c in key):
            await tap.drain()
            await self._sleep(chaos)
            if chaos.fail:
                await self._send_chaos(send, chaos)
            else:
                await send_error(send, 400, "bad_request",
                                 "Idempotency-Key must be 1 to 255 printable ASCII characters.",
                                 field="Idempotency-Key")
            return
        owner = self.store.user_for_authorization(headers.get("authorization")) or "-"
        target = path + ("?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else "")
        begin = self.store.idem_begin(owner, key)
        if begin.state == "in_flight" and method == "POST" and path == TUS_CREATION_PATH:
            # A tus creation whose first attempt is still open (a client that died on a dead link,
            # which the server has not noticed): the handler finds that upload by its key and
            # answers with it, so the client is not told to wait for a ghost (Docs/tus.md).
            await self._plain(scope, tap, send, chaos)
            return

        def fingerprint() -> str:
            return hashlib.sha256(f"{method}\n{target}\n{tap.digest()}".encode("utf-8")).hexdigest()

        if begin.state in ("in_flight", "done"):
            await tap.drain()
            if tap.disconnected:
                raise _Disconnected()
            await self._sleep(chaos)
            if chaos.fail:
                await self._send_chaos(send, chaos)
            elif begin.state == "in_flight":
                await send_error(send, 409, "idempotency_in_flight",
                                 "A request with this Idempotency-Key is still being processed; retry later.")
            elif begin.record["fingerprint"] != fingerprint():
                await send_error(send, 422, "idempotency_key_reused",
                                 "This Idempotency-Key was already used for a different request.")
            else:
                record = begin.record
                replay_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in record["headers"]]
                replay_headers.append((b"idempotent-replayed", b"true"))
                await send({"type": "http.response.start", "status": record["status"], "headers": replay_headers})
                await send({"type": "http.response.body", "body": record["body"], "more_body": False})
            return

        inner = self._chaos_app(chaos) if chaos.fail and not chaos.after else self.app
        client_send = self._swallow(tap) if chaos.fail and chaos.after else send
        await self._run_and_store(scope, tap, client_send, owner, key, begin, fingerprint, chaos, inner)
        if chaos.fail and chaos.after:
            await self._send_chaos(send, chaos)

    async def _run_and_store(self, scope, tap, send, owner, key, begin: IdemBegin, fingerprint,
                             chaos: ChaosDecision, inner) -> None:
        captured: dict[str, Any] = {"status": None, "headers": [], "body": bytearray(), "too_big": False,
                                    "complete": False}

        async def capture(message: dict) -> None:
            if message["type"] == "http.response.start":
                captured["status"] = message["status"]
                captured["headers"] = [(k.decode("latin-1"), v.decode("latin-1"))
                                       for k, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                if not captured["too_big"]:
                    captured["body"].extend(message.get("body", b""))
                    if len(captured["body"]) > MAX_STORED_BODY:
                        captured["too_big"] = True
                        captured["body"] = bytearray()
                if not message.get("more_body", False):
                    captured["complete"] = True
            await send(message)

        record = None
        try:
            await self._sleep(chaos)
            await inner(scope, tap.receive, capture)
            status = captured["status"]
            if (status is not None and captured["complete"] and not captured["too_big"] and tap.complete
                    and status < 500 and status not in UNSTORED_STATUSES):
                record = {"fingerprint": fingerprint(), "status": status, "headers": captured["headers"],
                          "body": bytes(captured["body"])}
        finally:
            self.store.idem_finish(owner, key, begin, record)
