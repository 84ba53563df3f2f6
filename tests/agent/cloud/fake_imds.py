# SPDX-License-Identifier: Apache-2.0
"""A stand-in for both clouds' instance metadata services on loopback (python3
http.server), with their request rules:

AWS IMDSv2: PUT /latest/api/token needs X-aws-ec2-metadata-token-ttl-seconds in 1..21600
(else 400) and no X-Forwarded-For (else 403); the reply is the token. GETs under
/latest/meta-data/ need a live token in X-aws-ec2-metadata-token (else 401); per MAC:
network/interfaces/macs/<mac>/local-ipv4s and .../subnet-ipv4-cidr-block; 404 otherwise.
Azure IMDS: GET /metadata/instance/network needs "Metadata: true" (else 400), an
api-version (else 400 with the newest versions), no X-Forwarded-For (else 400).

Prints "READY port=P" and then takes commands on stdin (one a line):
  revoke                   every issued token stops working (as if expired)
  next PATH KIND [N]       the next N (default 1) requests to PATH get KIND instead:
                           html, truncated, big (10 MiB), trickle (never ends), hang (no
                           reply), status:CODE, text:WORDS (underscores become spaces)
  clear                    no more of those (every "next" forgotten)
  aws MAC IPV4S SUBNET     the ENI with MAC: local-ipv4s IPV4S (comma-separated, "-" for
                           none) in subnet SUBNET (a.b.c.d/len); replaces an earlier one
  aws-del MAC              no such ENI any more (404)
  azure MAC IPV4 ADDR LEN  an Azure interface (macAddress: MAC as 12 uppercase hex digits)
                           with private IPv4 IPV4 ("-" for none) in subnet ADDR/LEN
  azure-del MAC            no such interface any more
  stats                    prints "stats puts=.. gets=.. unauth=.. azure=.. rejected=..
                           hangs=.. hanging=.." (hang: requests held ever, and now)
Each command is answered by one line ("ok", or the stats). EOF ends it.
tests/agent/cloud/imds_standin.py runs it from Python tests."""
import http.server
import json
import secrets
import select
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

AWS = {
    "0a:00:00:00:00:01": ("10.0.1.17\n10.0.1.99\n", "10.0.1.0/24"),
    "0a:00:00:00:00:02": ("10.9.0.5\n", "10.0.2.0/24"),         # address outside its subnet
    "0a:00:00:00:00:04": ("", "10.0.4.0/24"),                     # no IPv4 on that ENI
    "0a:00:00:00:00:05": ("10.0.5.9\n", "10.0.5.0/31"),           # a /31 has no gateway to spare
}
AZURE = {"interface": [
    {"ipv4": {"ipAddress": [{"privateIpAddress": "10.1.0.4", "publicIpAddress": "X.X.X.X"},
                            {"privateIpAddress": "10.1.0.5", "publicIpAddress": ""}],
              "subnet": [{"address": "10.1.0.0", "prefix": "24"}]},
     "ipv6": {"ipAddress": [{"privateIpAddress": "b4bc:8fce:f33b:4990:cced:d94e:ab4f:6ea0"}]},
     "macAddress": "000D3AF806EC"},
    {"ipv4": {"ipAddress": [], "subnet": [{"address": "10.2.0.0", "prefix": "24"}]},
     "ipv6": {"ipAddress": []}, "macAddress": "000D3A000002"},
    {"ipv4": {"ipAddress": [{"privateIpAddress": "10.3.0.0", "publicIpAddress": ""}],
              "subnet": [{"address": "10.3.0.0", "prefix": "24"}]},
     "ipv6": {"ipAddress": []}, "macAddress": "000D3A000003"},   # the network address itself
]}
API_VERSIONS = ["2025-04-07", "2024-07-17", "2024-03-15", "2023-11-15", "2023-07-01", "2021-12-13",
                "2021-02-01", "2020-09-01", "2019-06-01", "2017-08-01", "2017-04-02"]

lock = threading.Lock()
tokens = {}        # token -> expiry (monotonic)
overrides = {}     # path -> [kind, count]
stats = {"puts": 0, "gets": 0, "unauth": 0, "azure": 0, "rejected": 0, "hangs": 0, "hanging": 0}
stop = threading.Event()


