# SPDX-License-Identifier: Apache-2.0
"""A kubelet stand-in for the device plugin tests and benchmarks: the Registration service
on <root>/var/lib/kubelet/device-plugins/kubelet.sock (real gRPC over a unix socket) and
a client for a plugin's DevicePlugin service. Messages come from proto/api.proto compiled
with grpc_tools.protoc into a temporary directory at run time."""
import importlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc

PLUGIN_DIR = "var/lib/kubelet/device-plugins"
# Every timeout below is multiplied by SCALE: a test sets it when the agent runs slowed
# down (e.g. under valgrind).
SCALE = 1.0


def load_api(proto_dir):
    """Compile api.proto (messages only) and import it as a module."""
    out = tempfile.mkdtemp(prefix="sl-dp-proto-")
    r = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", proto_dir, "--python_out", out,
                        os.path.join(proto_dir, "api.proto")], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("protoc failed: " + r.stderr)
    sys.path.insert(0, out)
    mod = importlib.import_module("api_pb2")
    return mod, out


class Kubelet:
    """Registration server. Every Register is put on .registrations; reject (a message)
    makes Register fail with INVALID_ARGUMENT and that message."""

    def __init__(self, api, root, reject=None):
        self.api = api
        self.dir = os.path.join(root, PLUGIN_DIR)
        self.sock = os.path.join(self.dir, "kubelet.sock")
        self.registrations = queue.Queue()
        self.reject = reject
        self.server = None

    def _register(self, req, ctx):
        self.registrations.put((time.monotonic(), req))
        if self.reject:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, self.reject)
        return self.api.Empty()

    def start(self, wipe=True):
        """Like a starting kubelet: remove every file in the dir, then serve kubelet.sock."""
        os.makedirs(self.dir, exist_ok=True)
        if wipe:
            for name in os.listdir(self.dir):
                try:
                    os.unlink(os.path.join(self.dir, name))
                except FileNotFoundError:
                    pass
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(
                self._register, request_deserializer=self.api.RegisterRequest.FromString,
                response_serializer=self.api.Empty.SerializeToString)})
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

    def wait_registrations(self, n, timeout):
        """The next n registrations, keyed by resource name; raises on timeout."""
        got = {}
        deadline = time.monotonic() + timeout * SCALE
        while len(got) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("only %d of %d registrations: %s" % (len(got), n, sorted(got)))
            try:
                t, req = self.registrations.get(timeout=left)
            except queue.Empty:
                continue
            got[req.resource_name] = (t, req)
        return got


class Plugin:
    """A client of one plugin socket, as the kubelet uses it."""

    def __init__(self, api, root, endpoint):
        self.api = api
        self.channel = grpc.insecure_channel("unix:" + os.path.join(root, PLUGIN_DIR, endpoint))
        c = self.channel
        svc = "/v1beta1.DevicePlugin/"
        self.options = c.unary_unary(svc + "GetDevicePluginOptions", request_serializer=api.Empty.SerializeToString,
                                     response_deserializer=api.DevicePluginOptions.FromString)
        self.list_and_watch = c.unary_stream(svc + "ListAndWatch", request_serializer=api.Empty.SerializeToString,
                                             response_deserializer=api.ListAndWatchResponse.FromString)
        self.allocate = c.unary_unary(svc + "Allocate", request_serializer=api.AllocateRequest.SerializeToString,
                                      response_deserializer=api.AllocateResponse.FromString)
        self.preferred = c.unary_unary(svc + "GetPreferredAllocation",
                                       request_serializer=api.PreferredAllocationRequest.SerializeToString,
                                       response_deserializer=api.PreferredAllocationResponse.FromString)
        self.allocate_raw = c.unary_unary(svc + "Allocate", request_serializer=lambda b: b,
                                          response_deserializer=lambda b: b)
        self.unknown = c.unary_unary(svc + "NoSuchMethod", request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)

    def alloc(self, *containers, timeout=30):
        req = self.api.AllocateRequest(container_requests=[
            self.api.ContainerAllocateRequest(devices_ids=list(ids)) for ids in containers])
        return self.allocate(req, timeout=timeout * SCALE)

    def prefer(self, available, must, size, timeout=30):
        req = self.api.PreferredAllocationRequest(container_requests=[
            self.api.ContainerPreferredAllocationRequest(available_deviceIDs=available,
                                                         must_include_deviceIDs=must, allocation_size=size)])
        return list(self.preferred(req, timeout=timeout * SCALE).container_responses[0].deviceIDs)

    def close(self):
        self.channel.close()


def wait_for(pred, timeout, step=0.01):
    deadline = time.monotonic() + timeout * SCALE
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


class Watcher:
    """A ListAndWatch stream read on a thread; .lists holds (time, {id: (health, numa)})."""

    def __init__(self, plugin):
        self.call = plugin.list_and_watch(plugin.api.Empty())
        self.lists = []
        self.ended = None
        self.cv = threading.Condition()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        try:
            for resp in self.call:
                d = {}
                for dev in resp.devices:
                    numa = [n.ID for n in dev.topology.nodes] if dev.HasField("topology") else None
                    d[dev.ID] = (dev.health, numa)
                with self.cv:
                    self.lists.append((time.monotonic(), d))
                    self.cv.notify_all()
            code = grpc.StatusCode.OK
        except grpc.RpcError as e:
            code = e.code()
        with self.cv:
            self.ended = code
            self.cv.notify_all()

    def wait(self, pred, timeout, since=0):
        """First list (time, devices) from index since on that satisfies pred, waiting up
        to timeout."""
        deadline = time.monotonic() + timeout * SCALE
        with self.cv:
            while True:
                for t, d in self.lists[since:]:
                    if pred(d):
                        return t, d
                left = deadline - time.monotonic()
                if left <= 0 or self.ended is not None:
                    return None
                self.cv.wait(left)

    def cancel(self):
        self.call.cancel()
        self.t.join(5)


