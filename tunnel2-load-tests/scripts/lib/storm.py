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

Everything is on 127.0.0.1; every loop ends by a deadline.

How the rate is kept: one timer ("ticker", every 50 ms) serves all rate-limited sockets of a process. On each
tick a socket gets R x (time since the last tick) tokens (a token bucket holding at most 0.25 s of R, empty at
the start) and moves as many bytes as its tokens allow and its socket has ready, in chunks of at most
--chunk bytes, without blocking. One timer instead of a sleep per socket keeps the generator cheap enough
for 1,000 callers on a 2-core machine; the ticks' lateness is reported (loop lag) so that a generator that
fell behind can be told from a slow target.
"""

import argparse
import asyncio
import csv
import json
import math
import multiprocessing
import os
import resource
import signal
import socket
import sys
import time
import urllib.parse
import urllib.request

LOOPBACK = "127.0.0.1"
TICK = 0.05
BUCKET_SECONDS = 0.25
MAX_HEAD = 64 * 1024


def log(msg):
    print(f"[storm] {msg}", file=sys.stderr, flush=True)


def parse_url(url):
    """(port, path) of an http://127.0.0.1:PORT/... URL; anything else is refused."""
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or u.hostname != LOOPBACK:
        raise SystemExit(f"storm.py: only http://{LOOPBACK}:PORT/... URLs are allowed, got {url!r}")
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    return u.port or 80, path


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list (None when empty)."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, math.ceil(p / 100.0 * len(sorted_values)) - 1))
    return sorted_values[k]


def read_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def parse_head(raw):
    """(start line parts, {lower-case name: value}) of an HTTP/1.1 head without its final CRLFCRLF."""
    lines = raw.decode("latin-1").split("\r\n")
    start = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return start, headers


# ---------------------------------------------------------------------------------------------------------------
# The ticker and rate-limited flows
# ---------------------------------------------------------------------------------------------------------------

class Ticker:
    """One timer for every rate-limited socket of the process."""

    def __init__(self, tick=TICK):
        self.tick = tick
        self.flows = set()
        self.lags = []            # lateness of each tick, seconds
        self.recording = False

    async def run(self):
        loop = asyncio.get_running_loop()
        due = loop.time() + self.tick
        while True:
            await asyncio.sleep(max(0.0, due - loop.time()))
            now = loop.time()
            if self.recording:
                self.lags.append(max(0.0, now - due))
            for flow in list(self.flows):
                flow.pump(now)
            due += self.tick
            if due < now:              # fell behind: no burst of catch-up ticks (the bucket carries the tokens)
                due = now + self.tick


class Flow:
    """A socket moving bytes at `rate` bytes/s with a token bucket of BUCKET_SECONDS x rate."""

    def __init__(self, ticker, rate, chunk):
        self.ticker = ticker
        self.rate = rate
        self.chunk = chunk
        self.cap = max(chunk, rate * BUCKET_SECONDS)
        self.tokens = 0.0
        self.last = 0.0
        self.end = None            # why the flow stopped
        self.done = asyncio.get_running_loop().create_future()

    def start(self, origin, tokens=0.0):
        """Joins the ticker; the bucket fills from `origin` (loop time), starting with `tokens`."""
        self.last = origin
        self.tokens = tokens
        self.ticker.flows.add(self)

    def refill(self, now):
        if now > self.last:
            self.tokens = min(self.cap, self.tokens + self.rate * (now - self.last))
            self.last = now

    def stop(self, result):
        if self.end is None:
            self.end = result
        self.ticker.flows.discard(self)
        if not self.done.done():
            self.done.set_result(result)


