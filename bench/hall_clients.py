"""The spectators of bench_league_hall: many plain HTTP SSE clients in one process.

    python bench/hall_clients.py PORT COUNT

Opens COUNT connections to ``/api/live`` on 127.0.0.1:PORT (HTTP/1.0, so the
stream is the raw body), one thread, non-blocking sockets. Prints
``ready <n> <refused>`` once every stream said hello (or was refused), then
notes when each ``event`` notice (table, id) reaches each page
(``time.monotonic_ns``, the same clock as the benchmark's process on
Linux). On a line on stdin it prints one JSON object,
``{"table/id": [pub_ns, ns, ns, ...], ...}`` (when the league published it,
then one time per page that got it), and exits.
"""

from __future__ import annotations

import json
import selectors
import socket
import sys
import time

REQUEST = b"GET /api/live HTTP/1.0\r\nHost: league\r\nAccept: text/event-stream\r\n\r\n"


class Page:
    __slots__ = ("sock", "buf", "head", "kind", "hello", "refused")

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(REQUEST)
        self.sock.setblocking(False)
        self.buf, self.head, self.kind = b"", True, None
        self.hello = self.refused = False

    def feed(self, data: bytes, now: int, seen: dict, keys: dict) -> None:
        self.buf += data
        if self.head:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = self.buf.split(b"\r\n", 1)[0]
            self.refused = b" 200 " not in status
            self.head, self.buf = False, self.buf[end + 4:]
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            if line.startswith(b"event: "):
                self.kind = line[7:].strip()
                self.hello = self.hello or self.kind == b"hello"
            elif line.startswith(b"data: ") and self.kind == b"event":
                key = keys.get(line)              # every page gets the same bytes
                if key is None:
                    d = json.loads(line[6:])
                    key = keys[line] = f"{d['table']}/{d['id']}"
                    seen[key] = [d["pub_ns"]]     # when the league published it
                seen[key].append(now)


def main(port: int, count: int) -> int:
    sel = selectors.DefaultSelector()
    pages = []
    for _ in range(count):
        try:
            page = Page(port)
        except OSError:
            continue
        pages.append(page)
        sel.register(page.sock, selectors.EVENT_READ, page)
    sel.register(sys.stdin, selectors.EVENT_READ, None)
    seen: dict[str, list[int]] = {}
    keys: dict[bytes, str] = {}
    announced = False
    end_ready = time.monotonic() + 60
    while True:
        ready = sel.select(timeout=0.5)
        now = time.monotonic_ns()     # what select found had arrived by now
        for key, _ in ready:
            if key.data is None:
                sys.stdin.readline()
                print(json.dumps(seen), flush=True)
                return 0
            page = key.data
            try:
                data = page.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(page.sock)
                page.sock.close()
                page.refused = page.refused or not page.hello
                continue
            page.feed(data, now, seen, keys)
        if not announced and (all(p.hello or p.refused for p in pages)
                              or time.monotonic() > end_ready):
            ok = sum(1 for p in pages if p.hello and not p.refused)
            print(f"ready {ok} {count - ok}", flush=True)
            announced = True


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
