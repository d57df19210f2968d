"""`python -m courier_backend.tus_peer --port P --dir D`: an independent tus 1.0.0 server.

Runs tuspyserver (a tus server from PyPI, written by other people as a FastAPI router) at
`/files`, so the Swift client's tus code can be tested against an implementation that is not
ours. Started by Backend/tus-peer.sh, which installs it into Backend/.venv-tus-peer; nothing
here is imported by the reference backend.

Endpoints: the tus routes at /files (creation, creation-with-upload, creation-defer-length,
expiration, termination, concatenation; no checksum), `GET /health` -> {"ok": true}, and
`GET /__files/{id}` -> the bytes stored for an upload (for the tests' SHA-256 checks), and
`POST|GET /__hold` as the reference backend's (holds.py: a request held before it reaches
tuspyserver, or its answer held once processed; decision 2515's kill matrix). No auth.
"""

from __future__ import annotations

import argparse
import os

from . import lifeline
from .holds import HoldMiddleware

PREFIX = "files"


def build_app(files_dir: str):
    from fastapi import FastAPI, HTTPException
    from fastapi.responses import FileResponse, JSONResponse
    from tuspyserver import create_tus_router

    os.makedirs(files_dir, exist_ok=True)
    app = FastAPI(title="tus peer (tuspyserver)", docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(create_tus_router(prefix=PREFIX, files_dir=files_dir, days_to_keep=1,
                                         strict_offset_validation=True))

    @app.get("/health")
    async def health():
        return JSONResponse({"ok": True, "server": "tuspyserver", "prefix": "/" + PREFIX})

    @app.get("/__files/{upload_id}")
    async def stored(upload_id: str):
        path = os.path.join(files_dir, upload_id)
        if "/" in upload_id or upload_id.startswith(".") or not os.path.isfile(path):
            raise HTTPException(status_code=404)
        return FileResponse(path, media_type="application/octet-stream")

    return HoldMiddleware(app)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m courier_backend.tus_peer", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True, help="where uploads are stored")
    parser.add_argument("--log-level", default=os.environ.get("COURIER_BACKEND_LOG_LEVEL", "warning"))
    args = parser.parse_args(argv)
    lifeline.install()  # COURIER_BACKEND_EXIT_WITH_PARENT=1 (tus-peer.sh's default): end with the parent

    import uvicorn

    uvicorn.run(build_app(os.path.abspath(args.dir)), host=args.host, port=args.port, workers=1,
                log_level=args.log_level)


if __name__ == "__main__":
    main()
