# SPDX-License-Identifier: Apache-2.0
"""Integration test: the NIC addresses of `spinlane-agent run` against a stand-in of both
clouds' metadata services (fake_imds.py) and the kubelet stand-in (real gRPC over unix
sockets), on a fake node whose two ENAs are on vfio-pci with their MACs recorded in the
bind state and whose MANA VF keeps its netdev.

- every NIC's address comes from the metadata (AWS IMDSv2 by the recorded MAC, Azure IMDS
  by the netdev's), the NICs turn Healthy and Allocate carries SPINLANE_NIC_<i>_IPV4 and
  _GATEWAY; one IMDSv2 token serves every lookup; a revoked token is renewed (401) without
  a failure;
- a static entry overrides the metadata, live (config file change);
- every bad reply of issue 12 (an HTML page, 401 with a fresh token, 404 for the MAC, no
  IPv4 on the interface, truncated JSON, a 10 MiB body, a reply that never ends, one that
  never starts, an address outside its subnet) gives exactly one log line naming the NIC
  and the reason, a nic-address FAIL naming them, the NIC Unhealthy; the device plugin
  answers while a lookup hangs and all along; the NIC recovers when the service does
  (on SIGHUP, and once by the agent's own retry 30 s later);
- the agent restarted: the address is known again (the MAC from the bind state);
- the metadata service unreachable, or SPINLANE_IMDS_URL unusable: one line per NIC, a
  FAIL, the NICs Unhealthy, the plugin serving, exit 0 on SIGTERM.

usage: test_agent_address.py --agent PATH --proto-dir DIR [--wrapper "valgrind ..."]
Every wait is for an event, with a generous bound (multiplied by --scale, 20 with a
wrapper). Exit 0 passed, 1 a check failed, 77 skipped (grpcio/grpc_tools missing)."""
import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile

try:
    import grpc  # noqa: F401
    import grpc_tools  # noqa: F401
except ImportError as e:
    print("SKIP: python3 grpcio/grpc_tools missing (%s); run with /usr/bin/python3" % e)
    sys.exit(77)

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TESTS, "agent", "cloud"))
sys.path.insert(0, os.path.join(TESTS, "deviceplugin"))
import kubelet_standin  # noqa: E402
from imds_standin import FakeImds  # noqa: E402
from kubelet_standin import Kubelet, Plugin, Watcher, load_api, make_tree, rm_tree, wait_for  # noqa: E402

NIC_SOCK = "spinlane-dpdk-nic.sock"
CORE_SOCK = "spinlane-isolated-core.sock"
ENA1, ENA2, MANA = "0000:00:06.0", "0000:00:07.0", "7870:00:00.0"
MAC1, MAC2, MAC3 = "0a:00:00:00:00:06", "0a:00:00:00:00:07", "00:0d:3a:11:22:33"
MACS = {ENA1: MAC1, ENA2: MAC2, MANA: MAC3}
AWS_PATH = "/latest/meta-data/network/interfaces/macs/%s/local-ipv4s"
AZURE_PATH = "/metadata/instance/network"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import testcheck  # noqa: E402
from testcheck import check, failures  # noqa: E402
WRAPPER = []
S = 1.0