class DownloadCaller(Flow):
    """GET a large body; read it at `rate` until the deadline, then close."""

    def __init__(self, ticker, rate, chunk, index):
        super().__init__(ticker, rate, chunk)
        self.index = index
        self.sock = None
        self.buf = bytearray(chunk)
        self.view = memoryview(self.buf)
        self.head = bytearray()
        self.head_done = False
        self.status = None
        self.body = 0
        self.sent = 0
        self.t_start = self.deadline = 0.0
        self.connect_s = self.head_s = None
        self.end = None

    def on_head_readable(self):
        """Takes the response head as soon as it arrives, outside the bucket (so the time to the head is exact):
        peeks for the end of the head and reads exactly the head; body bytes stay in the socket for the ticker."""
        if self.end is not None or self.head_done:
            return
        try:
            peek = self.sock.recv(MAX_HEAD, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            self.stop(f"error {e.__class__.__name__}")
            return
        if not peek:
            self.stop("eof before head")
            return
        end = peek.find(b"\r\n\r\n")
        if end < 0:
            if len(peek) >= MAX_HEAD:
                self.stop("head too large")
            return
        self.sock.recv(end + 4)
        self.take_head(peek[:end + 4], asyncio.get_running_loop().time())

    def pump(self, now):
        if self.end is not None:
            return
        final = now >= self.deadline
        self.refill(min(now, self.deadline))
        self.read()
        if final:
            self.stop("deadline")

    def read(self):
        while self.tokens >= 1 and self.end is None:
            want = min(self.chunk, int(self.tokens))
            try:
                got = self.sock.recv_into(self.view, want)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                self.stop(f"error {e.__class__.__name__}")
                return
            if got == 0:
                self.stop("eof" if self.head_done else "eof before head")
                return
            self.tokens -= got
            if self.head_done:
                self.body += got
            else:   # the head came with this read (it usually comes first, through on_head_readable)
                self.take_head(self.view[:got], asyncio.get_running_loop().time())

    def take_head(self, data, now):
        self.head += data
        end = self.head.find(b"\r\n\r\n")
        if end < 0:
            if len(self.head) > MAX_HEAD:
                self.stop("head too large")
            return
        self.head_done = True
        self.head_s = now - self.t_start
        asyncio.get_running_loop().remove_reader(self.sock.fileno())
        start, _ = parse_head(bytes(self.head[:end]))
        try:
            self.status = int(start[1])
        except (IndexError, ValueError):
            self.status = -1
        self.body = len(self.head) - end - 4
        self.head = bytearray()
        if self.status != 200:
            self.stop(f"http {self.status}")

    def stop(self, result):
        if self.end is None:
            self.end = result
        if self.sock is not None:
            if not self.head_done:
                try:
                    asyncio.get_running_loop().remove_reader(self.sock.fileno())
                except (RuntimeError, ValueError, OSError):
                    pass
            self.sock.close()
            self.sock = None
        super().stop(result)


class UploadCaller(Flow):
    """POST a large body (Content-Length body_bytes) at `rate` until the deadline, then close."""

    def __init__(self, ticker, rate, chunk, index, zeros):
        super().__init__(ticker, rate, chunk)
        self.index = index
        self.sock = None
        self.zeros = zeros
        self.body_bytes = 0
        self.sent = 0
        self.body = 0          # filled from the backend's /stats
        self.status = None
        self.t_start = self.deadline = 0.0
        self.connect_s = self.head_s = None
        self.end = None
        self.reply = bytearray()
        self.reply_eof = False

    def pump(self, now):
        if self.end is not None:
            return
        if now >= self.deadline:
            self.refill(self.deadline)
            self.write()
            self.stop("deadline")
            return
        self.refill(now)
        self.write()

    def write(self):
        while self.tokens >= 1 and self.sent < self.body_bytes and self.end is None:
            want = min(self.chunk, int(self.tokens), self.body_bytes - self.sent)
            try:
                n = self.sock.send(self.zeros[:want])
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                self.read_reply()
                self.stop(f"http {self.status}" if self.status else f"error {e.__class__.__name__}")
                return
            self.sent += n
            self.tokens -= n

    def on_readable(self):
        """The server answered (or closed) before the caller was done sending."""
        self.read_reply()
        if self.status is not None:
            self.stop("answered" if self.status == 200 else f"http {self.status}")
        elif self.reply_eof:
            self.stop("eof")

    def read_reply(self):
        if self.sock is None:
            return
        try:
            while True:
                data = self.sock.recv(4096)
                if not data:
                    self.reply_eof = True
                    break
                self.reply += data[: max(0, MAX_HEAD - len(self.reply))]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.reply_eof = True
        end = self.reply.find(b"\r\n\r\n")
        if end >= 0 and self.status is None:
            start, _ = parse_head(bytes(self.reply[:end]))
            try:
                self.status = int(start[1])
            except (IndexError, ValueError):
                self.status = -1

    def stop(self, result):
        if self.end is None:
            self.end = result
        if self.sock is not None:
            try:
                asyncio.get_running_loop().remove_reader(self.sock.fileno())
            except (RuntimeError, ValueError, OSError):
                pass
            self.sock.close()
            self.sock = None
        super().stop(result)


# ---------------------------------------------------------------------------------------------------------------
# run: one target
# ---------------------------------------------------------------------------------------------------------------

async def run_callers(a, t0_wall):
    loop = asyncio.get_running_loop()
    port, path = parse_url(a.url)
    ticker = Ticker()
    ticker_task = asyncio.create_task(ticker.run())
    zeros = memoryview(bytes(a.chunk))
    connect_gate = asyncio.Semaphore(a.connect_parallel)
    callers = []

    if a.direction == "download":
        request = (f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\nUser-Agent: tunnel2-storm\r\n"
                   f"Accept: */*\r\n\r\n").encode()

    async def one(index):
        if a.direction == "download":
            c = DownloadCaller(ticker, a.rate, a.chunk, index)
        else:
            c = UploadCaller(ticker, a.rate, a.chunk, index, zeros)
            c.body_bytes = a.body_bytes
        callers.append(c)
        async with connect_gate:
            c.t_start = loop.time()
            c.deadline = c.t_start + a.seconds
            deadline_wall = time.time() + a.seconds
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.sock = sock
            if a.direction == "download":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.sockbuf)
                req = request
            else:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, a.sockbuf)
                req = (f"POST {path} HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\nUser-Agent: tunnel2-storm\r\n"
                       f"Content-Type: application/octet-stream\r\nContent-Length: {a.body_bytes}\r\n"
                       f"X-Storm-Caller: {a.run_id}-{index}\r\nX-Storm-Deadline: {deadline_wall:.3f}\r\n\r\n").encode()
            sock.setblocking(False)
            try:
                await asyncio.wait_for(loop.sock_connect(sock, (LOOPBACK, port)), timeout=a.seconds)
                c.connect_s = loop.time() - c.t_start
                await asyncio.wait_for(loop.sock_sendall(sock, req), timeout=max(0.1, c.deadline - loop.time()))
            except asyncio.TimeoutError:
                c.stop("connect timeout" if c.connect_s is None else "request timeout")
                return
            except OSError as e:
                c.stop(f"connect {e.__class__.__name__}" if c.connect_s is None else f"error {e.__class__.__name__}")
                return
        if a.direction == "upload":
            loop.add_reader(c.sock.fileno(), c.on_readable)
        else:
            loop.add_reader(c.sock.fileno(), c.on_head_readable)
        c.start(c.t_start)   # the bucket fills from the caller's start: time spent connecting is not made up later
        await c.done

    ticker.recording = True
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.time()
    tasks = [asyncio.create_task(one(i)) for i in range(a.callers)]
    # Every caller ends at its own deadline; this bound is only a safety net.
    done, pending = await asyncio.wait(tasks, timeout=a.seconds + 60 + a.callers / 50)
    for t in pending:
        t.cancel()
    for c in callers:
        if c.end is None:
            c.stop("cancelled")
    ticker.recording = False
    ticker_task.cancel()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.time() - w0
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    lags = sorted(ticker.lags)
    gen = {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
           "lag_p99_ms": round(1000 * (percentile(lags, 99) or 0), 1), "lag_max_ms": round(1000 * (lags[-1] if lags else 0), 1),
           "ticks": len(lags)}
    return callers, gen


