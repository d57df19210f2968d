"""The requests of the IETF resumable uploads draft (courier_backend/ietf.py): `IetfApp`.

`handle` takes each request a connection reads: upload creation (`POST /photos` with a draft
field), offset retrieval (HEAD), append (PATCH), cancellation (DELETE) and OPTIONS on
`/resumable/<id>`, and the test hooks under `/__ietf/`; everything else is passed to the main
server (ietf_proxy). Errors are answered as problem details; a request from a newer client takes
over an upload from an older one still streaming. Docs/ietf-upload.md is the contract.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import logging
import os
import re
import time
import uuid
from typing import TYPE_CHECKING

import h11

from .ietf_fields import content_disposition_filename, parse_digest, sf_integer
from .ietf_h11 import Disconnected, Exchange, respond, respond_json, respond_problem
from .ietf_interop import (CURRENT_INTEROP, complete_header, default_interop_versions, interop_of, limit_header,
                           refuse_state_fields, request_complete)
from .ietf_problems import COMPLETED_UPLOAD, INCONSISTENT_LENGTH, MISMATCHING_OFFSET, Problem, courier_problem
from .ietf_proxy import find_upstream, proxy
from .ietf_uploads import IetfUploads, Superseded, fsync_dir, remove_file
from .store import Store, now_rfc3339

if TYPE_CHECKING:
    from .ietf import IetfServer

log = logging.getLogger("courier_backend.ietf")

PARTIAL_UPLOAD = "application/partial-upload"
PHOTO_ID_HEADER = "Courier-Photo-Id"
DEFAULT_CONTENT_TYPE = "application/octet-stream"
MAX_TITLE = 200
UPLOAD_PATH = re.compile(r"^/resumable/([0-9a-f]{32})$")
DRAFT_FIELDS = ("upload-complete", "upload-incomplete", "upload-draft-interop-version")


class IetfApp(IetfUploads):
    """Answers each request of the IETF upload port (`handle`); `IetfServer` runs it."""

    def __init__(self, store: Store, server: IetfServer) -> None:
        super().__init__(store)
        self.server = server
        self.generation = store.generation
        self.accepted = default_interop_versions()
        # The interop versions each upload's requests named (GET /__ietf/uploads: a test sees that a
        # resumed upload kept its creation's version).
        self.versions_seen: dict[str, set[int]] = {}
        self._upstream: tuple[str, int] | None = None

    # ------------------------------------------------------------ helpers
    def _sync_generation(self) -> None:
        if self.store.generation != self.generation:  # /__reset: limits back to the defaults
            self.generation = self.store.generation
            self.limits = self._default_limits()
            self.accepted = default_interop_versions()
            self.versions_seen = {}

    def note_version(self, upload_id: str, ex: Exchange) -> None:
        """Remembers the interop version a request for the upload named (test aid)."""
        version = sf_integer(ex.header("upload-draft-interop-version"))
        if version is not None:
            self.versions_seen.setdefault(upload_id, set()).add(version)

    def authorize(self, ex: Exchange) -> str:
        header = ex.header("authorization")
        token = None
        if header and header[:7].lower() == "bearer ":
            token = header[7:].strip()
        user = self.store.user_for_access_token(token) if token else None
        if user is None:
            raise courier_problem(401, "unauthorized",
                                  "Sign in first." if not header else "The access token is invalid or expired.",
                                  headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return user

    def load(self, upload_id: str, user: str, interop: int | None) -> dict:
        """The caller's upload; 404 unknown (or another user's); gone: 410, or 404 up to interop 6,
        whose text says an upload that is not active is 404."""
        upload = self.get(upload_id)
        if upload is None or upload["owner"] != user:
            raise courier_problem(404, "not-found", "No such upload.")
        if upload["state"] == "active" and upload["expires_at"] <= time.time():
            self.set_state(upload_id, "expired")
            remove_file(self.path_of(upload_id))
            upload["state"] = "expired"
        if upload["state"] in ("cancelled", "expired", "invalid", "failed"):
            raise courier_problem(404 if (interop or upload["interop"]) <= 6 else 410, "upload-gone", {
                "cancelled": "The upload was cancelled.", "expired": "The upload expired; create a new one.",
                "invalid": "The upload went past its length and was deactivated.",
                "failed": "The upload's representation failed its Repr-Digest or could not be processed; create a"
                          " new one."}[upload["state"]],
                state=upload["state"])
        return upload

    # ------------------------------------------------------------ requests
    def handle(self, ex: Exchange) -> bool:
        self._sync_generation()
        try:
            return self.route(ex)
        except Problem as problem:
            if ex.conn.h11.our_state is not h11.SEND_RESPONSE:
                return False
            return respond_problem(ex, problem)
        except Disconnected:
            return False
        except Exception:
            log.exception("IETF upload server: unhandled error")
            if ex.conn.h11.our_state is not h11.SEND_RESPONSE:
                return False
            return respond_problem(ex, courier_problem(500, "internal-error",
                                                       "The server failed to handle the request."))

    def route(self, ex: Exchange) -> bool:
        """The draft's requests here; everything else goes to the main server (`ietf_proxy.proxy`)."""
        if ex.path.startswith("/__ietf/"):
            return self.hooks(ex)
        if ex.path == "*" or (ex.path == "/photos" and ex.method == "OPTIONS"):
            return self.options(ex)
        if ex.path == "/photos" and ex.method == "POST" and any(ex.header(f) is not None for f in DRAFT_FIELDS):
            return self.create(ex)
        match = UPLOAD_PATH.match(ex.path)
        if match:
            upload_id = match.group(1)
            self.note_version(upload_id, ex)
            if ex.method == "HEAD":
                return self.head(ex, upload_id)
            if ex.method == "PATCH":
                return self.append(ex, upload_id)
            if ex.method == "DELETE":
                return self.cancel(ex, upload_id)
            if ex.method == "OPTIONS":
                return self.options(ex)
            raise courier_problem(405, "method-not-allowed", "Method not allowed for an upload resource.",
                                  headers={"Allow": "HEAD, PATCH, DELETE, OPTIONS"})
        if ex.path.startswith("/__") and not self.hooks_allowed(ex):
            raise courier_problem(404, "not-found", "No such resource.")
        return proxy(ex, self.upstream())

    # ------------------------------------------------------------ the rest of the API
    def upstream(self) -> tuple[str, int]:
        """The main server's address (see `ietf_proxy.find_upstream`), found once."""
        if self._upstream is None:
            self._upstream = find_upstream(self.server.port)
        return self._upstream

    # ------------------------------------------------------------ OPTIONS
    def options(self, ex: Exchange) -> bool:
        interop = interop_of(ex, self.accepted) or CURRENT_INTEROP
        return respond(ex, 204, {"Accept-Patch": PARTIAL_UPLOAD, "Allow": "POST, HEAD, PATCH, DELETE, OPTIONS",
                                 **limit_header(self.limits, max(interop, 6))})

    def photo_answer(self, ex: Exchange, upload: dict, interop: int) -> bool:
        photo = self.store.get_photo(upload["photo_id"])
        url = f"{ex.base_url()}/photos/{upload['photo_id']}"
        payload = {"id": photo["id"], "url": url, "title": photo["title"], "filename": photo["filename"],
                   "content_type": photo["content_type"], "size": photo["size"], "sha256": photo["sha256"]}
        digest = base64.b64encode(bytes.fromhex(upload["repr_sha256"])).decode()
        return respond_json(ex, 201 if ex.method == "POST" else 200, payload, {
            **complete_header(interop, True), PHOTO_ID_HEADER: photo["id"],
            "Upload-Offset": str(upload["upload_offset"]), "Repr-Digest": f"sha-256=:{digest}:",
            "Content-Location": url})

    # ------------------------------------------------------------ creation
    def create(self, ex: Exchange) -> bool:
        interop = interop_of(ex, self.accepted)
        semantics = interop or CURRENT_INTEROP
        complete = request_complete(ex, semantics)
        # Interop 3 marks a creation by its version alone (no Upload-Incomplete: complete); later
        # ones by Upload-Complete. Without either this is a plain upload: the whole photo at once.
        resumable = complete is not None
        if not resumable:
            complete = True
        user = self.authorize(ex)
        title = ex.query.get("title", "")
        if len(title) > MAX_TITLE:
            raise courier_problem(422, "validation-failed", f"The title must be at most {MAX_TITLE} characters.")
        upload_length = sf_integer(ex.header("upload-length"))
        content_length = None if ex.chunked else ex.content_length
        length = upload_length
        if complete and content_length is not None:
            if length is not None and length != content_length:
                raise Problem(400, INCONSISTENT_LENGTH, "Upload-Length and Content-Length with Upload-Complete: ?1"
                              " disagree.", **{"upload-length": length, "content-length": content_length})
            length = content_length
        limits = self.limits
        if length is not None and length > limits.max_size:
            raise Problem(413, "about:blank", "The upload is larger than max-size.",
                          headers=limit_header(self.limits, max(semantics, 6)))
        if content_length is not None and content_length > limits.max_append_size:
            raise Problem(413, "about:blank", "The content is larger than max-append-size.",
                          headers=limit_header(self.limits, max(semantics, 6)))
        content_digest = parse_digest(ex.header("content-digest"), "Content-Digest")
        repr_digest = parse_digest(ex.header("repr-digest"), "Repr-Digest")
        content_type = (ex.header("content-type") or "").strip() or DEFAULT_CONTENT_TYPE

        upload_id = uuid.uuid4().hex
        upload = {"id": upload_id, "owner": user, "interop": semantics, "length": length, "upload_offset": 0,
                  "state": "active", "title": title,
                  "filename": content_disposition_filename(ex.header("content-disposition")),
                  "content_type": content_type, "photo_id": str(uuid.uuid4()),
                  "repr_digest": json.dumps({a: base64.b64encode(d).decode() for a, d in (repr_digest or {}).items()}),
                  "created_at": now_rfc3339(), "expires_at": time.time() + self.store.config.tus_ttl}
        with open(self.path_of(upload_id), "wb") as fh:
            os.fsync(fh.fileno())
        fsync_dir(self.store.upload_dir)
        with self.store._tx() as db:
            db.execute("INSERT INTO ietf_uploads(id, owner, interop, length, upload_offset, state, title, filename,"
                       " content_type, photo_id, repr_digest, created_at, expires_at) VALUES (:id, :owner, :interop,"
                       " :length, :upload_offset, :state, :title, :filename, :content_type, :photo_id,"
                       " :repr_digest, :created_at, :expires_at)", upload)
        location = f"{ex.base_url()}/resumable/{upload_id}"
        self.note_version(upload_id, ex)
        if resumable and interop is not None:
            # The draft: announce the upload resource as soon as the request's header section is read.
            ex.interim(104, {"Location": location, "Upload-Draft-Interop-Version": str(interop),
                             **limit_header(self.limits, interop, upload)}, b"Upload Resumption Supported")
        key = self.writer_key(upload_id)
        token = self.store.claim_upload(key)
        cap, over_cap = self.capped(upload, 0, semantics)
        try:
            offset = self.receive(ex, upload, 0, content_digest, token, semantics,
                                  progress=resumable and interop is not None and interop >= 5, cap=cap,
                                  over_cap=over_cap)
        except Superseded:
            return False  # a newer request took over; this client is gone
        except Problem as problem:
            if resumable:
                problem.headers.setdefault("Location", location)
            raise
        finally:
            self.store.release_upload(key, token)
        upload = self.get(upload_id) or upload
        if complete:
            if upload["length"] is not None and offset != upload["length"]:
                raise Problem(400, INCONSISTENT_LENGTH, "The content is shorter than the upload's length.",
                              headers={"Location": location} if resumable else {})
            upload = self.finish(upload)
            return self.photo_answer(ex, upload, semantics)
        return respond(ex, 201, {"Location": location, **complete_header(semantics, False),
                                 "Upload-Offset": str(offset), **limit_header(self.limits, semantics, upload)})

    # ------------------------------------------------------------ offset retrieval
    def head(self, ex: Exchange, upload_id: str) -> bool:
        requested = interop_of(ex, self.accepted)
        user = self.authorize(ex)
        upload = self.load(upload_id, user, requested)
        interop = requested or upload["interop"]
        refuse_state_fields(ex, interop)
        key = self.writer_key(upload_id)
        token = self.take_over(upload_id)  # an older request still streaming stops here
        try:
            with self.lock_for(upload_id):
                upload = self.load(upload_id, user, interop)
        finally:
            self.store.release_upload(key, token)
        complete = upload["state"] == "completed"
        headers = {"Upload-Offset": str(upload["upload_offset"]), **complete_header(interop, complete),
                   "Cache-Control": "no-store", **limit_header(self.limits, interop, upload),
                   "Courier-Bytes-Received": str(self.store.upload_bytes.get(key, 0))}
        if upload["length"] is not None:
            headers["Upload-Length"] = str(upload["length"])
        if complete:
            headers[PHOTO_ID_HEADER] = upload["photo_id"]
        return respond(ex, 204, headers)

    # ------------------------------------------------------------ append
    def append(self, ex: Exchange, upload_id: str) -> bool:
        requested = interop_of(ex, self.accepted)
        user = self.authorize(ex)
        upload = self.load(upload_id, user, requested)
        interop = requested or upload["interop"]
        media = (ex.header("content-type") or "").split(";", 1)[0].strip().lower()
        if interop >= 6 and media != PARTIAL_UPLOAD:
            raise courier_problem(415, "unsupported-media-type",
                                  f"An append needs Content-Type: {PARTIAL_UPLOAD}.", headers={"Accept-Patch": PARTIAL_UPLOAD})
        offset = sf_integer(ex.header("upload-offset"))
        if offset is None:
            raise courier_problem(400, "bad-upload-offset", "Upload-Offset must be a non-negative sf-integer.")
        complete = request_complete(ex, interop)
        if complete is None:
            name = "Upload-Incomplete" if interop == 3 else "Upload-Complete"
            raise courier_problem(400, "missing-upload-complete", f"An append needs {name} (?0 or ?1).")
        content_digest = parse_digest(ex.header("content-digest"), "Content-Digest")
        key = self.writer_key(upload_id)
        token = self.take_over(upload_id)  # from here on, an older request still running stops
        try:
            with self.lock_for(upload_id):
                upload = self.load(upload_id, user, interop)
            confirmed = upload["upload_offset"]
            content_length = None if ex.chunked else ex.content_length
            if upload["state"] == "completed":
                if ex.has_body:
                    raise Problem(400, INCONSISTENT_LENGTH, "The upload is complete; no content can be appended.")
                raise Problem(400, COMPLETED_UPLOAD, "The upload is already completed.",
                              headers={PHOTO_ID_HEADER: upload["photo_id"]})
            if offset != confirmed:
                raise Problem(409, MISMATCHING_OFFSET, "offset from request does not match offset of resource",
                              headers={"Upload-Offset": str(confirmed)},
                              **{"expected-offset": confirmed, "provided-offset": offset})
            length = upload["length"]
            declared = sf_integer(ex.header("upload-length"))
            if declared is not None and length is not None and declared != length:
                raise Problem(400, INCONSISTENT_LENGTH, "Upload-Length differs from the upload's length.",
                              **{"upload-length": length, "provided-length": declared})
            if complete and content_length is not None:
                implied = offset + content_length
                if (length is not None and implied != length) or (declared is not None and implied != declared):
                    raise Problem(400, INCONSISTENT_LENGTH, "Upload-Offset + Content-Length with Upload-Complete: ?1"
                                  " is not the upload's length.", **{"upload-length": length or declared,
                                                                     "implied-length": implied})
                declared = implied
            if length is None and declared is not None:
                if declared < confirmed:
                    raise Problem(400, INCONSISTENT_LENGTH, "Upload-Length is less than the bytes already stored.")
                if declared > self.limits.max_size:
                    raise Problem(413, "about:blank", "The upload is larger than max-size.",
                                  headers=limit_header(self.limits, max(interop, 6), upload))
                self.set_length(upload_id, declared)
                upload["length"] = length = declared
            if content_length is not None:
                if length is not None and offset + content_length > length:
                    raise Problem(400, INCONSISTENT_LENGTH, "The content goes past the upload's length.",
                                  **{"upload-length": length})
                if content_length > self.limits.max_append_size:
                    raise Problem(413, "about:blank", "The content is larger than max-append-size.",
                                  headers=limit_header(self.limits, max(interop, 6), upload))
            cap, over_cap = self.capped(upload, offset, interop)
            try:
                new_offset = self.receive(ex, upload, offset, content_digest, token, interop,
                                          progress=interop >= 5, cap=cap, over_cap=over_cap)
            except Superseded:
                return False
            upload = self.get(upload_id) or upload
            if complete:
                if upload["length"] is not None and new_offset != upload["length"]:
                    raise Problem(400, INCONSISTENT_LENGTH, "Upload-Complete: ?1, but the upload's length is not"
                                  " reached.", **{"upload-length": upload["length"], "offset": new_offset})
                upload = self.finish(upload)
                return self.photo_answer(ex, upload, interop)
            # Up to interop 6 an append that does not complete is answered 201 (the text says so).
            return respond(ex, 201 if interop <= 6 else 204, {
                **complete_header(interop, False), "Upload-Offset": str(new_offset),
                **limit_header(self.limits, interop, upload)})
        finally:
            self.store.release_upload(key, token)

    # ------------------------------------------------------------ cancellation
    def cancel(self, ex: Exchange, upload_id: str) -> bool:
        requested = interop_of(ex, self.accepted)
        user = self.authorize(ex)
        upload = self.load(upload_id, user, requested)
        refuse_state_fields(ex, requested or upload["interop"])
        if upload["state"] == "completed":
            raise Problem(400, COMPLETED_UPLOAD, "The upload is completed: it is the photo in Courier-Photo-Id.",
                          headers={PHOTO_ID_HEADER: upload["photo_id"]})
        key = self.writer_key(upload_id)
        token = self.take_over(upload_id)  # a request still streaming stops
        try:
            with self.lock_for(upload_id):
                self.set_state(upload_id, "cancelled")
                remove_file(self.path_of(upload_id))
        finally:
            self.store.release_upload(key, token)
        return respond(ex, 204, {})

    # ------------------------------------------------------------ test hooks
    def hooks_allowed(self, ex: Exchange) -> bool:
        """The main server's rule for `/__*` hooks, applied to the client of this port (the main
        server sees every proxied request coming from loopback)."""
        mode = self.store.settings.hooks
        try:
            loopback = ipaddress.ip_address(ex.peer_host().split("%", 1)[0]).is_loopback
        except ValueError:
            loopback = False
        return mode == "all" or (mode == "loopback" and loopback)

    def hooks(self, ex: Exchange) -> bool:
        if not self.hooks_allowed(ex):
            raise courier_problem(404, "not-found", "No such resource.")
        if ex.path == "/__ietf/uploads" and ex.method == "GET":
            with self.store.lock:
                rows = [dict(r) for r in self.store.db.execute(
                    "SELECT * FROM ietf_uploads ORDER BY created_at, id").fetchall()]
            return respond_json(ex, 200, [{
                "id": r["id"], "owner": r["owner"], "interop": r["interop"], "length": r["length"],
                "offset": r["upload_offset"], "state": r["state"], "photo_id": r["photo_id"], "title": r["title"],
                "filename": r["filename"], "versions": sorted(self.versions_seen.get(r["id"], ())),
                "bytes_received": self.store.upload_bytes.get(self.writer_key(r["id"]), 0),
                "writing": self.writer_key(r["id"]) in self.store.upload_writers} for r in rows])
        if ex.path == "/__ietf/config" and ex.method in ("GET", "POST"):
            if ex.method == "POST":
                raw = b"".join(ex.chunks())
                try:
                    body = json.loads(raw or b"{}")
                    if not isinstance(body, dict):
                        raise ValueError
                    values = {}
                    accepted = body.get("interop_versions", sorted(self.accepted))
                    if not isinstance(accepted, list) or any(
                            isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in accepted):
                        raise ValueError
                    for name in ("max_size", "max_append_size", "min_append_size"):
                        if name in body:
                            v = body[name]
                            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                                raise ValueError
                            values[name] = v
                except ValueError:
                    raise courier_problem(400, "bad-request", "Send {\"max_size\", \"max_append_size\","
                                          " \"min_append_size\"}: non-negative integers, and"
                                          " \"interop_versions\": a list of them.")
                for name, v in values.items():
                    setattr(self.limits, name, v)
                self.accepted = set(accepted)
            return respond_json(ex, 200, {"max_size": self.limits.max_size,
                                          "max_append_size": self.limits.max_append_size,
                                          "min_append_size": self.limits.min_append_size,
                                          "interop_versions": sorted(self.accepted)})
        raise courier_problem(404, "not-found", "No such hook.")
