"""The probes and the RSS sampler of a storm, in a forked process of their own so that the callers' event loop does
not delay them: one 'GET' per probe interval on a fresh connection, and the VmRSS of the given processes every
sample interval, from `baseline` seconds before the storm to a second after its last probe."""

import asyncio
import json
import os
import signal
import socket
import struct
import time

from .http import LOOPBACK, get_status, parse_url


def read_rss_kib(pid):
    """VmRSS of a process in KiB, or None when it cannot be read (the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


async def one_probe(port, path, timeout):
    """(result, milliseconds, socket milliseconds) of one GET on a fresh connection: "ok", "http N", "timeout" or
    "error Kind". The socket figure ends at the kernel's receive timestamp of the answer's last bytes (SO_TIMESTAMPNS)
    instead of when this process got to read them: on a loaded machine this process waits for a core too, and that
    wait is not the target's (None when the kernel gave no timestamp)."""
    start = time.perf_counter()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    stamps = {}

    async def exchange():
        stamps["connect"] = time.time()
        await asyncio.get_running_loop().sock_connect(sock, (LOOPBACK, port))
        return await get_status(sock, port, path, "tunnel2-storm-probe", recv=lambda: recv_stamped(sock, stamps))

    try:
        status = await asyncio.wait_for(exchange(), timeout)
        result = "ok" if status == 200 else f"http {status}"
    except asyncio.TimeoutError:
        result = "timeout"
    except (OSError, ValueError, IndexError) as e:
        result = f"error {e.__class__.__name__}"
    finally:
        sock.close()
    at_socket = (stamps["last"] - stamps["connect"]) * 1000.0 if "last" in stamps and "connect" in stamps else None
    return result, (time.perf_counter() - start) * 1000.0, at_socket


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)   # Linux's value; the kernel stamps each received packet


async def recv_stamped(sock, stamps):
    """One recv on a non-blocking socket, keeping the kernel's receive timestamp of what it returned in stamps["last"]."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(65536, 256)
        except (BlockingIOError, InterruptedError):
            ready = loop.create_future()
            loop.add_reader(sock.fileno(), lambda: ready.done() or ready.set_result(None))
            try:
                await ready
            finally:
                loop.remove_reader(sock.fileno())
            continue
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                seconds, nanoseconds = struct.unpack("qq", value[:16])
                stamps["last"] = seconds + nanoseconds / 1e9
        return data


async def sample_rss(procs, t0_wall, interval, stop, hard_end, samples):
    """Appends (t, name, pid, KiB) for every (name, pid) every `interval` seconds until `stop` is set."""
    while not stop.is_set() and time.time() < hard_end:
        t = time.time() - t0_wall
        for name, pid in procs:
            kib = read_rss_kib(pid)
            if kib is not None:
                samples.append((round(t, 3), name, int(pid), kib))
        try:
            await asyncio.wait_for(stop.wait(), interval)
        except asyncio.TimeoutError:
            pass


async def probe_and_sample(a, t0_wall, storm_over, parent):
    """Probes from t0_wall - a.baseline until the storm is over (or the parent is gone); RSS until a second later."""
    port, path = parse_url(a.probe_url)
    probes, samples = [], []
    stop_sampling = asyncio.Event()
    procs = [p.split("=", 1) for p in a.proc]
    hard_end = t0_wall + a.seconds + a.probe_timeout + 120 + a.callers / 50

    async def probe(seq, sent_at):
        result, ms, at_socket = await one_probe(port, path, a.probe_timeout)
        probes.append({"seq": seq, "t": round(sent_at - t0_wall, 3), "result": result,
                       "ms": round(ms, 3) if result != "timeout" else None,
                       "socket_ms": round(at_socket, 3) if result == "ok" and at_socket is not None else None})

    sampling = asyncio.create_task(sample_rss(procs, t0_wall, a.sample_interval, stop_sampling, hard_end, samples))
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
    """The forked process's body: runs the probes and the sampler, writes what they saw as JSON."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent decides when this ends
    result = asyncio.run(probe_and_sample(a, t0_wall, storm_over, parent))
    with open(out_path, "w") as f:
        json.dump(result, f)
