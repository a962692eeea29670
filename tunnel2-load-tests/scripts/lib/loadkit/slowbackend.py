"""A slow-reading HTTP/1.1 backend: reads every request body at R bytes/s through a small SO_RCVBUF and answers 200
when the body is complete or the caller is gone; GET /ping, /loadtest/ping and /healthz answer at once; GET
/stats?run=ID gives what it read per caller of that run (JSON), keyed by the callers' X-Storm-Caller."""

import asyncio
import json
import signal
import socket
import time
import urllib.parse

from .http import HEAD_END, LOOPBACK, MAX_HEAD, BodyDecoder, parse_head, response_head
from .log import log
from .pacing import Flow, Ticker


class BodyReader(Flow):
    """Reads one request body at `rate`; counts what it read before the caller's deadline (`in_window`)."""

    def __init__(self, ticker, rate, chunk, sock, decoder, deadline_wall, hard_end_wall, record):
        super().__init__(ticker, rate, chunk)
        self.sock = sock
        self.decoder = decoder
        self.hard_end_wall = hard_end_wall
        self.record = record
        self.view = memoryview(bytearray(chunk))
        # The caller's deadline on the loop's clock; bytes count as in the window until the read that closes it.
        self.deadline_loop = asyncio.get_running_loop().time() + (deadline_wall - time.time())
        self.in_window = True

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
            if not self.decoder.chunked:
                want = min(want, self.decoder.remaining)
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
                if self.decoder.feed(self.view[:got]):
                    self.stop("done")
                    return
            except ValueError:
                self.stop("bad chunking")
                return


