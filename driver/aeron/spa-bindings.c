/* SPDX-License-Identifier: Apache-2.0 */
/* libspinlane_aeron.so: Aeron's UDP channel transport bindings on spinlane's DPDK
 * transport. Owns the process's EAL and ports, one queue per Aeron agent and the rings
 * that hand a datagram to the agent owning its transport; channels on 127/8 and the
 * conductor's own transports go to Aeron's kernel UDP implementation. No transport's
 * callback runs on another agent's thread; the data path never allocates or logs. */
#include "spa-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "aeron_driver_context.h"
#include "aeronc.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "media/aeron_udp_transport_poller.h"
#include "util/aeron_error.h"
#include "util/aeron_netutil.h"

#include "alloc-env.h"
#include "spa-counters.h"
#include "spa-ifaddrs.h"

#define SPA_EXPORT __attribute__((visibility("default")))
#define SPA_DRAIN_MAX 64       /* ring entries delivered per poll */
#define SPA_SEND_BATCH 16      /* datagrams per tr_sendmmsg */
#define SPA_REFRESH_POLLS 1024 /* polls between two looks at the clock */
#define SPA_REFRESH_MS 100     /* counters copied into Aeron's counters this often */

extern char **environ;

enum spa_state_id { SPA_UNINIT, SPA_READY, SPA_FAILED, SPA_DONE };

