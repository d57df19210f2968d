"""Keeps a backend (or sink) that a test started from outliving that test.

Two things go wrong when a test process starts a server and then ends:

- A process spawned from a thread that blocks signals (a Swift concurrency or dispatch worker)
  inherits that blocked mask across exec, so SIGTERM stays pending forever and `terminate()`
  does nothing. `install()` unblocks SIGINT and SIGTERM.
- A test process that exits (or is killed) before it stops its server leaves the server
  running, adopted by init. With `COURIER_BACKEND_EXIT_WITH_PARENT=1`, a watcher thread sends
  SIGTERM to this process as soon as it is re-parented, and exits hard if that is ignored.
"""

from __future__ import annotations

import os
import signal
import threading
import time

ENV = "COURIER_BACKEND_EXIT_WITH_PARENT"
POLL_SECONDS = 0.25
GRACE_SECONDS = 5.0


def install(environ: dict[str, str] | None = None) -> threading.Thread | None:
    """Unblocks the stop signals; starts the parent watcher when asked. Returns the watcher."""
    environ = os.environ if environ is None else environ
    if threading.current_thread() is threading.main_thread():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    if environ.get(ENV) != "1":
        return None
    parent = os.getppid()
    watcher = threading.Thread(target=_watch, args=(parent,), name="lifeline", daemon=True)
    watcher.start()
    return watcher


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE_SECONDS)
    os._exit(70)
