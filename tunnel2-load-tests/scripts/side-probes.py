#!/usr/bin/env python3
"""Probes beside a storm: GET a URL on a fresh connection every INTERVAL seconds, for several targets at once (one
thread each), to tell which hop delays a probe. Used to profile the start of storm.sh's upload storm (issue 41): the
storm's session through the tunnel, another session through the same TunnelServer, and both backends directly.

  side-probes.py --seconds 45 --out probes.json NAME=HOST:PORT/PATH [NAME=HOST:PORT/PATH ...]

Writes {name: [[t, ms, ok], ...]} (t in seconds since the start) and prints p50/p95/p99/max per target."""

import argparse
import json
import socket
import threading
import time


def probe_loop(t0, seconds, interval, host, port, path, rows):
    while time.time() - t0 < seconds:
        started = time.time()
        ok = False
        try:
            with socket.create_connection((host, port), timeout=10) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
                answer = b""
                while chunk := s.recv(65536):
                    answer += chunk
                ok = answer.startswith(b"HTTP/1.1 200")
        except OSError:
            pass
        rows.append([round(started - t0, 3), round((time.time() - started) * 1000, 2), ok])
        time.sleep(max(0.0, interval - (time.time() - started)))


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--out", required=True)
    parser.add_argument("targets", nargs="+", help="NAME=HOST:PORT/PATH")
    a = parser.parse_args()
    t0 = time.time()
    results, threads = {}, []
    for spec in a.targets:
        name, _, url = spec.partition("=")
        hostport, _, path = url.partition("/")
        host, _, port = hostport.rpartition(":")
        results[name] = []
        threads.append(threading.Thread(target=probe_loop,
                                        args=(t0, a.seconds, a.interval, host, int(port), "/" + path, results[name])))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(results, f)
    for name, rows in results.items():
        ms = [r[1] for r in rows if r[2]]
        print(f"{name}: {len(ms)} answered of {len(rows)}; p50 {percentile(ms, .5):.1f} p95 {percentile(ms, .95):.1f} "
              f"p99 {percentile(ms, .99):.1f} max {max(ms, default=float('nan')):.1f} ms")


if __name__ == "__main__":
    main()
