#!/usr/bin/env python3
"""A loopback HTTP server that misbehaves on purpose, for Courier's fault tests (standard library).

Prints its port as the first line and serves on 127.0.0.1 until killed. Every stall is bounded
and every connection is closed afterwards. A stall a test ends from its side (a deadline, an idle
timeout, a cancel) lasts until the client leaves, or HOLD seconds: a test scheduled late on a
loaded machine still sees its own deadline, never the server's close.

  /ok                      200 "ok" (control; a HEAD gets its head alone, as every answer here)
  /close-mid-body          Content-Length 1000, sends 100 bytes, closes
  /short-body              Content-Length 100, sends 50 bytes, stalls until the client leaves
  /long-body               Content-Length 10, sends 25 bytes, closes
  /stall-headers           sends nothing until the client leaves
  /stall-body              headers and 10 of 100 bytes, stalls until the client leaves
  /refused-stall           503 with Content-Length 100, sends "busy", stalls until the client leaves
  /reset                   resets the connection (RST) without answering
  /bad-status              a malformed status line
  /bad-headers             a header line without a colon
  /bad-chunked             chunked encoding with an invalid chunk size
  /huge-header             a 1 MiB header value
  /redirect-loop           302 to itself, forever
  /redirect-307            307 to /echo (a POST must keep its body)
  /redirect-307-stall      reads the whole body, then 307 to /slow-sink?stall=60&hold=65536 (the body sent
                           again stalls)
  /redirect-other-origin   302 to http://localhost:PORT/echo (credentials must be dropped)
  /echo                    {"method", "body", "headers"} of the request
  /inflate                 inflates the request body as its Content-Encoding says (gzip, deflate = zlib; none: as
                           is) while it reads it (any size, Content-Length or chunked), and answers
                           {"encoding", "received", "length", "sha256"} (bytes on the wire, inflated bytes and
                           their SHA-256); 400 with {"error"} when the body does not inflate
  /cache?kind=K&id=ID      hostile cache headers (HTTP cache tests), each request counted under ID;
                           a request whose If-None-Match names the current ETag gets a 304:
                           directives (50,000 Cache-Control directives, under 100 KiB), huge-line (a
                           1 MiB Cache-Control line), late-no-store (max-age=600, 64 others, no-store),
                           negative (max-age=-1), overflow (max-age=99999999999999999999), contradicting
                           (two Cache-Control lines: max-age=600, no-store), garbage-dates (garbage
                           Expires, Date, Last-Modified), huge-age (max-age=600, Age 10^20), vary-star,
                           vary-many (Vary naming 10,000 fields), vary-late-star (100 names, then *),
                           big / big-chunked (max-age=600 and a body of n bytes, with or without
                           Content-Length), etag-changing (no-cache, a new ETag every time: never a 304)
  /cache-count?id=ID       {"requests": N, "conditional": C, "notModified": M} for that ID
  /redirect-307-ftp        307 to ftp://127.0.0.1:PORT/upload (must never be followed)
  /redirect-302-ftp        302 to ftp://127.0.0.1:PORT/x
  /redirect-302-file       302 to file:///etc/passwd
  /redirect-chain?n=N&body=B 302 to redirect-chain?n=N-1, then /ok at 0; each 302 with a body of B bytes
                           (default 0, at most 1 MiB)
  /empty                   200 with an empty body (Content-Length: 0)
  /redirect-no-location    302 without a Location (the answer, not a redirect), body "moved"
  /redirect-cut            302 to /ok with Content-Length 1000, sends 100 bytes of its body, closes
  /challenge-cut           401 with a Basic challenge and Content-Length 1000, sends 100 bytes of its body, closes
  /challenge-cut-chunked   the same 401, chunked: one chunk of 100 bytes, then closed mid-chunk
  /gzip-bomb               64 MiB of zeros, gzip-encoded (~64 KB on the wire, Content-Length set)
  /gzip-bomb-chunked       the same, chunked (no Content-Length)
  /gzip-nothing?n=BYTES    a gzip body that decodes to nothing: its header, then empty stored deflate
                           blocks, chunked, BYTES bytes in all (at most 1 GiB), then closed before its end;
                           with &hold=1, 64 KiB of them every 10 ms until the client leaves (HOLD s at most)
  /redirect-gzip-nothing?n=BYTES  302 to /ok whose body is /gzip-nothing's (BYTES bytes of empty stored
                           blocks, chunked, at most 1 GiB), then closed
  /gzip-members?n=N&tail=T N (at most 64) gzip members, member i the text "member i\n" 1,000 times, one
                           body (Content-Length set, Content-Encoding gzip); tail=zeros appends 512 zero bytes
  /big?n=BYTES             a plain body of BYTES bytes with Content-Length (streamed)
  /big-chunked?n=BYTES     the same, chunked
  /cookie-flood?i=I        50 cookies of 4 KB each, named cI_0 … cI_49
  /disposition             a download whose Content-Disposition name is hostile
  /slow-sink?stall=S&hold=N reads the request body 16 KB every 20 ms (at most STALL s, or S ≤ 60), then 200;
                           with hold, reads nothing after N bytes until then or until the client leaves
  /sse                     Server-Sent Events written in pieces that split lines and CRLFs, with
                           comments and retry; ends (close) in the middle of a last event
  /sse-drop                the same events, chunked, then the connection closed mid-chunk
  /resumable?n=BYTES&v=V&id=ID&cut=P&bad=B&tag=T&rcut=R&short=S
                           a file of BYTES bytes (content and ETag "vV-BYTES" from V, or "T") that honours
                           Range: bytes=N- and If-Range (ETag): 206 for the rest, 416 past the end,
                           200 when If-Range does not match. A 200 drops the connection after P %
                           of its body (default 60; 0: whole; -1: after the head, no byte of it). B makes every 206 hostile: "start"
                           (a Content-Range starting a byte late), "garbage" (an unreadable one),
                           "etag" (another ETag); "unasked" answers a request without Range with a
                           206 for the second half (cut after P % of it). rcut=R drops the first
                           206 (the one that starts at the 200's cut) after R % of its body;
                           with every=1, every 206 (a server that always breaks off).
                           short=S: every 206 covers only the next S bytes. Each request is
                           logged under ID
  /resumable-log?id=ID     [{"range", "ifRange", "status", "sent", "query"}] for that ID
  /header-flood?n=N&c=C    a 200 whose head has N (at most 50,000) fields of distinct short names and
                           value v (f0: v, f1: v … the numbers in base 36), then C times Set-Cookie: c;
                           body "ok" (AsyncHTTPClient refuses a head over 80 KiB: N = 8,000 fits)
  /hostile-length?case=K&n=BYTES&gzip=G&method=M
                           a 200 whose Content-Length is hostile, then BYTES bytes of "h" (at most 1 MiB;
                           gzip=1: those bytes gzip-encoded, with Content-Encoding gzip; L is the length sent)
                           and the connection closed: dup-same ("L, L"), dup-diff (two lines, L and L+7),
                           plus ("+L"), minus ("-L"), huge (20 digits), max (2^63-1), value (cl=V, as given), tab (tabs around L),
                           unicode (L in fullwidth digits), zeros ("000L"), te-cl (Transfer-Encoding chunked
                           and Content-Length 10*L, then a malformed chunk size), te-cl-ok (Transfer-Encoding
                           chunked and Content-Length L, then a well-formed chunked body), cut (Content-Length 10*L:
                           a body cut short). A HEAD request gets the same head and no body; status=204 or 304 answers
                           that status (with the same head and body)
  /stream-watch?id=ID      a chunk every 10 ms for at most WATCH s; notes when the client closed
  /stream-closed?id=ID&wait=S
                           {"closed": true|false, "state": "writing"|"closed"|"expired"|"unknown",
                           "writes": N, "at": UNIX_TIME|null} for that stream, answered as soon as it is closed or after
                           at most S (≤ 30) seconds; "expired" means the server stopped writing
                           after WATCH s without seeing the client close
"""
import gzip
import hashlib
import json
import select
import socket
import socketserver
import struct
import sys
import threading
import time
import zlib

