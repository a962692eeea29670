"""Tests of loadreport.py on h2load/ab output captured from the real tools (h2load 1.52,
ab 2.3). Run: python3 -m pytest tunnel2-load-tests/scripts/tests"""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import loadreport  # noqa: E402

H2LOAD_OK = """starting benchmark...
spawning thread #0: 2 total client(s). Timing-based test with 0s of warm-up time and 2s of main duration for measurements.
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 2.00s, 5.00 req/s, 600B/s
requests: 10 total, 12 started, 10 done, 10 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 10 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 1.17KB (1200) total, 850B (850) headers (space savings 0.00%), 40B (40) data
"""

H2LOAD_MIXED = """finished in 10.00s, 100.00 req/s, 6KB/s
requests: 1000 total, 1003 started, 1000 done, 990 succeeded, 10 failed, 2 errored, 1 timeout
status codes: 990 2xx, 0 3xx, 3 4xx, 5 5xx
"""

AB_OUT = """This is ApacheBench, Version 2.3 <$Revision: 1903618 $>
Benchmarking 127.0.0.1 (be patient)

Server Software:        Kestrel
Document Path:          /loadtest/get
Document Length:        160 bytes (variable)

Concurrency Level:      50
Time taken for tests:   0.245 seconds
Complete requests:      500
Failed requests:        7
   (Connect: 0, Receive: 2, Length: 5, Exceptions: 0)
Non-2xx responses:      3
Keep-Alive requests:    500
Requests per second:    2040.82 [#/sec] (mean)
Time per request:       24.500 [ms] (mean)
Time per request:       0.490 [ms] (mean, across all concurrent requests)
"""


