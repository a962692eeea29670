"""The storm's callers: N sockets on one event loop, each moving a huge body at a slow fixed rate until its deadline.

  DownloadCaller  GET a large body and read it at the rate (small SO_RCVBUF, reads of at most `chunk` bytes)
  UploadCaller    POST a large body (Content-Length) at the rate, or as fast as the socket takes it (small SO_SNDBUF)
  run_callers     starts them all (at most `connect_parallel` connects in flight), waits for every deadline"""

import asyncio
import resource
import socket
import time

from .http import HEAD_END, LOOPBACK, MAX_HEAD, parse_head, parse_url, request_head, status_of
from .pacing import Flow, Ticker
from .stats import percentile

PUSH_RATE = 1 << 40   # --push: a rate no socket reaches, so a caller sends whatever its socket takes on every tick


class Caller(Flow):
    """What both kinds of caller share: the socket, the timings and how a caller ends."""

    def __init__(self, ticker, rate, chunk, index):
        super().__init__(ticker, rate, chunk)
        self.index = index
        self.sock = None
        self.status = None
        self.body = 0
        self.sent = 0
        self.t_start = self.deadline = 0.0
        self.connect_s = self.head_s = None

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


class DownloadCaller(Caller):
    """GET a large body; read it at `rate` until the deadline, then close."""

    def __init__(self, ticker, rate, chunk, index):
        super().__init__(ticker, rate, chunk, index)
        self.buf = bytearray(chunk)
        self.view = memoryview(self.buf)
        self.head = bytearray()
        self.head_done = False

    def on_readable(self):
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
        end = peek.find(HEAD_END)
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
            else:   # the head came with this read (it usually comes first, through on_readable)
                self.take_head(self.view[:got], asyncio.get_running_loop().time())

    def take_head(self, data, now):
        self.head += data
        end = self.head.find(HEAD_END)
        if end < 0:
            if len(self.head) > MAX_HEAD:
                self.stop("head too large")
            return
        self.head_done = True
        self.head_s = now - self.t_start
        asyncio.get_running_loop().remove_reader(self.sock.fileno())
        start, _ = parse_head(bytes(self.head[:end]))
        self.status = status_of(start)
        self.body = len(self.head) - end - 4
        self.head = bytearray()
        if self.status != 200:
            self.stop(f"http {self.status}")


class UploadCaller(Caller):
    """POST a large body (Content-Length body_bytes) at `rate` until the deadline, then close. `body` (what the
    backend read) is filled in later from the slow backend's /stats."""

    def __init__(self, ticker, rate, chunk, index, zeros, body_bytes):
        super().__init__(ticker, rate, chunk, index)
        self.zeros = zeros
        self.body_bytes = body_bytes
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
        end = self.reply.find(HEAD_END)
        if end >= 0 and self.status is None:
            start, _ = parse_head(bytes(self.reply[:end]))
            self.status = status_of(start)


def caller_request(a, port, path, index, deadline_wall):
    """The request head a caller sends: a GET for a download, a POST with the whole body's length for an upload."""
    if a.direction == "download":
        return request_head("GET", port, path, "tunnel2-storm", [("Accept", "*/*")])
    return request_head("POST", port, path, "tunnel2-storm", [
        ("Content-Type", "application/octet-stream"), ("Content-Length", a.body_bytes),
        ("X-Storm-Caller", f"{a.run_id}-{index}"), ("X-Storm-Deadline", f"{deadline_wall:.3f}")])


async def start_caller(a, c, port, path, connect_gate):
    """Connects a caller and sends its request head (at most `connect_parallel` at once); True when it may pump."""
    loop = asyncio.get_running_loop()
    async with connect_gate:
        c.t_start = loop.time()
        c.deadline = c.t_start + a.seconds
        request = caller_request(a, port, path, c.index, time.time() + a.seconds)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.sock = sock
        buffer_option = socket.SO_RCVBUF if a.direction == "download" else socket.SO_SNDBUF
        sock.setsockopt(socket.SOL_SOCKET, buffer_option, a.sockbuf)
        sock.setblocking(False)
        try:
            await asyncio.wait_for(loop.sock_connect(sock, (LOOPBACK, port)), timeout=a.seconds)
            c.connect_s = loop.time() - c.t_start
            await asyncio.wait_for(loop.sock_sendall(sock, request), timeout=max(0.1, c.deadline - loop.time()))
        except asyncio.TimeoutError:
            c.stop("connect timeout" if c.connect_s is None else "request timeout")
            return False
        except OSError as e:
            c.stop(f"connect {e.__class__.__name__}" if c.connect_s is None else f"error {e.__class__.__name__}")
            return False
    return True


async def run_callers(a):
    """Runs a.callers callers of a.direction against a.url for a.seconds each; returns (callers, generator figures)."""
    loop = asyncio.get_running_loop()
    port, path = parse_url(a.url)
    ticker = Ticker()
    ticker_task = asyncio.create_task(ticker.run())
    zeros = memoryview(bytes(a.chunk))
    connect_gate = asyncio.Semaphore(a.connect_parallel)
    callers = []

    async def one(index):
        if a.direction == "download":
            c = DownloadCaller(ticker, a.rate, a.chunk, index)
        else:
            c = UploadCaller(ticker, PUSH_RATE if getattr(a, "push", False) else a.rate, a.chunk, index, zeros, a.body_bytes)
        callers.append(c)
        if not await start_caller(a, c, port, path, connect_gate):
            return
        loop.add_reader(c.sock.fileno(), c.on_readable)
        c.start(c.t_start)   # the bucket fills from the caller's start: time spent connecting is not made up later
        await c.done

    ticker.recording = True
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.time()
    tasks = [asyncio.create_task(one(i)) for i in range(a.callers)]
    # Every caller ends at its own deadline; this bound is only a safety net.
    _, pending = await asyncio.wait(tasks, timeout=a.seconds + 60 + a.callers / 50)
    for t in pending:
        t.cancel()
    for c in callers:
        if c.end is None:
            c.stop("cancelled")
    ticker.recording = False
    ticker_task.cancel()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    return callers, generator_figures(cpu, time.time() - w0, sorted(ticker.lags))


def generator_figures(cpu, wall, lags):
    """What the generator itself cost and how late its ticks were (a late generator is not a slow target)."""
    return {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "lag_p99_ms": round(1000 * (percentile(lags, 99) or 0), 1), "lag_max_ms": round(1000 * (lags[-1] if lags else 0), 1),
            "ticks": len(lags)}
