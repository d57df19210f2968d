"""The FastAPI application: every route of Docs/contract.md plus the test hooks.

`app` (this module) is the ASGI entry point: `uvicorn courier_backend.app:app`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import uuid

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from . import __version__, foreign_files, ietf, lifeline, openapi, photo_serving, tus
from .config import Settings
from .errors import ApiError, default_code, default_message, error_payload, json_response
from .form_parts import EchoParts, PhotoParts
from .middleware import CourierMiddleware
from .multipart import MultipartError, parse_multipart
from .store import DEMO_USERS, Chaos, Store, bearer_token, now_rfc3339

log = logging.getLogger("courier_backend")
lifeline.install()
# python-multipart logs a warning for every malformed body; those are answered with 400 bad_multipart.
logging.getLogger("python_multipart").setLevel(logging.ERROR)
logging.getLogger("python_multipart.multipart").setLevel(logging.ERROR)

MAX_JSON_BODY = 1024 * 1024
MAX_TITLE = 200
MAX_ID = 200
MAX_NOTE_TEXT = 10_000
MAX_TAGS = 20
MAX_TAG = 50
LIST_CACHE_CONTROL = "max-age=5, stale-while-revalidate=30"
GONE_ANSWERS = ("recreate", "conflict", "not_found")
# Documents nest as deep as Courier reads (10,000 levels): the json module's C parser and
# encoder count each level against the recursion limit (1,000 by default), so a list of such
# documents needs about 10,000 more. Deeper bodies are refused with a 400 (RecursionError),
# never a 500. The handlers run on the event loop's thread, the main one, with 8 MiB of stack.
DOCUMENT_DEPTH = 10_000
sys.setrecursionlimit(max(sys.getrecursionlimit(), 2 * DOCUMENT_DEPTH + 1_000))


# ---------------------------------------------------------------------- request helpers
async def read_json_object(request: Request) -> dict:
    chunks = bytearray()
    async for chunk in request.stream():
        chunks.extend(chunk)
        if len(chunks) > MAX_JSON_BODY:
            raise ApiError(413, "payload_too_large", f"JSON bodies are limited to {MAX_JSON_BODY} bytes.")
    if not chunks.strip():
        raise ApiError(400, "bad_request", "The request body must be a JSON object.")
    try:
        data = json.loads(bytes(chunks))
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "bad_request", "The request body is not valid JSON.")
    except RecursionError:
        raise ApiError(400, "bad_request", "The request body is nested too deep.")
    if not isinstance(data, dict):
        raise ApiError(400, "bad_request", "The request body must be a JSON object.")
    return data


def require_string(data: dict, name: str, *, required: bool = True, default: str | None = None) -> str | None:
    if name not in data or data[name] is None:
        if required:
            raise ApiError(422, "validation_failed", f"'{name}' is required.", field=name)
        return default
    value = data[name]
    if not isinstance(value, str):
        raise ApiError(422, "validation_failed", f"'{name}' must be a string.", field=name)
    return value


def validate_title(title: str) -> None:
    if not title.strip():
        raise ApiError(422, "validation_failed", "The title must not be empty.", field="title")
    if len(title) > MAX_TITLE:
        raise ApiError(422, "validation_failed", f"The title must be at most {MAX_TITLE} characters.",
                       field="title")


def validate_id(article_id: str) -> None:
    if not article_id.strip() or len(article_id) > MAX_ID:
        raise ApiError(422, "validation_failed", f"The id must be 1 to {MAX_ID} characters.", field="id")


def etag_for(article: dict) -> str:
    return f'"v{article["version"]}"'


def _split_tags(value: str) -> list[str]:
    tags, buf, quoted = [], [], False
    for ch in value:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            tags.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    tags.append("".join(buf).strip())
    return [t for t in tags if t]


def parse_version_tag(value: str, header: str = "If-Match", prefix: str = "v") -> int | str:
    """`"v3"` -> 3 (`"r3"` for notes, prefix "r"), `*` -> "*"; W/ is tolerated. Anything else is a 400."""
    tags = _split_tags(value)
    if len(tags) != 1:
        raise ApiError(400, "bad_request", f'{header} must hold exactly one tag like "v3".', field=header)
    tag = tags[0]
    if tag == "*":
        return "*"
    if tag.startswith("W/"):
        tag = tag[2:]
    if len(tag) >= 2 and tag[0] == '"' and tag[-1] == '"':
        tag = tag[1:-1]
    number = tag[len(prefix):]
    if tag.startswith(prefix) and number.isdigit() and number.isascii():
        return int(number)
    raise ApiError(400, "bad_request", f'{header} must be a tag like "{prefix}3".', field=header)


def none_match(if_none_match: str | None, etag: str) -> bool:
    """True when If-None-Match matches `etag` (weak comparison), i.e. a 304 is due."""
    if not if_none_match:
        return False
    bare = etag[2:] if etag.startswith("W/") else etag
    for tag in _split_tags(if_none_match):
        if tag == "*":
            return True
        if (tag[2:] if tag.startswith("W/") else tag) == bare:
            return True
    return False


def not_modified(etag: str, extra: dict[str, str] | None = None) -> Response:
    headers = {"ETag": etag}
    headers.update(extra or {})
    return Response(status_code=304, headers=headers)


# ---------------------------------------------------------------------- the app
def create_app(settings: Settings | None = None) -> tuple[FastAPI, Store]:
    settings = settings or Settings.from_env()
    store = Store(settings)
    api = FastAPI(title="Courier reference backend", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json", redirect_slashes=False)
    openapi.install(api)

    # ------------------------------------------------------------ error shapes
    @api.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return exc.response()

    @api.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        status = exc.status_code
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, default_code(status))
        message = {404: "No such resource.", 405: "Method not allowed for this resource."}.get(
            status, str(exc.detail) if exc.detail else default_message(status))
        return json_response(status, error_payload(code, message), dict(exc.headers or {}))

    @api.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        first = errors[0] if errors else {}
        loc = [str(p) for p in first.get("loc", ())]
        field = loc[-1] if loc else None
        if loc and loc[0] == "body" and first.get("type") in ("json_invalid", "model_attributes_type"):
            return json_response(400, error_payload("bad_request", "The request body is not valid JSON."))
        return json_response(422, error_payload("validation_failed", first.get("msg", "Invalid request."), field))

    @api.exception_handler(Exception)
    async def _unhandled(request: Request, exc: Exception) -> Response:
        if isinstance(exc, ClientDisconnect):
            return Response(status_code=499)  # nobody is listening; the log shows 499
        log.error("unhandled error", exc_info=exc)
        return json_response(500, error_payload("internal_error", "The server failed to handle the request."))

    def gone_error(noun: str) -> ApiError:
        # A write based on a version of a record that is not there, as `gone_answer` says (a
        # test-only switch, POST /__config): 409 without `current`, or 404.
        if store.config.gone_answer == "conflict":
            return ApiError(409, "version_conflict", f"The {noun} was changed by someone else.")
        return ApiError(404, "not_found", f"No such {noun}.")

    # ------------------------------------------------------------ what the three record kinds share
    # Articles, notes and documents answer alike; only their noun, version prefix and fields differ.
    def list_answer(request: Request, records: list) -> Response:
        body = json.dumps(records, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        if none_match(request.headers.get("if-none-match"), etag):
            return not_modified(etag, {"Cache-Control": LIST_CACHE_CONTROL})
        return Response(body, 200, {"ETag": etag, "Cache-Control": LIST_CACHE_CONTROL},
                        media_type="application/json; charset=utf-8")

    def record_answer(request: Request, record: dict | None, noun: str, etag_of) -> Response:
        if record is None:
            raise ApiError(404, "not_found", f"No such {noun}.")
        etag = etag_of(record)
        if none_match(request.headers.get("if-none-match"), etag):
            return not_modified(etag)
        return json_response(200, record, {"ETag": etag})

    def write_base(request: Request, body_version, field: str, prefix: str = "v") -> int | str | None:
        # The version a write is based on: If-Match, else the body's; both must agree.
        if_match = request.headers.get("if-match")
        base = parse_version_tag(if_match, prefix=prefix) if if_match is not None else None
        if body_version is not None:
            if isinstance(body_version, bool) or not isinstance(body_version, int) or body_version < 0:
                raise ApiError(422, "validation_failed", f"'{field}' must be an integer >= 0.", field=field)
            if base is not None and base != "*" and base != body_version:
                raise ApiError(400, "bad_request", f"If-Match and body.{field} disagree.", field=field)
            if base is None:
                base = body_version
        return base

    def put_answer(outcome: str, record: dict | None, etag_of, location: str, noun: str, base_hint: str) -> Response:
        if outcome == "created":
            return json_response(201, record, {"ETag": etag_of(record), "Location": location})
        if outcome == "replaced":
            return json_response(200, record, {"ETag": etag_of(record)})
        if outcome == "precondition_required":
            raise ApiError(428, "precondition_required", f"Updating an existing {noun} needs its {base_hint}.")
        if outcome == "precondition_failed":
            raise ApiError(412, "precondition_failed", f"If-Match: * but the {noun} does not exist.")
        if outcome == "gone":
            raise gone_error(noun)
        raise ApiError(409, "version_conflict", f"The {noun} was changed by someone else.", current=record)

    def delete_answer(request: Request, delete, noun: str, prefix: str = "v") -> Response:
        if_match = request.headers.get("if-match")
        base = parse_version_tag(if_match, prefix=prefix) if if_match is not None else None
        outcome, current = delete(base)
        if outcome == "not_found":
            raise ApiError(404, "not_found", f"No such {noun}.")
        if outcome == "gone":
            raise gone_error(noun)
        if outcome == "conflict":
            raise ApiError(409, "version_conflict", f"The {noun} was changed by someone else.", current=current)
        return Response(status_code=204)

    def require_user(request: Request) -> str:
        header = request.headers.get("authorization")
        user = store.user_for_access_token(bearer_token(header) or "") if header else None
        if user is None:
            message = "Sign in first." if not header else "The access token is invalid or expired."
            raise ApiError(401, "unauthorized", message)
        return user

    # ------------------------------------------------------------ health + hooks
    @api.get("/health")
    async def health() -> Response:
        return json_response(200, {"ok": True})

    @api.post("/__chaos")
    async def set_chaos(request: Request) -> Response:
        data = await read_json_object(request)

        def int_field(name: str, default: int, lo: int, hi: int) -> int:
            value = data.get(name, default)
            if value is None:
                value = default
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ApiError(422, "validation_failed", f"'{name}' must be an integer in {lo}...{hi}.", field=name)
            return value

        retry_after = data.get("retry_after")
        if retry_after is not None and (isinstance(retry_after, bool) or not isinstance(retry_after, (int, str))
                                        or (isinstance(retry_after, int) and retry_after < 0)):
            raise ApiError(422, "validation_failed",
                           "'retry_after' must be seconds (integer >= 0) or an HTTP date string.", field="retry_after")
        fmt = data.get("format") or "json"
        if fmt not in ("json", "problem", "html", "empty"):
            raise ApiError(422, "validation_failed", "'format' must be json, problem, html or empty.", field="format")
        path = data.get("path")
        if path is not None and not isinstance(path, str):
            raise ApiError(422, "validation_failed", "'path' must be a string.", field="path")
        after = data.get("after", False)
        if not isinstance(after, bool):
            raise ApiError(422, "validation_failed", "'after' must be a boolean.", field="after")
        fail_all = data.get("fail_all", False)
        if not isinstance(fail_all, bool):
            raise ApiError(422, "validation_failed", "'fail_all' must be a boolean.", field="fail_all")
        method = data.get("method")
        if method is not None and (not isinstance(method, str) or not method.isalpha()):
            raise ApiError(422, "validation_failed", "'method' must be an HTTP method like PATCH.", field="method")
        tus_mode = data.get("tus_offset_mode")
        if tus_mode is not None and tus_mode not in ("beyond", "behind", "missing"):
            raise ApiError(422, "validation_failed", "'tus_offset_mode' must be beyond, behind or missing.",
                           field="tus_offset_mode")
        tus_method = data.get("tus_offset_method")
        if tus_method is not None and tus_method not in ("POST", "HEAD", "PATCH"):
            raise ApiError(422, "validation_failed", "'tus_offset_method' must be POST, HEAD or PATCH.",
                           field="tus_offset_method")
        chaos = Chaos(fail_next=int_field("fail_next", 0, 0, 1_000_000),
                      status=int_field("status", 503, 100, 599),
                      retry_after=retry_after,
                      delay_ms=int_field("delay_ms", 0, 0, 600_000),
                      format=fmt, path=path, after=after, fail_all=fail_all,
                      method=method.upper() if method else None,
                      tus_offset_mode=tus_mode,
                      tus_offset_count=int_field("tus_offset_count", 1, 0, 1_000_000),
                      tus_offset_delta=int_field("tus_offset_delta", 1, 1, 2**62),
                      tus_offset_method=tus_method)
        store.set_chaos(chaos)
        return json_response(200, chaos.to_json())

    @api.get("/__chaos")
    async def get_chaos() -> Response:
        return json_response(200, store.chaos.to_json())

    @api.post("/__hold")
    async def set_hold(request: Request) -> Response:
        # {"after": k, "when": "before"|"response", "method": "PUT"}: the next k requests (of that
        # method, when given) pass, later ones wait until {"release": true} (or /__reset). GET
        # reads how many wait now.
        data = await read_json_object(request)
        problem = store.holds.configure(data)
        if problem is not None:
            field = problem.split("'")[1]
            raise ApiError(422, "validation_failed", problem, field=field)
        return json_response(200, store.hold_json())

    @api.get("/__hold")
    async def get_hold() -> Response:
        return json_response(200, store.hold_json())

    @api.api_route("/__redirect", methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
    async def redirect(request: Request) -> Response:
        # Answers with a redirect to `to` (a path or an absolute URL) and the status asked for,
        # so clients' redirect handling can be tested. The body, if any, is read and dropped.
        status_text = request.query_params.get("status", "302")
        target = request.query_params.get("to", "/health")
        if status_text not in ("301", "302", "303", "307", "308"):
            raise ApiError(422, "validation_failed", "'status' must be 301, 302, 303, 307 or 308.", field="status")
        if any(c in target for c in "\r\n\0") or not target:
            raise ApiError(422, "validation_failed", "'to' must be a path or a URL on one line.", field="to")
        async for _ in request.stream():
            pass
        return Response(status_code=int(status_text), headers={"Location": target})

    @api.get("/__log")
    async def get_log() -> Response:
        return json_response(200, store.log_entries())

    @api.post("/__reset")
    async def reset(request: Request) -> Response:
        async for _ in request.stream():
            pass
        store.reset()
        served_photos.reset()
        return json_response(200, {"ok": True})

    @api.get("/__uploads")
    async def list_uploads() -> Response:
        # tus uploads as stored, with the body bytes received for each since start or /__reset.
        return json_response(200, [{"id": u["id"], "owner": u["owner"], "length": u["length"],
                                    "offset": u["upload_offset"], "state": u["state"], "photo_id": u["photo_id"],
                                    "title": u["title"], "filename": u["filename"],
                                    "idempotency_key": u["idempotency_key"],
                                    "bytes_received": store.upload_bytes.get(u["id"], 0)}
                                   for u in store.list_uploads()])

    @api.post("/__uploads/expire")
    async def expire_uploads(request: Request) -> Response:
        data = await read_json_object(request) if request.headers.get("content-length", "0") != "0" else {}
        upload_id = data.get("id")
        if upload_id is not None and not isinstance(upload_id, str):
            raise ApiError(422, "validation_failed", "'id' must be a string.", field="id")
        return json_response(200, {"expired": store.expire_uploads(upload_id)})

    @api.get("/__config")
    async def get_config() -> Response:
        return json_response(200, {"token_ttl": store.config.token_ttl, "max_upload": store.config.max_upload,
                                   "tus_max_size": store.config.tus_max_size, "tus_ttl": store.config.tus_ttl,
                                   "gone_answer": store.config.gone_answer, "data_dir": settings.data_dir,
                                   "attachment_servers": list(store.config.attachment_servers)})

    @api.post("/__config")
    async def set_config(request: Request) -> Response:
        data = await read_json_object(request)
        for name in ("token_ttl", "max_upload", "tus_max_size", "tus_ttl"):
            if name in data:
                value = data[name]
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ApiError(422, "validation_failed", f"'{name}' must be an integer >= 0.", field=name)
                setattr(store.config, name, value)
        if "gone_answer" in data:
            if data["gone_answer"] not in GONE_ANSWERS:
                raise ApiError(422, "validation_failed", "'gone_answer' must be recreate, conflict or not_found.",
                               field="gone_answer")
            store.config.gone_answer = data["gone_answer"]
        if "attachment_servers" in data:
            servers = data["attachment_servers"]
            if not isinstance(servers, list) or not all(foreign_files.valid_server(p) for p in servers):
                raise ApiError(422, "validation_failed",
                               "'attachment_servers' must list http(s) URLs ending with /.", field="attachment_servers")
            store.config.attachment_servers = tuple(servers)
        return await get_config()

    # ------------------------------------------------------------ auth
    @api.post("/auth/token")
    async def auth_token(request: Request) -> Response:
        data = await read_json_object(request)
        username = require_string(data, "username")
        password = require_string(data, "password")
        if DEMO_USERS.get(username) != password:
            raise ApiError(401, "invalid_credentials", "Wrong username or password.")
        return json_response(200, store.issue_tokens(username), {"Cache-Control": "no-store"})

    @api.post("/auth/refresh")
    async def auth_refresh(request: Request) -> Response:
        data = await read_json_object(request)
        token = require_string(data, "refresh_token")
        pair = store.refresh(token)
        if pair is None:
            raise ApiError(401, "invalid_refresh_token", "The refresh token is unknown, expired or already used.")
        return json_response(200, pair, {"Cache-Control": "no-store"})

    # ------------------------------------------------------------ photos
    @api.post("/photos")
    async def create_photo(request: Request) -> Response:
        user = require_user(request)
        parts = PhotoParts(store, store.config.max_upload)
        try:
            await parse_multipart(request.headers.get("content-type"), request.stream(), parts)
        except MultipartError as exc:
            parts.discard()
            raise ApiError(400, "bad_multipart", str(exc))
        except BaseException:
            parts.discard()
            raise
        if parts.file is None or parts.file_info is None:
            raise ApiError(422, "validation_failed", "A file part named 'file' is required.", field="file")
        if parts.title is None:
            parts.discard()
            raise ApiError(422, "validation_failed", "A text field named 'title' is required.", field="title")
        title = parts.title.value
        if len(title) > MAX_TITLE:
            parts.discard()
            raise ApiError(422, "validation_failed", f"The title must be at most {MAX_TITLE} characters.",
                           field="title")
        photo_id = str(uuid.uuid4())
        parts.file.end()
        os.replace(parts.file.path, store.photo_path(photo_id))
        content_type = (parts.file_info.content_type or "").strip()
        record = {"id": photo_id, "owner": user, "title": title, "filename": parts.file_info.filename,
                  "content_type": content_type, "size": parts.file.size,
                  "sha256": parts.file.hasher.hexdigest(), "created_at": now_rfc3339()}
        store.add_photo(record)
        url = str(request.url_for("get_photo", photo_id=photo_id))
        return json_response(201, photo_json(record, url), {"Location": url})

    def photo_json(record: dict, url: str) -> dict:
        return {"id": record["id"], "url": url, "title": record["title"], "filename": record["filename"],
                "content_type": record["content_type"], "size": record["size"], "sha256": record["sha256"]}

    @api.get("/photos")
    async def list_photos(request: Request) -> Response:
        user = require_user(request)
        return json_response(200, [photo_json(p, str(request.url_for("get_photo", photo_id=p["id"])))
                                   for p in store.list_photos(user)])

    # GET/HEAD /photos/{id} with validators, ranges and Repr-Digest, and the /__photos hooks.
    served_photos = photo_serving.install(api, store, require_user)

    # ------------------------------------------------------------ article photos (attachments)
    async def article_photo(data: dict, user: str) -> str | None:
        # An article's optional `photo`: the id of a stored photo of the writer's (POST /photos,
        # or a finished tus upload), or the URL of a finished upload on another server the
        # deployment trusts (decision 2515). Absent or null: none (a PUT removes it).
        photo = data.get("photo")
        if photo is None:
            return None
        if not isinstance(photo, str) or not photo:
            raise ApiError(422, "validation_failed", "'photo' must be the id of a stored photo.", field="photo")
        if foreign_files.trusted_upload(photo, store.config.attachment_servers):
            problem = await foreign_files.finished_upload_problem(photo)
            if problem is not None:
                raise ApiError(422, "validation_failed", problem, field="photo")
            return photo
        record = store.get_photo(photo)
        if record is None or record["owner"] != user:
            raise ApiError(422, "validation_failed", f"No stored photo of yours has the id {photo!r}.",
                           field="photo")
        return photo

    @api.delete("/photos/{photo_id}")
    async def delete_photo(photo_id: str, request: Request) -> Response:
        user = require_user(request)
        record = store.get_photo(photo_id)
        if record is None or record["owner"] != user:
            raise ApiError(404, "not_found", "No such photo.")
        store.delete_photo(photo_id)
        return Response(status_code=204)

    # ------------------------------------------------------------ tus (Docs/tus.md)
    tus.install(api, store, require_user)

    # ------------------------------------------------------------ upload echo
    @api.post("/upload")
    async def upload(request: Request) -> Response:
        echo = EchoParts()
        try:
            await parse_multipart(request.headers.get("content-type"), request.stream(), echo)
        except MultipartError as exc:
            raise ApiError(400, "bad_multipart", str(exc))
        return json_response(200, echo.result())

    # ------------------------------------------------------------ articles
    @api.get("/articles")
    async def list_articles(request: Request) -> Response:
        require_user(request)
        return list_answer(request, store.list_articles())

    @api.get("/articles/{article_id}")
    async def get_article(article_id: str, request: Request) -> Response:
        require_user(request)
        return record_answer(request, store.get_article(article_id), "article", etag_for)

    @api.put("/articles/{article_id}")
    async def put_article(article_id: str, request: Request) -> Response:
        user = require_user(request)
        data = await read_json_object(request)
        title = require_string(data, "title")
        body = require_string(data, "body")
        body_id = data.get("id")
        if body_id is not None and body_id != article_id:
            raise ApiError(422, "validation_failed", "The body's id does not match the URL.", field="id")
        validate_id(article_id)
        validate_title(title)
        base = write_base(request, data.get("version"), "version")
        photo = await article_photo(data, user)
        outcome, article = store.put_article(article_id, title, body, base, photo)
        return put_answer(outcome, article, etag_for,
                          str(request.url_for("get_article", article_id=article_id)), "article",
                          'base version (If-Match: "v<n>" or body.version)')

    @api.post("/articles")
    async def create_article(request: Request) -> Response:
        user = require_user(request)
        data = await read_json_object(request)
        article_id = require_string(data, "id")
        title = require_string(data, "title")
        body = require_string(data, "body")
        validate_id(article_id)
        validate_title(title)
        created, article = store.create_article(article_id, title, body, await article_photo(data, user))
        if not created:
            raise ApiError(409, "already_exists", "An article with this id already exists.", current=article)
        return json_response(201, article, {"ETag": etag_for(article),
                                            "Location": str(request.url_for("get_article", article_id=article_id))})

    @api.delete("/articles/{article_id}")
    async def delete_article(article_id: str, request: Request) -> Response:
        require_user(request)
        return delete_answer(request, lambda base: store.delete_article(article_id, base), "article")

    # ------------------------------------------------------------ notes (Docs/notes.md)
    def note_etag(note: dict) -> str:
        return f'"r{note["rev"]}"'

    def note_fields(data: dict) -> tuple[str, list[str], int | None]:
        for name in data:
            if name not in ("note_id", "text", "tags", "rev"):
                raise ApiError(422, "validation_failed", f"Notes have no field '{name}'.", field=name)
        text = require_string(data, "text")
        if len(text) > MAX_NOTE_TEXT:
            raise ApiError(422, "validation_failed", f"The text must be at most {MAX_NOTE_TEXT} characters.",
                           field="text")
        tags = data.get("tags", [])
        if tags is None:
            tags = []
        if (not isinstance(tags, list) or len(tags) > MAX_TAGS
                or any(not isinstance(t, str) or not t.strip() or len(t) > MAX_TAG for t in tags)):
            raise ApiError(422, "validation_failed",
                           f"'tags' must be a list of at most {MAX_TAGS} non-empty strings of up to {MAX_TAG} "
                           "characters.", field="tags")
        return text, tags, data.get("rev")

    @api.get("/notes")
    async def list_notes(request: Request) -> Response:
        require_user(request)
        return list_answer(request, store.list_notes())

    @api.get("/notes/{note_id}")
    async def get_note(note_id: str, request: Request) -> Response:
        require_user(request)
        return record_answer(request, store.get_note(note_id), "note", note_etag)

    @api.put("/notes/{note_id}")
    async def put_note(note_id: str, request: Request) -> Response:
        require_user(request)
        data = await read_json_object(request)
        text, tags, rev = note_fields(data)
        body_id = data.get("note_id")
        if body_id is not None and body_id != note_id:
            raise ApiError(422, "validation_failed", "The body's note_id does not match the URL.", field="note_id")
        validate_id(note_id)
        base = write_base(request, rev, "rev", prefix="r")
        outcome, note = store.put_note(note_id, text, tags, base)
        return put_answer(outcome, note, note_etag, str(request.url_for("get_note", note_id=note_id)),
                          "note", 'base revision (If-Match: "r<n>" or body.rev)')

    @api.delete("/notes/{note_id}")
    async def delete_note(note_id: str, request: Request) -> Response:
        require_user(request)
        return delete_answer(request, lambda base: store.delete_note(note_id, base), "note", prefix="r")

    # ------------------------------------------------------------ documents (Docs/contract.md)
    # Free-form records: any members beside id, version and updated_at, kept as sent (integers of
    # any size exactly, nesting to DOCUMENT_DEPTH levels); "v<n>" tags as articles.
    def document_fields(document_id: str, data: dict) -> tuple[dict, int | None]:
        body_id = data.get("id")
        if body_id is not None and body_id != document_id:
            raise ApiError(422, "validation_failed", "The body's id does not match the URL.", field="id")
        version = data.get("version")
        fields = {k: v for k, v in data.items() if k not in ("id", "version", "updated_at")}
        try:
            json.dumps(fields, allow_nan=False)
        except ValueError:
            raise ApiError(422, "validation_failed", "A number is beyond what the server stores.")
        return fields, version

    @api.get("/documents")
    async def list_documents(request: Request) -> Response:
        require_user(request)
        return list_answer(request, store.list_documents())

    @api.get("/documents/{document_id}")
    async def get_document(document_id: str, request: Request) -> Response:
        require_user(request)
        return record_answer(request, store.get_document(document_id), "document", etag_for)

    @api.put("/documents/{document_id}")
    async def put_document(document_id: str, request: Request) -> Response:
        require_user(request)
        data = await read_json_object(request)
        validate_id(document_id)
        fields, version = document_fields(document_id, data)
        base = write_base(request, version, "version")
        outcome, document = store.put_document(document_id, fields, base)
        return put_answer(outcome, document, etag_for,
                          str(request.url_for("get_document", document_id=document_id)), "document",
                          'base version (If-Match: "v<n>" or body.version)')

    @api.delete("/documents/{document_id}")
    async def delete_document(document_id: str, request: Request) -> Response:
        require_user(request)
        return delete_answer(request, lambda base: store.delete_document(document_id, base), "document")

    return api, store


fastapi_app, store = create_app()
app = CourierMiddleware(fastapi_app, store)
ietf_server = ietf.start_from_env(store)  # the IETF resumable uploads draft on its own port, when asked
