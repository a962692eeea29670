"""How the rate is kept: one timer ("ticker", every 50 ms) serves all rate-limited sockets of a process.

On each tick a socket gets R x (time since the last tick) tokens (a token bucket holding at most 0.25 s of R, empty at
the start) and moves as many bytes as its tokens allow and its socket has ready, in chunks of at most `chunk` bytes,
without blocking. One timer instead of a sleep per socket keeps the generator cheap enough for 1,000 callers on a
2-core machine; the ticks' lateness is recorded (loop lag) so that a generator that fell behind can be told from a
slow target."""

import asyncio

TICK = 0.05
BUCKET_SECONDS = 0.25


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
    """A socket moving bytes at `rate` bytes/s with a token bucket of BUCKET_SECONDS x rate. Subclasses move the bytes
    in pump(now), which the ticker calls on every tick."""

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

    def pump(self, now):
        raise NotImplementedError

    def stop(self, result):
        if self.end is None:
            self.end = result
        self.ticker.flows.discard(self)
        if not self.done.done():
            self.done.set_result(result)
