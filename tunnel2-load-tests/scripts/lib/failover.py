#!/usr/bin/env python3
"""Engine of failover.sh: a fixed rate of GETs through three replicas while one of them is killed and restarted.

Subcommands:
  run     open-loop load (request i leaves at start + i/rate, whether or not earlier ones answered) against one
          target for a number of seconds; records per request: when it left, status (0 = no answer: refused,
          reset or timed out), round trip, and which replica answered. Writes JSON.
  report  per-target summary table (markdown, stdout) and per-second CSVs from the JSON of every target.
  plot    failover.png: per-second success rate, round-trip p50/p99, and the killed replica's share, one line per
          target, with the kill and the restart marked. Needs matplotlib.

Runs on Debian's python3 with its aiohttp (package python3-aiohttp) and matplotlib (python3-matplotlib); every
target is on 127.0.0.1 and every run stops by its deadline.
"""

import argparse
import asyncio
import csv
import json
import os
import sys
import time

from loadkit.stats import percentile


def replica_of(response_headers, body):
    """Which replica answered: nginx's X-Upstream (the last address it tried), else the port in TestBackend's
    /loadtest/get "url", which carries the Host the client sent: the replica's own address, since failover.sh starts
    the clients with --host-header rewrite."""
    upstream = response_headers.get("X-Upstream")
    if upstream:
        return upstream.split(",")[-1].strip().rsplit(":", 1)[-1]
    try:
        url = json.loads(body)["url"]
        return url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[-1]
    except (ValueError, KeyError, IndexError):
        return "?"


async def run(args):
    import aiohttp  # Debian's python3-aiohttp

    total = int(args.rate * args.seconds)
    records = [None] * total
    timeout = aiohttp.ClientTimeout(total=args.timeout)
    connector = aiohttp.TCPConnector(limit=args.connections, force_close=False, enable_cleanup_closed=True)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        start = time.monotonic()
        if args.ready_file:
            with open(args.ready_file, "w") as ready:
                ready.write("started\n")  # the script times the kill and the restart from here

        async def one(i, url):
            sent = time.monotonic()
            try:
                async with session.get(url) as response:
                    body = await response.read()
                    records[i] = (sent - start, response.status, (time.monotonic() - sent) * 1000, replica_of(response.headers, body))
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                records[i] = (sent - start, 0, (time.monotonic() - sent) * 1000, "-")

        tasks = []
        for i in range(total):
            delay = start + i / args.rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i, args.url[i % len(args.url)])))
        await asyncio.gather(*tasks)
    with open(args.out, "w") as out:
        json.dump({"target": args.target, "rate": args.rate, "seconds": args.seconds, "kill_at": args.kill_at,
                   "restart_at": args.restart_at, "killed": args.killed, "records": records}, out)


def per_second(data):
    rows = []
    for second in range(int(data["seconds"])):
        window = [r for r in data["records"] if second <= r[0] < second + 1]
        ok = [r for r in window if 200 <= r[1] < 300]
        times = sorted(r[2] for r in ok)
        pct = lambda p: percentile(times, p) if times else float("nan")
        killed = sum(1 for r in ok if r[3] == data["killed"])
        rows.append({"second": second, "sent": len(window), "ok": len(ok), "failed": len(window) - len(ok),
                     "success": len(ok) / len(window) if window else float("nan"),
                     "p50_ms": pct(50), "p99_ms": pct(99), "killed_share": killed / len(ok) if ok else float("nan")})
    return rows


def load(folder):
    targets = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                targets.append(json.load(f))
    order = {"direct": 0, "nginx": 1, "tunnel": 2, "agent": 3}
    return sorted(targets, key=lambda d: order.get(d["target"], 9))


def report(args):
    print("| target | requests | failed | failed while the replica was down | success | last second the killed replica answered after the kill | first second it answered after the restart | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data in load(args.folder):
        rows = per_second(data)
        with open(os.path.join(args.folder, f"{data['target']}-per-second.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
        records = data["records"]
        ok = sorted(r[2] for r in records if 200 <= r[1] < 300)
        failed = [r for r in records if not 200 <= r[1] < 300]
        down = [r for r in failed if data["kill_at"] <= r[0] < data["restart_at"] + 1]
        answered = [r[0] for r in records if 200 <= r[1] < 300 and r[3] == data["killed"]]
        last_after_kill = max((t for t in answered if data["kill_at"] <= t < data["restart_at"]), default=None)
        back = min((t for t in answered if t >= data["restart_at"]), default=None)
        pct = lambda p: f"{percentile(ok, p):.2f}" if ok else "-"
        fmt = lambda t, base: f"+{t - base:.2f} s" if t is not None else "none"
        print(f"| {data['target']} | {len(records)} | {len(failed)} | {len(down)} | {1 - len(failed) / len(records):.4f} | "
              f"{fmt(last_after_kill, data['kill_at'])} | {fmt(back, data['restart_at'])} | {pct(50)} | {pct(99)} |")


def plot(args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    targets = load(args.folder)
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    for data in targets:
        rows = per_second(data)
        x = [r["second"] for r in rows]
        axes[0].plot(x, [r["success"] * 100 for r in rows], label=data["target"])
        line, = axes[1].plot(x, [r["p50_ms"] for r in rows], label=f"{data['target']} p50")
        axes[1].plot(x, [r["p99_ms"] for r in rows], linestyle="--", color=line.get_color(), label=f"{data['target']} p99")
        axes[2].plot(x, [r["killed_share"] * 100 for r in rows], label=data["target"])
    first = targets[0]
    for ax in axes:
        ax.axvline(first["kill_at"], color="red", linewidth=0.8)
        ax.axvline(first["restart_at"], color="green", linewidth=0.8)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("success %")
    axes[1].set_ylabel("round trip ms")
    axes[1].set_yscale("log")
    axes[2].set_ylabel("answered by the\nkilled replica %")
    axes[2].set_xlabel("second (red: replica killed with SIGKILL, green: restarted)")
    for ax in axes:
        ax.legend(fontsize=7, ncol=3)
    fig.suptitle(f"{first['rate']:.0f} GET/s through three replicas; one killed at {first['kill_at']} s, restarted at {first['restart_at']} s")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--target", required=True)
    r.add_argument("--url", action="append", required=True, help="one URL, or several taken in turn (client-side round robin)")
    r.add_argument("--rate", type=float, default=200)
    r.add_argument("--seconds", type=float, default=60)
    r.add_argument("--kill-at", type=float, default=20)
    r.add_argument("--restart-at", type=float, default=40)
    r.add_argument("--killed", required=True, help="the port of the replica that is killed")
    r.add_argument("--timeout", type=float, default=5)
    r.add_argument("--connections", type=int, default=256)
    r.add_argument("--out", required=True)
    r.add_argument("--ready-file", help="written once the first request is due")
    rep = sub.add_parser("report")
    rep.add_argument("folder")
    p = sub.add_parser("plot")
    p.add_argument("folder")
    p.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.command == "run":
        asyncio.run(run(args))
    elif args.command == "report":
        report(args)
    else:
        plot(args)


if __name__ == "__main__":
    sys.exit(main())
