"""`python -m courier_backend [--host H] [--port P]`: run the backend with uvicorn, one worker."""

from __future__ import annotations

import argparse
import os


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m courier_backend", description=__doc__)
    parser.add_argument("--host", default=os.environ.get("COURIER_BACKEND_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("COURIER_BACKEND_PORT", "8080")))
    parser.add_argument("--log-level", default=os.environ.get("COURIER_BACKEND_LOG_LEVEL", "info"))
    args = parser.parse_args(argv)

    import uvicorn

    uvicorn.run("courier_backend.app:app", host=args.host, port=args.port, workers=1, log_level=args.log_level)


if __name__ == "__main__":
    main()
