#!/usr/bin/python3
"""One WebSocket echo over TLS, for edge-test.sh: connects to ADDRESS:PORT with SNI and Host HOST (as curl --resolve
does), trusts only CA_FILE, upgrades PATH, sends one masked text message and expects it back unchanged.
Standard library only (ssl, socket), so it needs nothing beyond Debian's python3. Exit 0 when the echo matched."""

import base64
import os
import socket
import ssl
import sys


def read_exactly(tls, count):
    data = b""
    while len(data) < count:
        chunk = tls.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the connection closed mid-frame")
        data += chunk
    return data


def main():
    host, address, port, path, ca_file, message = sys.argv[1:7]
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["http/1.1"])
    with socket.create_connection((address, int(port)), timeout=10) as raw, context.wrap_socket(raw, server_hostname=host) as tls:
        key = base64.b64encode(os.urandom(16)).decode()
        tls.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = tls.recv(1)
            if not chunk:
                raise ConnectionError("closed before the response head ended")
            head += chunk
        status = head.split(b"\r\n", 1)[0].decode()
        if " 101 " not in status + " ":
            print(f"no upgrade: {status}")
            return 1
        payload = message.encode()
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        tls.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)  # FIN + text, masked, < 126 bytes
        first, second = read_exactly(tls, 2)
        length = second & 0x7F
        echoed = read_exactly(tls, length).decode()
        print(f"{status}; echoed {echoed!r} (opcode {first & 0x0F})")
        return 0 if echoed == message and first & 0x0F == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
