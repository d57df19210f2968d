"""courier_backend.lifeline: a server a test started never outlives it.

Each test runs a small "parent" process that blocks SIGTERM and SIGINT (as a Swift concurrency
thread does) and starts a server, the way the Swift tests start theirs. This test process is
made a child subreaper, so the server is re-parented here when its parent dies and can be
reaped and waited for.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import BACKEND_DIR, free_port

PR_SET_CHILD_SUBREAPER = 36

PARENT = textwrap.dedent(
    """
    import os, signal, socket, subprocess, sys, time
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    command, port, exit_with_parent = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    env = dict(os.environ)
    if exit_with_parent == "1":
        env["COURIER_BACKEND_EXIT_WITH_PARENT"] = "1"
    if command == "sink":
        argv = [sys.executable, "-m", "courier_backend.sink", "--port", str(port)]
    else:
        env["COURIER_BACKEND_DATA"] = sys.argv[4]
        argv = ["/bin/bash", "run.sh", "--port", str(port)]
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("server did not start")
    print(server.pid, flush=True)
    sys.stdin.read()  # lives until the test closes its stdin
    os._exit(0)
    """
)


@pytest.fixture(autouse=True)
def subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def start(command: str, exit_with_parent: bool, tmp_path) -> tuple[subprocess.Popen, int, int]:
    port = free_port()
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, command, str(port), "1" if exit_with_parent else "0", str(tmp_path)],
        cwd=BACKEND_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = parent.stdout.readline()
    assert line.strip().isdigit(), f"parent said {line!r}"
    return parent, int(line), port


def reap(pid: int, seconds: float) -> int | None:
    """Waits for a re-parented (or own) child to end; its wait status, or None if it did not."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        time.sleep(0.05)
    return None


def stop_parent(parent: subprocess.Popen) -> None:
    parent.stdin.close()
    parent.wait(10)


@pytest.mark.parametrize("command", ["sink", "backend"])
def test_server_ends_when_the_process_that_started_it_ends(command, tmp_path):
    parent, pid, _ = start(command, exit_with_parent=True, tmp_path=tmp_path)
    stop_parent(parent)
    status = reap(pid, 15)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        reap(pid, 5)
    assert status is not None, "the server outlived the process that started it"


def test_without_the_flag_the_server_is_left_alone(tmp_path):
    parent, pid, port = start("sink", exit_with_parent=False, tmp_path=tmp_path)
    stop_parent(parent)
    try:
        assert reap(pid, 1.5) is None, "the server ended without being asked to"
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        os.kill(pid, signal.SIGKILL)
        reap(pid, 5)


@pytest.mark.parametrize("command", ["sink", "backend"])
def test_sigterm_stops_a_server_started_with_signals_blocked(command, tmp_path):
    parent, pid, _ = start(command, exit_with_parent=False, tmp_path=tmp_path)
    status = None
    try:
        with open(f"/proc/{pid}/status") as proc_status:
            blocked = next(line for line in proc_status if line.startswith("SigBlk:"))
        assert int(blocked.split()[1], 16) & (1 << (signal.SIGTERM - 1)) == 0, blocked
        os.kill(pid, signal.SIGTERM)
        stop_parent(parent)
        status = reap(pid, 15)
        assert status is not None, "SIGTERM was ignored"
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            reap(pid, 5)