static struct spa_state {
        pthread_mutex_t lock; /* control calls: init, close, poller init/add-free/close */
        enum spa_state_id state;
        int err_code;
        char err[1024];
        struct spa_config cfg;
        struct spa_port ports[2];
        unsigned n_ports;
        struct spa_agent agents[SPA_ROLES];
        aeron_driver_context_t *context;
        unsigned refs;     /* pollers and transports alive */
        uint64_t next_id;
        bool eal_up;
        pthread_t conductor;
        bool conductor_known;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *const role_names[SPA_ROLES] = { "sender", "receiver", "conductor" };

/* ---- thread checks (test build) ---- */

static inline void count(struct spa_agent *a, enum spa_agent_counter c)
{
        volatile int64_t *p = a->counters[c];
        if (p)
                __atomic_store_n(p, *p + 1, __ATOMIC_RELEASE);
}

#ifdef SPA_CHECK_THREADS
static void thread_fail(const char *what, const struct spa_agent *owner) __attribute__((noreturn));
static void thread_fail(const char *what, const struct spa_agent *owner)
{
        char me[32] = "?", want[32] = "?";
        pthread_getname_np(pthread_self(), me, sizeof(me));
        if (owner->entered)
                pthread_getname_np(owner->thread, want, sizeof(want));
        fprintf(stderr, "spinlane bindings: THREAD CHECK FAILED: %s for a %s transport on thread \"%s\"; the %s agent runs on \"%s\"%s\n",
                what, role_names[owner->role], me, role_names[owner->role], want,
                owner->entered ? "" : " (not started yet)");
        abort();
}

/* The caller must be the thread of agent a (the conductor's for SPA_CONDUCTOR). */
static void check_thread(struct spa_agent *a, const char *what)
{
        if (!a->entered || !pthread_equal(a->thread, pthread_self()))
                thread_fail(what, a);
        count(a, SPA_AC_THREAD_CHECKS);
}

static void check_conductor(const char *what)
{
        struct spa_agent *c = &g.agents[SPA_CONDUCTOR];
        if (!g.conductor_known) {
                g.conductor = pthread_self();
                g.conductor_known = true;
                c->thread = g.conductor;
                c->entered = true;
        }
        check_thread(c, what);
}

/* close may come from the conductor or, on the receiver's add-destination error path,
 * from the owning agent itself */
static void check_close(struct spa_agent *owner)
{
        if (owner->entered && pthread_equal(owner->thread, pthread_self())) {
                count(owner, SPA_AC_THREAD_CHECKS);
                return;
        }
        check_conductor("close");
}
#define CHECK_THREAD(a, what) check_thread((a), (what))
#define CHECK_CONDUCTOR(what) check_conductor(what)
#define CHECK_CLOSE(a) check_close(a)
#else
#define CHECK_THREAD(a, what) ((void)(a), (void)(what))
#define CHECK_CONDUCTOR(what) ((void)(what))
#define CHECK_CLOSE(a) ((void)(a))
#endif

/* The first agent-side call (poller add, remove or poll: Aeron makes them only from the
 * agent's own thread) learns the thread and registers it with DPDK, so that mbuf
 * alloc/free hit this thread's mempool cache. */
static inline void agent_enter(struct spa_agent *a, const char *what)
{
        if (__builtin_expect(!a->entered, 0)) {
                a->thread = pthread_self();
                a->entered = true;
                if (a->q && rte_lcore_id() == LCORE_ID_ANY)
                        (void)rte_thread_register(); /* out of lcores: still works, uncached */
                if (a->counters[SPA_AC_LCORE]) {
                        unsigned id = rte_lcore_id();
                        __atomic_store_n(a->counters[SPA_AC_LCORE], id == LCORE_ID_ANY ? -1 : (int64_t)id, __ATOMIC_RELEASE);
                }
                return;
        }
        CHECK_THREAD(a, what);
}

/* ---- version ---- */

static int version_check(char *err, size_t len)
{
        if (aeron_version_major() != SPA_AERON_VERSION_MAJOR || aeron_version_minor() != SPA_AERON_VERSION_MINOR ||
            aeron_version_patch() != SPA_AERON_VERSION_PATCH) {
                snprintf(err, len,
                         "spinlane bindings were built against Aeron %d.%d.%d but the driver runs Aeron %d.%d.%d (%s): rebuild libspinlane_aeron.so against this Aeron",
                         SPA_AERON_VERSION_MAJOR, SPA_AERON_VERSION_MINOR, SPA_AERON_VERSION_PATCH,
                         aeron_version_major(), aeron_version_minor(), aeron_version_patch(), aeron_version_full());
                return -EPROTO;
        }
        return 0;
}

/* Exported for spinlane-launch's aeron-bindings check: 0 when the Aeron loaded in this
 * process is the one the bindings were built against, else -EPROTO and the reason. */
SPA_EXPORT int spinlane_aeron_version_check(char *err, size_t len);
SPA_EXPORT int spinlane_aeron_version_check(char *err, size_t len)
{
        return version_check(err, len);
}

/* "1.52.2": the Aeron release the bindings were built against. */
SPA_EXPORT const char *spinlane_aeron_built_against(void);
SPA_EXPORT const char *spinlane_aeron_built_against(void)
{
        return SPA_AERON_VERSION_TEXT;
}

/* ---- bring-up and tear-down ---- */

static void fmt_ip(uint32_t ip, char *buf, size_t len)
{
        if (!inet_ntop(AF_INET, &ip, buf, (socklen_t)len))
                snprintf(buf, len, "?");
}

/* A port by ethdev name, else the one ethdev whose device has that name. */
static int find_port(const char *name, uint16_t *ret)
{
        uint16_t id, found = 0;
        unsigned n = 0;

        if (tr_port_find(name, &id) == 0) {
                *ret = id;
                return 0;
        }
        RTE_ETH_FOREACH_DEV(id) {
                struct rte_eth_dev_info info;
                if (rte_eth_dev_info_get(id, &info) == 0 && info.device && strcmp(rte_dev_name(info.device), name) == 0) {
                        found = id;
                        n++;
                }
        }
        if (n == 1) {
                *ret = found;
                return 0;
        }
        return n ? -ENOTUNIQ : -ENODEV;
}

static void teardown(void)
{
        spa_ifaddrs_uninstall();
        for (unsigned i = 0; i < g.n_ports; i++) {
                tr_port_close(g.ports[i].tp);
                g.ports[i].tp = NULL;
        }
        g.n_ports = 0;
        for (unsigned r = 0; r < SPA_ROLES; r++) {
                spa_ring_free(&g.agents[r].in);
                free(g.agents[r].dpdk);
                free(g.agents[r].kernel);
                g.agents[r].dpdk = g.agents[r].kernel = NULL;
        }
        if (g.eal_up) {
                tr_eal_cleanup();
                g.eal_up = false;
        }
}

static int fail_init(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_init(int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g.err, sizeof(g.err), fmt, ap);
        va_end(ap);
        g.err_code = code;
        return -code;
}

static int open_port(struct spa_port *p, const struct spa_role *cfg, const char *var, unsigned index,
                     uint16_t n_queues, size_t mtu)
{
        char err[256] = "", ip[INET_ADDRSTRLEN];
        uint16_t id;
        int r;

        p->cfg = cfg;
        p->role_var = var;
        p->index = index;
        r = find_port(cfg->device, &id);
        if (r < 0)
                return fail_init(ENODEV,
                                 BYPASS_ENV_ROLE("%s", BYPASS_DEVICE) "=%s: %s (check the -a/--vdev arguments in " BYPASS_ENV_EAL_ARGS
                                 "; %u DPDK port(s) found)",
                                 var, cfg->device, r == -ENOTUNIQ ? "several DPDK ports belong to this device" : "no such DPDK port",
                                 (unsigned)rte_eth_dev_count_avail());
        p->port_id = id;
        p->mtu = (uint16_t)mtu;
        struct tr_port_config pc = {
                .port_id = id,
                .n_queues = n_queues,
                .mtu = (uint16_t)mtu,
                .ipv4 = cfg->ipv4,
                .prefix_len = cfg->prefix_len,
                .gateway = cfg->gateway,
                .link_wait_ms = g.cfg.link_wait_ms,
                .no_host_local = !g.cfg.host_local,
                .probe_port = (uint16_t)g.cfg.probe_port,
        };
        r = tr_port_open(&pc, &p->tp, err, sizeof(err));
        if (r < 0) {
                fmt_ip(cfg->ipv4, ip, sizeof(ip));
                return fail_init(-r, "cannot open DPDK port %s (" BYPASS_ENV_ROLE("%s", BYPASS_DEVICE) ") as %s/%u: %s", cfg->device, var, ip,
                                 cfg->prefix_len, err[0] ? err : strerror(-r));
        }
        return 0;
}

static int global_init(aeron_driver_context_t *context)
{
        struct tr_eal_args args;
        cpu_set_t saved;
        bool have_saved;
        char err[1024];
        int r;

        r = version_check(err, sizeof(err));
        if (r < 0)
                return fail_init(-r, "%s", err);
        r = spa_env_parse((const char *const *)environ, &g.cfg, err, sizeof(err));
        if (r < 0)
                return fail_init(EINVAL, "spinlane bindings: %s", err);
        if (context->mtu_length > UINT16_MAX)
                return fail_init(EINVAL, "AERON_MTU_LENGTH=%zu is too large for the bypass transport", context->mtu_length);
        if (tr_eal_args_split(g.cfg.eal_args, strlen(g.cfg.eal_args), "aeronmd", &args) < 0)
                return fail_init(EINVAL, BYPASS_ENV_EAL_ARGS " cannot be split");

        /* rte_eal_init pins the calling thread (Aeron's conductor, in aeronmd) to the
         * main lcore: give it its own affinity back, Aeron sets the agents' */
        have_saved = pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) == 0;
        r = rte_lcore_count() > 0 ? -EALREADY : tr_eal_init(&args);
        if (have_saved)
                (void)pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
        /* a program that embeds the driver may have started the EAL itself: use it,
         * and leave its clean-up to that program */
        if (r < 0 && r != -EALREADY)
                return fail_init(-r, "rte_eal_init failed with " BYPASS_ENV_EAL_ARGS "=\"%s\": %s", g.cfg.eal_args, strerror(-r));
        g.eal_up = r == 0;

