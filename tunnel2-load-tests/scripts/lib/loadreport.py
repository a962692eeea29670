#!/usr/bin/env python3
"""Reads what the load tools wrote and prints the Tunnel2 load-test tables.

This generates no load. It post-processes:
  * h2load's summary (stdout) and its --log-file (one line per finished request:
    start time in µs since the epoch, TAB, HTTP status or -1 for a failed stream, TAB,
    µs from the start of the request to the end of the response);
  * ApacheBench (ab) output and its -e CSV of percentiles;
  * the RSS samples written by common.sh (epoch phase name pid kib).

Sub-commands (used by the scripts in ../):
  stage-meta FILE key=value...       write a stage's stage.json
  ramp REPORT_DIR                    side-by-side table of REPORT_DIR/{direct,tunnel}/stage-*
  stage-check STAGE_DIR              stress limits of one stage; exit 1 when broken
  smoke STAGE_DIR...                 one result line; exit 1 when any request failed
  ab REPORT_DIR                      spot-check table of REPORT_DIR/*.ab.txt
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

from loadkit.stats import percentile

# ---------------------------------------------------------------------------------------------
# h2load
# ---------------------------------------------------------------------------------------------

_FINISHED = re.compile(r"^finished in ([0-9.]+)s, ([0-9.]+) req/s", re.M)
_REQUESTS = re.compile(
    r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
    r"(\d+) errored, (\d+) timeout", re.M)
_STATUS = re.compile(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", re.M)


def parse_h2load_summary(text: str) -> dict:
    """The counters of h2load's closing summary; all zero when h2load printed none."""
    out = {"finished_s": 0.0, "started": 0, "done": 0, "succeeded": 0, "failed": 0,
           "errored": 0, "timeout": 0, "s2xx": 0, "s3xx": 0, "s4xx": 0, "s5xx": 0,
           "has_summary": False}
    m = _FINISHED.search(text)
    if m:
        out["finished_s"] = float(m.group(1))
        out["has_summary"] = True
    m = _REQUESTS.search(text)
    if m:
        (_total, out["started"], out["done"], out["succeeded"], out["failed"], out["errored"],
         out["timeout"]) = (int(g) for g in m.groups())
    m = _STATUS.search(text)
    if m:
        out["s2xx"], out["s3xx"], out["s4xx"], out["s5xx"] = (int(g) for g in m.groups())
    return out


def merge_summaries(summaries: list[dict]) -> dict:
    """The summaries of h2load processes that ran side by side: counters add up, the run
    lasted as long as the longest one."""
    out = parse_h2load_summary("")
    for s in summaries:
        for key, value in s.items():
            if key == "finished_s":
                out[key] = max(out[key], value)
            elif key == "has_summary":
                out[key] = out[key] or value
            else:
                out[key] += value
    return out


def read_request_log(path: str) -> tuple[Counter, list[int]]:
    """Status counts of all logged requests and the latencies (µs) of the 2xx ones."""
    statuses: Counter = Counter()
    latencies: list[int] = []
    if not os.path.exists(path):
        return statuses, latencies
    with open(path, encoding="ascii", errors="replace") as f:
        for line in f:
            parts = line.split("\t")
            if len(parts) < 3:
                continue
            try:
                status, micros = int(parts[1]), int(parts[2])
            except ValueError:
                continue
            statuses[status] += 1
            if 200 <= status < 300:
                latencies.append(micros)
    return statuses, latencies


@dataclass
class Stage:
    path: str
    meta: dict
    summary: dict
    statuses: Counter
    latencies_us: list[int]
    exit_code: int = 0

    @classmethod
    def load(cls, path: str) -> "Stage":
        with open(os.path.join(path, "stage.json"), encoding="utf-8") as f:
            meta = json.load(f)
        # One h2load.txt/requests.log, or one pair per staggered group (h2load.0.txt, requests.0.log, ...).
        summaries = []
        for name in sorted(glob.glob(os.path.join(path, "h2load*.txt"))):
            with open(name, encoding="utf-8", errors="replace") as f:
                summaries.append(parse_h2load_summary(f.read()))
        statuses: Counter = Counter()
        lat: list[int] = []
        for name in sorted(glob.glob(os.path.join(path, "requests*.log"))):
            s, l = read_request_log(name)
            statuses.update(s)
            lat.extend(l)
        exit_code = 0
        if os.path.exists(os.path.join(path, "h2load.exit")):
            with open(os.path.join(path, "h2load.exit"), encoding="ascii") as f:
                exit_code = int(f.read().strip() or 1)
        return cls(path, meta, merge_summaries(summaries), statuses, lat, exit_code)