def out(line):
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="text/plain"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def override(self, path):
        with lock:
            o = overrides.get(path)
            if not o:
                return False
            kind = o[0]
            o[1] -= 1
            if o[1] <= 0:
                del overrides[path]
        if kind == "html":
            self.reply(200, "<html><body><h1>Service Unavailable</h1></body></html>", "text/html")
        elif kind == "truncated":
            self.reply(200, '{"interface": [{"ipv4": {"ipAddress": [{"privateIp', "application/json")
        elif kind == "big":
            self.reply(200, b"1" * (10 * 1024 * 1024))
        elif kind == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", "1000")  # 50 s at this pace
            self.end_headers()
            while not stop.is_set():
                try:
                    self.wfile.write(b"1")
                    self.wfile.flush()
                except OSError:
                    break
                time.sleep(0.05)
            self.close_connection = True
        elif kind == "hang":
            # no reply until the client gives up (closes) or the stand-in stops;
            # "hanging" counts the requests held so now, "hangs" all ever held
            with lock:
                stats["hangs"] += 1
                stats["hanging"] += 1
            try:
                while not stop.wait(0.02):
                    r, _, _ = select.select([self.connection], [], [], 0)
                    if r and not self.connection.recv(1, socket.MSG_PEEK):
                        break
            except OSError:
                pass
            with lock:
                stats["hanging"] -= 1
            self.close_connection = True
        elif kind.startswith("status:"):
            self.reply(int(kind[7:]), "error page")
        elif kind.startswith("text:"):
            self.reply(200, kind[5:].replace("_", " ") + "\n")
        return True

    def do_PUT(self):
        u = urllib.parse.urlsplit(self.path)
        if self.headers.get("Content-Length", "0") not in ("0", None):
            self.rfile.read(int(self.headers["Content-Length"]))
        if self.override(u.path):
            return
        if u.path != "/latest/api/token":
            return self.reply(404, "Not Found")
        if self.headers.get("X-Forwarded-For"):
            stats["rejected"] += 1
            return self.reply(403, "Forbidden")
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds", "")
        if not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            stats["rejected"] += 1
            return self.reply(400, "Bad Request")
        tok = "AQAE" + secrets.token_urlsafe(40)
        with lock:
            tokens[tok] = time.monotonic() + int(ttl)
            stats["puts"] += 1
        self.send_response(200)
        self.send_header("X-aws-ec2-metadata-token-ttl-seconds", ttl)
        self.send_header("Content-Length", str(len(tok)))
        self.end_headers()
        self.wfile.write(tok.encode())

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path.startswith("/metadata/"):
            return self.azure(u, q)
        if self.override(u.path):
            return
        if not u.path.startswith("/latest/meta-data/"):
            return self.reply(404, "Not Found")
        tok = self.headers.get("X-aws-ec2-metadata-token")
        with lock:
            live = tok in tokens and tokens[tok] > time.monotonic()
            stats["gets"] += 1
            if not live:
                stats["unauth"] += 1
        if not live:
            return self.reply(401, "Unauthorized")
        parts = u.path[len("/latest/meta-data/"):].split("/")
        if len(parts) == 5 and parts[:3] == ["network", "interfaces", "macs"] and parts[3] in AWS:
            ipv4s, subnet = AWS[parts[3]]
            if parts[4] == "local-ipv4s":
                return self.reply(200, ipv4s) if ipv4s else self.reply(404, "Not Found")
            if parts[4] == "subnet-ipv4-cidr-block":
                return self.reply(200, subnet)
        return self.reply(404, "Not Found")

    def azure(self, u, q):
        stats["azure"] += 1
        if self.headers.get("Metadata") != "true" or self.headers.get("X-Forwarded-For"):
            stats["rejected"] += 1
            return self.reply(400, json.dumps({"error": "Bad request. Required metadata header not specified"}),
                              "application/json")
        if q.get("api-version", [""])[0] not in API_VERSIONS:
            stats["rejected"] += 1
            return self.reply(400, json.dumps({"error": "Bad request. api-version is invalid or was not specified "
                                               "in the request.", "newest-versions": API_VERSIONS[:3]}),
                              "application/json")
        if self.override(u.path):
            return
        if u.path == "/metadata/instance/network":
            return self.reply(200, json.dumps(AZURE), "application/json")
        return self.reply(404, json.dumps({"error": "Not found"}), "application/json")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def main():
    s = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    out("READY port=%d" % s.server_address[1])
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        with lock:
            if w[0] == "revoke":
                tokens.clear()
            elif w[0] == "next" and len(w) >= 3:
                overrides[w[1]] = [w[2], int(w[3]) if len(w) > 3 else 1]
            elif w[0] == "clear":
                overrides.clear()
            elif w[0] == "aws" and len(w) == 4:
                AWS[w[1].lower()] = ("" if w[2] == "-" else "".join(a + "\n" for a in w[2].split(",")), w[3])
            elif w[0] == "aws-del" and len(w) == 2:
                AWS.pop(w[1].lower(), None)
            elif w[0] in ("azure", "azure-del") and len(w) in (2, 5):
                mac = w[1].replace(":", "").upper()
                AZURE["interface"] = [i for i in AZURE["interface"] if i["macAddress"] != mac]
                if w[0] == "azure":
                    ips = [] if w[2] == "-" else [{"privateIpAddress": w[2], "publicIpAddress": ""}]
                    AZURE["interface"].append({"ipv4": {"ipAddress": ips, "subnet": [{"address": w[3], "prefix": w[4]}]},
                                               "ipv6": {"ipAddress": []}, "macAddress": mac})
            if w[0] == "stats":
                sys.stdout.write("stats " + " ".join("%s=%d" % kv for kv in stats.items()) + "\n")
            else:
                sys.stdout.write("ok\n")  # the command is in force before the test goes on
            sys.stdout.flush()
    stop.set()


if __name__ == "__main__":
    main()