        r = open_port(&g.ports[0], &g.cfg.sender, BYPASS_ROLE_SENDER, 0, g.cfg.shared ? 2 : 1,
                      context->mtu_length);
        if (r < 0)
                return r;
        g.n_ports = 1;
        if (!g.cfg.shared) {
                r = open_port(&g.ports[1], &g.cfg.receiver, BYPASS_ROLE_RECEIVER, 1, 1, context->mtu_length);
                if (r < 0)
                        return r;
                if (g.ports[1].port_id == g.ports[0].port_id)
                        return fail_init(EINVAL,
                                         BYPASS_ENV_SENDER_DEVICE "=%s and " BYPASS_ENV_RECEIVER_DEVICE
                                         "=%s are the same DPDK port: give both the same name",
                                         g.cfg.sender.device, g.cfg.receiver.device);
                g.n_ports = 2;
        }

        struct spa_agent *s = &g.agents[SPA_SENDER], *rv = &g.agents[SPA_RECEIVER];
        for (unsigned i = 0; i < SPA_ROLES; i++)
                g.agents[i].role = (enum spa_role_id)i;
        rv->port = &g.ports[g.cfg.shared ? 0 : 1];
        rv->q = tr_port_queue(rv->port->tp, 0);
        rv->refresh = true;
        s->port = &g.ports[0];
        s->q = tr_port_queue(s->port->tp, g.cfg.shared ? 1 : 0);
        s->refresh = !g.cfg.shared;
        if (g.cfg.shared) {
                /* one NIC: a datagram may land on either agent's queue (queue 0 takes
                 * everything with RSS off; af_packet and memif spread over all queues) */
                if ((r = spa_ring_init(&s->in, g.cfg.handoff_slots, (uint32_t)context->mtu_length)) < 0 ||
                    (r = spa_ring_init(&rv->in, g.cfg.handoff_slots, (uint32_t)context->mtu_length)) < 0)
                        return fail_init(-r, "cannot allocate the hand-off rings (%u slots of %zu bytes)",
                                         g.cfg.handoff_slots, context->mtu_length);
                s->peer = rv;
                rv->peer = s;
        }
        r = spa_counters_alloc(context->counters_manager, g.ports, g.n_ports, g.agents, err, sizeof(err));
        if (r < 0)
                return fail_init(-r, "cannot allocate the spinlane counters: %s", err);
        r = spa_ifaddrs_install(g.ports, g.n_ports);
        if (r < 0)
                return fail_init(-r, "cannot install the interface lookup");
        g.context = context;
        return 0;
}

/* Returns 0, or -1 with Aeron's error set (and the reason in the driver's error log). */
static int ensure_init(aeron_driver_context_t *context)
{
        pthread_mutex_lock(&g.lock);
        if (g.state == SPA_UNINIT) {
                if (global_init(context) < 0) {
                        teardown();
                        g.state = SPA_FAILED;
                        if (context->error_log)
                                aeron_distinct_error_log_record(context->error_log, g.err_code, g.err);
                } else
                        g.state = SPA_READY;
        }
        enum spa_state_id st = g.state;
        pthread_mutex_unlock(&g.lock);
        if (st == SPA_READY)
                return 0;
        if (st == SPA_DONE)
                AERON_SET_ERR(EALREADY, "%s", "spinlane bindings: the DPDK transport was shut down; it starts once per process");
        else
                AERON_SET_ERR(g.err_code ? g.err_code : EINVAL, "%s", g.err);
        return -1;
}