# The MACs of the fake node's two vfio-bound ENAs, as spinlane recorded them in the bind
# state before unbinding (the kernel no longer shows them); the MANA VF keeps its netdev.
TREE_MACS = {"0000:00:06.0": "0a:00:00:00:00:06", "0000:00:07.0": "0a:00:00:00:00:07", "7870:00:00.0": "00:0d:3a:11:22:33"}


def make_tree(root):
    """A small fake node: 8 CPUs as 4 SMT cores on 2 NUMA nodes, 3 isolated cores; an ENA
    on vfio (IOMMU), an ENA on vfio no-IOMMU (both with their MACs in the bind state), a
    MANA VF, and the primary ENA. Their addresses come from a metadata stand-in
    (tests/agent/cloud/imds_standin.py) given TREE_MACS."""
    def w(path, data):
        p = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(data)

    def ln(path, target):
        p = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)

    cpu = "/sys/devices/system/cpu"
    w(cpu + "/online", "0-7\n")
    w(cpu + "/possible", "0-7\n")
    w(cpu + "/present", "0-7\n")
    w(cpu + "/isolated", "1-3,5-7\n")
    w(cpu + "/nohz_full", "1-3,5-7\n")
    for c in range(8):
        w("%s/cpu%d/topology/thread_siblings_list" % (cpu, c), "%d,%d\n" % (c % 4, c % 4 + 4))
        w("%s/cpu%d/topology/core_id" % (cpu, c), "%d\n" % (c % 4))
        w("%s/cpu%d/topology/physical_package_id" % (cpu, c), "0\n")
        w("%s/cpu%d/online" % (cpu, c), "1\n")
    w("/sys/devices/system/node/node0/cpulist", "0-1,4-5\n")
    w("/sys/devices/system/node/node1/cpulist", "2-3,6-7\n")
    w("/sys/devices/system/node/online", "0-1\n")
    pci = "/sys/bus/pci/devices"

    def nic(bdf, pid, driver, numa=None, group=None, noiommu=False, netdev=None, mac=None):
        d = "%s/%s" % (pci, bdf)
        w(d + "/uevent", "DRIVER=%s\nPCI_CLASS=20000\nPCI_ID=%s\nPCI_SLOT_NAME=%s\n" % (driver, pid, bdf))
        w(d + "/vendor", "0x" + pid.split(":")[0].lower() + "\n")
        w(d + "/device", "0x" + pid.split(":")[1].lower() + "\n")
        w(d + "/class", "0x020000\n")
        ln(d + "/driver", "../../../bus/pci/drivers/" + driver)
        os.makedirs(os.path.join(root, "sys/bus/pci/drivers", driver), exist_ok=True)
        if numa is not None:
            w(d + "/numa_node", "%d\n" % numa)
        if group is not None:
            ln(d + "/iommu_group", "../../../kernel/iommu_groups/%d" % group)
            w("/sys/kernel/iommu_groups/%d/name" % group, "vfio-noiommu\n" if noiommu else "\n")
        if netdev:
            os.makedirs(os.path.join(root, (d + "/net/" + netdev).lstrip("/")), exist_ok=True)
            w("/sys/class/net/%s/address" % netdev, mac + "\n")
            ln("/sys/class/net/%s/device" % netdev, "../../../bus/pci/devices/" + bdf)

    nic("0000:00:05.0", "1D0F:EC20", "ena", numa=0, netdev="eth0", mac="0a:00:00:00:00:05")
    nic("0000:00:06.0", "1D0F:EC20", "vfio-pci", numa=0, group=7)
    nic("0000:00:07.0", "1D0F:EC20", "vfio-pci", numa=1, group=3, noiommu=True)
    nic("7870:00:00.0", "1414:00BA", "mana", netdev="eth1", mac="00:0d:3a:11:22:33")
    os.makedirs(os.path.join(root, "sys/bus/pci/devices/7870:00:00.0/infiniband_verbs/uverbs0"))
    os.makedirs(os.path.join(root, "sys/module/mana_ib"))
    w("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", "Y\n")
    w("/proc/net/route", "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
      "eth0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
      "eth0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
    w("/proc/mounts", "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n")
    w("/proc/meminfo", "MemTotal: 16000000 kB\nHugepagesize: 2048 kB\n")
    w("/proc/cmdline", "isolcpus=1-3,5-7 nohz_full=1-3,5-7\n")
    w("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "512\n")
    w("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "512\n")
    for n in ("/dev/vfio/vfio", "/dev/vfio/7", "/dev/vfio/noiommu-3", "/dev/infiniband/uverbs0"):
        w(n, "")
    w("/var/lib/spinlane/bind-state.json", json.dumps({"version": 1, "count": 2, "nics": [
        {"pci": pci, "original_driver": "ena", "driver": "vfio-pci", "netdev": "eth%d" % (i + 2), "mac": TREE_MACS[pci]}
        for i, pci in enumerate(("0000:00:06.0", "0000:00:07.0"))]}))
    os.makedirs(os.path.join(root, PLUGIN_DIR), exist_ok=True)


def rm_tree(path):
    shutil.rmtree(path, ignore_errors=True)
