/* SPDX-License-Identifier: Apache-2.0 */
/* Aeron ping or pong with the media driver embedded in the client's thread
 * (AERON_THREADING_MODE=INVOKER): one process, one pinned busy thread that runs the
 * driver's duty cycle (aeron_driver_main_do_work) and the client's conductor
 * (use_conductor_agent_invoker) and polls its subscription. The transport (kernel UDP,
 * spinlane's bindings) is chosen by the environment, as for aeronmd; bench/aeron-invoker.py
 * runs the arms. Prints one RESULT line of round-trip percentiles (ping). */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aeronc.h"
#include "aeronmd.h"

#define STREAM_PING 1001
#define STREAM_PONG 1002
#define MAX_LEN 1024
#define FLAG_STOP 1u

static struct opts {
        bool ping;
        const char *dir;      /* this side's Aeron directory (IPC pong: the ping's) */
        bool embedded;        /* run a driver in this thread (not for an IPC pong) */
        int cpu;              /* -1: not pinned */
        const char *pub, *sub; /* channels */
        size_t len;
        long warmup, messages;
        long connect_s;
        const char *series;   /* ping: every measured round trip in order, to this file: its
                                 start (CLOCK_MONOTONIC, ns) and its length (ns) */
} O = { .cpu = -1, .len = 32, .warmup = 10000, .messages = 100000, .connect_s = 120, .embedded = true };

static aeron_driver_t *driver;
static aeron_t *client;

struct msg {
        uint64_t seq;
        uint32_t flags;
        uint32_t pad;
};

static struct {
        bool got;
        uint64_t seq;
        uint32_t flags;
        uint8_t buf[MAX_LEN];
        size_t len;
} last;

static inline int64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One turn of everything this thread owns. */
static inline void turn(void)
{
        if (driver)
                (void)aeron_driver_main_do_work(driver);
        (void)aeron_main_do_work(client);
}

static void on_fragment(void *clientd, const uint8_t *buffer, size_t length, aeron_header_t *header)
{
        struct msg m;
        (void)clientd;
        (void)header;
        if (length < sizeof(m) || length > MAX_LEN)
                return;
        memcpy(&m, buffer, sizeof(m));
        last.got = true;
        last.seq = m.seq;
        last.flags = m.flags;
        memcpy(last.buf, buffer, length);
        last.len = length;
}

static int die(const char *what)
{
        fprintf(stderr, "aeron-invoker %s: %s: %s\n", O.ping ? "ping" : "pong", what, aeron_errmsg());
        return 1;
}

static void offer(aeron_publication_t *pub, const uint8_t *buf, size_t len)
{
        for (;;) {
                int64_t r = aeron_publication_offer(pub, buf, len, NULL, NULL);
                if (r > 0)
                        return;
                if (r == AERON_PUBLICATION_CLOSED || r == AERON_PUBLICATION_MAX_POSITION_EXCEEDED ||
                    r == AERON_PUBLICATION_ERROR) {
                        fprintf(stderr, "aeron-invoker: offer failed (%" PRId64 ")\n", r);
                        exit(1);
                }
                turn(); /* back pressure or not connected: let the driver work */
        }
}

/* Waits up to connect_s for the subscription's image and the publication's peer. */
static int wait_connected(aeron_publication_t *pub, aeron_subscription_t *sub)
{
        int64_t end = now_ns() + O.connect_s * 1000000000LL;
        while (!(aeron_publication_is_connected(pub) && aeron_subscription_is_connected(sub))) {
                if (now_ns() > end)
                        return -ETIMEDOUT;
                turn();
        }
        return 0;
}

static int cmp64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, long n, double p)
{
        long i = (long)(p / 100.0 * (double)n);
        if (i >= n)
                i = n - 1;
        return (double)v[i] / 1000.0;
}

