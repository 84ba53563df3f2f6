/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation and refresh of the adapter's Aeron counters. Allocation runs once on the
 * driver's main thread before the conductor starts; refresh runs on the thread polling
 * the port's queue 0, about ten times a second. Never logs. */
#include "spa-counters.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "concurrent/aeron_counters_manager.h"
#include "util/aeron_error.h"

/* Each fixed port counter: its name and the transport counter it shows (the offset of a
 * uint64_t in struct tr_counters; SPA_FIELD_NONE: computed). */
#define SPA_FIELD_NONE SIZE_MAX
static const struct {
        const char *name;
        size_t field;
} fixed[SPA_PC__FIXED] = {
        [SPA_PC_RX_FRAMES] = { "rx frames", offsetof(struct tr_counters, rx_frames) },
        [SPA_PC_RX_DATAGRAMS] = { "rx datagrams", offsetof(struct tr_counters, rx_datagrams) },
        [SPA_PC_RX_BYTES] = { "rx bytes", offsetof(struct tr_counters, rx_bytes) },
        [SPA_PC_TX_DATAGRAMS] = { "tx datagrams", offsetof(struct tr_counters, tx_datagrams) },
        [SPA_PC_TX_BYTES] = { "tx bytes", offsetof(struct tr_counters, tx_bytes) },
        [SPA_PC_HOST_LOCAL_RX] = { "host-local rx", offsetof(struct tr_counters, host_local_rx) },
        [SPA_PC_HOST_LOCAL_TX] = { "host-local tx", offsetof(struct tr_counters, host_local_tx) },
        [SPA_PC_WB_RING] = { "would-block tx ring full", offsetof(struct tr_counters, tx_wouldblock_ring) },
        [SPA_PC_WB_NOMBUF] = { "would-block no mbuf", offsetof(struct tr_counters, tx_wouldblock_nombuf) },
        [SPA_PC_WB_ARP] = { "would-block next hop unresolved", offsetof(struct tr_counters, tx_wouldblock_arp) },
        [SPA_PC_ARP_REQ_RX] = { "arp requests rx", offsetof(struct tr_counters, arp_requests_rx) },
        [SPA_PC_ARP_REP_RX] = { "arp replies rx", offsetof(struct tr_counters, arp_replies_rx) },
        [SPA_PC_ARP_REQ_TX] = { "arp requests tx", offsetof(struct tr_counters, arp_requests_tx) },
        [SPA_PC_ARP_REP_TX] = { "arp replies tx", offsetof(struct tr_counters, arp_replies_tx) },
        [SPA_PC_GARP_TX] = { "gratuitous arp tx", offsetof(struct tr_counters, garp_tx) },
        [SPA_PC_IGMP_RX] = { "igmp rx", offsetof(struct tr_counters, igmp_rx) },
        [SPA_PC_IGMP_TX] = { "igmp reports tx", offsetof(struct tr_counters, igmp_reports_tx) },
        [SPA_PC_DROPS_TOTAL] = { "drops total", SPA_FIELD_NONE }, /* tr_counters_drops */
        [SPA_PC_ARP_REPROBE_TX] = { "arp reprobes tx", offsetof(struct tr_counters, arp_reprobes_tx) },
        [SPA_PC_PROBE_RX] = { "probe requests rx", offsetof(struct tr_counters, probe_rx) },
        [SPA_PC_PROBE_TX] = { "probe replies tx", offsetof(struct tr_counters, probe_tx) },
};

static const char *const agent_names[SPA_AC__MAX] = {
        [SPA_AC_HANDOFF_OUT] = "hand-off out",
        [SPA_AC_HANDOFF_IN] = "hand-off in",
        [SPA_AC_HANDOFF_FULL] = "hand-off ring full drops",
        [SPA_AC_HANDOFF_STALE] = "hand-off stale drops",
        [SPA_AC_NOT_POLLED] = "not yet polled drops",
        [SPA_AC_LCORE] = "lcore id",
        [SPA_AC_THREAD_CHECKS] = "thread checks",
};

void spa_counter_name(unsigned i, char *buf, size_t len)
{
        if (i < SPA_PC__FIXED)
                snprintf(buf, len, "%s", fixed[i].name);
        else if (i - SPA_PC__FIXED + 1 < TR_DROP__MAX)
                snprintf(buf, len, "drop %s", tr_drop_name((enum tr_drop)(i - SPA_PC__FIXED + 1)));
        else
                snprintf(buf, len, "?");
}

