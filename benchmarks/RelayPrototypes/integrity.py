#!/usr/bin/env python3
"""Integrity check of a relay pair: N concurrent streams, each sends UP random bytes and half-closes; the target
(started here on TARGET_PORT) answers with their SHA-256 and DOWN bytes derived from it, then closes. Every stream
must get exactly that back through the relay on RELAY_PORT. Usage (with the pair already running, its agent's target
127.0.0.1:TARGET_PORT):

    python3 integrity.py TARGET_PORT RELAY_PORT [--streams 30] [--up 3000000] [--down 8000000]

Prints "N/N intact"; exit 0 when all are."""
import argparse, asyncio, hashlib, os, sys


def blob(digest: bytes, n: int) -> bytes:
    return hashlib.shake_256(digest).digest(n)


async def main(a) -> int:
    async def serve(r, w):
        h = hashlib.sha256()
        while chunk := await r.read(65536):
            h.update(chunk)
        w.write(h.digest() + blob(h.digest(), a.down))
        try:
            await w.drain()
        finally:
            w.close()

    async def stream(i: int) -> bool:
        try:
            return await exchange(i)
        except OSError as e:
            print(f"stream {i}: {e!r}", file=sys.stderr)
            return False

    async def exchange(i: int) -> bool:
        r, w = await asyncio.open_connection("127.0.0.1", a.relay_port)
        data = os.urandom(a.up + i * 1000)
        w.write(data)
        await w.drain()
        w.write_eof()
        got = bytearray()
        while chunk := await r.read(65536):
            got += chunk
        w.close()
        digest = hashlib.sha256(data).digest()
        return bytes(got) == digest + blob(digest, a.down)

    server = await asyncio.start_server(serve, "127.0.0.1", a.target_port, backlog=4096)
    results = await asyncio.wait_for(asyncio.gather(*(stream(i) for i in range(a.streams))), a.seconds)
    server.close()
    print(f"{sum(results)}/{len(results)} intact")
    return 0 if all(results) else 1


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target_port", type=int)
    p.add_argument("relay_port", type=int)
    p.add_argument("--streams", type=int, default=30)
    p.add_argument("--up", type=int, default=3_000_000)
    p.add_argument("--down", type=int, default=8_000_000)
    p.add_argument("--seconds", type=int, default=120)
    sys.exit(asyncio.run(main(p.parse_args())))