@dataclass
class Totals:
    """Counters and latencies over one or more stages."""
    stages: list[Stage] = field(default_factory=list)

    def _sum(self, key: str) -> int:
        return sum(s.summary[key] for s in self.stages)

    @property
    def offered(self) -> int:
        return sum(int(s.meta["rate"]) * int(s.meta["seconds"]) for s in self.stages)

    @property
    def clients(self) -> int:
        return max((int(s.meta["clients"]) for s in self.stages), default=0)

    @property
    def sent(self) -> int:
        return self._sum("started")

    @property
    def responses(self) -> int:
        return self._sum("done")

    @property
    def ok(self) -> int:
        return self._sum("s2xx")

    @property
    def failures(self) -> int:
        return self.responses - self.ok

    def kinds(self) -> dict:
        """Failures by kind. h2load counts a stream that ended without a response as done and
        errored; 'other' is whatever the counters do not explain (should stay 0)."""
        k = {"3xx": self._sum("s3xx"), "4xx": self._sum("s4xx"), "5xx": self._sum("s5xx"),
             "errors": self._sum("errored"), "timeouts": self._sum("timeout")}
        k["other"] = max(0, self.failures - k["3xx"] - k["4xx"] - k["5xx"] - k["errors"])
        return k

    @property
    def unanswered(self) -> int:
        """Sent but never finished: at most one per client is cut off by the end of a stage;
        more means requests or connections were lost."""
        return max(0, self.sent - self.responses)

    @property
    def not_sent(self) -> int:
        return max(0, self.offered - self.sent)

    @property
    def seconds(self) -> float:
        return sum(s.summary["finished_s"] or float(s.meta["seconds"]) for s in self.stages)

    @property
    def rps(self) -> float:
        return self.responses / self.seconds if self.seconds else 0.0

    def latency_ms(self) -> dict:
        values = sorted(v for s in self.stages for v in s.latencies_us)
        if not values:
            return {k: None for k in ("mean", "p50", "p75", "p95", "p99", "max")}
        ms = lambda us: us / 1000.0  # noqa: E731
        return {"mean": ms(sum(values) / len(values)),
                "p50": ms(percentile(values, 50)), "p75": ms(percentile(values, 75)),
                "p95": ms(percentile(values, 95)), "p99": ms(percentile(values, 99)),
                "max": ms(values[-1])}

    def peak_stage(self) -> Stage | None:
        return max(self.stages, key=lambda s: int(s.meta["rate"]), default=None)

    def as_dict(self) -> dict:
        peak = self.peak_stage()
        return {"stages": len(self.stages), "offered": self.offered, "sent": self.sent,
                "responses": self.responses, "ok": self.ok, "failures": self.failures,
                "failures_by_kind": self.kinds(), "unanswered": self.unanswered,
                "not_sent": self.not_sent, "seconds": round(self.seconds, 3),
                "rps_reached": round(self.rps, 2),
                "peak_stage": None if peak is None else {
                    "target_rps": int(peak.meta["rate"]), "reached_rps": round(stage_rps(peak), 2)},
                "latency_ms": self.latency_ms()}


def stage_rps(stage: Stage) -> float:
    secs = stage.summary["finished_s"] or float(stage.meta["seconds"])
    return stage.summary["done"] / secs if secs else 0.0


def stage_dirs(target_dir: str) -> list[str]:
    if not os.path.isdir(target_dir):
        return []
    names = sorted(n for n in os.listdir(target_dir)
                   if n.startswith("stage-") and os.path.exists(os.path.join(target_dir, n, "stage.json")))
    return [os.path.join(target_dir, n) for n in names]


