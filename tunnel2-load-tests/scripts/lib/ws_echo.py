#!/usr/bin/python3
"""WebSocket echo at a fixed message rate, for ws-echo.sh: one target per run, JSON out.

N sockets connect to URL (TestBackend's /loadtest/ws, directly or through a proxy), then each sends one message
every 1/RATE s for SECONDS (open model: a message is sent on schedule whether or not the last one came back) and
reads the echoes. Each message carries its send time, so every echo gives one round trip. Uses aiohttp (Debian's
python3-aiohttp), the WebSocket client real apps use, not a hand-made one.
"""

import argparse
import asyncio
import json
import struct
import time

import aiohttp

from loadkit.stats import percentile


async def one_socket(session, url, rate, seconds, size, start_at, rtts, counts):
    try:
        ws = await session.ws_connect(url, autoping=True, max_msg_size=0)
    except Exception as exc:  # noqa: BLE001 - a failed connect is a result, counted and reported
        counts["connect_failed"] += 1
        counts.setdefault("connect_errors", str(exc))
        return
    counts["connected"] += 1
    padding = b"x" * max(0, size - 8)

    async def receive():
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.BINARY:
                break
            sent = struct.unpack_from("<d", msg.data)[0]
            rtts.append(time.perf_counter() - sent)
            counts["received"] += 1

    receiver = asyncio.create_task(receive())
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    interval = 1.0 / rate
    next_send = time.perf_counter()
    end = next_send + seconds
    while next_send < end:
        await asyncio.sleep(max(0.0, next_send - time.perf_counter()))
        try:
            await ws.send_bytes(struct.pack("<d", time.perf_counter()) + padding)
        except Exception:  # noqa: BLE001 - the socket broke: counted, the rest go on
            counts["send_failed"] += 1
            break
        counts["sent"] += 1
        next_send += interval
    # Let the last echoes come back (at most 2 s), then close cleanly.
    deadline = time.perf_counter() + 2.0
    while counts["received"] < counts["sent"] and time.perf_counter() < deadline and not receiver.done():
        await asyncio.sleep(0.05)
    await ws.close()
    receiver.cancel()


async def run(args):
    rtts = []
    counts = {"connected": 0, "connect_failed": 0, "sent": 0, "received": 0, "send_failed": 0}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        # Every socket starts sending at the same moment, once all have had the chance to connect (connects staggered
        # over one second so that a thousand do not hit the accept queue at once).
        start_at = time.perf_counter() + 1.0 + args.sockets * 0.002
        tasks = []
        for i in range(args.sockets):
            tasks.append(asyncio.create_task(one_socket(session, args.url, args.rate, args.seconds, args.size, start_at, rtts, counts)))
            if i % 50 == 49:
                await asyncio.sleep(0.05)
        await asyncio.gather(*tasks)
    rtts.sort()
    ms = [v * 1000.0 for v in rtts]
    result = dict(counts)
    result.update({
        "target": args.target,
        "sockets": args.sockets,
        "rate_per_socket": args.rate,
        "seconds": args.seconds,
        "message_bytes": args.size,
        "p50_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p99_ms": percentile(ms, 99),
        "max_ms": ms[-1] if ms else None,
    })
    with open(args.out, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--sockets", type=int, default=100)
    parser.add_argument("--rate", type=float, default=10.0, help="messages per second per socket")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--size", type=int, default=64, help="message bytes (at least 8: the send time)")
    parser.add_argument("--out", required=True)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
