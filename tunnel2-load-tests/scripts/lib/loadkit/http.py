"""HTTP/1.1 on loopback, as much as the load-test engines need: URLs, heads, body decoding and one plain GET.

Everything talks to 127.0.0.1 only; a URL elsewhere is refused before any socket opens."""

import asyncio
import json
import urllib.parse
import urllib.request

LOOPBACK = "127.0.0.1"
MAX_HEAD = 64 * 1024
HEAD_END = b"\r\n\r\n"


def parse_url(url, who="storm.py"):
    """(port, path) of an http://127.0.0.1:PORT/... URL; anything else is refused."""
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or u.hostname != LOOPBACK:
        raise SystemExit(f"{who}: only http://{LOOPBACK}:PORT/... URLs are allowed, got {url!r}")
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    return u.port or 80, path


def request_head(method, port, path, user_agent, headers=()):
    """The bytes of a request head to 127.0.0.1:port: Host and User-Agent first, then `headers` ((name, value) pairs)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {LOOPBACK}:{port}", f"User-Agent: {user_agent}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def response_head(status, length, close, content_type="text/plain"):
    """The bytes of a response head with a Content-Length; `status` is the code and reason, e.g. "200 OK"."""
    connection = "Connection: close\r\n" if close else ""
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n{connection}\r\n".encode()


def parse_head(raw):
    """(start line parts, {lower-case name: value}) of an HTTP/1.1 head without its final CRLFCRLF.
    The start line is split at its first two spaces (a reason phrase keeps its spaces); header lines without a colon
    are skipped; of a repeated header the last value wins."""
    lines = raw.decode("latin-1").split("\r\n")
    start = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return start, headers


def status_of(start):
    """The status code of a parsed response start line, or -1 when it has none."""
    try:
        return int(start[1])
    except (IndexError, ValueError):
        return -1


class BodyDecoder:
    """Follows one request body, Content-Length or chunked, through the bytes fed to it: `on_body(n)` hears of every
    body byte; what comes after the body (a pipelined next request) is kept in `leftover`."""

    def __init__(self, length, chunked, on_body):
        self.remaining = length            # Content-Length bytes still to come (None when chunked)
        self.chunked = chunked
        self.on_body = on_body
        self.leftover = b""
        # chunked: "size" (collecting a size line), "data", "crlf", "trailer", "end"
        self.state, self.line, self.chunk_left = "size", bytearray(), 0

    def complete(self):
        return self.state == "end" if self.chunked else self.remaining == 0

    def feed(self, data):
        """Takes bytes read from the socket; returns True when the body is complete. Bad chunking raises ValueError."""
        if not data:
            return self.complete()
        if not self.chunked:
            take = min(len(data), self.remaining)
            self.on_body(take)
            self.remaining -= take
            self.leftover = bytes(data[take:])
            return self.complete()
        data = bytes(data)
        i = self._feed_chunked(data)
        if self.state == "end":
            self.leftover = data[i:]
        return self.complete()

    def _feed_chunked(self, data):
        i, n = 0, len(data)
        while i < n and self.state != "end":
            if self.state == "data":
                take = min(n - i, self.chunk_left)
                self.on_body(take)
                self.chunk_left -= take
                i += take
                if self.chunk_left == 0:
                    self.state, self.line = "crlf", bytearray()
                continue
            j = data.find(b"\n", i)
            if j < 0:
                self.line += data[i:]
                if len(self.line) > 4096:
                    raise ValueError("chunk line too long")
                return n
            self.line += data[i:j]
            i = j + 1
            self._take_line(bytes(self.line).strip())
            self.line = bytearray()
        return i

    def _take_line(self, line):
        if self.state == "size":
            size = int(line.split(b";")[0], 16)
            if size == 0:
                self.state = "trailer"
            else:
                self.chunk_left, self.state = size, "data"
        elif self.state == "crlf":
            self.state = "size"
        elif self.state == "trailer" and not line:
            self.state = "end"


async def get_status(sock, port, path, user_agent, recv=None):
    """Sends 'GET path' with Connection: close on a connected non-blocking socket and reads the whole answer (to its
    Content-Length, or to the close when it has none); returns the status code. A close before the end raises
    ConnectionError; a head without a status raises ValueError. recv: an async function that reads once (default
    loop.sock_recv)."""
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, request_head("GET", port, path, user_agent, [("Connection", "close")]))
    data = bytearray()
    status = length = None
    while True:
        chunk = await (recv() if recv else loop.sock_recv(sock, 65536))
        if chunk:
            data += chunk
        if status is None:
            end = data.find(HEAD_END)
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


def fetch_json(url, timeout=10):
    """GET a JSON document from a loopback URL, never through a proxy."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as r:
        return json.load(r)
