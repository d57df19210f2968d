"""Articles naming a file another server stored (decision 2515).

A client may send an attachment's file to another tus server (`attachment_upload_url`) and put
that upload's URL in the article's `photo`. The backend accepts such a URL only under a prefix
the deployment trusts (`attachment_servers`: `COURIER_BACKEND_ATTACHMENT_SERVERS`, comma-
separated, or `POST /__config`), and only once a tus `HEAD` of it shows the upload finished
(`Upload-Offset` equal to `Upload-Length`). Its own photo ids are checked as before (2521).
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

CHECK_TIMEOUT = 5.0
TUS = {"Tus-Resumable": "1.0.0"}
# No proxy from the environment: the check goes straight to the trusted server.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def valid_server(prefix: object) -> bool:
    """A trusted prefix: an http(s) URL ending with a slash (`http://host:port/files/`)."""
    return (isinstance(prefix, str) and prefix.startswith(("http://", "https://"))
            and prefix.endswith("/") and len(prefix.split("/")) >= 4 and " " not in prefix)


def parse_servers(text: str) -> tuple[str, ...]:
    """`COURIER_BACKEND_ATTACHMENT_SERVERS`: comma-separated prefixes; a bad one stops start-up."""
    servers = tuple(part.strip() for part in text.split(",") if part.strip())
    for prefix in servers:
        if not valid_server(prefix):
            raise SystemExit(f"COURIER_BACKEND_ATTACHMENT_SERVERS: {prefix!r} must be an http(s) URL ending with /")
    return servers


def trusted_upload(photo: str, servers: tuple[str, ...] | list[str]) -> bool:
    """Whether `photo` names one upload (one path segment) under a trusted prefix."""
    for prefix in servers:
        if photo.startswith(prefix):
            rest = photo[len(prefix):]
            return bool(rest) and not any(c in rest for c in "/?#") and rest not in (".", "..")
    return False


def _head(url: str) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, method="HEAD", headers=TUS)
    try:
        with _OPENER.open(request, timeout=CHECK_TIMEOUT) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, {}


async def finished_upload_problem(url: str) -> str | None:
    """None when a tus `HEAD` of `url` shows a finished upload; else why not, for people."""
    try:
        status, headers = await asyncio.to_thread(_head, url)
    except (OSError, ValueError) as error:
        return f"The server holding {url} could not be asked about it ({error})."
    if status not in (200, 204):
        return f"No upload is at {url} (its server answered {status})."
    offset, length = headers.get("upload-offset", ""), headers.get("upload-length", "")
    if not (offset.isdigit() and length.isdigit()):
        return f"The server holding {url} did not say how much of it is stored."
    if offset != length:
        return f"The upload at {url} is not finished ({offset} of {length} bytes)."
    return None
