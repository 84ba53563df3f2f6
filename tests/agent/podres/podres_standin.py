# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the kubelet's PodResources API (v1) for the daemon's tests: the
PodResourcesLister service's List on <root>/var/lib/kubelet/pod-resources/kubelet.sock,
real gRPC over a unix socket (Python grpcio). Its messages come from proto/podresources.proto
compiled with grpc_tools.protoc into a temporary directory at run time. The pods it lists
and how it answers are set by the test."""
import importlib
import os
import subprocess
import sys
import tempfile
import threading
from concurrent import futures

import grpc

SOCKET = "var/lib/kubelet/pod-resources/kubelet.sock"


def load_api(proto_dir):
    """Compile podresources.proto (messages only) and import it."""
    out = tempfile.mkdtemp(prefix="sl-podres-proto-")
    r = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", proto_dir, "--python_out", out,
                        os.path.join(proto_dir, "podresources.proto")], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("protoc failed: " + r.stderr)
    sys.path.insert(0, out)
    return importlib.import_module("podresources_pb2"), out


class PodResources:
    """List answers with .pods: [(pod, namespace, container, resource, [device ids])];
    .fail (a grpc.StatusCode) makes it fail instead; .garbage answers bytes that are no
    ListPodResourcesResponse. .calls counts the calls."""

    def __init__(self, api, root):
        self.api = api
        self.sock = os.path.join(root, SOCKET)
        self.pods = []
        self.fail = None
        self.garbage = False
        self.calls = 0
        self.lock = threading.Lock()
        self.server = None

    def _list(self, req, ctx):
        with self.lock:
            self.calls += 1
            if self.fail:
                ctx.abort(self.fail, "failing for the test")
            if self.garbage:
                return b"\x0a\x05\x0a\x7f\x41"
            by_pod = {}
            for pod, ns, ctr, res, ids in self.pods:
                by_pod.setdefault((pod, ns), {}).setdefault(ctr, []).append((res, ids))
        resp = self.api.ListPodResourcesResponse()
        for (pod, ns), ctrs in by_pod.items():
            p = resp.pod_resources.add(name=pod, namespace=ns)
            for ctr, devs in ctrs.items():
                c = p.containers.add(name=ctr)
                for res, ids in devs:
                    c.devices.add(resource_name=res, device_ids=list(ids))
        return resp.SerializeToString()

    def start(self):
        os.makedirs(os.path.dirname(self.sock), exist_ok=True)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
            "List": grpc.unary_unary_rpc_method_handler(
                self._list, request_deserializer=self.api.ListPodResourcesRequest.FromString,
                response_serializer=lambda b: b)})
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix:" + self.sock)
        self.server.start()

    def stop(self):
        if self.server:
            self.server.stop(None).wait()
            self.server = None
        try:
            os.unlink(self.sock)
        except FileNotFoundError:
            pass