def fetch_backend_stats(url, run_id):
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # loopback: never through a proxy
        with opener.open(f"{url}?run={urllib.parse.quote(run_id)}", timeout=10) as r:
            return json.load(r)
    except Exception as e:   # noqa: BLE001 - reported, the run goes on
        log(f"warning: could not read the slow backend's stats ({url}): {e}")
        return None


# -- probes and RSS sampler, in a process of their own ----------------------------------------------------------

async def one_probe(port, path, timeout):
    loop = asyncio.get_running_loop()
    start = time.perf_counter()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)

    async def exchange():
        await loop.sock_connect(sock, (LOOPBACK, port))
        await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\nUser-Agent: tunnel2-storm-probe\r\n"
                                      f"Connection: close\r\n\r\n".encode())
        data = bytearray()
        status = length = None
        while True:
            chunk = await loop.sock_recv(sock, 65536)
            if chunk:
                data += chunk
            if status is None:
                end = data.find(b"\r\n\r\n")
                if end >= 0:
                    start_line, headers = parse_head(bytes(data[:end]))
                    status = int(start_line[1])
                    length = int(headers.get("content-length", "-1"))
                    data = data[end + 4:]
            if status is not None and 0 <= length <= len(data):
                return status
            if not chunk:
                if status is not None and length < 0:
                    return status
                raise ConnectionError("closed before the end of the answer")

    try:
        status = await asyncio.wait_for(exchange(), timeout)
        result = "ok" if status == 200 else f"http {status}"
    except asyncio.TimeoutError:
        result = "timeout"
    except (OSError, ValueError, IndexError) as e:
        result = f"error {e.__class__.__name__}"
    finally:
        sock.close()
    return result, (time.perf_counter() - start) * 1000.0


async def probe_and_sample(a, t0_wall, storm_over, parent):
    port, path = parse_url(a.probe_url)
    probes, samples = [], []
    stop_sampling = asyncio.Event()
    procs = [p.split("=", 1) for p in a.proc]
    hard_end = t0_wall + a.seconds + a.probe_timeout + 120 + a.callers / 50

    async def sampler():
        while not stop_sampling.is_set() and time.time() < hard_end:
            t = time.time() - t0_wall
            for name, pid in procs:
                kib = read_rss_kib(pid)
                if kib is not None:
                    samples.append((round(t, 3), name, int(pid), kib))
            try:
                await asyncio.wait_for(stop_sampling.wait(), a.sample_interval)
            except asyncio.TimeoutError:
                pass

    async def probe(seq, sent_at):
        result, ms = await one_probe(port, path, a.probe_timeout)
        probes.append({"seq": seq, "t": round(sent_at - t0_wall, 3), "result": result,
                       "ms": round(ms, 3) if result != "timeout" else None})

    sampling = asyncio.create_task(sampler())
    running = set()
    seq = 0
    next_at = t0_wall - a.baseline
    while not storm_over.is_set() and time.time() < hard_end and os.getppid() == parent:
        delay = next_at - time.time()
        if delay > 0:
            await asyncio.sleep(min(delay, 0.1))
            continue
        task = asyncio.create_task(probe(seq, next_at))
        running.add(task)
        task.add_done_callback(running.discard)
        seq += 1
        next_at += a.probe_interval
        if next_at < time.time() - a.probe_interval:   # this process fell behind: skip, do not burst
            next_at = time.time()
    if running:
        await asyncio.wait(set(running), timeout=a.probe_timeout + 5)
    await asyncio.sleep(1.0)   # one more second of RSS after the storm and its probes
    stop_sampling.set()
    await sampling
    return {"probes": sorted(probes, key=lambda p: p["seq"]), "samples": samples,
            "storm_end": round(time.time() - t0_wall, 3)}


