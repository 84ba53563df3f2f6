# SPDX-License-Identifier: Apache-2.0
"""What the agent's whole-node comparisons (test_select.py, test_consumers.py) share: one
run of a command with a generous bound, and the JSON objects of its output's lines."""
import json
import os
import shutil
import signal
import subprocess

T = 60.0  # generous bound (s) for one expected event


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=T)


def lines_json(text):
    """The JSON objects of the lines that hold one (log lines, --json output)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def copy_root(root, tmp, name):
    """A fresh copy of the fixture tree root at tmp/name (a daemon writes into its root)."""
    copy = os.path.join(tmp, name)
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, symlinks=True)
    return copy


def stop_daemon(p, log):
    """SIGTERM to the daemon p, its exit status (killed after T s), its log file closed."""
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(T)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    log.close()
    return rc
