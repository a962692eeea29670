"""A short real-socket run on 127.0.0.1: slow download callers against a tiny server started here, slow upload callers
against the slow-reading backend, and a probe. Each run lasts 1.5 s; every wait is bounded."""

import asyncio
import time
from argparse import Namespace

from loadkit.http import HEAD_END, LOOPBACK
from loadkit.sampler import one_probe
from loadkit.slowbackend import SlowBackend
from loadkit.slowcallers import run_callers

RATE = 32 * 1024
SECONDS = 1.5
CALLERS = 5
EXPECTED = RATE * SECONDS


def storm_args(direction, port, **extra):
    a = Namespace(direction=direction, url=f"http://{LOOPBACK}:{port}/big", callers=CALLERS, rate=RATE, seconds=SECONDS,
                  chunk=16384, sockbuf=65536, connect_parallel=100, body_bytes=0, run_id="t")
    vars(a).update(extra)
    return a


async def tiny_server():
    """GET /ping answers "pong"; any other GET gets 200 and a body larger than any caller reads, written as fast as
    the caller's socket takes it."""
    async def handle(reader, writer):
        try:
            head = await reader.readuntil(HEAD_END)
            if head.startswith(b"GET /ping "):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n")
                block = bytes(65536)
                for _ in range(1024):
                    writer.write(block)
                    await writer.drain()
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, LOOPBACK, 0)


def test_download_callers_read_at_their_rate_until_their_deadline():
    async def scenario():
        server = await tiny_server()
        port = server.sockets[0].getsockname()[1]
        try:
            return await run_callers(storm_args("download", port))
        finally:
            server.close()

    started = time.monotonic()
    callers, generator = asyncio.run(scenario())

    assert time.monotonic() - started < SECONDS + 10
    assert len(callers) == CALLERS
    for c in callers:
        assert (c.end, c.status) == ("deadline", 200)
        assert c.connect_s is not None and c.head_s is not None
        # The bucket starts empty and fills at the rate until the deadline: never more than rate x seconds.
        assert 0.6 * EXPECTED <= c.body <= EXPECTED, c.body
    assert generator["ticks"] > 0


def test_upload_callers_feed_the_slow_backend_at_their_rate():
    async def scenario():
        backend = SlowBackend(0, RATE, seconds_hint=SECONDS)
        backend.start()
        try:
            callers, _ = await run_callers(storm_args("upload", backend.port, body_bytes=64 * 1024 * 1024))
            # The backend hears each caller leave on its next tick.
            until = time.monotonic() + 5
            while time.monotonic() < until and any(r["end"] is None for r in backend.records.values()):
                await asyncio.sleep(0.05)
            probe = await one_probe(backend.port, "/loadtest/ping", 5)
            return callers, dict(backend.records), probe
        finally:
            backend.stop()

    callers, records, probe = asyncio.run(scenario())

    assert sorted(records) == [f"t-{i}" for i in range(CALLERS)]
    for c in callers:
        assert c.end == "deadline"
        assert 0.6 * EXPECTED <= c.sent <= EXPECTED, c.sent
        record = records[f"t-{c.index}"]
        assert record["end"] == "eof"
        # What the backend read in the caller's window is at most what the caller sent.
        assert 0.5 * EXPECTED <= record["in_window"] <= c.sent, record
        assert record["head_ms"] is not None and record["head_ms"] < 1000 * SECONDS
    assert probe[0] == "ok"


def test_a_probe_reports_an_answer_a_refusal_and_a_silence():
    async def scenario():
        server = await tiny_server()
        port = server.sockets[0].getsockname()[1]
        answered = await one_probe(port, "/ping", 5)
        server.close()
        await server.wait_closed()
        refused = await one_probe(port, "/ping", 5)
        silent_server = await asyncio.start_server(lambda r, w: asyncio.sleep(2), LOOPBACK, 0)
        silent = await one_probe(silent_server.sockets[0].getsockname()[1], "/ping", 0.3)
        silent_server.close()
        return answered, refused, silent

    answered, refused, silent = asyncio.run(scenario())

    assert answered[0] == "ok" and answered[1] < 5000
    assert refused[0] == "error ConnectionRefusedError"
    assert silent[0] == "timeout" and silent[1] >= 300
