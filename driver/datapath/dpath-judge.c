/* SPDX-License-Identifier: Apache-2.0 */
/* The datapath verdicts from what was measured. Pure: no I/O, no globals, never logs. */
#include "dpath.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

uint64_t dpath_percentile(const uint64_t *sorted, unsigned n, unsigned pct)
{
        if (n == 0 || pct == 0)
                return 0;
        if (pct > 100)
                pct = 100;
        unsigned rank = (unsigned)(((uint64_t)n * pct + 99) / 100); /* ceil(n * pct / 100) */
        return sorted[(rank ? rank : 1) - 1];
}

static void ip_str(uint32_t ip, char *buf, size_t len)
{
        struct in_addr a = { .s_addr = ip };
        if (!inet_ntop(AF_INET, &a, buf, (socklen_t)len))
                snprintf(buf, len, "?");
}

static double us(uint64_t ns)
{
        return (double)ns / 1000.0;
}

#define REMEDY_LINK                                                                                                    \
        "Check that the NIC is attached and up on the node (the agent's nic-binding verdict), that the VF is not "     \
        "administratively down, and on AKS that the synthetic and VF interfaces are down (docs/launch.md, \"Reading "  \
        "the datapath line\")."
#define REMEDY_ARP                                                                                                     \
        "Nothing answered ARP for the next hop: check SPINLANE_NIC_<i>_GATEWAY (the subnet's first address on EKS and " \
        "AKS), that the ENI/NIC is in that subnet, that on MANA the MAC devarg names this NIC, and source/destination " \
        "checks (docs/launch.md, \"Reading the datapath line\")."
#define REMEDY_PROBE                                                                                                   \
        "The next hop answered ARP but the probes got no answer: check the security group (EKS) or network security " \
        "group (AKS) allows UDP to the probe port (SPINLANE_PROBE_PORT, default 39990) between the NICs, and that the " \
        "peer runs a spinlane driver with its probe responder on."
#define REMEDY_P99                                                                                                     \
        "The round trip is slower than SPINLANE_DATAPATH_MAX_P99_US allows: check placement (same AZ / proximity "     \
        "placement group), write-combining of the ENA BAR (the write-combining verdict), and that nothing else "       \
        "spins on the driver's cores; or raise the threshold."

