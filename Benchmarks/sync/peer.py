#!/usr/bin/env python3
"""Peer for the replay benchmark: a plain sequential keep-alive HTTP client sending the same
requests `courier sync` sends (PUT /articles/<uuid> with Idempotency-Key, JSON body, bearer
token), one at a time, on one connection. Usage: peer.py HOST PORT COUNT"""
import http.client
import json
import sys
import time
import uuid

host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conn = http.client.HTTPConnection(host, port)
conn.request("POST", "/auth/token", json.dumps({"username": "alice", "password": "secret"}),
             {"Content-Type": "application/json"})
token = json.loads(conn.getresponse().read())["access_token"]
start = time.perf_counter()
for index in range(count):
    article_id = str(uuid.uuid4())
    body = json.dumps({"body": f"Notes de cours iOS, article {index}.", "title": f"Article {index}"},
                      sort_keys=True, separators=(",", ":"))
    conn.request("PUT", f"/articles/{article_id}", body, {
        "Content-Type": "application/json; charset=utf-8", "Accept": "application/json",
        "Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())})
    response = conn.getresponse()
    response.read()
    if response.status != 201:
        sys.exit(f"unexpected status {response.status}")
elapsed = time.perf_counter() - start
print(f"{elapsed:.3f}")