def probe_process(a, t0_wall, storm_over, parent, out_path):
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent decides when this ends
    result = asyncio.run(probe_and_sample(a, t0_wall, storm_over, parent))
    with open(out_path, "w") as f:
        json.dump(result, f)


def cmd_run(a):
    t0_wall = time.time() + a.baseline + 0.2
    ctx = multiprocessing.get_context("fork")
    storm_over = ctx.Event()
    probe_out = a.out + ".probes.json"
    prober = ctx.Process(target=probe_process, args=(a, t0_wall, storm_over, os.getpid(), probe_out), daemon=True)
    prober.start()
    log(f"{a.target}: baseline {a.baseline:g} s, then {a.callers} {a.direction} callers at {a.rate} B/s for "
        f"{a.seconds:g} s against {a.url}; probes {a.probe_url} every {a.probe_interval:g} s")

    async def main():
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, me.cancel)
        await asyncio.sleep(max(0.0, t0_wall - time.time()))
        return await run_callers(a, t0_wall)

    try:
        callers, gen = asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        storm_over.set()
        prober.terminate()
        prober.join(5)
        log(f"{a.target}: interrupted")
        return 130
    storm_end = time.time() - t0_wall
    storm_over.set()
    log(f"{a.target}: callers done after {storm_end:.1f} s; waiting for the probes still out "
        f"(at most {a.probe_timeout:g} s) and one more second of RSS")
    prober.join(a.probe_timeout + 30)
    if prober.is_alive():
        prober.terminate()
        prober.join(5)
    try:
        with open(probe_out) as f:
            pr = json.load(f)
        os.unlink(probe_out)
    except (OSError, ValueError):
        log(f"warning: {a.target}: the probe process left no results")
        pr = {"probes": [], "samples": [], "storm_end": storm_end}

    stats = fetch_backend_stats(a.stats_url, a.run_id) if a.direction == "upload" and a.stats_url else None
    expected = a.rate * a.seconds
    rows = []
    for c in sorted(callers, key=lambda c: c.index):
        row = {"i": c.index, "start": None, "connect_ms": None if c.connect_s is None else round(1000 * c.connect_s, 2),
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
    starts = [c.t_start for c in callers if c.t_start]
    base = min(starts) if starts else 0.0
    for row, c in zip(rows, sorted(callers, key=lambda c: c.index)):
        row["start"] = round(c.t_start - base, 3) if c.t_start else None
    out = {"target": a.target, "direction": a.direction, "url": a.url, "probe_url": a.probe_url, "callers": a.callers,
           "rate": a.rate, "seconds": a.seconds, "expected_bytes": expected, "body_bytes": a.body_bytes,
           "sockbuf": a.sockbuf, "chunk": a.chunk, "probe_interval": a.probe_interval, "probe_timeout": a.probe_timeout,
           "baseline": a.baseline, "storm_end": round(storm_end, 3), "path": a.path.split(), "procs": a.proc,
           "generator": gen, "backend_stats": stats is not None, "caller_rows": rows,
           "probes": pr["probes"], "samples": pr["samples"], "run_id": a.run_id}
    with open(a.out, "w") as f:
        json.dump(out, f)
    s = summarize(out)
    log(f"{a.target}: delivered mean {fmt_frac(s['d_mean'])} p5 {fmt_frac(s['d_p5'])} min {fmt_frac(s['d_min'])}; "
        f"probes {s['n_probes']}: p50 {fmt_ms(s['p50'], a.probe_timeout)} p99 {fmt_ms(s['p99'], a.probe_timeout)} "
        f"max {fmt_ms(s['pmax'], a.probe_timeout)}, "
        f"{s['unanswered']} unanswered, {s['probe_failed']} failed; generator lag max {gen['lag_max_ms']} ms")
    return 0


# ---------------------------------------------------------------------------------------------------------------
# backend: reads every request body slowly
# ---------------------------------------------------------------------------------------------------------------

class BodyReader(Flow):
    """Reads one request body (Content-Length or chunked) at `rate`; counts what it read before the caller's deadline."""

    def __init__(self, ticker, rate, chunk, sock, length, chunked, deadline_wall, hard_end_wall, record):
        super().__init__(ticker, rate, chunk)
        self.sock = sock
        self.remaining = length            # Content-Length bytes still to read (None when chunked)
        self.chunked = chunked
        self.deadline_wall = deadline_wall
        self.hard_end_wall = hard_end_wall
        self.record = record
        self.buf = bytearray(chunk)
        self.view = memoryview(self.buf)
        self.leftover = b""                # bytes after the body (a pipelined next request)
        # The caller's deadline on the loop's clock; bytes count as in the window until the read that closes it.
        self.deadline_loop = asyncio.get_running_loop().time() + (deadline_wall - time.time())
        self.in_window = True
        # chunked state: "size" (collecting a size line), "data", "crlf", "trailer"
        self.cstate, self.cline, self.cdata = "size", bytearray(), 0

    def feed(self, data):
        """Takes bytes already read; returns True when the body is complete."""
        if not data:
            return self.complete()
        if not self.chunked:
            take = min(len(data), self.remaining)
            self.count(take)
            self.remaining -= take
            self.leftover = bytes(data[take:])
            return self.complete()
        data = bytes(data)
        i, n = 0, len(data)
        while i < n and self.cstate != "end":
            if self.cstate == "data":
                take = min(n - i, self.cdata)
                self.count(take)
                self.cdata -= take
                i += take
                if self.cdata == 0:
                    self.cstate = "crlf"
                    self.cline = bytearray()
            else:
                j = data.find(b"\n", i)
                if j < 0:
                    self.cline += data[i:]
                    i = n
                    if len(self.cline) > 4096:
                        raise ValueError("chunk line too long")
                    break
                self.cline += data[i:j]
                i = j + 1
                line = bytes(self.cline).strip()
                self.cline = bytearray()
                if self.cstate == "size":
                    size = int(line.split(b";")[0], 16)
                    if size == 0:
                        self.cstate = "trailer"
                    else:
                        self.cdata, self.cstate = size, "data"
                elif self.cstate == "crlf":
                    self.cstate = "size"
                elif self.cstate == "trailer" and not line:
                    self.cstate = "end"
        if self.cstate == "end":
            self.leftover = bytes(data[i:])
        return self.complete()

    def complete(self):
        return self.remaining == 0 if not self.chunked else self.cstate == "end"

    def count(self, n):
        self.record["read"] += n
        if self.in_window:
            self.record["in_window"] += n

    def pump(self, now):
        if time.time() > self.hard_end_wall:
            self.stop("timeout")
            return
        if self.in_window and now >= self.deadline_loop:
            # As a download caller does: the tokens earned up to the deadline are read and counted, then no more.
            self.refill(self.deadline_loop)
            self.read()
            self.in_window = False
            if self.end is not None:
                return
        self.refill(now)
        self.read()

    def read(self):
        while self.tokens >= 1 and self.end is None:
            want = min(self.chunk, int(self.tokens))
            if not self.chunked:
                want = min(want, self.remaining)
            try:
                got = self.sock.recv_into(self.view, want)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                self.stop(f"error {e.__class__.__name__}")
                return
            if got == 0:
                self.stop("eof")
                return
            self.tokens -= got
            try:
                if self.feed(self.view[:got]):
                    self.stop("done")
                    return
            except ValueError:
                self.stop("bad chunking")
                return


async def serve_backend(a):
    loop = asyncio.get_running_loop()
    ticker = Ticker()
    ticker_task = asyncio.create_task(ticker.run())
    records = {}
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)   # accepted sockets inherit it
    lsock.bind((LOOPBACK, a.port))
    lsock.listen(4096)
    lsock.setblocking(False)
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    log(f"slow backend on http://{LOOPBACK}:{a.port}: request bodies read at {a.rate} B/s in chunks of at most "
        f"{a.chunk} B, SO_RCVBUF {a.rcvbuf} B; a body is given up {a.grace:g} s after its caller's X-Storm-Deadline "
        f"(or {a.max_body_seconds:g} s after its head without one)")

    async def send(conn, status, body, close, ctype="text/plain"):
        head = (f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                f"{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n").encode()
        try:
            await asyncio.wait_for(loop.sock_sendall(conn, head + body), 5)
        except (OSError, asyncio.TimeoutError):
            return False
        return True

    async def handle(conn):
        buf = b""
        try:
            while True:
                idle_until = time.time() + 120
                while b"\r\n\r\n" not in buf:
                    try:
                        data = await asyncio.wait_for(loop.sock_recv(conn, 16384), max(0.1, idle_until - time.time()))
                    except asyncio.TimeoutError:
                        return
                    if not data:
                        return
                    buf += data
                    if len(buf) > MAX_HEAD:
                        await send(conn, "431 Request Header Fields Too Large", b"", True)
                        return
                raw, buf = buf.split(b"\r\n\r\n", 1)
                head_wall = time.time()
                start, headers = parse_head(raw)
                if len(start) < 3:
                    await send(conn, "400 Bad Request", b"", True)
                    return
                method, target = start[0], start[1]
                close = headers.get("connection", "").lower() == "close"
                chunked = "chunked" in headers.get("transfer-encoding", "").lower()
                length = int(headers.get("content-length", "0") or 0) if not chunked else None
                if not chunked and length == 0:
                    route = target.split("?", 1)[0]
                    if route in ("/ping", "/loadtest/ping", "/healthz"):
                        ok = await send(conn, "200 OK", b"pong" if route != "/healthz" else b"ok", close)
                    elif route == "/stats" and method == "GET":
                        run = urllib.parse.parse_qs(target.partition("?")[2]).get("run", [""])[0]
                        prefix = run + "-"
                        picked = {k: v for k, v in records.items() if k.startswith(prefix)}
                        ok = await send(conn, "200 OK", json.dumps(picked).encode(), close, "application/json")
                    else:
                        ok = await send(conn, "404 Not Found", b"not found\n", close)
                    if close or not ok:
                        return
                    continue
                caller = headers.get("x-storm-caller", "")
                try:
                    deadline = float(headers.get("x-storm-deadline", ""))
                    hard_end = deadline + a.grace
                except ValueError:
                    deadline = hard_end = head_wall + a.max_body_seconds
                record = {"read": 0, "in_window": 0, "head_ms": None, "end": None}
                if caller:
                    # head_ms: when the head reached the backend, from the caller's start (deadline - seconds)
                    if a.seconds_hint and "x-storm-deadline" in headers:
                        record["head_ms"] = round(1000 * (head_wall - (deadline - a.seconds_hint)), 2)
                    records[caller] = record
                reader = BodyReader(ticker, a.rate, a.chunk, conn, length, chunked, deadline, hard_end, record)
                try:
                    finished = reader.feed(buf)
                except ValueError:
                    await send(conn, "400 Bad Request", b"bad chunking\n", True)
                    return
                if finished:
                    result = "done"
                else:
                    # Body bytes that came with the head were read without tokens: the bucket starts that far in debt.
                    reader.start(loop.time(), -float(record["read"]))
                    result = await reader.done
                record["end"] = result
                buf = reader.leftover
                if result == "done":
                    if not await send(conn, "200 OK", f"read {record['read']}\n".encode(), close) or close:
                        return
                    continue
                # The caller is gone (eof/error) or took too long (timeout): answer if it still listens, then close.
                await send(conn, "200 OK", f"read {record['read']} ({result})\n".encode(), True)
                return
        except (OSError, ValueError) as e:
            log(f"connection ended: {e.__class__.__name__}: {e}")
        finally:
            conn.close()

    async def acceptor():
        while True:
            conn, _ = await loop.sock_accept(lsock)
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            asyncio.create_task(handle(conn))

    acc = asyncio.create_task(acceptor())
    await stopping.wait()
    acc.cancel()
    ticker_task.cancel()
    lsock.close()
    log("slow backend stopped")


