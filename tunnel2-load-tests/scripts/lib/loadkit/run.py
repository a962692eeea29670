"""The `run` subcommand: one storm against one target. The callers run on this process's event loop; the probes
and the RSS sampler in a forked process (sampler.py). Writes the raw results as JSON for report.py and plot.py."""

import asyncio
import json
import multiprocessing
import os
import signal
import time
import urllib.parse

from .http import fetch_json
from .log import log
from .report import fmt_frac, fmt_ms
from .sampler import probe_process
from .slowcallers import run_callers
from .summary import summarize


def fetch_backend_stats(url, run_id):
    """What the slow backend read per caller of this run, or None (with a warning) when it cannot be read."""
    try:
        return fetch_json(f"{url}?run={urllib.parse.quote(run_id)}")
    except Exception as e:   # noqa: BLE001 - reported, the run goes on
        log(f"warning: could not read the slow backend's stats ({url}): {e}")
        return None


def caller_rows(a, callers, stats):
    """One row per caller, by index: its timings, how it ended, and the fraction of rate x seconds delivered."""
    expected = a.rate * a.seconds
    ordered = sorted(callers, key=lambda c: c.index)
    starts = [c.t_start for c in callers if c.t_start]
    base = min(starts) if starts else 0.0
    rows = []
    for c in ordered:
        row = {"i": c.index, "start": round(c.t_start - base, 3) if c.t_start else None,
               "connect_ms": None if c.connect_s is None else round(1000 * c.connect_s, 2),
               "head_ms": None if c.head_s is None else round(1000 * c.head_s, 2), "status": c.status, "end": c.end}
        if a.direction == "download":
            row["bytes"] = c.body
        else:
            got = (stats or {}).get(f"{a.run_id}-{c.index}") or {}
            row["sent"] = c.sent
            row["bytes"] = int(got.get("in_window", 0))
            row["backend_read"] = int(got.get("read", 0))
            row["backend_end"] = got.get("end")
            row["head_ms"] = got.get("head_ms")
        row["fraction"] = round(row["bytes"] / expected, 5) if expected else None
        rows.append(row)
    return rows


def run_storm(a, t0_wall):
    """The callers, started at t0_wall; None when interrupted (SIGINT or SIGTERM)."""
    async def main():
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, me.cancel)
        await asyncio.sleep(max(0.0, t0_wall - time.time()))
        return await run_callers(a)

    try:
        return asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        return None


def collect_probes(a, prober, probe_out, storm_end):
    """Waits for the probe process (at most the probe timeout and 30 s) and reads what it wrote."""
    prober.join(a.probe_timeout + 30)
    if prober.is_alive():
        prober.terminate()
        prober.join(5)
    try:
        with open(probe_out) as f:
            pr = json.load(f)
        os.unlink(probe_out)
        return pr
    except (OSError, ValueError):
        log(f"warning: {a.target}: the probe process left no results")
        return {"probes": [], "samples": [], "storm_end": storm_end}


def results(a, rows, gen, pr, stats, storm_end):
    return {"target": a.target, "direction": a.direction, "url": a.url, "probe_url": a.probe_url, "callers": a.callers,
            "rate": a.rate, "push": getattr(a, "push", False), "seconds": a.seconds, "expected_bytes": a.rate * a.seconds, "body_bytes": a.body_bytes,
            "sockbuf": a.sockbuf, "chunk": a.chunk, "probe_interval": a.probe_interval, "probe_timeout": a.probe_timeout,
            "baseline": a.baseline, "storm_end": round(storm_end, 3), "path": a.path.split(), "procs": a.proc,
            "generator": gen, "backend_stats": stats is not None, "caller_rows": rows,
            "probes": pr["probes"], "samples": pr["samples"], "run_id": a.run_id}


def cmd_run(a):
    t0_wall = time.time() + a.baseline + 0.2
    ctx = multiprocessing.get_context("fork")
    storm_over = ctx.Event()
    probe_out = a.out + ".probes.json"
    prober = ctx.Process(target=probe_process, args=(a, t0_wall, storm_over, os.getpid(), probe_out), daemon=True)
    prober.start()
    log(f"{a.target}: baseline {a.baseline:g} s, then {a.callers} {a.direction} callers at {a.rate} B/s for "
        f"{a.seconds:g} s against {a.url}; probes {a.probe_url} every {a.probe_interval:g} s")
    outcome = run_storm(a, t0_wall)
    storm_end = time.time() - t0_wall
    storm_over.set()
    if outcome is None:
        prober.terminate()
        prober.join(5)
        log(f"{a.target}: interrupted")
        return 130
    callers, gen = outcome
    log(f"{a.target}: callers done after {storm_end:.1f} s; waiting for the probes still out "
        f"(at most {a.probe_timeout:g} s) and one more second of RSS")
    pr = collect_probes(a, prober, probe_out, storm_end)
    stats = fetch_backend_stats(a.stats_url, a.run_id) if a.direction == "upload" and a.stats_url else None
    out = results(a, caller_rows(a, callers, stats), gen, pr, stats, storm_end)
    with open(a.out, "w") as f:
        json.dump(out, f)
    s = summarize(out)
    log(f"{a.target}: delivered mean {fmt_frac(s['d_mean'])} p5 {fmt_frac(s['d_p5'])} min {fmt_frac(s['d_min'])}; "
        f"probes {s['n_probes']}: p50 {fmt_ms(s['p50'], a.probe_timeout)} p99 {fmt_ms(s['p99'], a.probe_timeout)} "
        f"max {fmt_ms(s['pmax'], a.probe_timeout)}, "
        f"{s['unanswered']} unanswered, {s['probe_failed']} failed; generator lag max {gen['lag_max_ms']} ms")
    return 0
