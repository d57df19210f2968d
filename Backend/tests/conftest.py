"""Fixtures: a real uvicorn subprocess on a free port, reset between tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

BACKEND_DIR = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    base_url: str
    port: int
    process: subprocess.Popen
    data_dir: Path
    log_path: Path

    def rss_peak_kb(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("no VmHWM")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(tmp: Path, extra_env: dict[str, str] | None = None, attempts: int = 3) -> Server:
    last_error = ""
    for _ in range(attempts):
        port = free_port()
        data_dir = tmp / f"data-{port}"
        log_path = tmp / f"server-{port}.log"
        env = dict(os.environ)
        for name in list(env):
            if name.startswith("COURIER_BACKEND_"):
                del env[name]
        env.update({"COURIER_BACKEND_DATA": str(data_dir), "PYTHONUNBUFFERED": "1"})
        env.update(extra_env or {})
        log_file = open(log_path, "wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "courier_backend.app:app", "--app-dir", str(BACKEND_DIR),
             "--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--log-level", "warning"],
            cwd=BACKEND_DIR, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
        log_file.close()
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            try:
                if httpx.get(base_url + "/health", timeout=1).status_code == 200:
                    return Server(base_url, port, process, data_dir, log_path)
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        last_error = log_path.read_text(errors="replace")
        stop_server(process)
    raise RuntimeError(f"backend did not start:\n{last_error}")


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Server:
    srv = start_server(tmp_path_factory.mktemp("backend"))
    yield srv
    stop_server(srv.process)


@pytest.fixture
def client(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        r = c.post("/__reset")
        assert r.status_code == 200, r.text
        yield c


def login(client: httpx.Client, username: str = "alice", password: str = "secret") -> dict:
    r = client.post("/auth/token", json={"username": username, "password": password})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture
def auth(client: httpx.Client) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(client)['access_token']}"}


def assert_error(response: httpx.Response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    body = response.json()
    assert body["code"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    if field is not None:
        assert body.get("field") == field, body
    return body
