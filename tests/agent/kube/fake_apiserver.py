# SPDX-License-Identifier: Apache-2.0
"""A TLS server on loopback that behaves like the Kubernetes API server for the calls the
agent makes (python3 http.server + ssl; the CA and certificate made with openssl at
start): bearer-token check (401 Status), GET/PATCH /api/v1/nodes/NAME with RFC 7386 merge
patch semantics on one stored Node (application/merge-patch+json only: 415 otherwise;
metadata.resourceVersion as a precondition: 409; label syntax: 422), POST and merge-PATCH
of events.k8s.io/v1 Events in namespace default with the schema checks the API server
makes (eventTime with microseconds, type, reason, action, reportingController,
reportingInstance, note <= 1024, series count >= 2; 422 otherwise; 409 AlreadyExists).
ResourceSlices of resource.k8s.io/v1 (cluster-scoped): GET/PUT/DELETE
/apis/resource.k8s.io/v1/resourceslices/NAME, POST and LIST (fieldSelector spec.nodeName=,
spec.driver=) of /apis/resource.k8s.io/v1/resourceslices, with the v1 validation the API
server makes (slice_errors: required fields, DNS names, exactly one node selection, pool
counts, at most 128 devices with unique DNS-label names, attribute names and values
exactly one of int/bool/string/version, 32 attributes and capacities; 422 otherwise),
the immutable fields on update (422), metadata.resourceVersion required on PUT (422) and
matching (409), 409 AlreadyExists on create.

Prints "READY port=P dir=D" (D/ca.pem is the CA, D/otherca.pem another one). Commands on
stdin, each answered by one line:
  tokens T1,T2         the bearer tokens accepted from now on                -> ok
  label KEY VALUE      someone else sets a label on the Node (rv changes)    -> ok
  unlabel KEY          someone else removes a label of the Node (rv changes) -> ok
  hold METHOD PREFIX   the next request matching waits, unanswered, for
                       "release" (at most 300 s)                             -> ok
  release              the held request goes on                              -> ok
  conflict N           the next N Node PATCHes lose a race: 409              -> ok
  fail METHOD PREFIX KIND [N] [RETRY_AFTER]
                       the next N requests matching answer KIND: a status
                       code (a Status object), hang, reset, garbage, bigerror -> ok
  fail-clear           the failures still pending are dropped                 -> ok
  last                 the last API request: {"method","path","ctype","body","auth"}
  node                 the stored Node as JSON
  event NAME           the stored Event as JSON (or null)
  count                {"requests": N, "unauth": N, "gets": N, "patches": N}
  requests             every API request since the last "requests", a JSON list of
                       {"method","path","ctype","body","auth","answer","t"} (answer: the
                       status sent, or the injected KIND; t: time.monotonic() when it came)
  held                 {"held": N}: requests that have waited for "release" so far
  events               every stored Event, a JSON object name -> Event
  down                 the server goes away: the port refuses, open connections are cut -> ok
  up                   back on the same port                                   -> ok
  cert other|good      open connections are cut, new handshakes get a certificate of
                       another CA / ours again                                -> ok
  slices               every stored ResourceSlice, a JSON object name -> slice
  slice-delete NAME    someone else deletes the ResourceSlice                 -> ok / missing
  slice-touch NAME     someone else updates it (resourceVersion changes)      -> ok / missing
  claim JSON           store a resource.k8s.io/v1 ResourceClaim (JSON on one line),
                       served by GET .../namespaces/NS/resourceclaims/NAME    -> ok
  conns [reset]        {"open": N, "peak": N}: client connections open now, and the
                       most open at once since the last "conns reset" (reset: the peak
                       starts again from those open now)
EOF stops it."""
import copy
import http.server
import json
import os
import re
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

