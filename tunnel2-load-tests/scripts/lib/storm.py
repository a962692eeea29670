#!/usr/bin/env python3
"""Engine of storm.sh: the slow-reader storm of issue 23, Python 3 standard library only.

Subcommands:
  run      one storm against one target: N rate-limited callers (download: GET a huge body and read it at R
           bytes/s; upload: POST a huge body at R bytes/s), one probe per interval on a fresh connection, and
           the RSS of the given processes every 0.5 s (probes and sampler in a forked process of their own, so
           that the callers' event loop does not delay them). Writes the raw results as JSON.
  backend  a slow-reading HTTP/1.1 backend: reads every request body at R bytes/s through a small SO_RCVBUF,
           answers 200 when the body is complete or the caller is gone; GET /ping, /loadtest/ping and /healthz
           answer "pong" at once; GET /stats?run=ID gives what it read per caller of that run (JSON).
  report   the markdown table (stdout) and the CSV files from the JSON of every target in a report folder.
  plot     storm.png from the same JSON (needs matplotlib; storm.sh runs it with Debian's python3).

Everything is on 127.0.0.1; every loop ends by a deadline. The parts live in the package lib/loadkit (how the rate
is kept: loadkit/pacing.py); this file is only the command line.
"""

import argparse
import asyncio
import sys
import time

from loadkit.http import parse_url
from loadkit.plot import cmd_plot
from loadkit.report import cmd_report
from loadkit.run import cmd_run
from loadkit.slowbackend import serve_backend


def add_run(sub):
    r = sub.add_parser("run", help="one storm against one target")
    r.add_argument("--target", required=True)
    r.add_argument("--direction", choices=("download", "upload"), required=True)
    r.add_argument("--url", required=True, help="what every caller requests (GET or POST)")
    r.add_argument("--probe-url", required=True)
    r.add_argument("--callers", type=int, required=True)
    r.add_argument("--rate", type=int, required=True, help="bytes per second per caller")
    r.add_argument("--push", action="store_true", help="upload: callers send as fast as their sockets take the bytes, not at --rate")
    r.add_argument("--seconds", type=float, required=True)
    r.add_argument("--body-bytes", type=int, default=0, help="download: size asked for (for the report); upload: Content-Length")
    r.add_argument("--probe-interval", type=float, default=1.0)
    r.add_argument("--probe-timeout", type=float, default=30.0)
    r.add_argument("--baseline", type=float, default=2.0, help="seconds of RSS and probes before the storm")
    r.add_argument("--sample-interval", type=float, default=0.5)
    r.add_argument("--sockbuf", type=int, default=65536, help="SO_RCVBUF (download) / SO_SNDBUF (upload) of each caller")
    r.add_argument("--chunk", type=int, default=16384, help="largest read/write per call")
    r.add_argument("--connect-parallel", type=int, default=100, help="connects in flight at once while the callers start")
    r.add_argument("--proc", action="append", default=[], help="NAME=PID whose RSS is sampled (repeat)")
    r.add_argument("--path", default="", help="names of the processes in this target's path (for the table)")
    r.add_argument("--stats-url", default="", help="upload: the slow backend's /stats URL (direct)")
    r.add_argument("--run-id", default="", help="upload: prefix of X-Storm-Caller")
    r.add_argument("--out", required=True)


def add_backend(sub):
    b = sub.add_parser("backend", help="the slow-reading backend")
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--rate", type=int, required=True)
    b.add_argument("--rcvbuf", type=int, default=65536)
    b.add_argument("--chunk", type=int, default=16384)
    b.add_argument("--grace", type=float, default=5.0, help="seconds after X-Storm-Deadline before a body is given up")
    b.add_argument("--max-body-seconds", type=float, default=120.0, help="limit for a body without X-Storm-Deadline")
    b.add_argument("--seconds-hint", type=float, default=0.0, help="the storm's seconds, to time request heads")


def add_report_and_plot(sub):
    rp = sub.add_parser("report", help="table and CSV from a report folder")
    rp.add_argument("--dir", required=True)
    rp.add_argument("--targets", required=True)
    rp.add_argument("--stamp", default="")
    rp.add_argument("--note", default="")
    pl = sub.add_parser("plot", help="storm.png (needs matplotlib)")
    pl.add_argument("--dir", required=True)
    pl.add_argument("--targets", required=True)


def check_run(p, a):
    for name in ("callers", "rate", "sockbuf", "chunk", "connect_parallel"):
        if getattr(a, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    if a.seconds <= 0 or a.probe_interval <= 0 or a.probe_timeout <= 0:
        p.error("--seconds, --probe-interval and --probe-timeout must be positive")
    if a.direction == "upload" and a.body_bytes <= 0:
        p.error("upload needs --body-bytes")
    for spec in a.proc:
        if not spec.partition("=")[2].isdigit():
            p.error(f"--proc takes NAME=PID, got {spec!r}")
    parse_url(a.url)
    parse_url(a.probe_url)
    a.run_id = a.run_id or f"{a.target}{int(time.time())}"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    add_run(sub)
    add_backend(sub)
    add_report_and_plot(sub)
    a = p.parse_args(argv)
    if a.cmd == "run":
        check_run(p, a)
        return cmd_run(a)
    if a.cmd == "backend":
        asyncio.run(serve_backend(a))
        return 0
    if a.cmd == "report":
        return cmd_report(a)
    return cmd_plot(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