def stage_problems(stage: Stage, max_fail_pct: float, min_reached: float, max_p99_ms: float) -> list[str]:
    """Why a stress stage is outside the limits (empty when it is healthy)."""
    t = Totals([stage])
    problems = []
    if stage.exit_code:
        problems.append(f"h2load exit {stage.exit_code}")
    if t.responses == 0:
        problems.append("no response")
        return problems
    fail_pct = 100.0 * t.failures / t.responses
    if fail_pct > max_fail_pct:
        problems.append(f"failures {fail_pct:.2f}% > {max_fail_pct:g}%")
    reached = stage_rps(stage) / float(stage.meta["rate"])
    if reached < min_reached:
        problems.append(f"reached {stage_rps(stage):.0f}/{stage.meta['rate']} RPS")
    p99 = t.latency_ms()["p99"]
    if p99 is not None and p99 > max_p99_ms:
        problems.append(f"p99 {p99:.1f} ms > {max_p99_ms:g} ms")
    return problems


# ---------------------------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------------------------

def f_int(v) -> str:
    return "-" if v is None else f"{v:,}"


def f_ms(v) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 10 else f"{v:.2f}" if v < 100 else f"{v:.1f}" if v < 1000 else f"{v:,.0f}"


def f_delta(a, b) -> str:
    if a is None or b is None:
        return ""
    d = b - a
    return ("+" if d >= 0 else "-") + f_ms(abs(d))


def render(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    def line(r):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        return "  ".join(cells).rstrip()
    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), sep] + [line(r) if r[0] else "" for r in rows])


def rss_table(path: str) -> str:
    """start / peak while direct / peak while tunnel / end, in MiB, per sampled process."""
    if not os.path.exists(path):
        return ""
    procs: dict[tuple[str, str], dict] = {}
    with open(path, encoding="ascii", errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5:
                continue
            _ts, phase, name, pid, kib = parts
            try:
                mib = int(kib) / 1024.0
            except ValueError:
                continue
            p = procs.setdefault((name, pid), {"first": mib, "last": mib, "peak": {}, "max": 0.0})
            p["last"] = mib
            p["max"] = max(p["max"], mib)
            p["peak"][phase] = max(p["peak"].get(phase, 0.0), mib)
    if not procs:
        return ""
    order = {"TunnelServer": 0, "TunnelClient": 1, "TestBackend": 2}
    rows = []
    for (name, pid), p in sorted(procs.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0][1])):
        g = lambda ph: f"{p['peak'][ph]:.1f}" if ph in p["peak"] else "-"  # noqa: E731
        rows.append([f"{name} (pid {pid})", f"{p['first']:.1f}", g("direct"), g("tunnel"),
                     f"{p['max']:.1f}", f"{p['last']:.1f}"])
    return render(rows, ["RSS, MiB (VmRSS every 1 s)", "start", "peak direct", "peak tunnel",
                         "peak", "end"])


# ---------------------------------------------------------------------------------------------
# sub-commands
# ---------------------------------------------------------------------------------------------