/* Caller holds g.lock. The last poller or transport gone: stop the ports and the EAL. */
static void unref_locked(void)
{
        if (g.refs > 0 && --g.refs == 0 && g.state == SPA_READY) {
                teardown();
                g.state = SPA_DONE;
        }
}

__attribute__((destructor)) static void spa_fini(void)
{
        /* aeronmd exits without closing every transport: stop the ports and remove the
         * EAL's runtime directory anyway (every agent thread has been joined by now) */
        if (g.state == SPA_READY) {
                teardown();
                g.state = SPA_DONE;
        }
}

/* ---- the data path ---- */

static inline void deliver(struct spa_agent *a, struct spa_transport *t, const uint8_t *data, size_t len,
                           const struct sockaddr_in *src)
{
        aeron_udp_channel_transport_t *tr = t->transport;
        aeron_udp_transport_recv_func_t fn = (aeron_udp_transport_recv_func_t)a->recv_func;
        struct sockaddr_storage ss;

        CHECK_THREAD(t->agent, "receive callback");
        memcpy(&ss, src, sizeof(*src));
        /* Aeron reads the datagram in place (it copies into the term buffer): the mbuf's
         * data, valid until this burst is freed */
        fn(tr->data_paths, tr, a->recv_clientd, tr->dispatch_clientd, tr->destination_clientd, (uint8_t *)data, len, &ss,
           NULL);
        a->poll_bytes += (int64_t)len;
}

/* tr_poll's callback, on the thread of the agent that polls this queue. */
static void on_datagram(void *clientd, void *endpoint_clientd, const uint8_t *data, size_t len,
                        const struct sockaddr_in *src)
{
        struct spa_agent *a = clientd;
        struct spa_transport *t = endpoint_clientd;

        if (__builtin_expect(t->agent == a, 1)) {
                if (__builtin_expect(t->polled, 1))
                        deliver(a, t, data, len, src);
                else
                        count(a, SPA_AC_NOT_POLLED);
                return;
        }
        /* another agent's transport: copy it to that agent's ring; only t's immutable
         * fields (agent, id) are read here */
        if (t->agent->in.slots && spa_ring_push(&t->agent->in, t, t->id, src, data, len))
                count(a, SPA_AC_HANDOFF_OUT);
        else
                count(a, SPA_AC_HANDOFF_FULL);
}

static bool agent_has(const struct spa_agent *a, const struct spa_transport *t)
{
        for (unsigned i = 0; i < a->n_dpdk; i++)
                if (a->dpdk[i] == t)
                        return true;
        return false;
}

static int drain(struct spa_agent *a)
{
        const struct spa_ring_slot *s;
        int n = 0;

        while (n < SPA_DRAIN_MAX && (s = spa_ring_peek(&a->in))) {
                struct spa_transport *t = s->tag;
                /* only a transport still in this agent's poller may be dereferenced: it
                 * cannot have been closed */
                if (agent_has(a, t) && t->id == s->id) {
                        deliver(a, t, s->data, s->len, &s->src);
                        count(a, SPA_AC_HANDOFF_IN);
                        n++;
                } else
                        count(a, SPA_AC_HANDOFF_STALE);
                spa_ring_pop(&a->in);
        }
        return n;
}

static void maybe_refresh(struct spa_agent *a)
{
        uint64_t now = rte_get_tsc_cycles();
        if (now < a->next_refresh_tsc)
                return;
        a->next_refresh_tsc = now + rte_get_tsc_hz() / 1000 * SPA_REFRESH_MS;
        spa_counters_refresh(a->port);
}

static int spa_poller_poll(aeron_udp_transport_poller_t *poller, struct mmsghdr *msgvec, size_t vlen,
                           int64_t *bytes_rcved, aeron_udp_transport_recv_func_t recv_func,
                           aeron_udp_channel_transport_recvmmsg_func_t recvmmsg_func, void *clientd)
{
        struct spa_agent *a = poller->bindings_clientd;
        int work = 0;

        (void)recvmmsg_func;
        agent_enter(a, "poll");
        a->recv_func = (void *)recv_func;
        a->recv_clientd = clientd;
        a->poll_bytes = 0;
        if (a->refresh) /* the owner of queue 0: everything the port receives comes here */
                work += tr_poll(a->q, on_datagram, a);
        if (a->in.slots)
                work += drain(a);
        for (unsigned i = 0; i < a->n_kernel; i++) {
                aeron_udp_channel_transport_t *tr = a->kernel[i]->transport;
                int r = aeron_udp_channel_transport_recvmmsg(tr, msgvec, vlen, &a->poll_bytes, recv_func, clientd);
                if (r < 0) {
                        AERON_APPEND_ERR("%s", "spinlane poller (kernel UDP transport)");
                        aeron_udp_channel_transport_log_error(tr);
                } else
                        work += r;
        }
        *bytes_rcved += a->poll_bytes;
        if (a->refresh && (++a->polls % SPA_REFRESH_POLLS) == 0)
                maybe_refresh(a);
        return work;
}

