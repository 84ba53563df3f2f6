/* SPDX-License-Identifier: Apache-2.0 */
/* Test helpers for the agent tests: generate fixture node trees with
 * tests/fixtures/make-node.py into a temporary directory, run the agent binary on them,
 * and compare JSON. */
#ifndef SPIN_TEST_FIXTURE_H
#define SPIN_TEST_FIXTURE_H

#include "testutil.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Make the named fixtures (space-separated; NULL = all) under a new temp dir, whose
 * path is copied to dir. Skips the test when python3 is missing. */
static inline void fixture_make(char *dir, size_t size, const char *names)
{
        const char *src = getenv("SPINLANE_SOURCE_DIR");
        const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
        char tmpl[] = "/tmp/sl-inv-test-XXXXXX", cmd[4096];

        if (!src)
                TEST_SKIP("SPINLANE_SOURCE_DIR is not set (run under ctest)");
        if (!mkdtemp(tmpl)) {
                perror("mkdtemp");
                exit(2);
        }
        snprintf(dir, size, "%s", tmpl);
        snprintf(cmd, sizeof(cmd), "%s '%s/tests/fixtures/make-node.py' '%s' %s", py, src, dir, names ? names : "");
        int r = system(cmd);
        if (r == 127 << 8)
                TEST_SKIP("python3 is not installed");
        if (r != 0) {
                fprintf(stderr, "fixture generation failed: %s (%d)\n", cmd, r);
                exit(2);
        }
}

static inline void fixture_remove(const char *dir)
{
        char cmd[4200];
        if (strncmp(dir, "/tmp/sl-inv-test-", 17) != 0)
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
}

/* Run "bin args redirect" through the shell (redirect: what to do with stderr, e.g.
 * "2>/dev/null" or "2>&1"), capture stdout (up to size-1 bytes, NUL-terminated) and
 * return the exit code, -1 when it did not exit. */
static inline int fixture_run(const char *bin, const char *args, const char *redirect, char *out, size_t size)
{
        char cmd[4096];
        snprintf(cmd, sizeof(cmd), "%s %s %s", bin, args, redirect);
        FILE *p = popen(cmd, "r");
        if (!p)
                return -1;
        size_t n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        int r = pclose(p);
        return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* Create or replace a file with text; the test stops (exit 2) when it cannot. */
static inline void fixture_write(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                perror(path);
                exit(2);
        }
}

/* Check that actual[key] equals the JSON text expected; print both when not. */
#define CHECK_JSON(actual, key, expected) check_json(__FILE__, __LINE__, (actual), (key), (expected))
static inline void check_json(const char *file, int line, json_t *actual, const char *key, const char *expected)
{
        json_error_t err;
        json_t *want = json_loads(expected, JSON_DECODE_ANY, &err);
        json_t *got = json_object_get(actual, key);

        test_checks++;
        if (!want) {
                test_failures++;
                fprintf(stderr, "%s:%d: bad expected JSON for %s: %s\n", file, line, key, err.text);
                return;
        }
        if (!json_equal(want, got)) {
                char *a = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
                char *b = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
                test_failures++;
                fprintf(stderr, "%s:%d: JSON \"%s\" differs\n  got:  %s\n  want: %s\n", file, line, key,
                        a ? a : "(missing)", b ? b : "?");
                free(a);
                free(b);
        }
        json_decref(want);
}

#endif
