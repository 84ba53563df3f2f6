# SPDX-License-Identifier: Apache-2.0
"""A DRA kubelet stand-in: what the kubelet's plugin watcher and its DRA manager do with a
kubelet plugin, in Python grpcio over the plugin's unix sockets. It finds the registration
socket in <root>/var/lib/kubelet/plugins_registry, calls Registration.GetInfo and
NotifyRegistrationStatus, connects to the endpoint GetInfo names (under <root>) and calls
NodePrepareResources / NodeUnprepareResources of the v1 or v1beta1 DRAPlugin service.
Messages come from the kubelet's protos (proto/pluginregistration.proto, dra-v1.proto,
dra-v1beta1.proto) compiled with grpc_tools.protoc into a temporary directory at run time."""
import importlib
import os
import subprocess
import sys
import tempfile

import grpc

REGISTRY = "var/lib/kubelet/plugins_registry"


def load_protos(proto_dir):
    """The three modules {"reg", "v1", "v1beta1"} and the directory they were made in."""
    out = tempfile.mkdtemp(prefix="sl-dra-proto-")
    files = ["pluginregistration.proto", "dra-v1.proto", "dra-v1beta1.proto"]
    r = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", proto_dir, "--python_out", out] +
                       [os.path.join(proto_dir, f) for f in files], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("protoc failed: " + r.stderr)
    sys.path.insert(0, out)
    # protoc makes dra-v1.proto dra_v1_pb2.py
    return {"reg": importlib.import_module("pluginregistration_pb2"),
            "v1": importlib.import_module("dra_v1_pb2"),
            "v1beta1": importlib.import_module("dra_v1beta1_pb2")}, out


def unary(channel, path, req_cls, resp_cls):
    return channel.unary_unary(path, request_serializer=req_cls.SerializeToString,
                               response_deserializer=resp_cls.FromString)


class DraKubelet:
    def __init__(self, pb, root):
        self.pb = pb
        self.root = root
        self.info = None
        self.channel = None

    def sockets(self):
        d = os.path.join(self.root, REGISTRY)
        return sorted(n for n in os.listdir(d) if n.endswith(".sock")) if os.path.isdir(d) else []

    def register(self, name, timeout=10):
        """As the plugin watcher: GetInfo on the registration socket `name`, then
        NotifyRegistrationStatus(registered). Returns the PluginInfo."""
        reg = self.pb["reg"]
        with grpc.insecure_channel("unix:" + os.path.join(self.root, REGISTRY, name)) as ch:
            info = unary(ch, "/pluginregistration.Registration/GetInfo", reg.InfoRequest,
                         reg.PluginInfo)(reg.InfoRequest(), timeout=timeout)
            unary(ch, "/pluginregistration.Registration/NotifyRegistrationStatus", reg.RegistrationStatus,
                  reg.RegistrationStatusResponse)(reg.RegistrationStatus(plugin_registered=True), timeout=timeout)
        self.info = info
        if self.channel:
            self.channel.close()
        self.channel = grpc.insecure_channel("unix:" + os.path.join(self.root, info.endpoint.lstrip("/")))
        return info

    def _call(self, version, method, claims, timeout, raw=None):
        m = self.pb[version]
        req_cls = getattr(m, method + "Request")
        resp_cls = getattr(m, method + "Response")
        path = "/k8s.io.kubelet.pkg.apis.dra.%s.DRAPlugin/%s" % (version, method)
        if raw is not None:
            fn = self.channel.unary_unary(path, request_serializer=lambda b: b,
                                          response_deserializer=resp_cls.FromString)
            return fn(raw, timeout=timeout)
        req = req_cls(claims=[m.Claim(namespace=ns, uid=uid, name=name) for ns, uid, name in claims])
        return unary(self.channel, path, req_cls, resp_cls)(req, timeout=timeout)

    def prepare(self, claims, version="v1", timeout=30, raw=None):
        """claims: [(namespace, uid, name)]. The NodePrepareResourcesResponse."""
        return self._call(version, "NodePrepareResources", claims, timeout, raw)

    def unprepare(self, claims, version="v1", timeout=30, raw=None):
        return self._call(version, "NodeUnprepareResources", claims, timeout, raw)

    def close(self):
        if self.channel:
            self.channel.close()
            self.channel = None