def cmd_backend(a):
    asyncio.run(serve_backend(a))
    return 0


# ---------------------------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------------------------

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


def summarize(d):
    fr = sorted(r["fraction"] or 0.0 for r in d["caller_rows"])
    errors = {}
    for r in d["caller_rows"]:
        end = r["end"] or "?"
        ok = end == "deadline" if d["direction"] == "download" else end in ("deadline", "answered")
        if not ok:
            errors[end] = errors.get(end, 0) + 1
    storm = [p for p in d["probes"] if p["t"] >= 0]
    answered = [p["ms"] for p in storm if p["result"] == "ok"]
    unanswered = sum(1 for p in storm if p["result"] == "timeout")
    failed = [p for p in storm if p["result"] not in ("ok", "timeout")]
    # Unanswered probes count as slower than any answer, so the percentiles do not flatter a stalled target.
    lat = sorted(answered + [math.inf] * unanswered)
    base_probes = sorted(p["ms"] for p in d["probes"] if p["t"] < 0 and p["result"] == "ok")
    # The crowd connecting at once, then every socket buffer on the path filling at once in the second after its
    # head, is a burst every target pays (direct too): probes from a second after the last caller got its head show
    # the storm itself, the steady state the head-of-line question is about.
    head_ends = [r["start"] + r["head_ms"] / 1000 for r in d["caller_rows"]
                 if r.get("start") is not None and r.get("head_ms") is not None]
    settled = max(head_ends) + 1.0 if head_ends else None
    steady = [p for p in storm if settled is not None and p["t"] >= settled]
    steady_lat = sorted([p["ms"] for p in steady if p["result"] == "ok"]
                        + [math.inf] * sum(1 for p in steady if p["result"] == "timeout"))
    rss = {}
    for t, name, pid, kib in d["samples"]:
        e = rss.setdefault(name, {"pid": pid, "base": [], "peak": None, "end": None})
        if t < 0:
            e["base"].append(kib)
        else:
            e["peak"] = kib if e["peak"] is None else max(e["peak"], kib)
            e["end"] = kib
    for e in rss.values():
        e["base"] = sum(e["base"]) / len(e["base"]) if e["base"] else None
        e["growth"] = None if e["base"] is None or e["peak"] is None else e["peak"] - e["base"]
    return {"d_mean": sum(fr) / len(fr) if fr else None, "d_p5": percentile(fr, 5), "d_min": fr[0] if fr else None,
            "errors": errors, "n_probes": len(storm), "p50": percentile(lat, 50), "p95": percentile(lat, 95),
            "p99": percentile(lat, 99), "pmax": lat[-1] if lat else None, "unanswered": unanswered,
            "probe_failed": len(failed), "probe_failed_kinds": sorted({p["result"] for p in failed}),
            "base_p50": percentile(base_probes, 50), "rss": rss, "settled": settled, "n_steady": len(steady_lat),
            "steady_p50": percentile(steady_lat, 50), "steady_p99": percentile(steady_lat, 99),
            "steady_max": steady_lat[-1] if steady_lat else None}