lock = threading.RLock()
stop = threading.Event()
state = {
    "tokens": {"tok-1"},
    "node": {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": "node-a", "uid": "5a7c0e1e-0000-4000-8000-000000000001", "resourceVersion": "1",
                          "labels": {"kubernetes.io/hostname": "node-a", "spinlane.io/node-pool": "true",
                                     "spinlane.io/stale": "x"}},
             "status": {}},
    "events": {},
    "conflicts": 0,
    "fails": [],
    "last": None,
    "count": {"requests": 0, "unauth": 0, "gets": 0, "patches": 0},
    "log": [],
    "hold": None,
    "held": 0,
    "slices": {},  # resource.k8s.io/v1 ResourceSlices by name
    "rv": 100,     # the resourceVersion counter of the slices
    "conn_peak": 0,  # the most client connections open at once since "conns reset"
}
released = threading.Event()
conns = set()  # open client connections (cut by "down")
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def merge(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def label_ok(k, v):
    if not isinstance(v, str) or len(v) > 63 or (v and not LABEL_NAME.match(v)):
        return False
    prefix, _, name = k.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS1123.match(prefix)):
        return False
    return len(name) <= 63 and bool(LABEL_NAME.match(name))


def event_errors(e):
    errs = []
    if e.get("apiVersion") != "events.k8s.io/v1" or e.get("kind") != "Event":
        errs.append("apiVersion/kind")
    md = e.get("metadata") or {}
    if not isinstance(md.get("name"), str) or len(md["name"]) > 253 or not DNS1123.match(md["name"]):
        errs.append("metadata.name")
    if md.get("namespace") not in (None, "default"):
        errs.append("metadata.namespace")
    if not isinstance(e.get("eventTime"), str) or not MICRO.match(e["eventTime"]):
        errs.append("eventTime: Required value (a MicroTime)")
    if e.get("type") not in ("Normal", "Warning"):
        errs.append("type")
    for f in ("reason", "action", "reportingInstance"):
        if not isinstance(e.get(f), str) or not e[f] or len(e[f]) > 128:
            errs.append(f)
    if isinstance(e.get("reason"), str) and not CAMEL.match(e["reason"]):
        errs.append("reason: not UpperCamelCase")
    if e.get("reportingController") != "spinlane.io/agent":
        errs.append("reportingController")
    if len(e.get("note", "").encode()) > 1024:
        errs.append("note: at most 1024 bytes")
    reg = e.get("regarding") or {}
    if reg.get("kind") != "Node" or reg.get("apiVersion") != "v1" or reg.get("name") != "node-a":
        errs.append("regarding")
    s = e.get("series")
    if s is not None and (not isinstance(s.get("count"), int) or s["count"] < 2 or
                          not MICRO.match(str(s.get("lastObservedTime", "")))):
        errs.append("series")
    for f in ("firstTimestamp", "lastTimestamp", "count", "source"):
        if f in e:
            errs.append(f + ": needs to be unset")
    return errs


DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
SLICE_SPEC = {"driver", "pool", "nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection", "devices",
              "sharedCounters"}
DEVICE_FIELDS = {"name", "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
                 "taints", "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations"}


def dns_subdomain(v, limit=253):
    return isinstance(v, str) and 0 < len(v) <= limit and bool(DNS1123.match(v))


