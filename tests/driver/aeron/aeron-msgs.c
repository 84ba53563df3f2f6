/* SPDX-License-Identifier: Apache-2.0 */
/* Test client on Aeron's own C client library: `pub` offers N numbered messages with a
 * checkable body (retrying back pressure), `sub` receives them and fails on the first one
 * out of order, duplicated or corrupted. What the Aeron samples do not check, this does;
 * the media drivers under test are stock aeronmd with or without spinlane's bindings.
 *
 *   aeron-msgs pub -d DIR -c CHANNEL [-s STREAM] -n COUNT [-z SIZE] [-t SECONDS]
 *   aeron-msgs sub -d DIR -c CHANNEL [-s STREAM] -n COUNT [-z SIZE] [-t SECONDS]
 *
 * pub: waits (bounded) for a subscriber, offers COUNT messages, prints "OFFERED <n>",
 *      then keeps the publication open until SIGTERM/SIGINT or the timeout (exit 0 when
 *      everything was offered). sub: prints "READY" once the subscription exists and
 *      "RECEIVED <n>" at the end; exit 0 when COUNT arrived in order and intact, 1 on a
 *      bad message, 2 on timeout, 3 on an Aeron error (the message is printed). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aeronc.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

static uint64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void nap(void)
{
        struct timespec ts = { 0, 100000 }; /* 100 us: a test client need not spin */
        nanosleep(&ts, NULL);
}

static void fill(uint8_t *buf, size_t len, uint64_t seq)
{
        memcpy(buf, &seq, sizeof(seq));
        for (size_t i = sizeof(seq); i < len; i++)
                buf[i] = (uint8_t)(seq * 31 + i);
}

struct sub_state {
        uint64_t expect, want;
        size_t size;
        int bad;
};

static void on_message(void *clientd, const uint8_t *buffer, size_t length, aeron_header_t *header)
{
        struct sub_state *s = clientd;
        uint64_t seq;

        (void)header;
        if (s->bad)
                return;
        if (length != s->size || length < sizeof(seq)) {
                printf("BAD length %zu (want %zu) at message %" PRIu64 "\n", length, s->size, s->expect);
                s->bad = 1;
                return;
        }
        memcpy(&seq, buffer, sizeof(seq));
        if (seq != s->expect) {
                printf("BAD order: message %" PRIu64 " where %" PRIu64 " was due\n", seq, s->expect);
                s->bad = 1;
                return;
        }
        for (size_t i = sizeof(seq); i < length; i++)
                if (buffer[i] != (uint8_t)(seq * 31 + i)) {
                        printf("BAD content of message %" PRIu64 " at byte %zu\n", seq, i);
                        s->bad = 1;
                        return;
                }
        s->expect++;
}

static void usage(void)
{
        fprintf(stderr, "usage: aeron-msgs pub|sub -d DIR -c CHANNEL [-s STREAM] -n COUNT [-z SIZE] [-t SECONDS]\n");
        exit(64);
}

int main(int argc, char **argv)
{
        const char *dir = NULL, *channel = NULL;
        int32_t stream = 1001;
        uint64_t n = 0, timeout_s = 60;
        size_t size = 64;
        aeron_context_t *ctx = NULL;
        aeron_t *aeron = NULL;
        int opt, rc = 3;

        if (argc < 2)
                usage();
        bool pub = strcmp(argv[1], "pub") == 0;
        if (!pub && strcmp(argv[1], "sub") != 0)
                usage();
        optind = 2;
        while ((opt = getopt(argc, argv, "d:c:s:n:z:t:")) != -1) {
                switch (opt) {
                case 'd': dir = optarg; break;
                case 'c': channel = optarg; break;
                case 's': stream = (int32_t)strtol(optarg, NULL, 10); break;
                case 'n': n = strtoull(optarg, NULL, 10); break;
                case 'z': size = strtoull(optarg, NULL, 10); break;
                case 't': timeout_s = strtoull(optarg, NULL, 10); break;
                default: usage();
                }
        }
        if (!dir || !channel || n == 0 || size < 8 || size > 1 << 20)
                usage();
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        setvbuf(stdout, NULL, _IOLBF, 0);
        uint64_t deadline = now_ms() + timeout_s * 1000;

        if (aeron_context_init(&ctx) < 0 || aeron_context_set_dir(ctx, dir) < 0 || aeron_init(&aeron, ctx) < 0 ||
            aeron_start(aeron) < 0) {
                printf("ERROR client: %s\n", aeron_errmsg());
                goto out;
        }
        if (pub) {
                aeron_async_add_publication_t *async = NULL;
                aeron_publication_t *p = NULL;
                uint8_t *buf = calloc(1, size);
                if (!buf || aeron_async_add_publication(&async, aeron, channel, stream) < 0) {
                        printf("ERROR add publication: %s\n", aeron_errmsg());
                        free(buf);
                        goto out;
                }
                while (!p) {
                        if (aeron_async_add_publication_poll(&p, async) < 0) {
                                printf("ERROR add publication: %s\n", aeron_errmsg());
                                free(buf);
                                goto out;
                        }
                        nap();
                }
                printf("PUBLICATION\n");
                uint64_t sent = 0;
                rc = 2;
                while (sent < n && !stop && now_ms() < deadline) {
                        fill(buf, size, sent);
                        int64_t r = aeron_publication_offer(p, buf, size, NULL, NULL);
                        if (r > 0)
                                sent++;
                        else if (r == AERON_PUBLICATION_CLOSED || r == AERON_PUBLICATION_MAX_POSITION_EXCEEDED ||
                                 r == AERON_PUBLICATION_ERROR) {
                                printf("ERROR offer: %" PRId64 " %s\n", r, aeron_errmsg());
                                rc = 3;
                                break;
                        } else
                                nap(); /* not connected yet, back pressured, admin action */
                }
                printf("OFFERED %" PRIu64 "\n", sent);
                if (sent == n)
                        rc = 0;
                while (!stop && now_ms() < deadline)
                        nap();
                aeron_publication_close(p, NULL, NULL);
                free(buf);
        } else {
                aeron_async_add_subscription_t *async = NULL;
                aeron_subscription_t *s = NULL;
                aeron_fragment_assembler_t *fa = NULL;
                struct sub_state st = { .want = n, .size = size };
                if (aeron_async_add_subscription(&async, aeron, channel, stream, NULL, NULL, NULL, NULL) < 0) {
                        printf("ERROR add subscription: %s\n", aeron_errmsg());
                        goto out;
                }
                while (!s) {
                        if (aeron_async_add_subscription_poll(&s, async) < 0) {
                                printf("ERROR add subscription: %s\n", aeron_errmsg());
                                goto out;
                        }
                        nap();
                }
                if (aeron_fragment_assembler_create(&fa, on_message, &st) < 0) {
                        printf("ERROR assembler: %s\n", aeron_errmsg());
                        goto out;
                }
                printf("READY\n");
                rc = 2;
                while (st.expect < n && !st.bad && !stop && now_ms() < deadline) {
                        int k = aeron_subscription_poll(s, aeron_fragment_assembler_handler, fa, 64);
                        if (k < 0) {
                                printf("ERROR poll: %s\n", aeron_errmsg());
                                rc = 3;
                                break;
                        }
                        if (k == 0)
                                nap();
                }
                printf("RECEIVED %" PRIu64 "\n", st.expect);
                if (st.bad)
                        rc = 1;
                else if (st.expect == n)
                        rc = 0;
                aeron_subscription_close(s, NULL, NULL);
                aeron_fragment_assembler_delete(fa);
        }
out:
        aeron_close(aeron);
        aeron_context_close(ctx);
        return rc;
}