def cmd_report(a):
    runs = []
    for target in a.targets.split():
        path = os.path.join(a.dir, f"{target}.json")
        if not os.path.exists(path):
            log(f"warning: no results for {target} ({path})")
            continue
        with open(path) as f:
            runs.append(json.load(f))
    if not runs:
        log("no results to report")
        return 1
    d0 = runs[0]
    lines = []
    w = lines.append
    w(f"# Slow-reader storm ({d0['direction']}), {a.stamp}")
    w("")
    if d0["direction"] == "download":
        w(f"{d0['callers']} callers, each `GET /loadtest/bytes/{d0['body_bytes']}` with SO_RCVBUF {fmt_bytes(d0['sockbuf'])} "
          f"set before connect, each reading at {fmt_rate(d0['rate'])} (token bucket, reads of at most {fmt_bytes(d0['chunk'])}) "
          f"for {d0['seconds']:g} s, then closing. **delivered** = body bytes a caller read / (rate x seconds).")
    else:
        w(f"{d0['callers']} callers, each `POST` of a {fmt_bytes(d0['body_bytes'])} body (Content-Length, SO_SNDBUF "
          f"{fmt_bytes(d0['sockbuf'])}) sent at {fmt_rate(d0['rate'])} for {d0['seconds']:g} s, then closing, to a backend "
          f"that reads every body at {fmt_rate(d0['rate'])} through a {fmt_bytes(d0['sockbuf'])} SO_RCVBUF. "
          f"**delivered** = body bytes the backend read before the caller's {d0['seconds']:g} s were up / (rate x seconds).")
    w(f"Beside them one probe `GET /loadtest/ping` every {d0['probe_interval']:g} s on a fresh connection "
      f"(timeout {d0['probe_timeout']:g} s = unanswered; unanswered probes count as slower than any answer in the percentiles). "
      f"RSS: VmRSS every 0.5 s; growth = peak from the storm's start to the end of its probes - mean of the "
      f"{d0['baseline']:g} s before it, MiB. {a.note}".rstrip())
    w("")
    w("| target | callers | rate | delivered mean | p5 | min | caller errors | probes | probe p50 | p95 | p99 | max | unanswered | failed | RSS growth (MiB) |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    sums = []
    for d in runs:
        s = summarize(d)
        sums.append((d, s))
        growth = ", ".join(f"{name} {s['rss'][name]['growth'] / 1024:+.1f}" for name in d["path"]
                           if name in s["rss"] and s["rss"][name]["growth"] is not None) or "-"
        nerr = sum(s["errors"].values())
        to = d["probe_timeout"]
        w(f"| {d['target']} | {d['callers']} | {fmt_rate(d['rate'])} | {fmt_frac(s['d_mean'])} | {fmt_frac(s['d_p5'])} | "
          f"{fmt_frac(s['d_min'])} | {nerr} | {s['n_probes']} | {fmt_ms(s['p50'], to)} | {fmt_ms(s['p95'], to)} | "
          f"{fmt_ms(s['p99'], to)} | {fmt_ms(s['pmax'], to)} | {s['unanswered']} | {s['probe_failed']} | {growth} |")
    w("")
    w("RSS of every sampled process (MiB):")
    w("")
    w("| target | process | pid | baseline | peak | growth | end |")
    w("|---|---|---:|---:|---:|---:|---:|")
    for d, s in sums:
        for name, e in s["rss"].items():
            f = lambda v: "-" if v is None else f"{v / 1024:.1f}"   # noqa: E731
            g = "-" if e["growth"] is None else f"{e['growth'] / 1024:+.1f}"
            w(f"| {d['target']} | {name} | {e['pid']} | {f(e['base'])} | {f(e['peak'])} | {g} | {f(e['end'])} |")
    w("")
    for d, s in sums:
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
            extra.append(f"response head p50 {fmt_ms(percentile(heads, 50))}, max {fmt_ms(heads[-1])}"
                         if d["direction"] == "download" else
                         f"request head at the backend p50 {fmt_ms(percentile(heads, 50))}, max {fmt_ms(heads[-1])}")
        extra.append(f"probes before the storm p50 {fmt_ms(s['base_p50'])}")
        if s["settled"] is not None and d["direction"] == "download":
            extra.append(f"probes from 1 s after the last caller's head (t >= {s['settled']:.1f} s): {s['n_steady']}, "
                         f"p50 {fmt_ms(s['steady_p50'], d['probe_timeout'])} p99 {fmt_ms(s['steady_p99'], d['probe_timeout'])} "
                         f"max {fmt_ms(s['steady_max'], d['probe_timeout'])}")
        extra.append(f"generator: {g['cpu_s'] / max(g['wall_s'], 1e-9) * 100:.0f} % of a core, tick lag p99 {g['lag_p99_ms']} ms, "
                     f"max {g['lag_max_ms']} ms")
        w(f"- {d['target']}: " + "; ".join(x for x in extra if x))
    w("")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(a.dir, "summary.md"), "w") as f:
        f.write(text + "\n")

    with open(os.path.join(a.dir, "timeseries.csv"), "w", newline="") as f:
        cw = csv.writer(f)
        cw.writerow(["target", "t_s", "process", "pid", "rss_mib", "probe_latency_ms", "probe_result"])
        for d in runs:
            for t, name, pid, kib in d["samples"]:
                cw.writerow([d["target"], t, name, pid, f"{kib / 1024:.2f}", "", ""])
            for p in d["probes"]:
                cw.writerow([d["target"], p["t"], "probe", "", "", "" if p["ms"] is None else p["ms"], p["result"]])
    for d in runs:
        with open(os.path.join(a.dir, f"callers-{d['target']}.csv"), "w", newline="") as f:
            cols = ["i", "start", "connect_ms", "head_ms", "status", "end", "bytes", "fraction"]
            if d["direction"] == "upload":
                cols += ["sent", "backend_read", "backend_end"]
            cw = csv.writer(f)
            cw.writerow(cols)
            for r in d["caller_rows"]:
                cw.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
    return 0


