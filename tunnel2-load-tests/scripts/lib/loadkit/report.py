"""The `report` subcommand: summary.md (also printed) and the CSV files from the JSON of every target in a report
folder. The layout is what storm.sh's readers and docs/benchmarks expect; change it only on purpose."""

import csv
import json
import math
import os

from .log import log
from .stats import percentile
from .summary import summarize


def fmt_frac(v):
    return "-" if v is None else f"{v:.3f}"


def fmt_ms(v, timeout=None):
    if v is None:
        return "-"
    if v == math.inf:
        return f"> {timeout:g} s" if timeout else "unanswered"
    return f"{v:.1f} ms" if v < 1000 else f"{v / 1000:.2f} s"


def fmt_rate(r):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if r >= size and r % size == 0:
            return f"{r // size} {unit}/s"
    return f"{r:,} B/s"


def fmt_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} B"


def load_runs(folder, targets, quiet=False):
    """The JSON of each target that has one, in the order given."""
    runs = []
    for target in targets.split():
        path = os.path.join(folder, f"{target}.json")
        if not os.path.exists(path):
            if not quiet:
                log(f"warning: no results for {target} ({path})")
            continue
        with open(path) as f:
            runs.append(json.load(f))
    return runs


def header_lines(d0, stamp, note):
    w = [f"# Slow-reader storm ({d0['direction']}), {stamp}", ""]
    if d0["direction"] == "download":
        w.append(f"{d0['callers']} callers, each `GET /loadtest/bytes/{d0['body_bytes']}` with SO_RCVBUF {fmt_bytes(d0['sockbuf'])} "
                 f"set before connect, each reading at {fmt_rate(d0['rate'])} (token bucket, reads of at most {fmt_bytes(d0['chunk'])}) "
                 f"for {d0['seconds']:g} s, then closing. **delivered** = body bytes a caller read / (rate x seconds).")
    else:
        w.append(f"{d0['callers']} callers, each `POST` of a {fmt_bytes(d0['body_bytes'])} body (Content-Length, SO_SNDBUF "
                 f"{fmt_bytes(d0['sockbuf'])}) sent {sent_how(d0)} for {d0['seconds']:g} s, then closing, to a backend "
                 f"that reads every body at {fmt_rate(d0['rate'])} through a {fmt_bytes(d0['sockbuf'])} SO_RCVBUF. "
                 f"**delivered** = body bytes the backend read before the caller's {d0['seconds']:g} s were up / (rate x seconds).")
    w.append(f"Beside them one probe `GET /loadtest/ping` every {d0['probe_interval']:g} s on a fresh connection "
             f"(timeout {d0['probe_timeout']:g} s = unanswered; unanswered probes count as slower than any answer in the percentiles). "
             f"RSS: VmRSS every 0.5 s; growth = peak from the storm's start to the end of its probes - mean of the "
             f"{d0['baseline']:g} s before it, MiB. {note}".rstrip())
    return w + [""]


def sent_how(d):
    """How an upload's callers sent: at the rate, or (--push) as fast as their sockets took the bytes."""
    return "as fast as the socket takes it" if d.get("push") else f"at {fmt_rate(d['rate'])}"