STALL = 10
HOLD = 120
# How long a /stream-watch stream keeps writing: long enough that a client slowed down by a loaded
# machine (sanitizers, the whole suite at once) still closes it while it is being written.
WATCH = 120
# /stream-watch streams by id: {"state": "writing"|"closed"|"expired", "writes": N}, guarded by
# WATCHED (a condition, so /stream-closed can wait for a change).
STREAMS = {}
WATCHED = threading.Condition()
# /cache requests by id: {"requests": N, "conditional": C, "notModified": M}, guarded by CACHE_LOCK.
CACHE_COUNTS = {}
CACHE_LOCK = threading.Lock()
# /resumable: contents by (size, version), and each request by id, guarded by RESUME_LOCK.
RESUME_FILES = {}
RESUME_LOG = {}
RESUME_LOCK = threading.Lock()
SSE_PIECES = [
    b": hello\r", b"\n", b"retry: 1500\r\n", b"id: 1\r\ndata: fir", b"st\r\n\r", b"\nevent: update\ndata: {\"n\":",
    b"2}\n", b"\n: ping\n\n", b"data: unterminated",
]
# Built once: 64 MiB of zeros compress to ~64 KB.
BOMB = gzip.compress(b"\0" * (64 << 20), compresslevel=9)



def base36(value):
    """value written in base 36 (digits, then lowercase letters)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = digits[value % 36]
    while value >= 36:
        value //= 36
        text = digits[value % 36] + text
    return text


class Handler(socketserver.StreamRequestHandler):
    def read_request(self):
        line = self.rfile.readline(65536).decode("latin-1").strip()
        if not line:
            return None, None, {}, b""
        method, path, _ = (line.split(" ") + ["", ""])[:3]
        self.method = method
        headers = {}
        for _ in range(200):
            header = self.rfile.readline(65536).decode("latin-1")
            if header in ("\r\n", "\n", ""):
                break
            name, _, value = header.partition(":")
            headers[name.strip()] = value.strip()
        length = int(headers.get("Content-Length", "0") or "0")
        if path.startswith("/inflate"):
            self.inflated = self.inflate_body(headers, length)
            body = b""
        elif path.startswith("/redirect-307-stall"):
            # The whole body read (any size), then a 307 to a slow sink that stops reading it.
            for _ in self.body_pieces(headers, length):
                pass
            body = b""
        elif path.startswith("/slow-sink"):
            # ?stall=S: read for up to S seconds (at most 60) instead of STALL, for a test that must
            # not be answered before its client notices what it is checking for.
            query = dict(part.split("=", 1) for part in path.partition("?")[2].split("&") if "=" in part)
            deadline = time.time() + min(60.0, float(query.get("stall", STALL)))
            # ?hold=N: after N bytes, read nothing more until the deadline or the client leaves, so
            # the client cannot finish sending however late it looks at its own progress.
            hold = int(query.get("hold", "-1"))
            left = length
            while left > 0 and time.time() < deadline:
                if 0 <= hold <= length - left:
                    self.wait_for_close(deadline)
                    break
                piece = self.rfile.read(min(left, 16384))
                if not piece:
                    break
                left -= len(piece)
                time.sleep(0.02)
            body = b""
        else:
            body = self.rfile.read(min(length, 10 << 20)) if length else b""
        self.query = dict(
            pair.split("=", 1) for pair in (path.split("?", 1) + [""])[1].split("&") if "=" in pair)
        return method, path.split("?")[0], headers, body

    def wait_for_close(self, deadline):
        """Waits, reading nothing, until the client closes the connection or `deadline` passes."""
        while time.time() < deadline:
            ready, _, _ = select.select([self.connection], [], [], min(0.2, max(0.0, deadline - time.time())))
            if not ready:
                continue
            try:
                if not self.connection.recv(1, socket.MSG_PEEK):
                    return
            except OSError:
                return
            time.sleep(0.05)

    def body_pieces(self, headers, length):
        """The request body in pieces, by Content-Length or chunked, without holding it whole."""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65536) not in (b"\r\n", b"\n", b""):
                        pass
                    return
                left = size
                while left > 0:
                    piece = self.rfile.read(min(left, 1 << 16))
                    if not piece:
                        return
                    left -= len(piece)
                    yield piece
                self.rfile.readline(16)
        else:
            left = length
            while left > 0:
                piece = self.rfile.read(min(left, 1 << 16))
                if not piece:
                    return
                left -= len(piece)
                yield piece

    def inflate_body(self, headers, length):
        """Inflates the body as it arrives: its SHA-256 and lengths, or the error."""
        # Names in any case: a proxy in front (HTTP/2) passes them lowercase.
        headers = {name.lower(): value for name, value in headers.items()}
        length = int(headers.get("content-length", "0") or "0")
        encoding = headers.get("content-encoding", "").strip().lower()
        bits = {"gzip": 31, "deflate": 15}.get(encoding)
        inflater = zlib.decompressobj(bits) if bits else None
        digest = hashlib.sha256()
        received = inflated = 0
        try:
            for piece in self.body_pieces(headers, length):
                received += len(piece)
                out = inflater.decompress(piece) if inflater else piece
                inflated += len(out)
                digest.update(out)
            if inflater:
                out = inflater.flush()
                inflated += len(out)
                digest.update(out)
                if not inflater.eof:
                    return {"error": "the compressed stream ends early", "received": received}
                if inflater.unused_data:
                    return {"error": "bytes after the end of the compressed stream", "received": received}
        except zlib.error as error:
            return {"error": str(error), "received": received}
        return {"encoding": encoding or None, "received": received, "length": inflated, "sha256": digest.hexdigest()}

    def send(self, data):
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass

    def answer(self, status, body, headers=()):
        head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers)
        # A HEAD gets the head alone, with the length the body would have.
        self.send(head.encode("utf-8") + b"\r\n" + (b"" if getattr(self, "method", "") == "HEAD" else body))

    def hostile_cache(self, request_headers):
        kind, ident = self.query.get("kind", ""), self.query.get("id", "")
        # Header names arrive as sent; look If-None-Match up without regard to case.
        validator = next((v for k, v in request_headers.items() if k.lower() == "if-none-match"), None)
        with CACHE_LOCK:
            counts = CACHE_COUNTS.setdefault(ident, {"requests": 0, "conditional": 0, "notModified": 0})
            counts["requests"] += 1
            counts["conditional"] += validator is not None
            serial = counts["requests"]
        etag = f'"{kind}-{serial}"' if kind == "etag-changing" else f'"{kind}"'
        if validator == etag:
            with CACHE_LOCK:
                counts["notModified"] += 1
            self.send(f"HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nConnection: close\r\n\r\n".encode())
            return
        lines = {
            "directives": ["Cache-Control: " + ",".join(["max-age=600"] + ["a"] * 49_999)],
            "huge-line": ["Cache-Control: max-age=600, " + "x" * (1 << 20)],
            "late-no-store": ["Cache-Control: " + ",".join(["max-age=600"] + ["x"] * 64 + ["no-store"])],
            "negative": ["Cache-Control: max-age=-1"],
            "overflow": ["Cache-Control: max-age=99999999999999999999"],
            "contradicting": ["Cache-Control: max-age=600", "Cache-Control: no-store"],
            "garbage-dates": ["Expires: the day after tomorrow", "Date: Yesterday, 99 Foo 2026 25:61:61 GMT", "Last-Modified: -1",
                              "Age: soon"],
            "huge-age": ["Cache-Control: max-age=600", "Age: 100000000000000000000"],
            "vary-star": ["Cache-Control: max-age=600", "Vary: *"],
            "vary-many": ["Cache-Control: max-age=600", "Vary: " + ",".join(f"X-V{i}" for i in range(10_000))],
            "vary-late-star": ["Cache-Control: max-age=600", "Vary: " + ",".join(
                [f"X-V{i}" for i in range(100)] + ["*"])],
            "big": ["Cache-Control: max-age=600"],
            "big-chunked": ["Cache-Control: max-age=600"],
            "etag-changing": ["Cache-Control: no-cache"],
        }.get(kind)
        if lines is None:
            self.answer("404 Not Found", b"")
            return
        head = "HTTP/1.1 200 OK\r\nConnection: close\r\n" + f"ETag: {etag}\r\n" + "".join(f"{l}\r\n" for l in lines)
        if kind in ("big", "big-chunked"):
            size = min(int(self.query.get("n", "0")), 64 << 20)
            chunked = kind == "big-chunked"
            head += "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {size}\r\n"
            self.send(head.encode("latin-1") + b"\r\n")
            sent = 0
            while sent < size:
                piece = b"c" * min(65536, size - sent)
                try:
                    self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n" if chunked else piece)
                except OSError:
                    return
                sent += len(piece)
            if chunked:
                self.send(b"0\r\n\r\n")
            return
        body = f"{kind} {serial}".encode()
        self.send((head + f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body)

    def resumable(self, request_headers):
        size = min(int(self.query.get("n", "0")), 64 << 20)
        version = self.query.get("v", "1")
        cut = int(self.query.get("cut", "60"))
        bad = self.query.get("bad", "")
        with RESUME_LOCK:
            content = RESUME_FILES.get((size, version))
            if content is None:
                blocks = (hashlib.sha256(f"{version}-{k}".encode()).digest() for k in range(size // 32 + 1))
                content = b"".join(blocks)[:size]
                RESUME_FILES[(size, version)] = content
        etag = f'"{self.query["tag"]}"' if "tag" in self.query else f'"v{version}-{size}"'
        lower = {name.lower(): value for name, value in request_headers.items()}
        asked = lower.get("range", "")
        if_range = lower.get("if-range")
        start = None
        if asked.startswith("bytes=") and asked.endswith("-") and asked[6:-1].isdigit():
            start = int(asked[6:-1])
        if start is not None and if_range is not None and if_range != etag:
            start = None  # the entity changed: the whole of it
        entry = {"range": asked or None, "ifRange": if_range, "query": self.query,
                 "authorized": "authorization" in lower, "host": lower.get("host", "")}
        if start is not None and start >= size:
            entry.update(status=416, sent=0)
            head = f"HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{size}\r\nContent-Length: 0\r\n"
            payload = (head + "Connection: close\r\n\r\n").encode()
        elif start is not None:
            # short=S: a valid 206 for only S bytes of the rest (a server may send less).
            short = int(self.query.get("short", "0"))
            body = content[start:start + short] if short > 0 else content[start:]
            first = start + 1 if bad == "start" else start
            last = start + len(body) - 1
            content_range = "bytes x-y/z" if bad == "garbage" else f"bytes {first}-{last}/{size}"
            tag = '"changed"' if bad == "etag" else etag
            rcut = int(self.query.get("rcut", "0"))
            every = self.query.get("every") == "1"
            first_rest = start < size * cut // 100 + 1
            sent = len(body) * rcut // 100 if 0 < rcut < 100 and (first_rest or every) else len(body)
            entry.update(status=206, sent=sent)
            head = (f"HTTP/1.1 206 Partial Content\r\nContent-Length: {len(body)}\r\nContent-Range: {content_range}"
                    f"\r\nETag: {tag}\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n")
            payload = head.encode() + body[:sent]
        elif bad == "unasked":
            # A 206 nobody asked for: the second half of the file, as if it were all of it.
            body = content[size // 2:]
            sent = len(body) * cut // 100 if 0 < cut < 100 else len(body)
            entry.update(status=206, sent=sent)
            head = (f"HTTP/1.1 206 Partial Content\r\nContent-Length: {len(body)}\r\nContent-Range: bytes "
                    f"{size // 2}-{size - 1}/{size}\r\nETag: {etag}\r\nAccept-Ranges: bytes\r\n"
                    f"Connection: close\r\n\r\n")
            payload = head.encode() + body[:sent]
        else:
            sent = 0 if cut < 0 else size * cut // 100 if 0 < cut < 100 else size
            entry.update(status=200, sent=sent)
            head = (f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nETag: {etag}\r\nAccept-Ranges: bytes"
                    f"\r\nConnection: close\r\n\r\n")
            payload = head.encode() + content[:sent]
        # Logged before it is sent: a client that has its answer finds it in the log.
        with RESUME_LOCK:
            RESUME_LOG.setdefault(self.query.get("id", ""), []).append(entry)
        self.send(payload)

    def hostile_length(self, method):
        kind = self.query.get("case", "")
        body = b"h" * min(int(self.query.get("n", "10")), 1 << 20)
        status = {"204": "204 No Content", "304": "304 Not Modified"}.get(self.query.get("status", ""), "200 OK")
        head = f"HTTP/1.1 {status}\r\nConnection: close\r\n"
        if self.query.get("gzip") == "1":
            body = gzip.compress(body)
            head += "Content-Encoding: gzip\r\n"
        size = len(body)
        lines = {
            "dup-same": [f"Content-Length: {size}, {size}"],
            "dup-diff": [f"Content-Length: {size}", f"Content-Length: {size + 7}"],
            "plus": [f"Content-Length: +{size}"],
            "minus": [f"Content-Length: -{size}"],
            "huge": ["Content-Length: 99999999999999999999"],
            "max": [f"Content-Length: {(1 << 63) - 1}"],
            "value": [f"Content-Length: {self.query.get('cl', '')}"],
            "tab": [f"Content-Length:\t{size}\t"],
            "unicode": ["Content-Length: " + "".join(chr(0xFF10 + int(d)) for d in str(size))],
            "zeros": [f"Content-Length: 000{size}"],
            "te-cl": ["Transfer-Encoding: chunked", f"Content-Length: {size * 10}"],
            "te-cl-ok": ["Transfer-Encoding: chunked", f"Content-Length: {size}"],
            "cut": [f"Content-Length: {size * 10}"],
        }.get(kind)
        if lines is None:
            self.answer("404 Not Found", b"")
            return
        if kind == "te-cl":
            body = b"ZZZ\r\n" + body + b"\r\n0\r\n\r\n"
        elif kind == "te-cl-ok":
            body = f"{size:x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        head += "".join(f"{line}\r\n" for line in lines)
        self.send(head.encode("utf-8") + b"\r\n" + (b"" if method == "HEAD" else body))

    def handle(self):
        method, path, headers, body = self.read_request()
        if path is None:
            return
        port = self.server.server_address[1]
        if path == "/ok":
            self.answer("200 OK", b"ok")
        elif path == "/empty":
            self.answer("200 OK", b"")
        elif path == "/redirect-no-location":
            self.answer("302 Found", b"moved")
        elif path == "/redirect-cut":
            self.send(b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
        elif path == "/challenge-cut":
            self.send(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"fault\"\r\n"
                b"Content-Length: 1000\r\n\r\n" + b"x" * 100)
        elif path == "/challenge-cut-chunked":
            self.send(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"fault\"\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n64\r\n" + b"x" * 100 + b"\r\n3e8\r\n" + b"x" * 10)
        elif path == "/close-mid-body":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 100)
        elif path == "/short-body":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 50)
            self.wait_for_close(time.time() + HOLD)
        elif path == "/long-body":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n" + b"y" * 25)
        elif path == "/stall-headers":
            self.wait_for_close(time.time() + HOLD)
        elif path == "/stall-body":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"z" * 10)
            self.wait_for_close(time.time() + HOLD)
        elif path == "/refused-stall":
            self.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\nbusy")
            self.wait_for_close(time.time() + HOLD)
        elif path == "/reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif path == "/bad-status":
            self.send(b"HTTP/1.1 ABC Nonsense\r\nContent-Length: 0\r\n\r\n")
        elif path == "/bad-headers":
            self.send(b"HTTP/1.1 200 OK\r\nThis is not a header\r\nContent-Length: 2\r\n\r\nok")
        elif path == "/bad-chunked":
            self.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nhello\r\n0\r\n\r\n")
        elif path == "/huge-header":
            self.send(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * (1 << 20) + b"\r\nContent-Length: 2\r\n\r\nok")
        elif path == "/redirect-loop":
            self.answer("302 Found", b"", [("Location", "/redirect-loop")])
        elif path == "/redirect-307":
            self.answer("307 Temporary Redirect", b"", [("Location", "/echo")])
        elif path == "/redirect-307-stall":
            self.answer("307 Temporary Redirect", b"", [("Location", "/slow-sink?stall=60&hold=65536")])
        elif path == "/redirect-other-origin":
            self.answer("302 Found", b"", [("Location", f"http://localhost:{port}/echo")])
        elif path == "/redirect-307-ftp":
            self.answer("307 Temporary Redirect", b"", [("Location", f"ftp://127.0.0.1:{port}/upload")])
        elif path == "/redirect-302-ftp":
            self.answer("302 Found", b"", [("Location", f"ftp://127.0.0.1:{port}/x")])
        elif path == "/redirect-302-file":
            self.answer("302 Found", b"", [("Location", "file:///etc/passwd")])
        elif path == "/redirect-chain":
            left = int(self.query.get("n", "0"))
            target = f"/redirect-chain?n={left - 1}" if left > 0 else "/ok"
            size = max(0, min(int(self.query.get("body", "0") or 0), 1 << 20))
            if size:
                target += f"&body={size}" if left > 0 else ""
            self.answer("302 Found", b"r" * size, [("Location", target)])
        elif path == "/gzip-bomb":
            self.answer("200 OK", BOMB, [("Content-Encoding", "gzip")])
        elif path == "/gzip-members":
            count = max(1, min(int(self.query.get("n", "2") or 2), 64))
            body = b"".join(gzip.compress(f"member {index}\n".encode() * 1000) for index in range(count))
            if self.query.get("tail") == "zeros":
                body += bytes(512)
            self.answer("200 OK", body, [("Content-Encoding", "gzip")])
        elif path == "/gzip-bomb-chunked":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
                      b"Connection: close\r\n\r\n")
            for start in range(0, len(BOMB), 16384):
                chunk = BOMB[start:start + 16384]
                self.send(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            self.send(b"0\r\n\r\n")
        elif path in ("/gzip-nothing", "/redirect-gzip-nothing"):
            size = min(int(self.query.get("n", "0")), 1 << 30)
            status = b"302 Found\r\nLocation: /ok" if path == "/redirect-gzip-nothing" else b"200 OK"
            self.send(b"HTTP/1.1 " + status + b"\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
                      b"Connection: close\r\n\r\n")
            # A stored block that is not the last, of length 0 (LEN 0, NLEN 0xFFFF): 5 bytes of nothing.
            piece = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\x00\x00\x00\xff\xff" * 13105
            sent = 0
            hold = self.query.get("hold") == "1"
            deadline = time.time() + HOLD
            while time.time() < deadline if hold else sent < size:
                try:
                    self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                except OSError:
                    return
                sent += len(piece)
                piece = b"\x00\x00\x00\xff\xff" * 13107
                if hold:
                    time.sleep(0.01)
        elif path in ("/big", "/big-chunked"):
            size = min(int(self.query.get("n", "0")), 1 << 31)
            chunked = path == "/big-chunked"
            head = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
            self.send(f"HTTP/1.1 200 OK\r\n{head}\r\nConnection: close\r\n\r\n".encode())
            block = b"b" * 65536
            sent = 0
            while sent < size:
                piece = block[: min(len(block), size - sent)]
                try:
                    self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n" if chunked else piece)
                except OSError:
                    return
                sent += len(piece)
            if chunked:
                self.send(b"0\r\n\r\n")
        elif path == "/cookie-flood":
            index = self.query.get("i", "0")
            value = "v" * 4000
            self.answer("200 OK", b"ok", [("Set-Cookie", f"c{index}_{k}={value}; Path=/") for k in range(50)])
        elif path == "/disposition":
            name = 'attachment; filename="sub/../dir\\evil\u202etxt.exe"; size=3'
            self.answer("200 OK", b"abc", [("Content-Disposition", name)])
        elif path == "/slow-sink":
            self.answer("200 OK", b"done")
        elif path == "/sse":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            for piece in SSE_PIECES:
                self.send(piece)
                time.sleep(0.01)
        elif path == "/sse-drop":
            self.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            for piece in SSE_PIECES:
                self.send(b"%x\r\n%s\r\n" % (len(piece), piece))
                time.sleep(0.01)
            # A chunk announced and cut short, then the connection dropped.
            self.send(b"100\r\ndata: cut")
            # Closed (FIN), not reset: a reset makes the client's kernel discard what the client
            # has not read yet, so a client slowed down by a loaded machine would lose the events
            # the check expects, for a reason that is not the client's.
        elif path == "/stream-watch":
            ident = self.query.get("id", "")
            with WATCHED:
                STREAMS[ident] = {"state": "writing", "writes": 0, "at": None}
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
            deadline = time.time() + WATCH
            state = "expired"
            try:
                while time.time() < deadline:
                    self.wfile.write(b"6\r\nchunk\n\r\n")
                    self.wfile.flush()
                    with WATCHED:
                        STREAMS[ident]["writes"] += 1
                    time.sleep(0.01)
            except OSError:
                state = "closed"
            with WATCHED:
                STREAMS[ident]["state"] = state
                STREAMS[ident]["at"] = time.time()
                WATCHED.notify_all()
        elif path == "/stream-closed":
            ident = self.query.get("id", "")
            wait = min(30.0, max(0.0, float(self.query.get("wait", "0") or "0")))
            with WATCHED:
                WATCHED.wait_for(lambda: STREAMS.get(ident, {}).get("state", "writing") != "writing", timeout=wait)
                stream = dict(STREAMS.get(ident, {"state": "unknown", "writes": 0, "at": None}))
            closed = stream["state"] == "closed"
            payload = {
                "closed": closed, "state": stream["state"], "writes": stream["writes"],
                "at": stream["at"] if closed else None,
            }
            self.answer("200 OK", json.dumps(payload).encode(), [("Content-Type", "application/json")])
        elif path == "/cache":
            self.hostile_cache(headers)
        elif path == "/cache-count":
            with CACHE_LOCK:
                counts = dict(CACHE_COUNTS.get(self.query.get("id", ""), {}))
            payload = {key: counts.get(key, 0) for key in ("requests", "conditional", "notModified")}
            self.answer("200 OK", json.dumps(payload).encode(), [("Content-Type", "application/json")])
        elif path == "/hostile-length":
            self.hostile_length(method)
        elif path == "/header-flood":
            count = min(int(self.query.get("n", "0") or 0), 50_000)
            cookies = min(int(self.query.get("c", "0") or 0), 50_000)
            fields = [(f"f{base36(index)}", "v") for index in range(count)] + [("Set-Cookie", "c")] * cookies
            self.answer("200 OK", b"ok", fields)
        elif path == "/resumable":
            self.resumable(headers)
        elif path == "/resumable-log":
            with RESUME_LOCK:
                log = list(RESUME_LOG.get(self.query.get("id", ""), []))
            self.answer("200 OK", json.dumps(log).encode(), [("Content-Type", "application/json")])
        elif path == "/inflate":
            status = "400 Bad Request" if "error" in self.inflated else "200 OK"
            self.answer(status, json.dumps(self.inflated).encode(), [("Content-Type", "application/json")])
        elif path == "/echo":
            payload = {"method": method, "body": body.decode("latin-1"), "headers": headers}
            self.answer("200 OK", json.dumps(payload).encode(), [("Content-Type", "application/json")])
        else:
            self.answer("404 Not Found", b"")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The default backlog (5) refuses connections when the storm and load tests connect at once.
    request_queue_size = 1024


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