static int judge_port(const struct dpath_port *p, const struct dpath_opts *o, verdict_list *vl)
{
        char ip[16], tgt[16], msg[1024];
        size_t n = 0;
        verdict_level level = VERDICT_PASS;
        const char *remedy = NULL;
        json_t *ev = json_object();

        ip_str(p->ip, ip, sizeof(ip));
        json_object_set_new(ev, "device", json_string(p->device));
        json_object_set_new(ev, "role", json_string(p->role));
        char cidr[24];
        snprintf(cidr, sizeof(cidr), "%s/%u", ip, p->prefix_len);
        json_object_set_new(ev, "ipv4", json_string(cidr));
#define ADD(...) (n += (size_t)snprintf(msg + n, n < sizeof(msg) ? sizeof(msg) - n : 0, __VA_ARGS__))
        ADD("%s %s (%s)", p->role, p->device, cidr);
        if (p->open_err < 0) {
                ADD(": the port did not start: %s", p->open_msg);
                return verdict_add(vl, "datapath", VERDICT_FAIL, ev, REMEDY_LINK, "%s", msg);
        }
        if (!p->link_up) {
                ADD(": link still down %u ms after the port started", o->timeout_ms);
                json_object_set_new(ev, "link_up", json_false());
                return verdict_add(vl, "datapath", VERDICT_FAIL, ev, REMEDY_LINK, "%s", msg);
        }
        ADD(": link up in %.1f ms", p->link_ms);
        json_object_set_new(ev, "link_up_ms", json_real(p->link_ms));
        if (p->arp_target) {
                ip_str(p->arp_target, tgt, sizeof(tgt));
                const char *who = p->arp_target_is_peer ? "peer" : "gateway";
                json_t *a = json_object();
                json_object_set_new(a, "target", json_string(tgt));
                json_object_set_new(a, "role", json_string(who));
                if (p->arp_ms < 0) {
                        ADD("; %s %s did not answer ARP within %u ms", who, tgt, o->timeout_ms);
                        json_object_set_new(a, "answered", json_false());
                        json_object_set_new(ev, "arp", a);
                        return verdict_add(vl, "datapath", VERDICT_FAIL, ev, REMEDY_ARP, "%s", msg);
                }
                ADD("; %s %s answered ARP in %.2f ms", who, tgt, p->arp_ms);
                json_object_set_new(a, "ms", json_real(p->arp_ms));
                json_object_set_new(ev, "arp", a);
        }
        json_t *rtts = json_array();
        for (unsigned i = 0; i < p->n_rtt; i++) {
                const struct dpath_rtt *t = &p->rtt[i];
                json_t *j = json_object();
                json_object_set_new(j, "to", json_string(t->to));
                json_object_set_new(j, "sent", json_integer(t->sent));
                json_object_set_new(j, "answered", json_integer(t->answered));
                json_array_append_new(rtts, j);
                if (t->arp_ms < 0) {
                        ADD("; %s: its next hop did not answer ARP within %u ms", t->to, o->timeout_ms);
                        level = VERDICT_FAIL;
                        remedy = REMEDY_ARP;
                        continue;
                }
                if (t->answered == 0) {
                        ADD("; %s: none of %u UDP probes answered", t->to, t->sent);
                        level = VERDICT_FAIL;
                        remedy = REMEDY_PROBE;
                        continue;
                }
                ADD("; %u round trips to %s: p50 %.1f us, p99 %.1f us, max %.1f us", t->answered, t->to, us(t->p50_ns),
                    us(t->p99_ns), us(t->max_ns));
                json_object_set_new(j, "p50_us", json_real(us(t->p50_ns)));
                json_object_set_new(j, "p99_us", json_real(us(t->p99_ns)));
                json_object_set_new(j, "max_us", json_real(us(t->max_ns)));
                if (o->max_p99_us && t->p99_ns > (uint64_t)o->max_p99_us * 1000) {
                        ADD(" (above SPINLANE_DATAPATH_MAX_P99_US=%u)", o->max_p99_us);
                        level = VERDICT_FAIL;
                        remedy = REMEDY_P99;
                } else if (t->answered < t->sent) {
                        ADD(" (%u of %u probes unanswered)", t->sent - t->answered, t->sent);
                        if (level == VERDICT_PASS)
                                level = VERDICT_WARN;
                }
        }
        json_object_set_new(ev, "rtt", rtts);
        if (p->n_rtt == 0 && p->note[0])
                ADD("; no round trip: %s", p->note);
        if (!p->arp_target && p->n_rtt == 0 && level == VERDICT_PASS) {
                ADD("; nothing on the network was asked (no gateway, no second NIC, no SPINLANE_DATAPATH_PEER)");
                level = VERDICT_WARN;
        }
#undef ADD
        if (n >= sizeof(msg))
                memcpy(msg + sizeof(msg) - 4, "...", 4);
        return verdict_add(vl, "datapath", level, ev, remedy, "%s", msg);
}

int dpath_judge(const struct dpath_result *r, const struct dpath_opts *o, verdict_list *vl)
{
        if (r->eal_err < 0)
                return verdict_add(vl, "datapath", VERDICT_FAIL, NULL,
                                   "The same EAL arguments start the driver: see the EAL's message; check hugepages and the device nodes.",
                                   "the DPDK EAL did not start with the driver's arguments: %s", r->eal_msg);
        for (unsigned i = 0; i < r->n_ports; i++) {
                int k = judge_port(&r->port[i], o, vl);
                if (k < 0)
                        return k;
        }
        return 0;
}