static int type_of(unsigned i)
{
        if (i <= SPA_PC_HOST_LOCAL_TX)
                return SPA_COUNTER_TYPE_PORT_TRAFFIC;
        if (i <= SPA_PC_WB_ARP)
                return SPA_COUNTER_TYPE_PORT_WOULD_BLOCK;
        if (i <= SPA_PC_IGMP_TX || i == SPA_PC_ARP_REPROBE_TX)
                return SPA_COUNTER_TYPE_PORT_ARP;
        if (i == SPA_PC_PROBE_RX || i == SPA_PC_PROBE_TX)
                return SPA_COUNTER_TYPE_PORT_PROBE;
        return SPA_COUNTER_TYPE_PORT_DROP;
}

struct counter_key {
        int32_t index; /* port index, or 100 + role for agents */
        int32_t item;
};

static int alloc_one(aeron_counters_manager_t *cm, int type, int32_t index, int32_t item, const char *label,
                     volatile int64_t **ret, char *err, size_t errlen)
{
        struct counter_key key = { .index = index, .item = item };
        int32_t id = aeron_counters_manager_allocate(cm, type, (const uint8_t *)&key, sizeof(key), label, strlen(label));
        if (id < 0) {
                snprintf(err, errlen, "%s: %s", label, aeron_errmsg());
                return -ENOSPC;
        }
        *ret = aeron_counters_manager_addr(cm, id);
        return 0;
}

int spa_counters_alloc(struct aeron_counters_manager_stct *cm, struct spa_port *ports, unsigned n_ports,
                       struct spa_agent *agents, char *err, size_t errlen)
{
        char label[256], name[64], ip[INET_ADDRSTRLEN];
        int r;

        for (unsigned p = 0; p < n_ports; p++) {
                if (!inet_ntop(AF_INET, &ports[p].cfg->ipv4, ip, sizeof(ip)))
                        snprintf(ip, sizeof(ip), "?");
                for (unsigned i = 0; i < SPA_PORT_COUNTERS; i++) {
                        spa_counter_name(i, name, sizeof(name));
                        snprintf(label, sizeof(label), "spinlane %s: %s %s/%u", name, ports[p].cfg->device,
                                 ip, ports[p].cfg->prefix_len);
                        r = alloc_one(cm, type_of(i), (int32_t)p, (int32_t)i, label, &ports[p].counters[i], err, errlen);
                        if (r < 0)
                                return r;
                }
        }
        for (unsigned a = 0; a < SPA_CONDUCTOR + 1; a++) {
                static const char *const roles[] = { "sender", "receiver", "conductor" };
                for (unsigned i = 0; i < SPA_AC__MAX; i++) {
#ifndef SPA_CHECK_THREADS
                        if (i == SPA_AC_THREAD_CHECKS)
                                continue;
#endif
                        if (a == SPA_CONDUCTOR && i != SPA_AC_THREAD_CHECKS)
                                continue;
                        if (a != SPA_CONDUCTOR && !agents[a].port)
                                continue;
                        snprintf(label, sizeof(label), "spinlane %s %s", roles[a], agent_names[i]);
                        r = alloc_one(cm, SPA_COUNTER_TYPE_AGENT, 100 + (int32_t)a, (int32_t)i, label, &agents[a].counters[i],
                                      err, errlen);
                        if (r < 0)
                                return r;
                        if (i == SPA_AC_LCORE)
                                __atomic_store_n(agents[a].counters[i], -1, __ATOMIC_RELEASE); /* not started */
                }
        }
        return 0;
}

void spa_counters_refresh(struct spa_port *p)
{
        struct tr_counters c;
        uint64_t v[SPA_PORT_COUNTERS];

        tr_port_counters(p->tp, &c);
        for (unsigned i = 0; i < SPA_PC__FIXED; i++)
                if (fixed[i].field != SPA_FIELD_NONE)
                        memcpy(&v[i], (const char *)&c + fixed[i].field, sizeof(v[i]));
        v[SPA_PC_DROPS_TOTAL] = tr_counters_drops(&c);
        for (unsigned d = 1; d < TR_DROP__MAX; d++)
                v[SPA_PC__FIXED + d - 1] = c.drops[d];
        for (unsigned i = 0; i < SPA_PORT_COUNTERS; i++)
                if (p->counters[i])
                        __atomic_store_n(p->counters[i], (int64_t)v[i], __ATOMIC_RELEASE);
}
