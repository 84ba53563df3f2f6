# SPDX-License-Identifier: Apache-2.0
"""Checks the valgrind suppression files of the memcheck tests against the rule that keeps
them from hiding spinlane's own leaks: every entry is a Memcheck:Leak entry for the
"possible" kind only (a call gRPC still holds by our tag shows as possibly lost, so that
kind must stay reported everywhere else), and its stack names a gRPC or abseil frame.

usage: check_valgrind_supp.py FILE...   exit 0 all entries fine, 1 otherwise."""
import re
import sys

LIB_FRAME = re.compile(r"^(fun|obj):.*(grpc|absl)", re.IGNORECASE)


def entries(text):
    """(name, [lines]) of every {...} block, comments dropped."""
    out, cur = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line == "{":
            cur = []
        elif line == "}":
            if cur is not None:
                out.append((cur[0] if cur else "(empty)", cur[1:]))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def problems(name, lines):
    p = []
    if not lines or lines[0] != "Memcheck:Leak":
        p.append("not a Memcheck:Leak entry")
    kinds = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("match-leak-kinds:")]
    if kinds != ["possible"]:
        p.append("match-leak-kinds must be exactly 'possible' (got %s)" % (kinds or "none: every kind"))
    frames = [ln for ln in lines if ln.startswith(("fun:", "obj:"))]
    if not any(LIB_FRAME.match(f) for f in frames):
        p.append("no gRPC or abseil frame in its stack")
    return ["%s: %s" % (name, x) for x in p]


def main(paths):
    bad = []
    n = 0
    for path in paths:
        with open(path) as f:
            es = entries(f.read())
        if not es:
            bad.append("%s: no entries" % path)
        for name, lines in es:
            n += 1
            bad += ["%s: %s" % (path, x) for x in problems(name, lines)]
    for b in bad:
        print("FAIL: " + b)
    print("%d suppressions, %d problems" % (n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
