"""Helpers of Benchmarks/fleet/run.sh, against the reference backend's hooks (stdlib only).

  check.py logcount BASE                  number of requests in /__log (hooks are not logged)
  check.py outage BASE FROM TO            statuses and per-article counts of log entries FROM..TO
  check.py drain BASE TOKEN IDS TIMEOUT   poll GET /articles (every 0.25 s) until every id in
                                          the IDS file is there; print when (epoch seconds;
                                          exit 1 on timeout)
  check.py verify BASE TOKEN IDS          every queued write arrived exactly once
"""
import collections
import json
import sys
import time
import urllib.request


def get(base, path, token=None):
    request = urllib.request.Request(base + path)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def read_ids(path):
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip()]


def main():
    command, base = sys.argv[1], sys.argv[2]
    if command == "logcount":
        print(len(get(base, "/__log")))
    elif command == "outage":
        start, end = int(sys.argv[3]), int(sys.argv[4])
        entries = get(base, "/__log")[start:end]
        statuses = collections.Counter(str(e["status"]) for e in entries)
        per_path = collections.Counter(e["path"] for e in entries if e["path"] != "/articles")
        methods = collections.Counter(e["method"] for e in entries)
        print(json.dumps({"requests": len(entries), "methods": methods, "statuses": statuses,
                          "articles_tried": len(per_path),
                          "max_per_article": max(per_path.values(), default=0)}))
    elif command == "drain":
        token, ids, timeout = sys.argv[3], set(read_ids(sys.argv[4])), float(sys.argv[5])
        start = time.monotonic()
        while True:
            present = {a["id"] for a in get(base, "/articles", token)}
            if ids <= present:
                print(f"{time.time():.3f}")  # when the last write was seen (epoch seconds)
                return
            if time.monotonic() - start > timeout:
                print(f"timeout: {len(ids - present)} of {len(ids)} writes missing", file=sys.stderr)
                sys.exit(1)
            time.sleep(0.25)
    elif command == "verify":
        token, ids = sys.argv[3], read_ids(sys.argv[4])
        articles = get(base, "/articles", token)
        by_id = collections.Counter(a["id"] for a in articles)
        versions = {a["id"]: a["version"] for a in articles}
        log = get(base, "/__log")
        applied = collections.Counter(e["path"].rsplit("/", 1)[-1] for e in log
                                      if e["method"] == "PUT" and e["status"] in (200, 201))
        problems = []
        if len(ids) != len(set(ids)):
            problems.append("the clients queued duplicate ids")
        missing = [i for i in ids if by_id[i] == 0]
        twice = [i for i in ids if by_id[i] > 1]
        bumped = [i for i in ids if versions.get(i, 1) != 1]
        extra = set(by_id) - set(ids)
        if missing:
            problems.append(f"{len(missing)} writes missing")
        if twice:
            problems.append(f"{len(twice)} ids listed twice")
        if bumped:
            problems.append(f"{len(bumped)} articles applied more than once (version > 1)")
        if extra:
            problems.append(f"{len(extra)} articles nobody queued")
        histogram = collections.Counter(applied[i] for i in ids)
        print(json.dumps({"queued": len(ids), "on_server": sum(by_id[i] for i in set(ids)),
                          "version_1": sum(1 for i in ids if versions.get(i) == 1),
                          "accepted_puts_per_write": {str(k): v for k, v in sorted(histogram.items())},
                          "ok": not problems, "problems": problems}))
        if problems:
            sys.exit(1)


if __name__ == "__main__":
    main()
