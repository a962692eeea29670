"""One line per event on stderr, prefixed with the engine's name."""

import sys


def log(msg):
    print(f"[storm] {msg}", file=sys.stderr, flush=True)
