"""The storm report (summary.md, printed, and the CSV files) from made-up runs whose figures are known."""

import csv
import json
import os

import storm


def run(target, direction="download", **extra):
    rows = []
    for i, (fraction, end) in enumerate([(1.0, "deadline"), (0.5, "deadline"), (1.0, "eof"), (0.5, "deadline")]):
        row = {"i": i, "start": 0.1 * i, "connect_ms": 1.0, "head_ms": 100.0 * (i + 1), "status": 200, "end": end,
               "bytes": int(fraction * 640), "fraction": fraction}
        if direction == "upload":
            row.update(sent=640, backend_read=int(fraction * 640), backend_end="eof")
        rows.append(row)
    probes = [{"seq": 0, "t": -1.0, "result": "ok", "ms": 5.0},
              {"seq": 1, "t": 0.0, "result": "ok", "ms": 10.0},
              {"seq": 2, "t": 1.0, "result": "ok", "ms": 20.0},
              {"seq": 3, "t": 2.0, "result": "ok", "ms": 30.0},
              {"seq": 4, "t": 3.0, "result": "timeout", "ms": None},
              {"seq": 5, "t": 4.0, "result": "error ConnectionResetError", "ms": 1.0}]
    samples = [[-1.0, "TunnelServer", 11, 102400], [1.0, "TunnelServer", 11, 112640], [2.0, "TunnelServer", 11, 107520],
               [-1.0, "TestBackend", 12, 51200], [1.0, "TestBackend", 12, 51200]]
    d = {"target": target, "direction": direction, "url": "http://127.0.0.1:1/x", "probe_url": "http://127.0.0.1:1/p",
         "callers": 4, "rate": 65536, "seconds": 10.0, "expected_bytes": 640, "body_bytes": 1073741824,
         "sockbuf": 65536, "chunk": 16384, "probe_interval": 1.0, "probe_timeout": 30.0, "baseline": 2.0,
         "storm_end": 10.0, "path": ["TunnelServer", "TestBackend"], "procs": [],
         "generator": {"cpu_s": 1.0, "wall_s": 4.0, "lag_p99_ms": 2.5, "lag_max_ms": 7.0, "ticks": 200},
         "backend_stats": True, "caller_rows": rows, "probes": probes, "samples": samples, "run_id": target}
    d.update(extra)
    return d


def report(tmp_path, capsys, runs, targets):
    for d in runs:
        (tmp_path / f"{d['target']}.json").write_text(json.dumps(d))
    code = storm.main(["report", "--dir", str(tmp_path), "--targets", targets, "--stamp", "STAMP", "--note", "Note."])
    return code, capsys.readouterr().out


def row_of(text, target):
    return next(line for line in text.splitlines() if line.startswith(f"| {target} | 4 |"))


def test_the_table_gives_delivered_probe_percentiles_unanswered_failed_and_rss_growth(tmp_path, capsys):
    code, out = report(tmp_path, capsys, [run("direct"), run("tunnel")], "direct tunnel")

    assert code == 0
    assert out.startswith("# Slow-reader storm (download), STAMP\n")
    assert "64 KiB/s" in out and "Note." in out
    # delivered 1, .5, 1, .5: mean .75, p5 and min .5; one caller ended early (eof). Probes in the storm: 10, 20, 30 ms,
    # one unanswered (counted as slower than any answer) and one failed.
    assert row_of(out, "direct") == ("| direct | 4 | 64 KiB/s | 0.750 | 0.500 | 0.500 | 1 | 5 | 20.0 ms | > 30 s | > 30 s | "
                                     "> 30 s | 1 | 1 | TunnelServer +10.0, TestBackend +0.0 |")
    assert row_of(out, "tunnel").startswith("| tunnel |")
    assert "| direct | TunnelServer | 11 | 100.0 | 110.0 | +10.0 | 105.0 |" in out
    notes = next(line for line in out.splitlines() if line.startswith("- direct: "))
    assert "caller ends: eof x1" in notes
    assert "failed probes: error ConnectionResetError" in notes
    assert "response head p50 200.0 ms, max 400.0 ms" in notes
    assert "probes before the storm p50 5.0 ms" in notes
    # The last caller's head came at 0.3 s + 400 ms: the steady state starts at 1.7 s (probes at 2, 3 and 4 s).
    assert "probes from 1 s after the last caller's head (t >= 1.7 s): 2, p50 30.0 ms p99 > 30 s max > 30 s" in notes
    assert "generator: 25 % of a core, tick lag p99 2.5 ms, max 7.0 ms" in notes
    assert (tmp_path / "summary.md").read_text() == out


def test_the_csv_files_hold_every_caller_sample_and_probe(tmp_path, capsys):
    report(tmp_path, capsys, [run("direct")], "direct")

    with open(tmp_path / "callers-direct.csv") as f:
        callers = list(csv.reader(f))
    assert callers[0] == ["i", "start", "connect_ms", "head_ms", "status", "end", "bytes", "fraction"]
    assert callers[3] == ["2", "0.2", "1.0", "300.0", "200", "eof", "640", "1.0"]
    with open(tmp_path / "timeseries.csv") as f:
        series = list(csv.reader(f))
    assert series[0] == ["target", "t_s", "process", "pid", "rss_mib", "probe_latency_ms", "probe_result"]
    assert ["direct", "1.0", "TunnelServer", "11", "110.00", "", ""] in series
    assert ["direct", "3.0", "probe", "", "", "", "timeout"] in series
    assert len(series) == 1 + 5 + 6


def test_an_upload_report_says_what_the_callers_sent_and_keeps_the_backend_columns(tmp_path, capsys):
    code, out = report(tmp_path, capsys, [run("direct", "upload", body_bytes=67108864, backend_stats=False)], "direct")

    assert code == 0
    assert "POST` of a 64 MiB body" in out
    assert "sent by the callers mean 1.000" in out
    assert "the slow backend's stats could not be read: delivered is 0" in out
    assert "request head at the backend p50 200.0 ms" in out
    with open(tmp_path / "callers-direct.csv") as f:
        header = next(csv.reader(f))
    assert header[-3:] == ["sent", "backend_read", "backend_end"]


def test_a_folder_without_results_is_an_error(tmp_path, capsys):
    code, out = report(tmp_path, capsys, [], "direct")
    assert code == 1
    assert out == ""
    assert not os.path.exists(tmp_path / "summary.md")
