#!/usr/bin/env python3
"""A loopback HTTP/1.1 server for large-transfer checks (standard library only).

  POST/PUT /anything   reads the whole body (Content-Length or chunked), discards it, answers
                       {"received": N}
  GET /bytes/N         streams N zero bytes with a Content-Length, 1 MiB at a time
  GET /delay/MS        answers {"delayed": MS} after MS milliseconds (at most 60000)

Prints the port it listens on (127.0.0.1 only) as its first line, then serves until killed.
"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 1 << 20
ZEROS = bytes(CHUNK)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; without this, Nagle + delayed ACK add ~40 ms each.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _read_body(self):
        received = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return received
                remaining = size
                while remaining:
                    data = self.rfile.read(min(CHUNK, remaining))
                    if not data:
                        return received
                    remaining -= len(data)
                    received += len(data)
                self.rfile.readline()
        remaining = int(self.headers.get("Content-Length", "0"))
        while remaining:
            data = self.rfile.read(min(CHUNK, remaining))
            if not data:
                break
            remaining -= len(data)
            received += len(data)
        return received

    def _answer_json(self, payload):
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        self._answer_json({"received": self._read_body()})

    do_PUT = do_POST

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "bytes" and parts[1].isdigit():
            remaining = int(parts[1])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(remaining))
            self.end_headers()
            while remaining:
                n = min(CHUNK, remaining)
                self.wfile.write(ZEROS[:n])
                remaining -= n
        elif len(parts) == 2 and parts[0] == "delay" and parts[1].isdigit():
            delay = min(int(parts[1]), 60000)
            time.sleep(delay / 1000)
            try:
                self._answer_json({"delayed": delay})
            except (BrokenPipeError, ConnectionResetError):
                pass
        else:
            self._answer_json({"path": self.path})


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that closes its connection (a cancelled request, the end of a benchmark) is
        # expected here; anything else is printed as usual.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