def cmd_stage_meta(args) -> int:
    meta = {}
    for kv in args.pairs:
        key, _, value = kv.partition("=")
        try:  # numbers, lists and objects as JSON; anything else as a string
            meta[key] = json.loads(value)
        except ValueError:
            meta[key] = value
    with open(args.file, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    return 0


def load_target(report: str, target: str) -> Totals | None:
    dirs = stage_dirs(os.path.join(report, target))
    return Totals([Stage.load(d) for d in dirs]) if dirs else None


def ramp_table(report: str) -> tuple[str, dict]:
    with open(os.path.join(report, "run.json"), encoding="utf-8") as f:
        run = json.load(f)
    targets = {t: load_target(report, t) for t in ("direct", "tunnel")}
    d, t = targets["direct"], targets["tunnel"]

    def col(tot: Totals | None, fn) -> str:
        return "-" if tot is None else fn(tot)

    def kinds(tot: Totals) -> str:
        k = tot.kinds()
        s = f"{k['4xx']}/{k['5xx']}/{k['3xx']}/{k['errors']}"
        return s + (f" +{k['other']}" if k["other"] else "")

    def pct(tot: Totals) -> str:
        return "-" if tot.responses == 0 else f"{100.0 * tot.ok / tot.responses:.2f}"

    def peak(tot: Totals) -> str:
        s = tot.peak_stage()
        return "-" if s is None else f"{stage_rps(s):,.0f}/{int(s.meta['rate']):,}"

    rows = [
        ["requests offered", col(d, lambda x: f_int(x.offered)), col(t, lambda x: f_int(x.offered)), ""],
        ["requests sent", col(d, lambda x: f_int(x.sent)), col(t, lambda x: f_int(x.sent)), ""],
        ["responses", col(d, lambda x: f_int(x.responses)), col(t, lambda x: f_int(x.responses)), ""],
        ["success % (2xx)", col(d, pct), col(t, pct), ""],
        ["failures", col(d, lambda x: f_int(x.failures)), col(t, lambda x: f_int(x.failures)), ""],
        ["  4xx/5xx/3xx/errors", col(d, kinds), col(t, kinds), ""],
        ["  timeouts", col(d, lambda x: f_int(x.kinds()["timeouts"])),
         col(t, lambda x: f_int(x.kinds()["timeouts"])), ""],
        ["unanswered (cut at end/lost)", col(d, lambda x: f_int(x.unanswered)),
         col(t, lambda x: f_int(x.unanswered)), ""],
        ["RPS reached (all stages)", col(d, lambda x: f"{x.rps:,.1f}"), col(t, lambda x: f"{x.rps:,.1f}"),
         "" if not (d and t and d.rps) else f"x{t.rps / d.rps:.3f}"],
        ["RPS top stage (reached/target)", col(d, peak), col(t, peak), ""],
    ]
    dl = d.latency_ms() if d else {}
    tl = t.latency_ms() if t else {}
    for key, label in (("mean", "mean"), ("p50", "p50"), ("p75", "p75"), ("p95", "p95"),
                       ("p99", "p99"), ("max", "max")):
        rows.append([f"latency {label} (ms, 2xx)", f_ms(dl.get(key)) if d else "-",
                     f_ms(tl.get(key)) if t else "-", f_delta(dl.get(key), tl.get(key))])

    stages = ", ".join(f"{r}" for r in run["stages_rps"])
    title = (f"Tunnel2 load test: profile {run['profile']}, {run['method']} {run['path']} "
             f"(endpoint {run['endpoint']}), stages {stages} RPS, "
             f"{'at most ' if run['profile'] == 'stress' else ''}{run['seconds_per_target']} s per target, "
             f"{run['started_utc']}")
    out = [title, "", render(rows, ["", "direct", "tunnel", "tunnel added"])]
    rss = rss_table(os.path.join(report, "rss.tsv"))
    if rss:
        out += ["", rss]

    summary = {"run": run, "direct": d.as_dict() if d else None, "tunnel": t.as_dict() if t else None}
    if run["profile"] == "stress" or run.get("knee"):
        limits = run["stress_limits"]
        knees = []
        for name, tot in (("direct", d), ("tunnel", t)):
            if tot is None:
                continue
            last_ok, broke = None, None
            for s in tot.stages:
                problems = stage_problems(s, limits["max_fail_pct"], limits["min_reached"], limits["max_p99_ms"])
                if problems:
                    broke = (int(s.meta["rate"]), problems)
                    break
                last_ok = int(s.meta["rate"])
            if broke and last_ok:
                knees.append(f"{name}: knee at {f_int(last_ok)} RPS "
                             f"(the next stage, {f_int(broke[0])} RPS, broke: {'; '.join(broke[1])})")
            elif broke:
                knees.append(f"{name}: knee below {f_int(broke[0])} RPS "
                             f"(the first stage already broke: {'; '.join(broke[1])})")
            else:
                knees.append(f"{name}: no knee up to {f_int(last_ok)} RPS (every stage within limits)")
            summary[f"knee_{name}"] = {"last_ok_rps": last_ok, "broke": broke}
        out += ["", (f"knee (limits: failures <= {limits['max_fail_pct']}%, reached >= "
                     f"{limits['min_reached'] * 100:g}% of target, p99 <= {limits['max_p99_ms']} ms):")]
        out += ["  " + k for k in knees]
    return "\n".join(out), summary


def stages_table(report: str) -> str:
    rows = []
    for target in ("direct", "tunnel"):
        for d in stage_dirs(os.path.join(report, target)):
            s = Stage.load(d)
            t = Totals([s])
            lat = t.latency_ms()
            rows.append([target, f_int(int(s.meta["rate"])), f"{stage_rps(s):,.1f}", str(s.meta["clients"]),
                         f_int(t.sent), f_int(t.responses), f_int(t.failures), f_int(t.unanswered),
                         f_ms(lat["mean"]), f_ms(lat["p50"]), f_ms(lat["p95"]), f_ms(lat["p99"]), f_ms(lat["max"])])
    return render(rows, ["target", "target RPS", "reached", "clients", "sent", "responses", "failures",
                         "unanswered", "mean", "p50", "p95", "p99", "max (ms)"])


def cmd_ramp(args) -> int:
    table, summary = ramp_table(args.report)
    stages = stages_table(args.report)
    with open(os.path.join(args.report, "table.txt"), "w", encoding="utf-8") as f:
        f.write(table + "\n")
    with open(os.path.join(args.report, "stages.txt"), "w", encoding="utf-8") as f:
        f.write(stages + "\n")
    with open(os.path.join(args.report, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(table)
    return 0


def cmd_stage_check(args) -> int:
    stage = Stage.load(args.stage)
    problems = stage_problems(stage, args.max_fail_pct, args.min_reached, args.max_p99_ms)
    lat = Totals([stage]).latency_ms()
    state = "BROKEN: " + "; ".join(problems) if problems else "ok"
    print(f"{stage.meta['target']} {stage.meta['rate']} RPS: reached {stage_rps(stage):,.0f}, "
          f"p99 {f_ms(lat['p99'])} ms -> {state}")
    return 1 if problems else 0


def cmd_smoke(args) -> int:
    """One line per stage and a closing PASS/FAIL line. A request failed when it got a
    non-2xx status or no response (h2load error/timeout), or was sent and never answered
    beyond the one per client that the end of the run cuts off, or when too few requests were
    sent because a connection stalled or was dropped."""
    failed_reasons = []
    total_ok = total = 0
    for path in args.stages:
        s = Stage.load(path)
        t = Totals([s])
        lat = t.latency_ms()
        label = f"{s.meta['target']} {s.meta['endpoint']}"
        kinds = ", ".join(f"{k} {v}" for k, v in t.kinds().items() if v)
        print(f"smoke {label}: {t.responses} responses, {t.ok} 2xx, {t.failures} failed"
              f"{f' ({kinds})' if kinds else ''}, {t.sent}/{t.offered} sent, "
              f"{stage_rps(s):,.1f}/{s.meta['rate']} RPS, p50 {f_ms(lat['p50'])} ms, p99 {f_ms(lat['p99'])} ms")
        total += t.responses
        total_ok += t.ok
        if s.exit_code:
            failed_reasons.append(f"{label}: h2load exited with code {s.exit_code}")
        if t.responses == 0:
            failed_reasons.append(f"{label}: no request ran")
        if t.failures:
            failed_reasons.append(f"{label}: {t.failures} request(s) failed")
        if t.unanswered > int(s.meta["clients"]):
            failed_reasons.append(f"{label}: {t.unanswered} request(s) never answered")
        if t.offered and t.sent < args.min_sent * t.offered:
            failed_reasons.append(f"{label}: only {t.sent} of {t.offered} requests sent "
                                  f"(a connection stalled or was dropped)")
    if failed_reasons:
        print(f"SMOKE FAIL: {total_ok}/{total} ok; " + "; ".join(failed_reasons))
        return 1
    print(f"SMOKE PASS: {total_ok}/{total} requests ok, 0 failed")
    return 0


# ---- ab ---------------------------------------------------------------------------------------

def parse_ab(text: str) -> dict:
    def num(pattern, cast=float, default=None):
        m = re.search(pattern, text, re.M)
        return cast(m.group(1)) if m else default
    failed_detail = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    connect = receive = length = exceptions = 0
    if failed_detail:
        connect, receive, length, exceptions = (int(g) for g in failed_detail.groups())
    return {"complete": num(r"^Complete requests:\s+(\d+)", int, 0),
            "failed": num(r"^Failed requests:\s+(\d+)", int, 0),
            "connect": connect, "receive": receive, "length": length, "exceptions": exceptions,
            "non2xx": num(r"^Non-2xx responses:\s+(\d+)", int, 0),
            "keepalive": num(r"^Keep-Alive requests:\s+(\d+)", int, 0),
            "rps": num(r"^Requests per second:\s+([0-9.]+)"),
            "mean_ms": num(r"^Time per request:\s+([0-9.]+) \[ms\] \(mean\)$")}


def parse_ab_csv(path: str) -> dict:
    """ab -e: 'Percentage served,Time in ms' then 0..99."""
    pct = {}
    if os.path.exists(path):
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                a, _, b = line.strip().partition(",")
                try:
                    pct[int(a)] = float(b)
                except ValueError:
                    continue
    return pct


def cmd_ab(args) -> int:
    with open(os.path.join(args.report, "run.json"), encoding="utf-8") as f:
        run = json.load(f)
    rows = []
    all_errors = 0
    for endpoint in run["endpoints"]:
        for ka in run["keepalive"]:
            res = {}
            for target in ("direct", "tunnel"):
                base = os.path.join(args.report, f"{endpoint}-{ka}-{target}")
                if not os.path.exists(base + ".ab.txt"):
                    continue
                with open(base + ".ab.txt", encoding="utf-8", errors="replace") as f:
                    r = parse_ab(f.read())
                pct = parse_ab_csv(base + ".csv")
                r["p50"], r["p99"] = pct.get(50), pct.get(99)
                res[target] = r
            if not res:
                continue
            d, t = res.get("direct"), res.get("tunnel")

            def lat(r):
                return "-" if r is None else f"{f_ms(r['mean_ms'])}/{f_ms(r['p50'])}/{f_ms(r['p99'])}"

            def errs(r):
                if r is None:
                    return "-"
                # Length mismatches are not errors here (ab -l); count real failures + non-2xx.
                n = r["connect"] + r["receive"] + r["exceptions"] + r["non2xx"]
                return f"{n}" + ("" if r["complete"] else " (none completed)")

            for r in (d, t):
                if r is not None:
                    all_errors += r["connect"] + r["receive"] + r["exceptions"] + r["non2xx"]
                    if not r["complete"]:
                        all_errors += 1
            ratio = (f"{t['rps'] / d['rps']:.3f}" if d and t and d["rps"] and t["rps"] is not None else "-")
            rows.append([endpoint, "yes" if ka == "ka" else "no",
                         "-" if d is None or d["rps"] is None else f"{d['rps']:,.0f}",
                         "-" if t is None or t["rps"] is None else f"{t['rps']:,.0f}",
                         ratio, lat(d), lat(t), errs(d), errs(t)])
    table = render(rows, ["endpoint", "keep-alive", "direct RPS", "tunnel RPS", "tunnel/direct",
                          "direct ms mean/p50/p99", "tunnel ms mean/p50/p99", "err direct", "err tunnel"])
    title = (f"Tunnel2 spot check: ab -n {run['requests']} -c {run['concurrency']}, "
             f"{run['started_utc']}")
    text = title + "\n\n" + table
    with open(os.path.join(args.report, "table.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(text)
    return 1 if all_errors else 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stage-meta")
    s.add_argument("file")
    s.add_argument("pairs", nargs="*")
    s.set_defaults(fn=cmd_stage_meta)
    s = sub.add_parser("ramp")
    s.add_argument("report")
    s.set_defaults(fn=cmd_ramp)
    s = sub.add_parser("stage-check")
    s.add_argument("stage")
    s.add_argument("--max-fail-pct", type=float, default=0.1)
    s.add_argument("--min-reached", type=float, default=0.95)
    s.add_argument("--max-p99-ms", type=float, default=100.0)
    s.set_defaults(fn=cmd_stage_check)
    s = sub.add_parser("smoke")
    s.add_argument("stages", nargs="+")
    s.add_argument("--min-sent", type=float, default=0.9,
                   help="fail when fewer than this share of the offered requests were sent")
    s.set_defaults(fn=cmd_smoke)
    s = sub.add_parser("ab")
    s.add_argument("report")
    s.set_defaults(fn=cmd_ab)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