static int run_ping(aeron_publication_t *pub, aeron_subscription_t *sub)
{
        uint8_t buf[MAX_LEN];
        long total = O.warmup + O.messages;
        int64_t *rtt = calloc((size_t)O.messages, sizeof(*rtt));
        if (!rtt)
                return die("out of memory");
        memset(rtt, 0xff, (size_t)O.messages * sizeof(*rtt)); /* faulted in now, not between two stamps */
        int64_t *sent = NULL; /* --series: each measured round trip's start (CLOCK_MONOTONIC) */
        if (O.series) {
                sent = calloc((size_t)O.messages, sizeof(*sent));
                if (!sent) {
                        free(rtt);
                        return die("out of memory");
                }
                memset(sent, 0xff, (size_t)O.messages * sizeof(*sent));
        }
        memset(buf, 0xa5, sizeof(buf));
        int64_t started = now_ns();
        for (long i = 0; i <= total; i++) {
                struct msg m = { .seq = (uint64_t)i, .flags = i == total ? FLAG_STOP : 0 };
                memcpy(buf, &m, sizeof(m));
                last.got = false;
                int64_t t0 = now_ns();
                offer(pub, buf, O.len);
                while (!(last.got && last.seq == (uint64_t)i)) {
                        if (aeron_subscription_poll(sub, on_fragment, NULL, 1) == 0)
                                turn();
                }
                int64_t t1 = now_ns();
                if (i >= O.warmup && i < total) {
                        rtt[i - O.warmup] = t1 - t0;
                        if (sent)
                                sent[i - O.warmup] = t0;
                }
        }
        double secs = (double)(now_ns() - started) / 1e9;
        if (O.series) {
                FILE *f = fopen(O.series, "w");
                int bad = !f;
                for (long i = 0; f && i < O.messages; i++)
                        fprintf(f, "%" PRId64 " %" PRId64 "\n", sent[i], rtt[i]);
                if (f && fclose(f) != 0)
                        bad = 1;
                free(sent);
                if (bad) {
                        free(rtt);
                        perror("aeron-invoker: --series");
                        return 1;
                }
        }
        qsort(rtt, (size_t)O.messages, sizeof(*rtt), cmp64);
        printf("RESULT len=%zu warmup=%ld n=%ld p50=%.3f p90=%.3f p99=%.3f p99.9=%.3f max=%.3f secs=%.2f\n", O.len,
               O.warmup, O.messages, pct(rtt, O.messages, 50), pct(rtt, O.messages, 90), pct(rtt, O.messages, 99),
               pct(rtt, O.messages, 99.9), (double)rtt[O.messages - 1] / 1000.0, secs);
        fflush(stdout);
        free(rtt);
        return 0;
}

static int run_pong(aeron_publication_t *pub, aeron_subscription_t *sub)
{
        for (;;) {
                last.got = false;
                while (!last.got) {
                        if (aeron_subscription_poll(sub, on_fragment, NULL, 1) == 0)
                                turn();
                }
                offer(pub, last.buf, last.len);
                if (last.flags & FLAG_STOP)
                        break;
        }
        /* let the stop message leave before the publication closes */
        int64_t end = now_ns() + 200000000LL;
        while (now_ns() < end)
                turn();
        return 0;
}

static long num(const char *s, const char *what)
{
        char *e;
        errno = 0;
        long v = strtol(s, &e, 10);
        if (errno || *e || v < 0) {
                fprintf(stderr, "aeron-invoker: bad %s: %s\n", what, s);
                exit(2);
        }
        return v;
}

static void usage(void)
{
        fprintf(stderr, "usage: aeron-invoker --version | ping|pong --dir DIR --pub CHANNEL --sub CHANNEL [--cpu N] [--len B]\n"
                        "       [--warmup N] [--messages N] [--no-driver] [--connect-s S]\n"
                        "       [--series FILE] (ping: each measured round trip in order: start and length, ns)\n"
                        "  the driver's transport and everything else come from the AERON_* / SPINLANE_* environment\n");
        exit(2);
}