/* The burst of k datagrams of iov to dst. */
static inline void fill_msgs(struct tr_msg *m, const struct sockaddr_in *dst, const struct iovec *iov, size_t k)
{
        for (size_t i = 0; i < k; i++)
                m[i] = (struct tr_msg){ .dst = dst, .data = iov[i].iov_base, .len = iov[i].iov_len };
}

/* The bytes of the first n datagrams of m (those sent). */
static inline int64_t msgs_bytes(const struct tr_msg *m, int n)
{
        int64_t bytes = 0;
        for (int i = 0; i < n; i++)
                bytes += (int64_t)m[i].len;
        return bytes;
}

/* A send that failed before any datagram left (r < 0), for Aeron: -1 and its error set. */
static __attribute__((cold, noinline)) int send_failed(const struct sockaddr_in *dst, int r)
{
        char ip[INET_ADDRSTRLEN];
        fmt_ip(dst->sin_addr.s_addr, ip, sizeof(ip));
        AERON_SET_ERR(-r, "spinlane: send to %s:%u: %s", ip, ntohs(dst->sin_port), strerror(-r));
        return -1;
}

static int spa_send(aeron_udp_channel_data_paths_t *data_paths, aeron_udp_channel_transport_t *transport,
                    struct sockaddr_storage *address, struct iovec *iov, size_t iov_length, int64_t *bytes_sent)
{
        struct spa_transport *t = transport->bindings_clientd;
        struct tr_msg m[SPA_SEND_BATCH];
        size_t done = 0;
        int64_t bytes = 0;

        if (__builtin_expect(t->kernel, 0))
                return aeron_udp_channel_transport_send(data_paths, transport, address, iov, iov_length, bytes_sent);
        CHECK_THREAD(t->agent, "send");
        if (!address)
                address = transport->connected_address;
        if (!address || address->ss_family != AF_INET) {
                AERON_SET_ERR(EAFNOSUPPORT, "%s", "spinlane: send to a non-IPv4 address");
                return -1;
        }
        const struct sockaddr_in *dst = (const struct sockaddr_in *)address;
        if (iov_length == 1) {
                /* one datagram (a ping, a status message, most of what a quiet stream
                 * sends): the transport's short path, without a burst's arrays */
                int r = tr_send(t->agent->q, t->ep, dst, iov[0].iov_base, iov[0].iov_len);
                if (__builtin_expect(r < 0, 0))
                        return send_failed(dst, r);
                if (r > 0)
                        *bytes_sent += (int64_t)iov[0].iov_len;
                return r;
        }
        if (__builtin_expect(iov_length <= SPA_SEND_BATCH, 1)) {
                /* one burst: what Aeron sends (at most 16 messages a call) */
                fill_msgs(m, dst, iov, iov_length);
                int r = tr_sendmmsg(t->agent->q, t->ep, m, iov_length);
                if (__builtin_expect(r < 0, 0))
                        return send_failed(dst, r);
                bytes = msgs_bytes(m, r);
                *bytes_sent += bytes;
                return r; /* fewer than iov_length: would block, Aeron retries the rest */
        }
        while (done < iov_length) {
                size_t k = iov_length - done < SPA_SEND_BATCH ? iov_length - done : SPA_SEND_BATCH;
                fill_msgs(m, dst, iov + done, k);
                int r = tr_sendmmsg(t->agent->q, t->ep, m, k);
                if (r < 0) {
                        if (done)
                                break;
                        return send_failed(dst, r);
                }
                bytes += msgs_bytes(m, r);
                done += (size_t)r;
                if ((size_t)r < k)
                        break; /* would block: Aeron retries the rest */
        }
        *bytes_sent += bytes;
        return (int)done;
}

static int spa_recvmmsg(aeron_udp_channel_transport_t *transport, struct mmsghdr *msgvec, size_t vlen,
                        int64_t *bytes_rcved, aeron_udp_transport_recv_func_t recv_func, void *clientd)
{
        struct spa_transport *t = transport->bindings_clientd;

        /* DPDK transports receive through their agent's poller, not one by one */
        if (t && t->kernel)
                return aeron_udp_channel_transport_recvmmsg(transport, msgvec, vlen, bytes_rcved, recv_func, clientd);
        return 0;
}

/* ---- transports (conductor thread) ---- */

