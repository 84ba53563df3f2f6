#!/usr/bin/env python3
"""spinlane-agent must not link the gRPC core, protobuf-c, libstdc++, libcurl or
libmicrohttpd (issue #2: their start-up cost falls on preflight and inventory; issue #15:
the API client and the metrics server are the daemon's); only its `run` daemon,
spinlane-agent-run, may. Checks the agent's DT_NEEDED entries and its symbol table (gRPC is
linked statically, so ldd alone would not see it), and, in a build without sanitizers
(whose runtimes pull libstdc++ in themselves), everything ldd maps. The same checks on
spinlane-agent-run must find gRPC, libcurl and libmicrohttpd: proof that they can see them.

With --curl-witness BIN (a binary that links libcurl, e.g. test-http) the same checks
must find libcurl there: proof that they can see it.

usage: test-agent-deps.py AGENT AGENT_RUN [--sanitized] [--curl-witness BIN]"""
import re
import subprocess
import sys

SKIP = 77
BAD_LIB = re.compile(r"libstdc\+\+|libgrpc|libgpr|libprotobuf|libabsl|libupb|libcares|libcurl|libmicrohttpd")
BAD_SYM = re.compile(r"^(grpc_|gpr_|protobuf_c_|_ZNSt|_ZSt|_ZN9grpc_core|_ZN4absl|curl_|MHD_)")


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def mapped(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]


def symbols(path):
    """Every symbol the binary defines or references (nm -a: also the static ones)."""
    out = subprocess.run(["nm", "-a", path], capture_output=True, text=True, check=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.split()}


def bad(path, sanitized):
    libs = needed(path) + ([] if sanitized else mapped(path))
    syms = sorted(s for s in symbols(path) if BAD_SYM.search(s))
    return sorted({l for l in libs if BAD_LIB.search(l)}), syms


def main(argv):
    argv = list(argv)
    witness = None
    if "--curl-witness" in argv:
        i = argv.index("--curl-witness")
        witness = argv[i + 1] if i + 1 < len(argv) else None
        del argv[i:i + 2]
    args = [a for a in argv[1:] if not a.startswith("--")]
    sanitized = "--sanitized" in argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    agent, daemon = args
    for tool in ("readelf", "nm", "ldd"):
        if subprocess.run(["sh", "-c", "command -v " + tool], capture_output=True).returncode != 0:
            print("SKIP: %s is not installed" % tool)
            return SKIP
    failed = False
    libs, syms = bad(agent, sanitized)
    print("spinlane-agent NEEDED: %s" % needed(agent))
    if libs or syms:
        print("FAIL: %s links what only the daemon may: %s %s" % (agent, libs, syms[:5]))
        failed = True
    dlibs, dsyms = bad(daemon, sanitized)
    grpc = [s for s in dsyms if s.startswith("grpc_")]
    if not grpc or not dlibs:
        print("FAIL: the check finds no gRPC symbol or libstdc++/protobuf-c in %s either (%s %s): it cannot see them" %
              (daemon, dlibs, grpc[:3]))
        failed = True
    for lib, sym in (("libcurl", "curl_"), ("libmicrohttpd", "MHD_")):
        if not any(lib in x for x in dlibs) or not any(x.startswith(sym) for x in dsyms):
            print("FAIL: the check finds no %s in %s (%s): it cannot see it" % (lib, daemon, dlibs))
            failed = True
    if witness:
        wlibs, wsyms = bad(witness, sanitized)
        if not any("libcurl" in l for l in wlibs) or not any(x.startswith("curl_") for x in wsyms):
            print("FAIL: the check finds no libcurl in %s (%s): it cannot see it" % (witness, wlibs))
            failed = True
        else:
            print("ok: the check sees libcurl in %s" % witness)
    if not failed:
        print("ok: spinlane-agent is free of gRPC/protobuf-c/libstdc++/libcurl/libmicrohttpd%s; spinlane-agent-run has %s and %d such symbols (%s ...)" %
              ("" if sanitized else " (also per ldd)", dlibs, len(dsyms), grpc[0]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
