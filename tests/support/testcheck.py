# SPDX-License-Identifier: Apache-2.0
"""check() for the Python tests, as testutil.h's CHECK is for the C ones: a check that fails
is recorded in `failures` and printed as "FAIL: <what>" at once; the test carries on and its
main returns non-zero at the end when `failures` is not empty. `checks` counts the checks
made. One state per process: every module that imports this shares it.

A test puts tests/support on sys.path and imports it:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
    import testcheck
    from testcheck import check, failures
and reads the count as testcheck.checks (an int, so never imported by name)."""

failures = []
checks = 0


def check(cond, what):
    """Count one check; when cond is false, record what and print "FAIL: what". Returns cond."""
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)
    return cond