def slice_errors(o):
    """What the API server's validation of resource.k8s.io/v1 ResourceSlice refuses
    (k8s.io/kubernetes pkg/apis/resource/validation; limits of k8s.io/api resource/v1)."""
    errs = []
    if o.get("apiVersion") != "resource.k8s.io/v1" or o.get("kind") != "ResourceSlice":
        errs.append("apiVersion/kind: want resource.k8s.io/v1 ResourceSlice")
    if not dns_subdomain((o.get("metadata") or {}).get("name")):
        errs.append("metadata.name: a lowercase RFC 1123 subdomain of at most 253 characters")
    spec = o.get("spec")
    if not isinstance(spec, dict):
        return errs + ["spec: Required value"]
    for k in spec:
        if k not in SLICE_SPEC:
            errs.append("spec.%s: unknown field" % k)
    if not dns_subdomain(spec.get("driver"), 63):
        errs.append("spec.driver: Required value: a DNS subdomain of at most 63 characters")
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        errs.append("spec.pool: Required value")
    else:
        pn = pool.get("name")
        if not isinstance(pn, str) or not pn or len(pn) > 253 or not all(dns_subdomain(p) for p in pn.split("/")):
            errs.append("spec.pool.name: Required value: DNS subdomains separated by slashes, at most 253")
        g = pool.get("generation")
        if not isinstance(g, int) or isinstance(g, bool) or g < 0:
            errs.append("spec.pool.generation: must be greater than or equal to 0")
        c = pool.get("resourceSliceCount")
        if not isinstance(c, int) or isinstance(c, bool) or c <= 0:
            errs.append("spec.pool.resourceSliceCount: must be greater than 0")
    sel = [k for k in ("nodeName", "nodeSelector") if spec.get(k) not in (None, "")]
    sel += [k for k in ("allNodes", "perDeviceNodeSelection") if spec.get(k) is True]
    if len(sel) != 1:
        errs.append("spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                    "`perDeviceNodeSelection` is required (%s given)" % (", ".join(sel) or "none"))
    if "nodeName" in spec and not dns_subdomain(spec["nodeName"]):
        errs.append("spec.nodeName: a DNS subdomain")
    devs = spec.get("devices", [])
    if not isinstance(devs, list):
        return errs + ["spec.devices: a list"]
    if len(devs) > 128:
        errs.append("spec.devices: Too many: %d: must have at most 128 items" % len(devs))
    seen = set()
    for i, d in enumerate(devs):
        at = "spec.devices[%d]" % i
        if not isinstance(d, dict):
            errs.append(at + ": an object")
            continue
        for k in d:
            if k not in DEVICE_FIELDS:
                errs.append("%s.%s: unknown field (v1 has no `basic`: attributes sit on the device)" % (at, k))
        n = d.get("name")
        if not isinstance(n, str) or len(n) > 63 or not DNS_LABEL.match(n):
            errs.append(at + ".name: Required value: a DNS label (lower case, at most 63)")
        elif n in seen:
            errs.append(at + ".name: Duplicate value: " + n)
        seen.add(n)
        attrs = d.get("attributes") or {}
        caps = d.get("capacity") or {}
        if not isinstance(attrs, dict) or not isinstance(caps, dict):
            errs.append(at + ": attributes and capacity are maps")
            continue
        if len(attrs) + len(caps) > 32:
            errs.append(at + ": Too many: attributes and capacities combined must not exceed 32")
        for k, v in attrs.items():
            a = "%s.attributes[%s]" % (at, k)
            dom, slash, ident = k.rpartition("/")
            if (slash and not dns_subdomain(dom, 63)) or len(ident) > 32 or not C_IDENT.match(ident):
                errs.append(a + ": Invalid value: a C identifier of at most 32, optionally after a DNS domain and '/'")
            if not isinstance(v, dict) or len(v) != 1 or next(iter(v)) not in ("int", "bool", "string", "version"):
                errs.append(a + ": Invalid value: exactly one value must be specified (int, bool, string, version)")
                continue
            t, x = next(iter(v.items()))
            if t == "int" and (not isinstance(x, int) or isinstance(x, bool)):
                errs.append(a + ".int: an integer")
            elif t == "bool" and not isinstance(x, bool):
                errs.append(a + ".bool: a boolean")
            elif t == "string" and (not isinstance(x, str) or len(x) > 64):
                errs.append(a + ".string: a string of at most 64 characters")
            elif t == "version" and (not isinstance(x, str) or len(x) > 64 or not SEMVER.match(x)):
                errs.append(a + ".version: a semantic version of at most 64 characters")
    return errs


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def setup(self):
        super().setup()
        try:  # the handshake here, in the connection's thread (Server.get_request leaves it)
            self.connection.do_handshake()
        except BaseException:
            with lock:
                conns.discard(self.connection)
            raise

    def finish(self):
        try:
            super().finish()
        finally:
            with lock:
                conns.discard(self.connection)

    def answered(self, what):
        with lock:
            if state["log"] and state["log"][-1].get("answer") is None:
                state["log"][-1]["answer"] = what

    def send_json(self, code, doc, extra=()):
        self.answered(code)
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def injected(self):
        with lock:
            for f in state["fails"]:
                if f["method"] == self.command and self.path.startswith(f["prefix"]):
                    f["n"] -= 1
                    if f["n"] <= 0:
                        state["fails"].remove(f)
                    break
            else:
                return False
        kind = f["kind"]
        if not kind.isdigit():
            self.answered(kind)
        if kind == "hang":
            stop.wait(300)
            self.close_connection = True
        elif kind == "reset":
            self.send_response(200)
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b'{"kind": "Node", "metadata": {')
            self.wfile.flush()
            self.connection.shutdown(2)
            self.close_connection = True
        elif kind == "garbage":
            body = b"{not json at all"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif kind == "bigerror":
            body = b"E" * (3 * 1024 * 1024)
            self.send_response(500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            code = int(kind)
            reasons = {403: "Forbidden", 409: "Conflict", 422: "Invalid", 429: "TooManyRequests",
                       500: "InternalError", 503: "ServiceUnavailable"}
            msg = {403: 'nodes "node-a" is forbidden: User "system:serviceaccount:spinlane:agent" cannot patch '
                        'resource "nodes" in API group "" at the cluster scope'}.get(code, "injected failure")
            if code == 403 and "/resourceslices" in self.path:
                msg = ('resourceslices.resource.k8s.io is forbidden: User "system:serviceaccount:spinlane:agent" '
                       'cannot %s resource "resourceslices" in API group "resource.k8s.io" at the cluster scope'
                       % {"GET": "get", "POST": "create", "PUT": "update", "DELETE": "delete"}.get(self.command, "?"))
            extra = [("Retry-After", f["retry_after"])] if f.get("retry_after") else []
            self.send_json(code, status(code, reasons.get(code, "Unknown"), msg), extra)
        return True

    def handle_any(self):
        length = int(self.headers.get("Content-Length", "0") or "0")
        body = self.rfile.read(length) if length else b""
        auth = self.headers.get("Authorization", "")
        tok = auth[7:] if auth.startswith("Bearer ") else None
        with lock:
            state["count"]["requests"] += 1
            state["last"] = {"method": self.command, "path": self.path,
                             "ctype": self.headers.get("Content-Type"), "body": body.decode("latin-1"), "auth": tok}
            state["log"].append(dict(state["last"], answer=None, t=time.monotonic()))
            ok = tok in state["tokens"]
            if not ok:
                state["count"]["unauth"] += 1
            h = state["hold"]
            hold = ok and h is not None and h["method"] == self.command and self.path.startswith(h["prefix"])
            if hold:
                state["hold"] = None
                state["held"] += 1
        if not ok:
            return self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
        if hold:
            released.wait(300)
        if self.injected():
            return
        u = urllib.parse.urlsplit(self.path).path
        with lock:
            if u.startswith("/api/v1/nodes/"):
                return self.node(u[len("/api/v1/nodes/"):], body)
            m = re.match(r"^/apis/events\.k8s\.io/v1/namespaces/([^/]+)/events(?:/([^/]+))?$", u)
            if m:
                return self.event(m.group(1), m.group(2), body)
            m = re.match(r"^/apis/resource\.k8s\.io/v1/resourceslices(?:/([^/]+))?$", u)
            if m:
                return self.resourceslice(m.group(1), body)
            m = re.match(r"^/apis/resource\.k8s\.io/v1/namespaces/([^/]+)/resourceclaims/([^/]+)$", u)
            if m and self.command == "GET":
                c = state.setdefault("claims", {}).get((m.group(1), m.group(2)))
                if c is not None:
                    return self.send_json(200, c)
                return self.send_json(404, status(404, "NotFound", 'resourceclaims.resource.k8s.io "%s" not found'
                                                  % m.group(2)))
        self.send_json(404, status(404, "NotFound", "the server could not find the requested resource"))

    def node(self, name, body):
        n = state["node"]
        if name != n["metadata"]["name"]:
            return self.send_json(404, status(404, "NotFound", 'nodes "%s" not found' % name))
        if self.command == "GET":
            state["count"]["gets"] += 1
            return self.send_json(200, n)
        if self.command != "PATCH":
            return self.send_json(405, status(405, "MethodNotAllowed", "method not allowed"))
        state["count"]["patches"] += 1
        if self.headers.get("Content-Type") != "application/merge-patch+json":
            return self.send_json(415, status(415, "UnsupportedMediaType", "unsupported patch type"))
        try:
            patch = json.loads(body)
        except ValueError:
            return self.send_json(400, status(400, "BadRequest", "invalid JSON"))
        if state["conflicts"] > 0:
            state["conflicts"] -= 1
            n["metadata"]["resourceVersion"] = str(int(n["metadata"]["resourceVersion"]) + 1)
        want_rv = (patch.get("metadata") or {}).get("resourceVersion")
        if want_rv is not None and want_rv != n["metadata"]["resourceVersion"]:
            return self.send_json(409, status(409, "Conflict", 'Operation cannot be fulfilled on nodes "node-a": '
                                                               'the object has been modified'))
        new = merge(n, patch)
        for k, v in (new["metadata"].get("labels") or {}).items():
            if not label_ok(k, v):
                return self.send_json(422, status(422, "Invalid", 'Node "node-a" is invalid: metadata.labels: '
                                                                  'Invalid value: "%s"' % v))
        new["metadata"]["resourceVersion"] = str(int(n["metadata"]["resourceVersion"]) + 1)
        new["metadata"]["uid"] = n["metadata"]["uid"]
        new["metadata"]["name"] = n["metadata"]["name"]
        state["node"] = new
        self.send_json(200, new)

    def event(self, ns, name, body):
        if ns != "default":
            return self.send_json(403, status(403, "Forbidden", "only namespace default here"))
        if self.headers.get("Content-Type") not in ("application/json", "application/merge-patch+json"):
            return self.send_json(415, status(415, "UnsupportedMediaType", "unsupported media type"))
        try:
            doc = json.loads(body) if body else None
        except ValueError:
            return self.send_json(400, status(400, "BadRequest", "invalid JSON"))
        if self.command == "POST" and name is None:
            errs = event_errors(doc or {})
            if errs:
                return self.send_json(422, status(422, "Invalid", "Event is invalid: " + "; ".join(errs)))
            n = doc["metadata"]["name"]
            if n in state["events"]:
                return self.send_json(409, status(409, "AlreadyExists", 'events.events.k8s.io "%s" already exists' % n))
            doc["metadata"]["namespace"] = "default"
            state["events"][n] = doc
            return self.send_json(201, doc)
        if self.command == "PATCH" and name:
            if self.headers.get("Content-Type") != "application/merge-patch+json":
                return self.send_json(415, status(415, "UnsupportedMediaType", "unsupported patch type"))
            if name not in state["events"]:
                return self.send_json(404, status(404, "NotFound", 'events.events.k8s.io "%s" not found' % name))
            new = merge(state["events"][name], doc)
            errs = event_errors(new)
            if errs:
                return self.send_json(422, status(422, "Invalid", "Event is invalid: " + "; ".join(errs)))
            state["events"][name] = new
            return self.send_json(200, new)
        self.send_json(405, status(405, "MethodNotAllowed", "method not allowed"))

    # ---- resource.k8s.io/v1 ResourceSlices (cluster-scoped) ----
    def resourceslice(self, name, body):
        sl = state["slices"]
        if name is None and self.command == "GET":
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            want = {}
            for sel in ",".join(q.get("fieldSelector", [])).split(","):
                if not sel:
                    continue
                k, eq, v = sel.partition("=")
                if not eq or k not in ("spec.nodeName", "spec.driver"):
                    return self.send_json(400, status(400, "BadRequest", 'field label not supported: "%s"' % k))
                want[k[len("spec."):]] = v.lstrip("=")
            items = [o for _, o in sorted(sl.items())
                     if all(o["spec"].get(k) == v for k, v in want.items())]
            return self.send_json(200, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                                        "metadata": {"resourceVersion": str(state["rv"])}, "items": items})
        if name is None and self.command != "POST":
            return self.send_json(405, status(405, "MethodNotAllowed", "method not allowed"))
        if name is not None and self.command == "GET":
            if name not in sl:
                return self.send_json(404, status(404, "NotFound",
                                                  'resourceslices.resource.k8s.io "%s" not found' % name))
            return self.send_json(200, sl[name])
        if name is not None and self.command == "DELETE":
            if name not in sl:
                return self.send_json(404, status(404, "NotFound",
                                                  'resourceslices.resource.k8s.io "%s" not found' % name))
            gone = sl.pop(name)
            state["rv"] += 1
            return self.send_json(200, gone)
        if self.command not in ("POST", "PUT"):
            return self.send_json(405, status(405, "MethodNotAllowed", "method not allowed"))
        if self.headers.get("Content-Type") != "application/json":
            return self.send_json(415, status(415, "UnsupportedMediaType", "unsupported media type"))
        try:
            doc = json.loads(body) if body else None
        except ValueError:
            return self.send_json(400, status(400, "BadRequest", "invalid JSON"))
        if not isinstance(doc, dict):
            return self.send_json(400, status(400, "BadRequest", "the body is not an object"))
        errs = slice_errors(doc)
        md = doc.get("metadata") or {}
        n = md.get("name")
        if self.command == "PUT" and n != name:
            errs.append("metadata.name: Invalid value: the name of the object (%s) does not match the name on the "
                        "URL (%s)" % (n, name))
        if errs:
            return self.send_json(422, status(422, "Invalid", 'ResourceSlice.resource.k8s.io "%s" is invalid: %s'
                                              % (n, "; ".join(errs))))
        if self.command == "POST":
            if md.get("resourceVersion"):
                return self.send_json(400, status(400, "BadRequest", "resourceVersion should not be set on objects "
                                                                     "to be created"))
            if n in sl:
                return self.send_json(409, status(409, "AlreadyExists",
                                                  'resourceslices.resource.k8s.io "%s" already exists' % n))
            state["rv"] += 1
            md["resourceVersion"] = str(state["rv"])
            md["uid"] = "slice-%d" % state["rv"]
            sl[n] = doc
            return self.send_json(201, doc)
        if name not in sl:
            return self.send_json(404, status(404, "NotFound", 'resourceslices.resource.k8s.io "%s" not found' % name))
        old = sl[name]
        if not md.get("resourceVersion"):
            return self.send_json(422, status(422, "Invalid", 'ResourceSlice.resource.k8s.io "%s" is invalid: '
                                              'metadata.resourceVersion: Invalid value: 0x0: must be specified for '
                                              'an update' % name))
        if md["resourceVersion"] != old["metadata"]["resourceVersion"]:
            return self.send_json(409, status(409, "Conflict", 'Operation cannot be fulfilled on '
                                              'resourceslices.resource.k8s.io "%s": the object has been modified; '
                                              'please apply your changes to the latest version and try again' % name))
        imm = [f for f in ("driver", "nodeName") if doc["spec"].get(f) != old["spec"].get(f)]
        if doc["spec"]["pool"].get("name") != old["spec"]["pool"].get("name"):
            imm.append("pool.name")
        if imm:
            return self.send_json(422, status(422, "Invalid", 'ResourceSlice.resource.k8s.io "%s" is invalid: %s' % (
                name, "; ".join("spec.%s: Invalid value: field is immutable" % f for f in imm))))
        state["rv"] += 1
        md["resourceVersion"] = str(state["rv"])
        md["uid"] = old["metadata"].get("uid")
        sl[name] = doc
        return self.send_json(200, doc)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """Plain TCP accept; the TLS object is made, and the connection listed in conns, in one
    step under the lock, so "cert" (which loads the certificate and takes the list under
    the same lock) cuts every connection whose TLS object still holds the old certificate
    (OpenSSL copies it into each connection when it is made). Listing it later, in the
    handler's thread, left a connection accepted during the switch uncut, serving the old
    certificate for as long as the client kept it alive."""
    daemon_threads = True
    tls = None  # the ssl.SSLContext

    def get_request(self):
        sock, addr = self.socket.accept()
        with lock:
            c = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            conns.add(c)
            state["conn_peak"] = max(state["conn_peak"], len(conns))
        return c, addr

    def handle_error(self, request, client_address):
        pass


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    d = tempfile.mkdtemp(prefix="spinlane-apiserver-")
    try:
        for ca in ("ca", "otherca"):
            openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", os.path.join(d, ca + ".key"),
                    "-out", os.path.join(d, ca + ".pem"), "-days", "2", "-subj", "/CN=spinlane test " + ca)
        with open(os.path.join(d, "srv.ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", os.path.join(d, "srv.key"),
                "-out", os.path.join(d, "srv.csr"), "-subj", "/CN=kube-apiserver")
        openssl("x509", "-req", "-in", os.path.join(d, "srv.csr"), "-CA", os.path.join(d, "ca.pem"),
                "-CAkey", os.path.join(d, "ca.key"), "-CAcreateserial", "-out", os.path.join(d, "srv.pem"),
                "-days", "2", "-extfile", os.path.join(d, "srv.ext"))
        # the same name and key, signed by the other CA ("cert other": a wrong CA for the client)
        openssl("x509", "-req", "-in", os.path.join(d, "srv.csr"), "-CA", os.path.join(d, "otherca.pem"),
                "-CAkey", os.path.join(d, "otherca.key"), "-CAcreateserial", "-out", os.path.join(d, "srv-other.pem"),
                "-days", "2", "-extfile", os.path.join(d, "srv.ext"))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(d, "srv.pem"), os.path.join(d, "srv.key"))

        def serve(port):
            Server.allow_reuse_address = True
            srv = Server(("127.0.0.1", port), Handler)
            srv.tls = ctx
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            return srv
        s = serve(0)
        port = s.server_address[1]
        out("READY port=%d dir=%s" % (port, d))
        for line in sys.stdin:
            w = line.split()
            if not w:
                continue
            with lock:
                if w[0] == "tokens":
                    state["tokens"] = set(w[1].split(","))
                    out("ok")
                elif w[0] == "label":
                    md = state["node"]["metadata"]
                    md.setdefault("labels", {})[w[1]] = w[2]
                    md["resourceVersion"] = str(int(md["resourceVersion"]) + 1)
                    out("ok")
                elif w[0] == "unlabel":
                    md = state["node"]["metadata"]
                    md.setdefault("labels", {}).pop(w[1], None)
                    md["resourceVersion"] = str(int(md["resourceVersion"]) + 1)
                    out("ok")
                elif w[0] == "hold":
                    released.clear()
                    state["hold"] = {"method": w[1], "prefix": w[2]}
                    out("ok")
                elif w[0] == "release":
                    released.set()
                    out("ok")
                elif w[0] == "held":
                    out(json.dumps({"held": state["held"]}))
                elif w[0] == "conflict":
                    state["conflicts"] = int(w[1])
                    out("ok")
                elif w[0] == "fail":
                    state["fails"].append({"method": w[1], "prefix": w[2], "kind": w[3],
                                           "n": int(w[4]) if len(w) > 4 else 1,
                                           "retry_after": w[5] if len(w) > 5 else None})
                    out("ok")
                elif w[0] == "fail-clear":
                    state["fails"] = []
                    out("ok")
                elif w[0] == "last":
                    out(json.dumps(state["last"], sort_keys=True))
                elif w[0] == "node":
                    out(json.dumps(state["node"], sort_keys=True))
                elif w[0] == "event":
                    out(json.dumps(state["events"].get(w[1]), sort_keys=True))
                elif w[0] == "count":
                    out(json.dumps(state["count"], sort_keys=True))
                elif w[0] == "requests":
                    out(json.dumps(state["log"], sort_keys=True))
                    state["log"] = []
                elif w[0] == "events":
                    out(json.dumps(state["events"], sort_keys=True))
                elif w[0] == "cert":
                    ctx.load_cert_chain(os.path.join(d, "srv-other.pem" if w[1] == "other" else "srv.pem"),
                                        os.path.join(d, "srv.key"))
                    cut = list(conns)  # with the load, under the lock: see Server
                elif w[0] == "slices":
                    out(json.dumps(state["slices"], sort_keys=True))
                elif w[0] in ("slice-delete", "slice-touch"):
                    o = state["slices"].get(w[1])
                    if o is None:
                        out("missing")
                    else:
                        state["rv"] += 1
                        if w[0] == "slice-delete":
                            del state["slices"][w[1]]
                        else:
                            o["metadata"]["resourceVersion"] = str(state["rv"])
                        out("ok")
                elif w[0] == "conns":
                    if len(w) > 1 and w[1] == "reset":
                        state["conn_peak"] = len(conns)
                    out(json.dumps({"open": len(conns), "peak": state["conn_peak"]}))
                elif w[0] == "claim":
                    c = json.loads(line.split(None, 1)[1])
                    state.setdefault("claims", {})[(c["metadata"]["namespace"], c["metadata"]["name"])] = c
                    out("ok")
                elif w[0] in ("down", "up"):
                    pass  # below, outside the lock (handlers take it); "ok" once done
                else:
                    out("unknown")
            if w[0] == "cert" or (w[0] == "down" and s is not None):
                if w[0] == "down":  # serve_forever has returned: whatever it accepted is listed
                    s.shutdown()
                    s.server_close()
                    s = None
                    with lock:
                        cut = list(conns)
                for c in cut:
                    try:
                        c.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                out("ok")
            elif w[0] == "down":
                out("ok")
            elif w[0] == "up":
                if s is None:
                    s = serve(port)
                out("ok")
        stop.set()
        released.set()  # a held request goes on and ends
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
