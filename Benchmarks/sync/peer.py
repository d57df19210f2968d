#!/usr/bin/env python3
"""Peer for the replay benchmark: a plain keep-alive HTTP client (python http.client) sending
the requests `courier sync` sends, on CONNECTIONS connections, keeping each record's order.

  peer.py HOST PORT creates COUNT CONNECTIONS
      COUNT `PUT /articles/<uuid>` creates (201 each).
  peer.py HOST PORT edits RECORDS PER_RECORD CONNECTIONS
      creates RECORDS articles first (not timed), then RECORDS x PER_RECORD edits, round by
      round, each `PUT /articles/<id>` with `If-Match: "v<n>"` (200 each).

Each request carries the same headers and canonical JSON body as courier's (sorted keys,
Idempotency-Key, bearer token). With CONNECTIONS > 1, record i goes on connection i mod
CONNECTIONS, so a record's writes stay in order on one connection and the connections run at
once (threads; the GIL is released while a request waits). Prints the seconds of the timed part.
"""
import http.client
import json
import sys
import threading
import time
import uuid

host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def connect():
    return http.client.HTTPConnection(host, port)


def token():
    conn = connect()
    conn.request("POST", "/auth/token", json.dumps({"username": "alice", "password": "secret"}),
                 {"Content-Type": "application/json"})
    return json.loads(conn.getresponse().read())["access_token"]


TOKEN = token()


def put(conn, record_id, fields, version, expected):
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    headers = {"Content-Type": "application/json; charset=utf-8", "Accept": "application/json",
               "Authorization": f"Bearer {TOKEN}", "Idempotency-Key": str(uuid.uuid4())}
    if version is not None:
        headers["If-Match"] = f'"v{version}"'
    conn.request("PUT", f"/articles/{record_id}", body, headers)
    response = conn.getresponse()
    response.read()
    if response.status != expected:
        raise SystemExit(f"unexpected status {response.status} for {record_id}")


def run_lanes(lanes):
    """Runs each lane (a list of (record_id, fields, version, expected)) on its own connection,
    all at once; returns the seconds from the first start to the last end."""
    failures = []

    def lane(work):
        try:
            conn = connect()
            for item in work:
                put(conn, *item)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=lane, args=(work,)) for work in lanes]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if failures:
        raise SystemExit(f"peer failed: {failures[0]}")
    return elapsed


if mode == "creates":
    count, connections = int(sys.argv[4]), int(sys.argv[5])
    lanes = [[] for _ in range(connections)]
    for index in range(count):
        fields = {"body": f"Notes de cours iOS, article {index}.", "title": f"Article {index}"}
        lanes[index % connections].append((str(uuid.uuid4()), fields, None, 201))
    print(f"{run_lanes(lanes):.3f}")
elif mode == "edits":
    records, per_record, connections = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    ids = [str(uuid.uuid4()) for _ in range(records)]
    setup = connect()
    for index, record_id in enumerate(ids):
        put(setup, record_id, {"body": f"Notes de cours iOS, article {index}.",
                               "title": f"Article {index}"}, None, 201)
    lanes = [[] for _ in range(connections)]
    for round_number in range(1, per_record + 1):
        for index, record_id in enumerate(ids):
            title = f"Article {index}"
            fields = {"body": f"Edit {round_number} of {title}.", "title": title}
            lanes[index % connections].append((record_id, fields, round_number, 200))
    print(f"{run_lanes(lanes):.3f}")
else:
    raise SystemExit("usage: peer.py HOST PORT creates COUNT CONNECTIONS | edits RECORDS PER_RECORD CONNECTIONS")
