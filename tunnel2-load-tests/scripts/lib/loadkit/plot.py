"""The `plot` subcommand: storm.png from the JSON of a report folder, one column per target (probe latency above,
RSS below). Needs matplotlib; storm.sh runs it with Debian's python3."""

import os

from .log import log
from .report import fmt_rate, load_runs


def plot_probes(ax, d, ticker):
    ok = [(p["t"], p["ms"]) for p in d["probes"] if p["result"] == "ok"]
    lost = [p["t"] for p in d["probes"] if p["result"] == "timeout"]
    if ok:
        ax.scatter([t for t, _ in ok], [ms for _, ms in ok], s=8, label="answered")
    if lost:
        ax.scatter(lost, [d["probe_timeout"] * 1000] * len(lost), s=14, marker="x", color="red", label="unanswered")
    answered = [ms for _, ms in ok]
    if lost or (answered and max(answered) / max(min(answered), 0.01) >= 20):   # a wide range: log scale
        ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.axvspan(0, d["seconds"], color="grey", alpha=0.1)
    ax.set_title(f"{d['target']} ({d['direction']}, {d['callers']} x {fmt_rate(d['rate'])})")
    ax.set_ylabel("probe latency, ms (sent at t)")
    ax.legend(loc="upper left", fontsize=7)


def plot_rss(ax, d):
    series = {}
    for t, name, _, kib in d["samples"]:
        series.setdefault(name, ([], []))
        series[name][0].append(t)
        series[name][1].append(kib / 1024)
    for name, (ts, vs) in series.items():
        ax.plot(ts, vs, label=name, linewidth=1)
    ax.axvspan(0, d["seconds"], color="grey", alpha=0.1)
    ax.set_xlabel("s from the storm's start")
    ax.set_ylabel("RSS, MiB")
    ax.legend(loc="upper left", fontsize=7)


def cmd_plot(a):
    import matplotlib   # noqa: PLC0415 - optional, only for this subcommand
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt   # noqa: PLC0415
    import matplotlib.ticker   # noqa: PLC0415
    runs = load_runs(a.dir, a.targets, quiet=True)
    if not runs:
        return 1
    fig, axes = plt.subplots(2, len(runs), figsize=(5 * len(runs), 7), squeeze=False, sharex="col")
    for col, d in enumerate(runs):
        plot_probes(axes[0][col], d, matplotlib.ticker)
        plot_rss(axes[1][col], d)
    fig.tight_layout()
    out = os.path.join(a.dir, "storm.png")
    fig.savefig(out, dpi=100)
    log(f"plot: {out}")
    return 0
