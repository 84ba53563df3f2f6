# SPDX-License-Identifier: Apache-2.0
"""Run tests/agent/cloud/fake_imds.py (both clouds' metadata services on loopback) from a Python
test: start it, send it commands (each acknowledged before the call returns), stop it.
Point the agent at it with SPINLANE_IMDS_URL=<FakeImds.url>."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class FakeImds:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_imds.py")], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        line = self.p.stdout.readline()
        if not line.startswith("READY port="):
            self.p.kill()
            raise RuntimeError("fake_imds.py did not start: %r" % line)
        self.port = int(line.split("=", 1)[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def cmd(self, line):
        """Send one command; returns its answer ("ok", or the stats line)."""
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def stats(self):
        return dict(kv.split("=") for kv in self.cmd("stats").split()[1:])

    def aws(self, mac, ipv4s, subnet):
        return self.cmd("aws %s %s %s" % (mac, ",".join(ipv4s) if ipv4s else "-", subnet))

    def azure(self, mac, ipv4, address, prefix):
        return self.cmd("azure %s %s %s %s" % (mac, ipv4 or "-", address, prefix))

    def close(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
