#!/usr/bin/env python3
"""GETs at a fixed rate for a fixed time, each on a new connection, counting what every one of them got.

    fixed_rate.py URL --rate 200 --seconds 60 [--timeout 10]

Request i is sent at start + i / rate whatever happened to the ones before (an open model: a stalled server does not
slow the sender, so every request that should have been sent is counted). A new connection per request, so a refused
or reset connection counts as the failure of that one request, as a caller would see it. Prints the counts per
outcome (HTTP status, or the error), the seconds (from the start) in which failures happened, and one closing line
"sent N, ok N (2xx), failed N". Exit 0 when none failed.
"""
import argparse
import collections
import concurrent.futures
import http.client
import sys
import threading
import time
import urllib.parse


def get(parsed, timeout):
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port or 80, timeout=timeout)
    try:
        connection.request("GET", parsed.path or "/", headers={"Connection": "close"})
        response = connection.getresponse()
        response.read()
        return str(response.status)
    except Exception as error:  # every failure is an outcome to count, by its kind
        return type(error).__name__
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    parsed = urllib.parse.urlparse(args.url)
    outcomes = collections.Counter()
    failed_seconds = collections.Counter()
    lock = threading.Lock()
    total = args.rate * args.seconds

    def one(index, due):
        outcome = get(parsed, args.timeout)
        with lock:
            outcomes[outcome] += 1
            if not outcome.startswith("2"):
                failed_seconds[int(due)] += 1

    start = time.monotonic()
    late = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(32, args.rate // 2)) as pool:
        for index in range(total):
            due = index / args.rate
            wait = start + due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            elif wait < -0.1:
                late += 1
            pool.submit(one, index, due)
    elapsed = time.monotonic() - start
    ok = sum(count for outcome, count in outcomes.items() if outcome.startswith("2"))
    failed = total - ok
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome}: {count}")
    if failed_seconds:
        print("  failures by second from the start: " + ", ".join(f"{s}s: {n}" for s, n in sorted(failed_seconds.items())))
    print(f"  sent {total} in {elapsed:.1f} s ({total / elapsed:.1f} req/s; {late} sent more than 100 ms late)")
    print(f"sent {total}, ok {ok} (2xx), failed {failed}")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