def main_table(sums):
    w = ["| target | callers | rate | delivered mean | p5 | min | caller errors | probes | probe p50 | p95 | p99 | max | unanswered | failed | RSS growth (MiB) |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for d, s in sums:
        growth = ", ".join(f"{name} {s['rss'][name]['growth'] / 1024:+.1f}" for name in d["path"]
                           if name in s["rss"] and s["rss"][name]["growth"] is not None) or "-"
        nerr = sum(s["errors"].values())
        to = d["probe_timeout"]
        w.append(f"| {d['target']} | {d['callers']} | {fmt_rate(d['rate'])} | {fmt_frac(s['d_mean'])} | {fmt_frac(s['d_p5'])} | "
                 f"{fmt_frac(s['d_min'])} | {nerr} | {s['n_probes']} | {fmt_ms(s['p50'], to)} | {fmt_ms(s['p95'], to)} | "
                 f"{fmt_ms(s['p99'], to)} | {fmt_ms(s['pmax'], to)} | {s['unanswered']} | {s['probe_failed']} | {growth} |")
    return w + [""]


def rss_table(sums):
    def mib(v):
        return "-" if v is None else f"{v / 1024:.1f}"

    w = ["RSS of every sampled process (MiB):", "", "| target | process | pid | baseline | peak | growth | end |",
         "|---|---|---:|---:|---:|---:|---:|"]
    for d, s in sums:
        for name, e in s["rss"].items():
            g = "-" if e["growth"] is None else f"{e['growth'] / 1024:+.1f}"
            w.append(f"| {d['target']} | {name} | {e['pid']} | {mib(e['base'])} | {mib(e['peak'])} | {g} | {mib(e['end'])} |")
    return w + [""]


def notes_line(d, s):
    """The '- target: ...' line under the tables: what the table has no column for."""
    g = d["generator"]
    extra = []
    if s["errors"]:
        extra.append("caller ends: " + ", ".join(f"{k} x{v}" for k, v in sorted(s["errors"].items())))
    if s["probe_failed_kinds"]:
        extra.append("failed probes: " + ", ".join(s["probe_failed_kinds"]))
    if d["direction"] == "upload":
        sent = sorted((r["sent"] or 0) / d["expected_bytes"] for r in d["caller_rows"])
        extra.append(f"sent by the callers mean {sum(sent) / len(sent):.3f}" if sent else "")
        if not d["backend_stats"]:
            extra.append("the slow backend's stats could not be read: delivered is 0")
    heads = sorted(r["head_ms"] for r in d["caller_rows"] if r.get("head_ms") is not None)
    if heads:
        where = "response head" if d["direction"] == "download" else "request head at the backend"
        extra.append(f"{where} p50 {fmt_ms(percentile(heads, 50))}, max {fmt_ms(heads[-1])}")
    extra.append(f"probes before the storm p50 {fmt_ms(s['base_p50'])}")
    t = d["probe_timeout"]
    extra.append("slowest probe in seconds 0 / 1 / 2: " + " / ".join(fmt_ms(x, t) for x in s["first_seconds"]))
    if s["n_socket"]:
        extra.append(f"probes at the socket (answer's kernel receive time, without the probe process's own wait for a "
                     f"core): p50 {fmt_ms(s['socket_p50'], t)} p99 {fmt_ms(s['socket_p99'], t)} max {fmt_ms(s['socket_max'], t)}, "
                     "slowest in seconds 0 / 1 / 2: " + " / ".join(fmt_ms(x, t) for x in s["first_seconds_socket"]))
    if s["settled"] is not None and d["direction"] == "download":
        extra.append(f"probes from 1 s after the last caller's head (t >= {s['settled']:.1f} s): {s['n_steady']}, "
                     f"p50 {fmt_ms(s['steady_p50'], d['probe_timeout'])} p99 {fmt_ms(s['steady_p99'], d['probe_timeout'])} "
                     f"max {fmt_ms(s['steady_max'], d['probe_timeout'])}")
    extra.append(f"generator: {g['cpu_s'] / max(g['wall_s'], 1e-9) * 100:.0f} % of a core, tick lag p99 {g['lag_p99_ms']} ms, "
                 f"max {g['lag_max_ms']} ms")
    return f"- {d['target']}: " + "; ".join(x for x in extra if x)


def summary_markdown(runs, stamp, note):
    sums = [(d, summarize(d)) for d in runs]
    lines = header_lines(runs[0], stamp, note) + main_table(sums) + rss_table(sums)
    lines += [notes_line(d, s) for d, s in sums] + [""]
    return "\n".join(lines)


def write_csvs(folder, runs):
    """timeseries.csv (RSS samples and probes of every target) and callers-<target>.csv (one row per caller)."""
    with open(os.path.join(folder, "timeseries.csv"), "w", newline="") as f:
        cw = csv.writer(f)
        cw.writerow(["target", "t_s", "process", "pid", "rss_mib", "probe_latency_ms", "probe_result"])
        for d in runs:
            for t, name, pid, kib in d["samples"]:
                cw.writerow([d["target"], t, name, pid, f"{kib / 1024:.2f}", "", ""])
            for p in d["probes"]:
                cw.writerow([d["target"], p["t"], "probe", "", "", "" if p["ms"] is None else p["ms"], p["result"]])
    for d in runs:
        with open(os.path.join(folder, f"callers-{d['target']}.csv"), "w", newline="") as f:
            cols = ["i", "start", "connect_ms", "head_ms", "status", "end", "bytes", "fraction"]
            if d["direction"] == "upload":
                cols += ["sent", "backend_read", "backend_end"]
            cw = csv.writer(f)
            cw.writerow(cols)
            for r in d["caller_rows"]:
                cw.writerow(["" if r.get(c) is None else r.get(c) for c in cols])


def cmd_report(a):
    runs = load_runs(a.dir, a.targets)
    if not runs:
        log("no results to report")
        return 1
    text = summary_markdown(runs, a.stamp, a.note)
    print(text)
    with open(os.path.join(a.dir, "summary.md"), "w") as f:
        f.write(text + "\n")
    write_csvs(a.dir, runs)
    return 0
