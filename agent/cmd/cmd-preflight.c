/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent preflight [--root DIR] [--config FILE] [--json]`: a short inventory of
 * this node, then the node verdicts and their summary on stdout. Exit 0 when nothing
 * fails, 1 when a check fails, 2 on a usage or internal error. Read-only. */
#include "cmd.h"

#include "checks.h"
#include "cleanup.h"
#include "config.h"
#include "device-map.h"
#include "hostfs.h"
#include "inventory.h"
#include "ipv4.h"
#include "select.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The node in a few facts: the first line of the human output, or {"node":{...}}. */
static json_t *node_summary(const inventory *inv)
{
        char online[256], iso[256], pool[256];
        size_t ncores = 0, nready = 0;

        cpuset_format(&inv->online, online, sizeof(online));
        cpuset_format(&inv->isolated, iso, sizeof(iso));
        cpuset_format(&inv->pool, pool, sizeof(pool));
        for (size_t i = 0; i < inv->n_cores; i++)
                ncores += inv->cores[i].isolated;
        json_t *nics = json_array();
        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                nready += device_map_nic_ready(n);
                json_array_append_new(nics, json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "pci", n->pci, "kind",
                                                      inv_nic_kind_name(n->kind), "driver", n->driver, "netdev",
                                                      n->netdev, "primary", n->primary, "dpdk_ready", n->dpdk_ready));
        }
        json_t *huge = json_array();
        for (size_t i = 0; i < inv->n_huge; i++)
                json_array_append_new(huge, json_pack("{s:I,s:I,s:I}", "size_kb", (json_int_t)inv->huge[i].size_kb,
                                                      "free", (json_int_t)inv->huge[i].free, "total",
                                                      (json_int_t)inv->huge[i].total));
        json_t *probs = json_array();
        for (size_t i = 0; i < inv->n_problems; i++)
                json_array_append_new(probs, json_pack("{s:s,s:s,s:s}", "path", inv->problems[i].path, "error",
                                                       strerror(-inv->problems[i].err), "what",
                                                       inv->problems[i].what));
        return json_pack("{s:s,s:s,s:s,s:i,s:i,s:b,s:i,s:o,s:i,s:o,s:s,s:o}", "online", online, "isolated", iso,
                         "pool", pool, "pool_cores", (int)ncores, "cores", (int)inv->n_cores, "smt", inv->smt,
                         "numa_nodes", (int)inv->n_numa, "nics", nics, "dpdk_ready_nics", (int)nready, "hugepages",
                         huge, "cgroup", inv_cgroup_name(inv->cgroup), "problems", probs);
}

static void print_human_summary(const inventory *inv, FILE *f)
{
        char online[256], iso[256];
        size_t ncores = 0;

        cpuset_format(&inv->online, online, sizeof(online));
        cpuset_format(&inv->isolated, iso, sizeof(iso));
        for (size_t i = 0; i < inv->n_cores; i++)
                ncores += inv->cores[i].isolated;
        fprintf(f, "node: CPUs %s (%zu cores%s, %zu NUMA node%s), isolated \"%s\" (%zu whole core%s)\n", online,
                inv->n_cores, inv->smt ? ", SMT" : "", inv->n_numa, inv->n_numa == 1 ? "" : "s", iso, ncores,
                ncores == 1 ? "" : "s");
        for (size_t i = 0; i < inv->n_nics; i++) {
                const inv_nic *n = &inv->nics[i];
                char addr[64] = "";
                if (n->addr.state == INV_ADDR_KNOWN) {
                        char cidr[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX];
                        snprintf(addr, sizeof(addr), " ipv4=%s%s%s (%s)",
                                 ipv4_cidr_format((ipv4_cidr){n->addr.ipv4, n->addr.prefix_len}, cidr),
                                 n->addr.gateway ? " gateway=" : "", n->addr.gateway ? ipv4_format(n->addr.gateway, gw) : "",
                                 n->addr.source);
                }
                fprintf(f, "nic: %s %04x:%04x %s driver=%s%s%s numa=%d%s%s: %s\n", n->pci, n->vendor, n->device,
                        inv_nic_kind_name(n->kind), n->driver[0] ? n->driver : "none", n->netdev[0] ? " netdev=" : "",
                        n->netdev, n->numa_node, n->primary ? " primary" : "", addr, n->dpdk_reason);
        }
        fprintf(f, "memory:");
        for (size_t i = 0; i < inv->n_huge; i++)
                fprintf(f, " %" PRIu64 "kB hugepages %" PRIu64 "/%" PRIu64 " free;", inv->huge[i].size_kb,
                        inv->huge[i].free, inv->huge[i].total);
        fprintf(f, " hugetlbfs:");
        for (size_t i = 0; i < inv->n_mounts; i++)
                fprintf(f, " %s", inv->mounts[i].path);
        fprintf(f, "%s; cgroup %s\n", inv->n_mounts ? "" : " none", inv_cgroup_name(inv->cgroup));
        for (size_t i = 0; i < inv->n_problems; i++)
                fprintf(f, "problem: %s: %s (%s)\n", inv->problems[i].path, strerror(-inv->problems[i].err),
                        inv->problems[i].what);
        if (inv->n_problems_dropped)
                fprintf(f, "problem: %zu more not shown\n", inv->n_problems_dropped);
}

int cmd_preflight(int argc, char **argv)
{
        static const char usage[] = "spinlane-agent preflight [--root DIR] [--config FILE] [--json]";
        verdict_list vl = {0};
        _cleanup_(agent_end) agent_cmd c;

        int r = agent_begin(argc, argv, usage, &c);
        if (r >= 0)
                return r;
        const agent_options *o = &c.o;
        const config *cfg = &c.cfg;
        const inventory *inv = c.inv;
        /* The config's NIC selection (the one preparation and the daemon use) and bind
         * driver. */
        kargs_state kst;
        char kerr[256];
        int kr = kargs_state_load(&c.h, &kst, kerr, sizeof(kerr));
        if (kr < 0)
                fprintf(stderr, "spinlane-agent preflight: %s: %s, ignoring\n", KARGS_STATE_PATH, kerr);
        checks_options copt = {
                .map = &c.map,
                .bind_driver = config_driver_name(cfg->binding.ena),
                .hugetlbfs_pod_mount = cfg->hugetlbfs.pod_mount,
                .hugetlbfs_mount_point = cfg->hugetlbfs.mount_point,
                .config = cfg,
                .kargs_state = kr > 0 ? &kst : NULL,
        };
        r = checks_node(inv, &copt, &vl);
        if (r < 0) {
                fprintf(stderr, "spinlane-agent preflight: checks failed: %s\n", strerror(-r));
                verdict_list_free(&vl);
                return AGENT_EXIT_ERROR;
        }
        if (o->json) {
                json_t *s = json_pack("{s:o}", "node", node_summary(inv));
                char *line = s ? json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                if (line)
                        printf("%s\n", line);
                free(line);
                json_decref(s);
        } else {
                print_human_summary(inv, stdout);
        }
        verdict_print(&vl, stdout, o->json);
        r = verdict_exit_code(&vl) ? AGENT_EXIT_FAIL : AGENT_EXIT_OK;
        verdict_list_free(&vl);
        return r;
}
