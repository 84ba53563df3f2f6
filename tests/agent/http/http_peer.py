# SPDX-License-Identifier: Apache-2.0
"""A real HTTP/HTTPS peer on loopback for the agent's HTTP client tests.

Makes a test CA and server certificates with the openssl command line at start (a cert for
127.0.0.1 signed by the test CA, one signed by another CA, one for the wrong name), serves
plain HTTP and three TLS ports, prints one line
    READY http=P tls=P badca=P badname=P dir=D
and then lines "got ID" for /wait/ID requests. Commands on stdin: "release ID" answers a
waiting /wait/ID; EOF on stdin stops the peer and removes its directory.

Paths: /echo (the request as JSON), /status/N, /big?n=N (Content-Length), /chunked?n=N
(chunked, no length), /close (promises 1000 bytes, sends 10, closes), /hang (never
answers until stop), /wait/ID, /bigheaders (70 KiB of headers)."""
import http.server
import json
import os
import shutil
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import urllib.parse

lock = threading.Lock()
waiters = {}          # id -> threading.Event
stopping = threading.Event()


def out(line):
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_ca(d, name):
    key, crt = os.path.join(d, name + ".key"), os.path.join(d, name + ".pem")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
            "-days", "2", "-subj", "/CN=spinlane test " + name)
    return key, crt


def make_cert(d, name, ca_key, ca_crt, san):
    key, csr, crt = (os.path.join(d, name + s) for s in (".key", ".csr", ".pem"))
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n" % san)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=" + name)
    openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
            "-out", crt, "-days", "2", "-extfile", ext)
    return key, crt


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body=b"", ctype="text/plain", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        n = int(q.get("n", ["0"])[0])
        length = int(self.headers.get("Content-Length", "0") or "0")
        body = self.rfile.read(length) if length else b""
        if u.path == "/echo":
            doc = {"method": self.command, "path": self.path,
                   "headers": {k.lower(): v for k, v in self.headers.items()},
                   "body": body.decode("latin-1")}
            self.reply(200, json.dumps(doc).encode(), "application/json", [("X-Reply", "abc")])
        elif u.path.startswith("/status/"):
            self.reply(int(u.path.split("/")[2]), b"status body")
        elif u.path == "/big":
            self.reply(200, b"x" * n)
        elif u.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            left = n
            while left > 0:
                k = min(left, 4096)
                self.wfile.write(b"%x\r\n%s\r\n" % (k, b"y" * k))
                left -= k
            self.wfile.write(b"0\r\n\r\n")
        elif u.path == "/close":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
        elif u.path == "/hang":
            out("got hang")
            stopping.wait(300)
            self.close_connection = True
        elif u.path.startswith("/wait/"):
            wid = u.path.split("/")[2]
            ev = threading.Event()
            with lock:
                waiters[wid] = ev
            out("got " + wid)
            ev.wait(300)
            try:
                self.reply(200, ("released " + wid).encode())
            except OSError:
                pass  # the client gave up (cancelled)
        elif u.path == "/bigheaders":
            self.send_response(200)
            for i in range(70):
                self.send_header("X-Filler-%d" % i, "f" * 1000)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.reply(404, b"no such path")

    do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # clients that give up (timeouts, cancels, size limits) are part of the tests


def serve(ctx=None):
    s = Server(("127.0.0.1", 0), Handler)
    if ctx:
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s


def tls_ctx(key, crt):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    return ctx


def main():
    d = tempfile.mkdtemp(prefix="spinlane-http-peer-")
    try:
        ca_key, ca = make_ca(d, "ca")
        other_key, other = make_ca(d, "otherca")
        good = make_cert(d, "good", ca_key, ca, "IP:127.0.0.1,DNS:localhost")
        badca = make_cert(d, "badca", other_key, other, "IP:127.0.0.1,DNS:localhost")
        badname = make_cert(d, "badname", ca_key, ca, "DNS:wrong.example")
        servers = [serve(), serve(tls_ctx(*good)), serve(tls_ctx(*badca)), serve(tls_ctx(*badname))]
        ports = [s.server_address[1] for s in servers]
        out("READY http=%d tls=%d badca=%d badname=%d dir=%s" % (*ports, d))
        for line in sys.stdin:
            words = line.split()
            if len(words) == 2 and words[0] == "release":
                with lock:
                    ev = waiters.pop(words[1], None)
                if ev:
                    ev.set()
        stopping.set()
        with lock:
            for ev in waiters.values():
                ev.set()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