class SlowBackend:
    """Listens on 127.0.0.1:port (0: any free port, see `port` after start) and serves each connection on its own."""

    def __init__(self, port, rate, rcvbuf=65536, chunk=16384, grace=5.0, max_body_seconds=120.0, seconds_hint=0.0):
        self.port, self.rate, self.rcvbuf, self.chunk = port, rate, rcvbuf, chunk
        self.grace, self.max_body_seconds, self.seconds_hint = grace, max_body_seconds, seconds_hint
        self.records = {}
        self.ticker = Ticker()
        self.tasks = []
        self.lsock = None

    def start(self):
        """Binds and starts accepting (call from a running event loop)."""
        lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)   # accepted sockets inherit it
        lsock.bind((LOOPBACK, self.port))
        lsock.listen(4096)
        lsock.setblocking(False)
        self.lsock = lsock
        self.port = lsock.getsockname()[1]
        self.tasks = [asyncio.create_task(self.ticker.run()), asyncio.create_task(self.accept())]

    def stop(self):
        for task in self.tasks:
            task.cancel()
        self.lsock.close()

    async def accept(self):
        loop = asyncio.get_running_loop()
        while True:
            conn, _ = await loop.sock_accept(self.lsock)
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            asyncio.create_task(self.handle(conn))

    async def send(self, conn, status, body, close, content_type="text/plain"):
        try:
            await asyncio.wait_for(asyncio.get_running_loop().sock_sendall(
                conn, response_head(status, len(body), close, content_type) + body), 5)
        except (OSError, asyncio.TimeoutError):
            return False
        return True

    async def read_head(self, conn, buf):
        """(head bytes, what came after them) of the next request; (None, _) when the caller left or idled 120 s."""
        loop = asyncio.get_running_loop()
        idle_until = time.time() + 120
        while HEAD_END not in buf:
            try:
                data = await asyncio.wait_for(loop.sock_recv(conn, 16384), max(0.1, idle_until - time.time()))
            except asyncio.TimeoutError:
                return None, buf
            if not data:
                return None, buf
            buf += data
            if len(buf) > MAX_HEAD:
                await self.send(conn, "431 Request Header Fields Too Large", b"", True)
                return None, buf
        raw, buf = buf.split(HEAD_END, 1)
        return raw, buf

    async def handle(self, conn):
        buf = b""
        try:
            while True:
                raw, buf = await self.read_head(conn, buf)
                if raw is None:
                    return
                head_wall = time.time()
                start, headers = parse_head(raw)
                if len(start) < 3:
                    await self.send(conn, "400 Bad Request", b"", True)
                    return
                close = headers.get("connection", "").lower() == "close"
                chunked = "chunked" in headers.get("transfer-encoding", "").lower()
                length = int(headers.get("content-length", "0") or 0) if not chunked else None
                if not chunked and length == 0:
                    if not await self.answer_bodiless(conn, start[0], start[1], close) or close:
                        return
                    continue
                go_on, buf = await self.read_body(conn, headers, length, chunked, buf, head_wall, close)
                if not go_on:
                    return
        except (OSError, ValueError) as e:
            log(f"connection ended: {e.__class__.__name__}: {e}")
        finally:
            conn.close()

    async def answer_bodiless(self, conn, method, target, close):
        route = target.split("?", 1)[0]
        if route in ("/ping", "/loadtest/ping", "/healthz"):
            return await self.send(conn, "200 OK", b"pong" if route != "/healthz" else b"ok", close)
        if route == "/stats" and method == "GET":
            run = urllib.parse.parse_qs(target.partition("?")[2]).get("run", [""])[0]
            prefix = run + "-"
            picked = {k: v for k, v in self.records.items() if k.startswith(prefix)}
            return await self.send(conn, "200 OK", json.dumps(picked).encode(), close, "application/json")
        return await self.send(conn, "404 Not Found", b"not found\n", close)

    def new_record(self, headers, head_wall):
        """(record, deadline, hard end) of a body: its caller's deadline from X-Storm-Deadline, else a time limit."""
        caller = headers.get("x-storm-caller", "")
        try:
            deadline = float(headers.get("x-storm-deadline", ""))
            hard_end = deadline + self.grace
        except ValueError:
            deadline = hard_end = head_wall + self.max_body_seconds
        record = {"read": 0, "in_window": 0, "head_ms": None, "end": None}
        if caller:
            # head_ms: when the head reached the backend, from the caller's start (deadline - seconds)
            if self.seconds_hint and "x-storm-deadline" in headers:
                record["head_ms"] = round(1000 * (head_wall - (deadline - self.seconds_hint)), 2)
            self.records[caller] = record
        return record, deadline, hard_end

    async def read_body(self, conn, headers, length, chunked, buf, head_wall, close):
        """Reads one body slowly and answers; (whether the connection goes on, bytes after the body)."""
        record, deadline, hard_end = self.new_record(headers, head_wall)
        reader = None
        decoder = BodyDecoder(length, chunked, lambda n: reader.count(n))
        reader = BodyReader(self.ticker, self.rate, self.chunk, conn, decoder, deadline, hard_end, record)
        try:
            finished = decoder.feed(buf)
        except ValueError:
            await self.send(conn, "400 Bad Request", b"bad chunking\n", True)
            return False, b""
        if finished:
            result = "done"
        else:
            # Body bytes that came with the head were read without tokens: the bucket starts that far in debt.
            reader.start(asyncio.get_running_loop().time(), -float(record["read"]))
            result = await reader.done
        record["end"] = result
        if result == "done":
            return await self.send(conn, "200 OK", f"read {record['read']}\n".encode(), close) and not close, decoder.leftover
        # The caller is gone (eof/error) or took too long (timeout): answer if it still listens, then close.
        await self.send(conn, "200 OK", f"read {record['read']} ({result})\n".encode(), True)
        return False, b""


async def serve_backend(a):
    """The `backend` subcommand: serves until SIGTERM or SIGINT."""
    loop = asyncio.get_running_loop()
    backend = SlowBackend(a.port, a.rate, a.rcvbuf, a.chunk, a.grace, a.max_body_seconds, a.seconds_hint)
    backend.start()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    log(f"slow backend on http://{LOOPBACK}:{backend.port}: request bodies read at {a.rate} B/s in chunks of at most "
        f"{a.chunk} B, SO_RCVBUF {a.rcvbuf} B; a body is given up {a.grace:g} s after its caller's X-Storm-Deadline "
        f"(or {a.max_body_seconds:g} s after its head without one)")
    await stopping.wait()
    backend.stop()
    log("slow backend stopped")
