/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal test assertions: each failure prints file, line and the expression; a test
 * binary exits 1 if any failed (or at once via TEST_FATAL), 77 (ctest: skipped) via
 * TEST_SKIP with a reason. */
#ifndef SPIN_TESTUTIL_H
#define SPIN_TESTUTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

/* The bound for waiting on an event a test expects (ms): generous, so that a loaded
 * 2-CPU machine, a sanitizer or valgrind never makes a working build fail. A test waits
 * for the event itself and never asserts how fast it came (timings go in bench/). */
#define TEST_WAIT_MS 30000

#define CHECK(expr)                                                                        \
        do {                                                                               \
                test_checks++;                                                             \
                if (!(expr)) {                                                             \
                        test_failures++;                                                   \
                        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr); \
                }                                                                          \
        } while (0)

#define CHECK_INT(a, b)                                                                    \
        do {                                                                               \
                long long _a = (long long)(a), _b = (long long)(b);                        \
                test_checks++;                                                             \
                if (_a != _b) {                                                            \
                        test_failures++;                                                   \
                        fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n",  \
                                __FILE__, __LINE__, #a, #b, _a, _b);                       \
                }                                                                          \
        } while (0)

#define CHECK_STR(a, b)                                                                    \
        do {                                                                               \
                const char *_a = (a), *_b = (b);                                           \
                test_checks++;                                                             \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                                   \
                        test_failures++;                                                   \
                        fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", \
                                __FILE__, __LINE__, #a, #b, _a ? _a : "(null)",            \
                                _b ? _b : "(null)");                                       \
                }                                                                          \
        } while (0)

/* Only for what the machine lacks, decided before the test acts (not root, a module or
 * tool missing): a failure after acting is a failure, never a SKIP. */
#define TEST_SKIP(...)                                                                     \
        do {                                                                               \
                printf("SKIP: ");                                                          \
                printf(__VA_ARGS__);                                                       \
                printf("\n");                                                              \
                exit(77);                                                                  \
        } while (0)

/* A failure the test cannot go on after: printed, exit 1. */
#define TEST_FATAL(...)                                                                    \
        do {                                                                               \
                fprintf(stderr, "%s:%d: FATAL: ", __FILE__, __LINE__);                     \
                fprintf(stderr, __VA_ARGS__);                                              \
                fprintf(stderr, "\n");                                                     \
                exit(1);                                                                   \
        } while (0)

/* Returns the process exit code and prints the tally. */
static inline int test_done(void)
{
        printf("%d checks, %d failed\n", test_checks, test_failures);
        return test_failures ? 1 : 0;
}

#endif