def cmd_plot(a):
    import matplotlib   # noqa: PLC0415 - optional, only for this subcommand
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt   # noqa: PLC0415
    import matplotlib.ticker   # noqa: PLC0415,F401 - matplotlib.ticker below
    runs = []
    for target in a.targets.split():
        path = os.path.join(a.dir, f"{target}.json")
        if os.path.exists(path):
            with open(path) as f:
                runs.append(json.load(f))
    if not runs:
        return 1
    fig, axes = plt.subplots(2, len(runs), figsize=(5 * len(runs), 7), squeeze=False, sharex="col")
    for col, d in enumerate(runs):
        ax = axes[0][col]
        ok = [(p["t"], p["ms"]) for p in d["probes"] if p["result"] == "ok"]
        lost = [p["t"] for p in d["probes"] if p["result"] == "timeout"]
        if ok:
            ax.scatter([t for t, _ in ok], [ms for _, ms in ok], s=8, label="answered")
        if lost:
            ax.scatter(lost, [d["probe_timeout"] * 1000] * len(lost), s=14, marker="x", color="red", label="unanswered")
        answered = [ms for _, ms in ok]
        if lost or (answered and max(answered) / max(min(answered), 0.01) >= 20):   # a wide range: log scale
            ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.axvspan(0, d["seconds"], color="grey", alpha=0.1)
        ax.set_title(f"{d['target']} ({d['direction']}, {d['callers']} x {fmt_rate(d['rate'])})")
        ax.set_ylabel("probe latency, ms (sent at t)")
        ax.legend(loc="upper left", fontsize=7)
        ax = axes[1][col]
        series = {}
        for t, name, pid, kib in d["samples"]:
            series.setdefault(name, ([], []))
            series[name][0].append(t)
            series[name][1].append(kib / 1024)
        for name, (ts, vs) in series.items():
            ax.plot(ts, vs, label=name, linewidth=1)
        ax.axvspan(0, d["seconds"], color="grey", alpha=0.1)
        ax.set_xlabel("s from the storm's start")
        ax.set_ylabel("RSS, MiB")
        ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    out = os.path.join(a.dir, "storm.png")
    fig.savefig(out, dpi=100)
    log(f"plot: {out}")
    return 0


