"""The figures of one storm run (the JSON that run.py writes): how much of the rate each caller got, how long the
probes waited, and how much each sampled process grew."""

import math

from .stats import mean, percentile


def caller_errors(d):
    """{end: count} of the callers that did not end as a caller should (download: its deadline; upload: its deadline
    or an answer)."""
    errors = {}
    for r in d["caller_rows"]:
        end = r["end"] or "?"
        ok = end == "deadline" if d["direction"] == "download" else end in ("deadline", "answered")
        if not ok:
            errors[end] = errors.get(end, 0) + 1
    return errors


def latencies(probes):
    """Ascending probe latencies, unanswered probes as math.inf: slower than any answer, so that the percentiles do not
    flatter a stalled target."""
    return sorted([p["ms"] for p in probes if p["result"] == "ok"]
                  + [math.inf] * sum(1 for p in probes if p["result"] == "timeout"))


def at_socket(probes):
    """Ascending socket figures of the answered probes (see sampler.one_probe); an unanswered probe as math.inf."""
    return sorted([p["socket_ms"] for p in probes if p["result"] == "ok" and p.get("socket_ms") is not None]
                  + [math.inf] * sum(1 for p in probes if p["result"] == "timeout"))


def slowest_per_second(probes, key, seconds):
    """The slowest probe (by key) sent in each of the storm's first seconds, None for a second without one."""
    out = []
    for second in range(seconds):
        v = [p[key] if p["result"] == "ok" else math.inf for p in probes
             if second <= p["t"] < second + 1 and (p["result"] != "ok" or p.get(key) is not None)]
        out.append(max(v) if v else None)
    return out


def settled_at(d):
    """When the storm settles: a second after the last caller got its head (None without heads).

    The crowd connecting at once, then every socket buffer on the path filling at once in the second after its head,
    is a burst every target pays (direct too): probes from then on show the storm itself, the steady state the
    head-of-line question is about."""
    head_ends = [r["start"] + r["head_ms"] / 1000 for r in d["caller_rows"]
                 if r.get("start") is not None and r.get("head_ms") is not None]
    return max(head_ends) + 1.0 if head_ends else None


def rss_growth(samples):
    """{process: {pid, base, peak, end, growth}} in KiB: base is the mean before the storm (t < 0), peak the largest
    sample from its start, growth peak - base."""
    rss = {}
    for t, name, pid, kib in samples:
        e = rss.setdefault(name, {"pid": pid, "base": [], "peak": None, "end": None})
        if t < 0:
            e["base"].append(kib)
        else:
            e["peak"] = kib if e["peak"] is None else max(e["peak"], kib)
            e["end"] = kib
    for e in rss.values():
        e["base"] = mean(e["base"])
        e["growth"] = None if e["base"] is None or e["peak"] is None else e["peak"] - e["base"]
    return rss


def summarize(d):
    fr = sorted(r["fraction"] or 0.0 for r in d["caller_rows"])
    storm = [p for p in d["probes"] if p["t"] >= 0]
    lat = latencies(storm)
    failed = [p for p in storm if p["result"] not in ("ok", "timeout")]
    base_probes = sorted(p["ms"] for p in d["probes"] if p["t"] < 0 and p["result"] == "ok")
    settled = settled_at(d)
    steady_lat = latencies([p for p in storm if settled is not None and p["t"] >= settled])
    sock = at_socket(storm)
    return {"d_mean": mean(fr), "d_p5": percentile(fr, 5), "d_min": fr[0] if fr else None,
            "errors": caller_errors(d), "n_probes": len(storm), "p50": percentile(lat, 50), "p95": percentile(lat, 95),
            "p99": percentile(lat, 99), "pmax": lat[-1] if lat else None,
            "unanswered": sum(1 for p in storm if p["result"] == "timeout"),
            "probe_failed": len(failed), "probe_failed_kinds": sorted({p["result"] for p in failed}),
            "base_p50": percentile(base_probes, 50), "rss": rss_growth(d["samples"]), "settled": settled,
            "n_steady": len(steady_lat), "steady_p50": percentile(steady_lat, 50),
            "steady_p99": percentile(steady_lat, 99), "steady_max": steady_lat[-1] if steady_lat else None,
            "n_socket": len(sock), "socket_p50": percentile(sock, 50), "socket_p99": percentile(sock, 99),
            "socket_max": sock[-1] if sock else None,
            "first_seconds": slowest_per_second(storm, "ms", 3), "first_seconds_socket": slowest_per_second(storm, "socket_ms", 3)}