class Agent:
    def __init__(self, binary, root, log, extra=(), env=None):
        self.log = open(log, "w")
        self.path = log
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(WRAPPER + [binary, "run", "--root", root] + list(extra), stdout=self.log,
                                  stderr=subprocess.STDOUT, env=e)

    def text(self):
        with open(self.path) as f:
            return f.read()

    def lines(self, needle):
        return [ln for ln in self.text().splitlines() if needle in ln]

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(15 * S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            rc = "timeout"
        self.log.close()
        return rc


def good_metadata(imds):
    imds.cmd("clear")
    imds.aws(MAC1, ["10.0.6.10"], "10.0.6.0/24")
    imds.aws(MAC2, ["10.0.7.10", "10.0.7.99"], "10.0.7.0/24")
    imds.azure(MAC3, "10.1.0.4", "10.1.0.0", "24")


def health(watch, since=0):
    got = watch.wait(lambda d: True, 10, since=since)
    return {k: h for k, (h, _) in got[1].items()} if got else {}


def wait_health(watch, want, timeout, since=0):
    """The first list from since on where each NIC in want has that health."""
    return watch.wait(lambda d: all(d.get(k, ("",))[0] == h for k, h in want.items()), timeout, since=since)


def serving(nic, core, api, what):
    """The device plugin answers: options, a core Allocate, and a refusal of an Unhealthy NIC
    (what names the phase)."""
    ok = True
    try:
        ok = nic.options(api.Empty(), timeout=5 * S).get_preferred_allocation_available
        r = core.alloc(["p0c1"])
        ok = ok and dict(r.container_responses[0].envs).get("SPINLANE_ISOLATED_CPUS") == "1,5"
    except grpc.RpcError as e:
        ok = False
        print("  %s: %s" % (what, e))
    return check(ok, "%s: the device plugin keeps serving" % what)


def test_metadata(args, api, root, imds, kubelet):
    cfg = os.path.join(root, "config.json")
    with open(cfg, "w") as f:
        json.dump({}, f)
    env = {"SPINLANE_IMDS_URL": imds.url, "SPINLANE_RESCAN_MS": "600000"}
    agent = Agent(args.agent, root, os.path.join(root, "agent.log"), ["--config", cfg], env)
    try:
        kubelet.wait_registrations(2, 10)
        nic, core = Plugin(api, root, NIC_SOCK), Plugin(api, root, CORE_SOCK)
        nw = Watcher(nic)
        got = wait_health(nw, {ENA1: "Healthy", ENA2: "Healthy", MANA: "Healthy"}, 10)
        check(got is not None, "every NIC Healthy once its address is known: %s" % health(nw))
        for pci, line in ((ENA1, "address 10.0.6.10/24, gateway 10.0.6.1, from AWS IMDS"),
                          (ENA2, "address 10.0.7.10/24, gateway 10.0.7.1, from AWS IMDS"),
                          (MANA, "address 10.1.0.4/24, gateway 10.1.0.1, from Azure IMDS")):
            check(len(agent.lines("NIC %s (%s): %s" % (pci, MACS[pci], line))) == 1,
                  "one log line: NIC %s %s" % (pci, line))
        check(wait_for(lambda: agent.lines("PASS nic-address: every advertised NIC has an address: " + ENA1 +
                                           " 10.0.6.10/24 gateway 10.0.6.1 (aws-imds), " + ENA2 +
                                           " 10.0.7.10/24 gateway 10.0.7.1 (aws-imds), " + MANA +
                                           " 10.1.0.4/24 gateway 10.1.0.1 (azure-imds)"), 5),
              "PASS nic-address with each address and its source")
        check(imds.stats()["puts"] == "1", "one IMDSv2 token for both ENAs: %s" % imds.stats())
        e = dict(nic.alloc([MANA, ENA1]).container_responses[0].envs)
        check(e.get("SPINLANE_NIC_0_PCI") == ENA1 and e.get("SPINLANE_NIC_0_IPV4") == "10.0.6.10/24" and
              e.get("SPINLANE_NIC_0_GATEWAY") == "10.0.6.1" and e.get("SPINLANE_NIC_0_MAC") == MAC1,
              "Allocate: NIC 0 carries its address and its recorded MAC: %s" % e)
        check(e.get("SPINLANE_NIC_1_IPV4") == "10.1.0.4/24" and e.get("SPINLANE_NIC_1_GATEWAY") == "10.1.0.1",
              "Allocate: NIC 1 carries its address: %s" % e)

        # a static entry overrides the metadata, as soon as the config file changes
        with open(cfg + ".tmp", "w") as f:
            json.dump({"addresses": {"static": [{"mac": MAC2, "ipv4": "192.168.7.7/24", "gateway": "192.168.7.1"}]}}, f)
        os.rename(cfg + ".tmp", cfg)

        def alloc_ipv4(pci):
            try:
                return dict(nic.alloc([pci]).container_responses[0].envs).get("SPINLANE_NIC_0_IPV4")
            except grpc.RpcError:
                return None
        check(wait_for(lambda: alloc_ipv4(ENA2) == "192.168.7.7/24", 5),
              "a static entry by MAC overrides the metadata (%s)" % alloc_ipv4(ENA2))
        check(wait_for(lambda: agent.lines(ENA2 + " 192.168.7.7/24 gateway 192.168.7.1 (static)"), 5),
              "the verdict names the static address")
        with open(cfg + ".tmp", "w") as f:
            json.dump({}, f)
        os.rename(cfg + ".tmp", cfg)
        check(wait_for(lambda: alloc_ipv4(ENA2) == "10.0.7.10/24", 5), "the entry gone: the metadata's address again")

        # a revoked token: a 401, a fresh token, the same addresses, no failure
        st = imds.stats()
        imds.cmd("revoke")
        agent.p.send_signal(signal.SIGHUP)
        check(wait_for(lambda: int(imds.stats()["puts"]) == int(st["puts"]) + 1 and
                       int(imds.stats()["gets"]) >= int(st["gets"]) + 6, 10 * S),
              "after a revocation: one fresh token, the GETs again (%s, before %s)" % (imds.stats(), st))
        check(int(imds.stats()["unauth"]) > int(st["unauth"]), "the stale token was refused (401)")
        check(not agent.lines("no address from"), "a renewed token is no failure")

        # every bad reply: one log line, a FAIL naming NIC and reason, Unhealthy, still serving
        cases = [
            ("an HTML error page", ["next %s html 1000" % (AWS_PATH % MAC1)], ENA1,
             'local-ipv4s: line 1 is not an IPv4 address: "<html>'),
            ("401 without a (valid) token", ["next %s status:401 1000" % (AWS_PATH % MAC1)], ENA1,
             "HTTP 401 with a fresh token"),
            ("404 for the MAC", ["aws-del " + MAC1], ENA1, "HTTP 404 (no such interface or item in the instance metadata)"),
            ("no IPv4 on that interface", ["azure %s - 10.1.0.0 24" % MAC3], MANA, "no private IPv4 address"),
            ("truncated JSON", ["next %s truncated 1000" % AZURE_PATH], MANA, "not JSON"),
            ("a 10 MiB body", ["next %s big 1000" % (AWS_PATH % MAC1)], ENA1,
             "response body larger than the limit of 65536 bytes"),
            ("an address outside its subnet", ["aws %s 10.9.0.5 10.0.6.0/24" % MAC1], ENA1,
             "address 10.9.0.5 is not a usable host address of its subnet 10.0.6.0/24"),
            ("a reply that never ends", ["next %s trickle 1000" % (AWS_PATH % MAC1)], ENA1, "(after 4 attempts)"),
            ("a reply that never starts", ["next %s hang 1000" % AZURE_PATH], MANA, "(after 4 attempts)"),
        ]
        for name, cmds, pci, needle in cases:
            mac = MACS[pci]
            tag = "NIC %s (%s): no address from" % (pci, mac)
            before = len(agent.lines("no address from"))
            hangs = int(imds.stats()["hangs"])
            for c in cmds:
                imds.cmd(c)
            n0 = len(nw.lists)
            agent.p.send_signal(signal.SIGHUP)
            if "never starts" in name:
                # the plugin answers while the lookup's request is held: the loop is not in it
                probed = False
                for _ in range(4):  # one try per attempt of the lookup
                    if not wait_for(lambda: int(imds.stats()["hanging"]) >= 1 and int(imds.stats()["hangs"]) > hangs,
                                    10 * S):
                        break
                    held = int(imds.stats()["hangs"])
                    ok = serving(nic, core, api, "%s, while the request is held" % name)
                    st = imds.stats()
                    hangs = int(st["hangs"])
                    if ok and st["hanging"] == "1" and hangs == held:
                        probed = True
                        break
                check(probed, "%s: the device plugin answered while a metadata request was held" % name)
            ok = wait_for(lambda: len(agent.lines("no address from")) > before, 40 * S)
            new = agent.lines("no address from")[before:]
            check(ok and len(new) == 1 and new[0].split(" ", 2)[2].startswith("NIC") and tag in new[0] and needle in new[0],
                  "%s: one log line naming %s and the reason (%r): %s" % (name, pci, needle, new))
            got = wait_health(nw, {pci: "Unhealthy"}, 10, since=n0)
            check(got is not None, "%s: %s Unhealthy" % (name, pci))
            if got:
                check(all(h == "Healthy" for k, (h, _) in got[1].items() if k != pci),
                      "%s: the other NICs stay Healthy: %s" % (name, got[1]))
            check(wait_for(lambda: [ln for ln in agent.lines("FAIL nic-address: 1 of 3 DPDK NICs without an address")
                                    if pci + ": " in ln and needle in ln], 5),
                  "%s: FAIL nic-address names %s and the reason" % (name, pci))
            serving(nic, core, api, name)
            try:
                nic.alloc([pci])
                refused = ""
            except grpc.RpcError as e:
                refused = e.details() or ""
            check("unhealthy" in refused, "%s: Allocate of %s refused (%s)" % (name, pci, refused))
            # the service well again: the NIC recovers (after 404: by the agent's own retry,
            # 30 s later, no SIGHUP; the others at once on SIGHUP)
            good_metadata(imds)
            n0 = len(nw.lists)
            by_retry = name == "404 for the MAC"
            if by_retry:
                check("retrying in 30 s" in new[0] if new else False, "%s: the retry is announced" % name)
            else:
                agent.p.send_signal(signal.SIGHUP)
            check(wait_health(nw, {ENA1: "Healthy", ENA2: "Healthy", MANA: "Healthy"}, 40 + 30 * by_retry,
                              since=n0) is not None,
                  "%s: %s Healthy again once the metadata answers%s" % (name, pci, " (retried)" if by_retry else ""))
            check(len(agent.lines("no address from")) == before + 1, "%s: still one failure line: %s" % (
                name, agent.lines("no address from")[before:]))
        nw.cancel()
        nic.close()
        core.close()
        check(agent.stop() == 0, "agent exits 0 on SIGTERM")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        if failures:
            print("---- agent log (tail) ----\n" + "\n".join(agent.text().splitlines()[-80:]))


def test_restart(args, api, root, imds, kubelet):
    """A new agent on the same node: the MACs come from the bind state, the addresses again."""
    agent = Agent(args.agent, root, os.path.join(root, "agent-restart.log"), env={"SPINLANE_IMDS_URL": imds.url})
    try:
        kubelet.wait_registrations(2, 10)
        nic = Plugin(api, root, NIC_SOCK)
        nw = Watcher(nic)
        check(wait_health(nw, {ENA1: "Healthy", ENA2: "Healthy", MANA: "Healthy"}, 10) is not None,
              "restarted: every NIC Healthy")
        check(agent.lines("NIC %s (%s): address 10.0.6.10/24, gateway 10.0.6.1, from AWS IMDS" % (ENA1, MAC1)),
              "restarted: the address of the vfio-bound ENA is known again (its MAC from the bind state)")
        e = dict(nic.alloc([ENA2]).container_responses[0].envs)
        check(e.get("SPINLANE_NIC_0_IPV4") == "10.0.7.10/24" and e.get("SPINLANE_NIC_0_GATEWAY") == "10.0.7.1",
              "restarted: Allocate carries the address: %s" % e)
        nw.cancel()
        nic.close()
        check(agent.stop() == 0, "restarted agent exits 0")
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        if failures:
            print("---- restarted agent log (tail) ----\n" + "\n".join(agent.text().splitlines()[-40:]))


def test_unreachable(args, api, root, kubelet):
    """No metadata service at SPINLANE_IMDS_URL (nothing listens), then one that is not
    http://: one line per NIC, a FAIL naming each, Unhealthy, serving."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = "http://127.0.0.1:%d" % s.getsockname()[1]
    s.close()  # nothing listens there now
    for url, needle in ((dead, "AWS IMDS PUT /latest/api/token: "), ("ftp://imds.example", "is not an http:// URL")):
        agent = Agent(args.agent, root, os.path.join(root, "agent-dead.log"), env={"SPINLANE_IMDS_URL": url})
        try:
            kubelet.wait_registrations(2, 10)
            nic, core = Plugin(api, root, NIC_SOCK), Plugin(api, root, CORE_SOCK)
            nw = Watcher(nic)
            check(wait_health(nw, {ENA1: "Unhealthy", ENA2: "Unhealthy", MANA: "Unhealthy"}, 10) is not None,
                  "%s: every NIC listed, Unhealthy: %s" % (url, health(nw)))
            if url == dead:
                ok = wait_for(lambda: len(agent.lines("no address from")) >= 3, 40 * S)
                lines = agent.lines("no address from")
                check(ok and len(lines) == 3 and all(len([ln for ln in lines if pci in ln]) == 1 for pci in MACS),
                      "unreachable: one line per NIC: %s" % lines)
                check(all("(after 4 attempts)" in ln for ln in lines), "unreachable: retried, then given up: %s" % lines)
                check([ln for ln in lines if ENA1 in ln and needle in ln] and
                      [ln for ln in lines if MANA in ln and "Azure IMDS GET /metadata/instance/network" in ln],
                      "unreachable: each line names the request: %s" % lines)
                check(wait_for(lambda: [ln for ln in agent.lines("FAIL nic-address: 3 of 3 DPDK NICs without an address")
                                        if needle in ln], 5), "unreachable: FAIL nic-address with the error")
            else:
                check(wait_for(lambda: agent.lines("NIC addresses: SPINLANE_IMDS_URL=\"ftp://imds.example\" is not an "
                                                   "http:// URL; no metadata lookups"), 5), "bad URL: said once")
                check(wait_for(lambda: [ln for ln in agent.lines("FAIL nic-address: 3 of 3") if needle in ln], 5),
                      "bad URL: FAIL nic-address says why")
            serving(nic, core, api, url)
            nw.cancel()
            nic.close()
            core.close()
            check(agent.stop() == 0, "%s: agent exits 0" % url)
        finally:
            if agent.p.poll() is None:
                agent.p.kill()
                agent.p.wait()
            if failures:
                print("---- agent log (%s) ----\n%s" % (url, "\n".join(agent.text().splitlines()[-40:])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--wrapper", default="", help="command prefix for the agent, e.g. valgrind ...")
    ap.add_argument("--scale", type=float, default=None)
    args = ap.parse_args()
    global WRAPPER, S
    WRAPPER = shlex.split(args.wrapper)
    S = args.scale if args.scale else (20.0 if WRAPPER else 1.0)
    kubelet_standin.SCALE = S
    api, gen = load_api(args.proto_dir)
    root = tempfile.mkdtemp(prefix="sl-addr-root-")
    imds = FakeImds()
    kubelet = Kubelet(api, root)
    try:
        make_tree(root)
        kubelet.start(wipe=True)
        good_metadata(imds)
        test_metadata(args, api, root, imds, kubelet)
        test_restart(args, api, root, imds, kubelet)
        test_unreachable(args, api, root, kubelet)
    finally:
        kubelet.stop()
        imds.close()
        if os.environ.get("SPINLANE_KEEP_ROOT"):
            print("kept " + root)
        else:
            rm_tree(root)
        rm_tree(gen)
    print("%d checks, %d failed" % (testcheck.checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