# ---------------------------------------------------------------------------------------------------------------

def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="one storm against one target")
    r.add_argument("--target", required=True)
    r.add_argument("--direction", choices=("download", "upload"), required=True)
    r.add_argument("--url", required=True, help="what every caller requests (GET or POST)")
    r.add_argument("--probe-url", required=True)
    r.add_argument("--callers", type=int, required=True)
    r.add_argument("--rate", type=int, required=True, help="bytes per second per caller")
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

    b = sub.add_parser("backend", help="the slow-reading backend")
    b.add_argument("--port", type=int, required=True)
    b.add_argument("--rate", type=int, required=True)
    b.add_argument("--rcvbuf", type=int, default=65536)
    b.add_argument("--chunk", type=int, default=16384)
    b.add_argument("--grace", type=float, default=5.0, help="seconds after X-Storm-Deadline before a body is given up")
    b.add_argument("--max-body-seconds", type=float, default=120.0, help="limit for a body without X-Storm-Deadline")
    b.add_argument("--seconds-hint", type=float, default=0.0, help="the storm's seconds, to time request heads")

    rp = sub.add_parser("report", help="table and CSV from a report folder")
    rp.add_argument("--dir", required=True)
    rp.add_argument("--targets", required=True)
    rp.add_argument("--stamp", default="")
    rp.add_argument("--note", default="")

    pl = sub.add_parser("plot", help="storm.png (needs matplotlib)")
    pl.add_argument("--dir", required=True)
    pl.add_argument("--targets", required=True)

    a = p.parse_args(argv)
    if a.cmd == "run":
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
        return cmd_run(a)
    if a.cmd == "backend":
        return cmd_backend(a)
    if a.cmd == "report":
        return cmd_report(a)
    return cmd_plot(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
