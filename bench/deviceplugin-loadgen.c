/* SPDX-License-Identifier: Apache-2.0 */
/* Allocate load client on the gRPC C core: open-loop at a fixed rate (latency measured
 * from each request's scheduled time, so a stall is not hidden) or closed-loop with N
 * calls in flight for the maximum rate. Prints the parameters and p50/p99/p99.9/max. */
#include "api.pb-c.h"
#include "rpc-unary.h"

#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_INFLIGHT 256

typedef struct slot {
        rpc_unary u;
        uint64_t t0;
} slot;

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

typedef struct lb_ctx {
        grpc_channel *ch;
        grpc_completion_queue *cq;
        const char *method;
        grpc_slice req;
        slot *slots;
        size_t n;
        uint64_t period, t_start;
} lb_ctx;

/* Start call i, its latency counted from t0. */
static void start_call(lb_ctx *c, size_t i, uint64_t t0)
{
        slot *sl = &c->slots[i];
        sl->t0 = t0;
        rpc_unary_init(&sl->u);
        if (rpc_unary_start(&sl->u, c->ch, c->cq, c->method, gpr_inf_future(GPR_CLOCK_REALTIME),
                            grpc_raw_byte_buffer_create(&c->req, 1), sl) < 0) {
                fprintf(stderr, "start_batch failed\n");
                exit(1);
        }
}

/* Open loop: call i starts at t_start + i * period (latency counted from that time). */
static void *sender_main(void *arg)
{
        lb_ctx *c = arg;
        for (size_t i = 0; i < c->n; i++) {
                uint64_t at = c->t_start + i * c->period;
                struct timespec ts = { .tv_sec = (time_t)(at / 1000000000ULL), .tv_nsec = (long)(at % 1000000000ULL) };
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                        ;
                start_call(c, i, at);
        }
        return NULL;
}

static void usage(void)
{
        fprintf(stderr, "usage: deviceplugin-loadgen --socket PATH --id DEVICE_ID [--rate N (0 = max)] "
                        "[--seconds S] [--warmup N] [--inflight N]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        const char *sock = NULL, *id = NULL;
        long rate = 1000, warmup = 1000, inflight = 8;
        double seconds = 10;

        for (int i = 1; i < argc; i++) {
                if (i + 1 >= argc)
                        usage();
                if (!strcmp(argv[i], "--socket"))
                        sock = argv[++i];
                else if (!strcmp(argv[i], "--id"))
                        id = argv[++i];
                else if (!strcmp(argv[i], "--rate"))
                        rate = strtol(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--seconds"))
                        seconds = strtod(argv[++i], NULL);
                else if (!strcmp(argv[i], "--warmup"))
                        warmup = strtol(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--inflight"))
                        inflight = strtol(argv[++i], NULL, 10);
                else
                        usage();
        }
        if (!sock || !id || rate < 0 || seconds <= 0 || inflight < 1 || inflight > MAX_INFLIGHT || warmup < 0)
                usage();

        /* the request */
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        V1beta1__ContainerAllocateRequest cr = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT, *crp = &cr;
        char *ids[1] = { (char *)id };
        cr.n_devices_ids = 1;
        cr.devices_ids = ids;
        req.n_container_requests = 1;
        req.container_requests = &crp;
        size_t len = v1beta1__allocate_request__get_packed_size(&req);
        uint8_t *buf = malloc(len);
        v1beta1__allocate_request__pack(&req, buf);
        grpc_slice req_slice = grpc_slice_from_copied_buffer((const char *)buf, len);
        free(buf);

        grpc_init();
        char target[4200];
        snprintf(target, sizeof(target), "unix:%s", sock);
        grpc_channel_credentials *creds = grpc_insecure_credentials_create();
        grpc_channel *ch = grpc_channel_create(target, creds, NULL);
        grpc_channel_credentials_release(creds);
        grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
        const char *method = "/v1beta1.DevicePlugin/Allocate";

        /* One slot per request; a sender thread starts them on schedule (rate mode) while
         * this thread takes completions, so waiting for the next send never delays a
         * completion's timestamp. Closed loop: each completion starts the next call. */
        size_t total = (size_t)(rate ? (double)rate * seconds : 0) + (size_t)warmup;
        size_t cap = rate ? total : (size_t)warmup + 4000000;
        slot *slots = calloc(cap, sizeof(slot));
        uint64_t *lat = malloc(cap * sizeof(uint64_t));
        if (!slots || !lat)
                return 1;
        lb_ctx ctx = { .ch = ch, .cq = cq, .method = method, .req = req_slice, .slots = slots };
        size_t nlat = 0, done = 0, errors = 0, started = 0;
        uint64_t t_begin = now_ns(), measure_from = 0, measure_end = 0;
        pthread_t sender;
        if (rate) {
                ctx.n = total;
                ctx.period = 1000000000ULL / (uint64_t)rate;
                ctx.t_start = t_begin + 1000000;
                pthread_create(&sender, NULL, sender_main, &ctx);
                started = total;
        } else {
                for (long k = 0; k < inflight; k++)
                        start_call(&ctx, started++, now_ns());
        }
        uint64_t closed_end = 0;
        while (done < started) {
                grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
                if (ev.type != GRPC_OP_COMPLETE)
                        continue;
                uint64_t t1 = now_ns();
                slot *sl = ev.tag;
                size_t idx = (size_t)(sl - slots);
                if (!ev.success || sl->u.status != GRPC_STATUS_OK || !sl->u.recv_buf)
                        errors++;
                else if (idx >= (size_t)warmup && nlat < cap) {
                        if (!measure_from)
                                measure_from = sl->t0;
                        lat[nlat++] = t1 - sl->t0;
                        measure_end = t1;
                }
                done++;
                rpc_unary_destroy(&sl->u);
                if (!rate) {
                        if (done == (size_t)warmup || (warmup == 0 && !closed_end))
                                closed_end = t1 + (uint64_t)(seconds * 1e9);
                        if ((!closed_end || t1 < closed_end) && started < cap)
                                start_call(&ctx, started++, now_ns());
                }
        }
        if (rate)
                pthread_join(sender, NULL);
        uint64_t elapsed = measure_end > measure_from ? measure_end - measure_from : 1;
        qsort(lat, nlat, sizeof(uint64_t), cmp_u64);
#define PCT(p) (nlat ? lat[(size_t)((double)(nlat - 1) * (p))] / 1000.0 : 0.0)
        printf("allocate rate=%s%ld inflight=%s%ld seconds=%.1f warmup=%ld samples=%zu errors=%zu "
               "achieved=%.0f/s p50=%.1fus p99=%.1fus p99.9=%.1fus max=%.1fus\n",
               rate ? "" : "max,", rate, rate ? "open," : "", rate ? 0 : inflight, seconds, warmup, nlat, errors,
               (double)nlat / ((double)elapsed / 1e9), PCT(0.5), PCT(0.99), PCT(0.999), PCT(1.0));
        free(slots);
        free(lat);
        grpc_slice_unref(req_slice);
        grpc_channel_destroy(ch);
        grpc_completion_queue_shutdown(cq);
        while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
                ;
        grpc_completion_queue_destroy(cq);
        grpc_shutdown();
        return errors ? 1 : 0;
}
