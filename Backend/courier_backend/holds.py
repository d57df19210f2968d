"""`POST /__hold`: a test's kill point that does not depend on speed.

The reference backend's store keeps one `HoldGate` (its middleware waits on it); the tus peer
(tus_peer.py) wraps tuspyserver in `HoldMiddleware`, so a compound write's file part can be
held on the peer the way its record part is held on the backend (decision 2515).
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass


@dataclass
class Hold:
    """`POST /__hold`: the next `remaining` requests pass; the ones after wait, before they are
    processed (`before`) or with their response withheld once processed (`response`), until it
    is released. A test kills its client while a request waits: a crash point that does not
    depend on how fast either side runs."""
    remaining: int = 0
    when: str = "before"  # before | response
    method: str | None = None  # only requests with this method pass, count or wait
    held: int = 0  # requests waiting now
    released: bool = False

    def to_json(self) -> dict:
        return {"armed": not self.released, "remaining": self.remaining, "when": self.when,
                "method": self.method, "held": self.held}


class HoldGate:
    """The one hold armed now, under the owner's lock."""

    def __init__(self, lock: threading.RLock | None = None) -> None:
        self.lock = lock or threading.RLock()
        self.hold: Hold | None = None

    def set(self, remaining: int, when: str, method: str | None = None) -> Hold:
        with self.lock:
            self.release()
            self.hold = Hold(remaining=remaining, when=when, method=method)
            return self.hold

    def release(self) -> None:
        with self.lock:
            if self.hold is not None:
                self.hold.released = True
            self.hold = None

    def take(self, method: str) -> Hold | None:
        """Called once per request: the hold it must wait on, if any."""
        with self.lock:
            hold = self.hold
            if hold is None or (hold.method is not None and hold.method != method):
                return None
            if hold.remaining > 0:
                hold.remaining -= 1
                return None
            return hold

    def to_json(self) -> dict:
        with self.lock:
            return self.hold.to_json() if self.hold is not None else Hold(released=True).to_json()

    async def wait(self, hold: Hold) -> None:
        """Waits until `hold` is released (or replaced), counted as held."""
        with self.lock:
            hold.held += 1
        try:
            while not hold.released:
                await asyncio.sleep(0.005)
        finally:
            with self.lock:
                hold.held -= 1

    def configure(self, data: dict) -> str | None:
        """Applies a `POST /__hold` body (`{"after", "when", "method"}` or `{"release": true}`);
        returns why it is refused, or None."""
        release = data.get("release", False)
        if not isinstance(release, bool):
            return "'release' must be a boolean."
        if release:
            self.release()
            return None
        after = data.get("after", 0)
        if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= 1_000_000:
            return "'after' must be an integer in 0...1000000."
        when = data.get("when", "before")
        if when not in ("before", "response"):
            return "'when' must be before or response."
        method = data.get("method")
        if method is not None and (not isinstance(method, str) or not method.isalpha()):
            return "'method' must be an HTTP method like PUT."
        self.set(after, when, method.upper() if method else None)
        return None


class HoldMiddleware:
    """Plain ASGI: `POST /__hold` and `GET /__hold` (as the reference backend's), and every
    other request passes the gate: before it reaches the app, or before its response starts."""

    def __init__(self, app) -> None:
        self.app = app
        self.gate = HoldGate()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/__hold":
            await self._hook(scope, receive, send)
            return
        hold = self.gate.take(scope["method"])
        if hold is None:
            await self.app(scope, receive, send)
            return
        if hold.when == "before":
            await self.gate.wait(hold)
            await self.app(scope, receive, send)
            return
        started = False

        async def held_send(message: dict) -> None:
            nonlocal started
            if message["type"] == "http.response.start" and not started:
                started = True
                await self.gate.wait(hold)
            await send(message)

        await self.app(scope, receive, held_send)

    async def _hook(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        status, answer = 200, None
        if scope["method"] == "POST":
            try:
                data = json.loads(body or b"{}")
            except ValueError:
                data = None
            problem = "The body must be a JSON object." if not isinstance(data, dict) else self.gate.configure(data)
            if problem is not None:
                status, answer = 422, {"code": "validation_failed", "message": problem}
        payload = json.dumps(answer if answer is not None else self.gate.to_json()).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})