def write_stage(root, name, meta, summary_text, log_lines):
    path = os.path.join(root, name)
    os.makedirs(path)
    with open(os.path.join(path, "stage.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(path, "h2load.txt"), "w") as f:
        f.write(summary_text)
    with open(os.path.join(path, "requests.log"), "w") as f:
        f.write("".join(f"1795387485147673\t{s}\t{us}\n" for s, us in log_lines))
    return path


def meta(target="tunnel", rate=5, seconds=2, clients=2, endpoint="ping"):
    return {"target": target, "endpoint": endpoint, "rate": rate, "seconds": seconds, "clients": clients}


class ParseTests(unittest.TestCase):
    def test_h2load_summary(self):
        s = loadreport.parse_h2load_summary(H2LOAD_MIXED)
        self.assertTrue(s["has_summary"])
        self.assertEqual(s["finished_s"], 10.0)
        self.assertEqual((s["started"], s["done"], s["errored"], s["timeout"]), (1003, 1000, 2, 1))
        self.assertEqual((s["s2xx"], s["s4xx"], s["s5xx"]), (990, 3, 5))

    def test_h2load_without_summary_is_all_zero(self):
        s = loadreport.parse_h2load_summary("h2load: ev_epoll.c:134: epoll_modify: Assertion failed.\n")
        self.assertFalse(s["has_summary"])
        self.assertEqual(s["done"], 0)

    def test_staggered_groups_add_up(self):
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, "stage")
            os.makedirs(path)
            with open(os.path.join(path, "stage.json"), "w") as f:
                json.dump(meta(rate=105, seconds=10, clients=12), f)
            for g, text in enumerate((H2LOAD_OK, H2LOAD_MIXED)):
                with open(os.path.join(path, f"h2load.{g}.txt"), "w") as f:
                    f.write(text)
                with open(os.path.join(path, f"requests.{g}.log"), "w") as f:
                    f.write(f"1795387485147673\t200\t{1000 * (g + 1)}\n1795387485147674\t503\t10\n")
            stage = loadreport.Stage.load(path)
            self.assertEqual((stage.summary["started"], stage.summary["done"], stage.summary["s2xx"]), (1015, 1010, 1000))
            self.assertEqual(stage.summary["finished_s"], 10.0)
            self.assertEqual(sorted(stage.latencies_us), [1000, 2000])
            self.assertEqual(stage.statuses[503], 2)

    def test_percentile_nearest_rank(self):
        values = list(range(1, 101))
        self.assertEqual(loadreport.percentile(values, 50), 50)
        self.assertEqual(loadreport.percentile(values, 99), 99)
        self.assertEqual(loadreport.percentile(values, 100), 100)
        self.assertEqual(loadreport.percentile([7], 99), 7)
        self.assertIsNone(loadreport.percentile([], 50))

    def test_ab(self):
        r = loadreport.parse_ab(AB_OUT)
        self.assertEqual((r["complete"], r["failed"], r["receive"], r["length"], r["non2xx"]), (500, 7, 2, 5, 3))
        self.assertAlmostEqual(r["rps"], 2040.82)
        self.assertAlmostEqual(r["mean_ms"], 24.5)


class TotalsTests(unittest.TestCase):
    def test_counts_latency_and_kinds(self):
        with tempfile.TemporaryDirectory() as root:
            lines = [(200, 1000)] * 990 + [(404, 50)] * 3 + [(503, 60)] * 5 + [(-1, 70)] * 2
            path = write_stage(root, "stage-01-100rps", meta(rate=100, seconds=10, clients=10),
                               H2LOAD_MIXED, lines)
            t = loadreport.Totals([loadreport.Stage.load(path)])
            self.assertEqual((t.offered, t.sent, t.responses, t.ok, t.failures), (1000, 1003, 1000, 990, 10))
            self.assertEqual(t.kinds(), {"3xx": 0, "4xx": 3, "5xx": 5, "errors": 2, "timeouts": 1, "other": 0})
            self.assertEqual(t.unanswered, 3)
            self.assertEqual(t.not_sent, 0)
            self.assertAlmostEqual(t.rps, 100.0)
            lat = t.latency_ms()  # 2xx only: the fast 404/503 answers do not flatter the latency
            self.assertEqual((lat["p50"], lat["p99"], lat["max"]), (1.0, 1.0, 1.0))


class SmokeTests(unittest.TestCase):
    def run_smoke(self, *paths):
        buf = io.StringIO()
        with redirect_stdout(buf):
            code = loadreport.main(["smoke", *paths])
        return code, buf.getvalue()

    def test_pass(self):
        with tempfile.TemporaryDirectory() as root:
            p = write_stage(root, "stage-01-ping", meta(), H2LOAD_OK, [(200, 500)] * 10)
            code, out = self.run_smoke(p)
            self.assertEqual(code, 0, out)
            self.assertIn("SMOKE PASS: 10/10 requests ok", out)

    def test_any_failure_fails(self):
        with tempfile.TemporaryDirectory() as root:
            p = write_stage(root, "stage-01-ping", meta(rate=100, seconds=10, clients=10), H2LOAD_MIXED,
                            [(200, 1000)] * 990 + [(503, 60)] * 10)
            code, out = self.run_smoke(p)
            self.assertEqual(code, 1)
            self.assertIn("SMOKE FAIL", out)
            self.assertIn("10 request(s) failed", out)

    def test_nothing_ran_fails(self):
        empty = ("finished in 2.00s, 0.00 req/s, 0B/s\nrequests: 0 total, 0 started, 0 done, 0 succeeded, "
                 "0 failed, 0 errored, 0 timeout\nstatus codes: 0 2xx, 0 3xx, 0 4xx, 0 5xx\n")
        with tempfile.TemporaryDirectory() as root:
            p = write_stage(root, "stage-01-ping", meta(), empty, [])
            code, out = self.run_smoke(p)
            self.assertEqual(code, 1)
            self.assertIn("no request ran", out)

    def test_dropped_connection_fails(self):
        # Seen with h2load 1.52: a connection closed without a response is neither failed nor
        # errored; the client just stops, so only "started" and the send rate show it.
        dropped = ("finished in 3.00s, 0.33 req/s, 13B/s\nrequests: 1 total, 3 started, 1 done, 1 succeeded, "
                   "0 failed, 0 errored, 0 timeout\nstatus codes: 1 2xx, 0 3xx, 0 4xx, 0 5xx\n")
        with tempfile.TemporaryDirectory() as root:
            p = write_stage(root, "stage-01-ping", meta(rate=4, seconds=3, clients=2), dropped, [(200, 597)])
            code, out = self.run_smoke(p)
            self.assertEqual(code, 1)
            self.assertIn("only 3 of 12 requests sent", out)


class StressTests(unittest.TestCase):
    def test_limits(self):
        with tempfile.TemporaryDirectory() as root:
            ok = write_stage(root, "stage-01-5rps", meta(rate=5), H2LOAD_OK, [(200, 500)] * 10)
            self.assertEqual(loadreport.stage_problems(loadreport.Stage.load(ok), 0.1, 0.95, 100), [])
            slow = write_stage(root, "stage-02-5rps", meta(rate=5), H2LOAD_OK, [(200, 250_000)] * 10)
            problems = loadreport.stage_problems(loadreport.Stage.load(slow), 0.1, 0.95, 100)
            self.assertEqual(len(problems), 1)
            self.assertIn("p99 250.0 ms", problems[0])
            short = write_stage(root, "stage-03-50rps", meta(rate=50), H2LOAD_OK, [(200, 500)] * 10)
            self.assertIn("reached 5/50 RPS", loadreport.stage_problems(loadreport.Stage.load(short), 0.1, 0.95, 100)[0])


if __name__ == "__main__":
    unittest.main()