static bool is_loopback(const struct sockaddr_storage *a)
{
        return a && a->ss_family == AF_INET &&
               (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
}

static bool ours(uint32_t ip)
{
        for (unsigned i = 0; i < g.n_ports; i++)
                if (g.ports[i].cfg->ipv4 == ip)
                        return true;
        return false;
}

static int join_locked(struct spa_port *p, uint32_t group)
{
        struct spa_group *free_slot = NULL;

        for (unsigned i = 0; i < TR_MAX_GROUPS; i++) {
                if (p->groups[i].refs && p->groups[i].group == group) {
                        p->groups[i].refs++;
                        return 0;
                }
                if (!p->groups[i].refs && !free_slot)
                        free_slot = &p->groups[i];
        }
        if (!free_slot)
                return -ENOSPC;
        int r = tr_port_join(p->tp, group);
        if (r < 0)
                return r;
        free_slot->group = group;
        free_slot->refs = 1;
        return 0;
}

static void leave_locked(struct spa_port *p, uint32_t group)
{
        for (unsigned i = 0; i < TR_MAX_GROUPS; i++)
                if (p->groups[i].refs && p->groups[i].group == group) {
                        if (--p->groups[i].refs == 0)
                                (void)tr_port_leave(p->tp, group);
                        return;
                }
}

static int init_kernel(struct spa_transport *t, aeron_udp_channel_transport_t *transport,
                       struct sockaddr_storage *bind_addr, struct sockaddr_storage *multicast_if_addr,
                       struct sockaddr_storage *connect_addr, aeron_udp_channel_transport_params_t *params,
                       aeron_driver_context_t *context, aeron_udp_channel_transport_affinity_t affinity)
{
        if (aeron_udp_channel_transport_init(transport, bind_addr, multicast_if_addr, connect_addr, params, context,
                                             affinity) < 0)
                return -1;
        t->kernel = true;
        transport->bindings_clientd = t;
        return 0;
}

static int spa_init(aeron_udp_channel_transport_t *transport, struct sockaddr_storage *bind_addr,
                    struct sockaddr_storage *multicast_if_addr, struct sockaddr_storage *connect_addr,
                    aeron_udp_channel_transport_params_t *params, aeron_driver_context_t *context,
                    aeron_udp_channel_transport_affinity_t affinity)
{
        char ip[INET_ADDRSTRLEN], mine[INET_ADDRSTRLEN];
        enum spa_role_id role = affinity == AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER     ? SPA_SENDER
                                : affinity == AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER ? SPA_RECEIVER
                                                                                            : SPA_CONDUCTOR;
        int r;

        transport->fd = -1;
        transport->recv_fd = -1;
        transport->bindings_clientd = NULL;
        transport->connected_address = NULL;
        transport->timestamp_flags = AERON_UDP_CHANNEL_TRANSPORT_MEDIA_RCV_TIMESTAMP_NONE;
        transport->error_log = context->error_log;
        transport->errors_counter = aeron_system_counter_addr(context->system_counters, AERON_SYSTEM_COUNTER_ERRORS);
        for (size_t i = 0; i < AERON_UDP_CHANNEL_TRANSPORT_MAX_INTERCEPTORS; i++)
                transport->interceptor_clientds[i] = NULL;
        if (ensure_init(context) < 0)
                return -1;
        CHECK_CONDUCTOR("init");
        if (!params || !bind_addr) {
                AERON_SET_ERR(EINVAL, "%s", "spinlane: init without an address or parameters");
                return -1;
        }
        struct spa_transport *t = calloc(1, sizeof(*t));
        if (!t) {
                AERON_SET_ERR(ENOMEM, "%s", "spinlane: out of memory for a transport");
                return -1;
        }
        pthread_mutex_lock(&g.lock);
        t->id = ++g.next_id;
        t->agent = &g.agents[role];
        t->transport = transport;
        t->rcvbuf = params->socket_rcvbuf ? params->socket_rcvbuf : 2 * 1024 * 1024;

        /* the conductor's own transports and channels bound to 127/8 stay on kernel UDP
         * (a loopback peer gains nothing from the NIC, and the NIC cannot reach it) */
        if (role == SPA_CONDUCTOR || is_loopback(bind_addr)) {
                r = init_kernel(t, transport, bind_addr, multicast_if_addr, connect_addr, params, context, affinity);
                goto done;
        }
        struct spa_port *p = t->agent->port;
        const char *var = role == SPA_SENDER ? BYPASS_ROLE_SENDER : BYPASS_ROLE_RECEIVER;
        fmt_ip(p->cfg->ipv4, mine, sizeof(mine));
        if (bind_addr->ss_family != AF_INET) {
                AERON_SET_ERR(EAFNOSUPPORT, "%s", "spinlane: IPv6 channels cannot be served by the DPDK transport (IPv4 only)");
                r = -1;
                goto done;
        }
        const struct sockaddr_in *bind = (const struct sockaddr_in *)bind_addr;
        uint32_t bip = bind->sin_addr.s_addr;
        fmt_ip(bip, ip, sizeof(ip));
        if (params->mtu_length > p->mtu) {
                AERON_SET_ERR(EMSGSIZE, "spinlane: the channel's MTU %zu is above the DPDK port's %u (AERON_MTU_LENGTH)",
                              params->mtu_length, (unsigned)p->mtu);
                r = -1;
                goto done;
        }
        if (tr_ipv4_is_multicast(bip)) {
                if (multicast_if_addr && multicast_if_addr->ss_family == AF_INET) {
                        uint32_t ifip = ((const struct sockaddr_in *)multicast_if_addr)->sin_addr.s_addr;
                        if (ifip != 0 && !ours(ifip)) {
                                char ifs[INET_ADDRSTRLEN];
                                fmt_ip(ifip, ifs, sizeof(ifs));
                                AERON_SET_ERR(EADDRNOTAVAIL,
                                              "spinlane: multicast interface %s is not the %s NIC's address %s (" BYPASS_ENV_ROLE("%s", BYPASS_IPV4) "): use interface=%s or leave it out",
                                              ifs, role_names[role], mine, var, mine);
                                r = -1;
                                goto done;
                        }
                }
                r = join_locked(p, bip);
                if (r < 0) {
                        AERON_SET_ERR(-r, "spinlane: cannot join %s on the %s NIC: %s", ip, role_names[role], strerror(-r));
                        r = -1;
                        goto done;
                }
                t->group = bip;
        } else if (bip != 0 && bip != p->cfg->ipv4) {
                AERON_SET_ERR(EADDRNOTAVAIL,
                              "spinlane: bind address %s:%u is not the %s NIC's address %s (" BYPASS_ENV_ROLE("%s", BYPASS_IPV4) ") nor 0.0.0.0: the DPDK transport cannot serve this channel",
                              ip, ntohs(bind->sin_port), role_names[role], mine, var);
                r = -1;
                goto done;
        }
        r = tr_endpoint_open(p->tp, bind, t, &t->ep);
        if (r < 0) {
                if (t->group)
                        leave_locked(p, t->group);
                AERON_SET_ERR(-r, "spinlane: cannot bind %s:%u on the %s NIC: %s", ip, ntohs(bind->sin_port),
                              role_names[role], strerror(-r));
                r = -1;
                goto done;
        }
        transport->connected_address = connect_addr;
        transport->bindings_clientd = t;
        r = 0;
done:
        if (r == 0)
                g.refs++;
        pthread_mutex_unlock(&g.lock);
        if (r < 0)
                free(t);
        return r < 0 ? -1 : 0;
}

static int spa_reconnect(aeron_udp_channel_transport_t *transport, struct sockaddr_storage *connect_addr)
{
        struct spa_transport *t = transport->bindings_clientd;

        if (t && t->kernel)
                return aeron_udp_channel_transport_reconnect(transport, connect_addr);
        if (t && connect_addr && transport->connected_address)
                transport->connected_address = connect_addr;
        return 0;
}

static int spa_close(aeron_udp_channel_transport_t *transport)
{
        struct spa_transport *t = transport->bindings_clientd;

        if (!t)
                return 0; /* init failed, or closed already */
        CHECK_CLOSE(t->agent);
        pthread_mutex_lock(&g.lock);
        if (t->kernel)
                aeron_udp_channel_transport_close(transport);
        else {
                tr_endpoint_close(t->ep);
                if (t->group)
                        leave_locked(t->agent->port, t->group);
        }
        transport->bindings_clientd = NULL;
        free(t);
        unref_locked();
        pthread_mutex_unlock(&g.lock);
        return 0;
}

static int spa_get_so_rcvbuf(aeron_udp_channel_transport_t *transport, size_t *so_rcvbuf)
{
        struct spa_transport *t = transport->bindings_clientd;

        if (t->kernel)
                return aeron_udp_channel_transport_get_so_rcvbuf(transport, so_rcvbuf);
        *so_rcvbuf = t->rcvbuf; /* no socket: what was asked for (the RX ring is the buffer) */
        return 0;
}

static int spa_bind_addr_and_port(aeron_udp_channel_transport_t *transport, char *buffer, size_t length)
{
        struct spa_transport *t = transport->bindings_clientd;
        struct sockaddr_storage ss;

        if (t->kernel)
                return aeron_udp_channel_transport_bind_addr_and_port(transport, buffer, length);
        memset(&ss, 0, sizeof(ss));
        tr_endpoint_local(t->ep, (struct sockaddr_in *)&ss);
        return aeron_format_source_identity(buffer, length, &ss);
}

/* ---- pollers (init/close on the main thread; add/remove on the agent's own) ---- */

static int spa_poller_init(aeron_udp_transport_poller_t *poller, aeron_driver_context_t *context,
                           aeron_udp_channel_transport_affinity_t affinity)
{
        enum spa_role_id role = affinity == AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER     ? SPA_SENDER
                                : affinity == AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER ? SPA_RECEIVER
                                                                                            : SPA_CONDUCTOR;

        poller->transports.array = NULL;
        poller->transports.length = 0;
        poller->transports.capacity = 0;
        poller->fd = -1;
        poller->bindings_clientd = NULL;
        if (ensure_init(context) < 0)
                return -1;
        pthread_mutex_lock(&g.lock);
        struct spa_agent *a = &g.agents[role];
        if (a->poller) {
                pthread_mutex_unlock(&g.lock);
                AERON_SET_ERR(EBUSY, "spinlane: a second %s poller in one process", role_names[role]);
                return -1;
        }
        a->poller = poller;
        poller->bindings_clientd = a;
        g.refs++;
        pthread_mutex_unlock(&g.lock);
        return 0;
}

static int spa_poller_close(aeron_udp_transport_poller_t *poller)
{
        struct spa_agent *a = poller->bindings_clientd;

        free(poller->transports.array);
        poller->transports.array = NULL;
        poller->transports.length = poller->transports.capacity = 0;
        if (!a)
                return 0;
        pthread_mutex_lock(&g.lock);
        /* the agent's thread is gone (Aeron closes agents after joining them) */
        if (a->refresh && a->port && a->port->tp)
                spa_counters_refresh(a->port);
        a->poller = NULL;
        a->n_dpdk = a->n_kernel = 0;
        poller->bindings_clientd = NULL;
        unref_locked();
        pthread_mutex_unlock(&g.lock);
        return 0;
}

static int push_ptr(struct spa_transport ***arr, unsigned *n, unsigned *cap, struct spa_transport *t)
{
        if (*n == *cap) {
                unsigned nc = *cap ? *cap * 2 : 8;
                struct spa_transport **na = realloc(*arr, nc * sizeof(*na));
                if (!na)
                        return -ENOMEM;
                *arr = na;
                *cap = nc;
        }
        (*arr)[(*n)++] = t;
        return 0;
}

static void drop_ptr(struct spa_transport **arr, unsigned *n, struct spa_transport *t)
{
        for (unsigned i = 0; i < *n; i++)
                if (arr[i] == t) {
                        arr[i] = arr[--*n];
                        return;
                }
}

static int spa_poller_add(aeron_udp_transport_poller_t *poller, aeron_udp_channel_transport_t *transport)
{
        struct spa_agent *a = poller->bindings_clientd;
        struct spa_transport *t = transport->bindings_clientd;

        agent_enter(a, "poller add");
        if (!t) {
                AERON_SET_ERR(EINVAL, "%s", "spinlane: poller add of a transport that is not open");
                return -1;
        }
        if (t->agent != a) {
                AERON_SET_ERR(EINVAL, "spinlane: a %s transport added to the %s poller", role_names[t->agent->role],
                              role_names[a->role]);
                return -1;
        }
        /* the driver walks poller->transports itself (endpoint re-resolution) */
        if (poller->transports.length == poller->transports.capacity) {
                size_t nc = poller->transports.capacity ? poller->transports.capacity * 2 : 8;
                aeron_udp_channel_transport_entry_t *na = realloc(poller->transports.array, nc * sizeof(*na));
                if (!na) {
                        AERON_SET_ERR(ENOMEM, "%s", "spinlane: poller add");
                        return -1;
                }
                poller->transports.array = na;
                poller->transports.capacity = nc;
        }
        int r = t->kernel ? push_ptr(&a->kernel, &a->n_kernel, &a->cap_kernel, t)
                          : push_ptr(&a->dpdk, &a->n_dpdk, &a->cap_dpdk, t);
        if (r < 0) {
                AERON_SET_ERR(ENOMEM, "%s", "spinlane: poller add");
                return -1;
        }
        poller->transports.array[poller->transports.length++].transport = transport;
        t->polled = true;
        return 0;
}

static int spa_poller_remove(aeron_udp_transport_poller_t *poller, aeron_udp_channel_transport_t *transport)
{
        struct spa_agent *a = poller->bindings_clientd;
        struct spa_transport *t = transport->bindings_clientd;

        agent_enter(a, "poller remove");
        for (size_t i = 0; i < poller->transports.length; i++)
                if (poller->transports.array[i].transport == transport) {
                        poller->transports.array[i] = poller->transports.array[--poller->transports.length];
                        break;
                }
        if (t) {
                t->polled = false;
                drop_ptr(a->dpdk, &a->n_dpdk, t);
                drop_ptr(a->kernel, &a->n_kernel, t);
        }
        return 0;
}

/* The bindings object Aeron looks up by name (AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA):
 * exported and writable, the driver fills in meta_info.source_symbol. */
SPA_EXPORT aeron_udp_channel_transport_bindings_t spinlane_udp_channel_transport_bindings = {
        .init_func = spa_init,
        .reconnect_func = spa_reconnect,
        .close_func = spa_close,
        .recvmmsg_func = spa_recvmmsg,
        .send_func = spa_send,
        .get_so_rcvbuf_func = spa_get_so_rcvbuf,
        .bind_addr_and_port_func = spa_bind_addr_and_port,
        .poller_init_func = spa_poller_init,
        .poller_close_func = spa_poller_close,
        .poller_add_func = spa_poller_add,
        .poller_remove_func = spa_poller_remove,
        .poller_poll_func = spa_poller_poll,
        .meta_info = { .name = "spinlane", .type = "media", .source_symbol = NULL },
};