int main(int argc, char **argv)
{
        if (argc < 2)
                usage();
        if (!strcmp(argv[1], "--version")) {
                printf("Aeron %s\n", aeron_version_full());
                return 0;
        }
        if (!strcmp(argv[1], "ping"))
                O.ping = true;
        else if (strcmp(argv[1], "pong"))
                usage();
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--no-driver")) {
                        O.embedded = false;
                        continue;
                }
                if (!v)
                        usage();
                i++;
                if (!strcmp(a, "--dir"))
                        O.dir = v;
                else if (!strcmp(a, "--pub"))
                        O.pub = v;
                else if (!strcmp(a, "--sub"))
                        O.sub = v;
                else if (!strcmp(a, "--cpu"))
                        O.cpu = (int)num(v, a);
                else if (!strcmp(a, "--len"))
                        O.len = (size_t)num(v, a);
                else if (!strcmp(a, "--warmup"))
                        O.warmup = num(v, a);
                else if (!strcmp(a, "--messages"))
                        O.messages = num(v, a);
                else if (!strcmp(a, "--connect-s"))
                        O.connect_s = num(v, a);
                else if (!strcmp(a, "--series"))
                        O.series = v;
                else
                        usage();
        }
        if (!O.dir || !O.pub || !O.sub || O.len < sizeof(struct msg) || O.len > MAX_LEN || O.messages < 1)
                usage();
        if (O.cpu >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(O.cpu, &set);
                if (sched_setaffinity(0, sizeof(set), &set) < 0) {
                        perror("aeron-invoker: sched_setaffinity");
                        return 1;
                }
        }

        if (O.embedded) {
                aeron_driver_context_t *dctx;
                if (aeron_driver_context_init(&dctx) < 0)
                        return die("driver context");
                aeron_driver_context_set_dir(dctx, O.dir);
                aeron_driver_context_set_threading_mode(dctx, AERON_THREADING_MODE_INVOKER);
                aeron_driver_context_set_dir_delete_on_start(dctx, true);
                if (aeron_driver_init(&driver, dctx) < 0)
                        return die("driver init");
                if (aeron_driver_start(driver, true) < 0)
                        return die("driver start");
        }
        aeron_context_t *ctx;
        if (aeron_context_init(&ctx) < 0)
                return die("client context");
        aeron_context_set_dir(ctx, O.dir);
        aeron_context_set_use_conductor_agent_invoker(ctx, true);
        if (aeron_init(&client, ctx) < 0)
                return die("client init");
        if (aeron_start(client) < 0)
                return die("client start");

        aeron_async_add_publication_t *ap;
        aeron_async_add_subscription_t *as;
        aeron_publication_t *pub = NULL;
        aeron_subscription_t *sub = NULL;
        int ps = O.ping ? STREAM_PING : STREAM_PONG, ss = O.ping ? STREAM_PONG : STREAM_PING;
        if (aeron_async_add_subscription(&as, client, O.sub, ss, NULL, NULL, NULL, NULL) < 0)
                return die("add subscription");
        int r;
        while ((r = aeron_async_add_subscription_poll(&sub, as)) == 0)
                turn();
        if (r < 0)
                return die("subscription");
        if (aeron_async_add_publication(&ap, client, O.pub, ps) < 0)
                return die("add publication");
        while ((r = aeron_async_add_publication_poll(&pub, ap)) == 0)
                turn();
        if (r < 0)
                return die("publication");
        printf("READY\n");
        fflush(stdout);
        if (wait_connected(pub, sub) < 0) {
                fprintf(stderr, "aeron-invoker %s: not connected after %ld s (pub %d, sub %d)\n", O.ping ? "ping" : "pong",
                        O.connect_s, aeron_publication_is_connected(pub), aeron_subscription_is_connected(sub));
                return 1;
        }
        r = O.ping ? run_ping(pub, sub) : run_pong(pub, sub);
        aeron_publication_close(pub, NULL, NULL);
        aeron_subscription_close(sub, NULL, NULL);
        aeron_close(client);
        aeron_context_close(ctx);
        if (driver)
                aeron_driver_close(driver);
        return r;
}
