/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation in the event loop on an emulated node: refuses to start on a bad
 * config; applies at start; a bad config written over the file is rejected and the last
 * good one kept; a good change is applied; SIGHUP-style forced reload; a link reset and
 * an IRQ drift each re-apply tuning; the one-shot path's exit codes. */
#include "prep-daemon.h"

#include "cleanup.h"
#include "log.h"
#include "nodeprep-test.h"
#include "sysfs-emu.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#define PRIM "0000:00:05.0"
#define ENA1 "0000:00:06.0"
#define NR "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"

static char cfg_dir[64], cfg_path[128];

static void write_config(const char *text)
{
        /* As an editor would: a new file renamed over the old one. */
        char tmp[160];
        snprintf(tmp, sizeof(tmp), "%s.tmp", cfg_path);
        FILE *f = fopen(tmp, "w");
        fputs(text, f);
        fclose(f);
        CHECK_INT(rename(tmp, cfg_path), 0);
}

static void node(emu *e)
{
        CHECK_INT(emu_init(e), 0);
        emu_add_driver(e, "ena");
        emu_add_driver(e, "vfio-pci");
        emu_add_nic(e, PRIM, "0x1d0f\n", "0xec20\n", "ena", "ena", "eth0");
        emu_add_nic(e, ENA1, "0x1d0f\n", "0xec20\n", "ena", "ena", "eth1");
        emu_write_file(e, "/proc/net/route",
                       "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                       "eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n");
        emu_write_file(e, NR, "0\n");
        emu_write_file(e, "/proc/mounts", "nodev /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n");
        emu_write_file(e, "/proc/interrupts", "  CPU0 CPU1\n 30: 1 1 PCI-MSI 1-edge eth0-Tx-Rx-0\n");
        emu_write_file(e, "/proc/irq/30/smp_affinity_list", "0-1\n");
}

static int coalesce_calls;
static int fake_coalesce(void *ud, const char *ifname)
{
        (void)ud, (void)ifname;
        coalesce_calls++;
        return 0;
}

/* Run the loop until cond holds or timeout_ms passes (a bound, TEST_WAIT_MS: the check
 * after it says whether cond came). */
#define RUN_UNTIL(l, cond, timeout_ms)                                                     \
        do {                                                                               \
                uint64_t _end = loop_now_ms() + (timeout_ms);                              \
                while (!(cond) && loop_now_ms() < _end)                                    \
                        loop_run_once((l), 20);                                            \
        } while (0)

/* A scan that reports one kernel NIC whose netdev is a veth of our netns. */
static int veth_scan(void *ud, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n)
{
        (void)ud, (void)h;
        if (max < 1)
                return -E2BIG;
        memset(ret, 0, sizeof(*ret));
        snprintf(ret->pci, sizeof(ret->pci), "0000:00:09.0");
        snprintf(ret->netdev, sizeof(ret->netdev), "sl-np-d0");
        snprintf(ret->driver, sizeof(ret->driver), "ena");
        ret->kind = CONFIG_KIND_ENA;
        ret->vendor = 0x1d0f;
        ret->device = 0xec20;
        *ret_n = 1;
        return 0;
}

static int sh(const char *cmd)
{
        char buf[512];
        snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd);
        return system(buf);
}

/* The daemon's own rtnetlink socket in a netns of ours: a veth's carrier drops and comes
 * back, the loop sees it and re-applies tuning. */
static void test_real_netlink(void)
{
        const char *missing = test_netns_missing();
        if (missing) {
                printf("SKIP real rtnetlink: %s\n", missing);
                return;
        }
        sh("ip netns del sl-np-daemon"); /* a leftover of an interrupted run */
        int r = sh("ip netns add sl-np-daemon");
        CHECK_INT(r, 0); /* the machine can (checked above): a failure, and nothing to go on with */
        if (r != 0)
                return;
        CHECK_INT(sh("ip -n sl-np-daemon link add sl-np-d0 type veth peer name sl-np-d1"), 0);
        CHECK_INT(sh("ip -n sl-np-daemon link set sl-np-d1 up"), 0);
        CHECK_INT(sh("ip -n sl-np-daemon link set sl-np-d0 up"), 0);
        int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        int ns = open("/var/run/netns/sl-np-daemon", O_RDONLY | O_CLOEXEC);
        CHECK(self >= 0 && ns >= 0);
        CHECK_INT(setns(ns, CLONE_NEWNET), 0);

        emu e;
        loop *l = NULL;
        prep_daemon *d = NULL;
        node(&e);
        CHECK_INT(loop_new(&l), 0);
        prep_ops ops = {0};
        ops.sysfs = emu_ops(&e);
        ops.tune.coalesce_off = fake_coalesce;
        ops.tune.write = emu_ops_template.write;
        ops.tune.userdata = &e;
        write_config("{\"tuning\":{\"interrupt_moderation_off\":true}}");
        prep_daemon_options o = {.config_path = cfg_path, .scan = veth_scan, .ops = &ops, .drift_check_ms = 60000};
        CHECK_INT(prep_daemon_new(l, &e.h, &o, &d), 0);
        int calls = coalesce_calls;
        /* Carrier of d0 drops when its peer goes down, and comes back. */
        CHECK_INT(sh("ip link set sl-np-d1 down"), 0);
        RUN_UNTIL(l, 0, 100);
        CHECK_INT(sh("ip link set sl-np-d1 up"), 0);
        RUN_UNTIL(l, prep_daemon_get_stats(d).resets_seen >= 1 && prep_daemon_get_stats(d).retunes >= 1,
                  TEST_WAIT_MS);
        prep_daemon_stats st = prep_daemon_get_stats(d);
        printf("real: rtnetlink in netns -> %u reset(s) seen, %u re-tune(s)\n", st.resets_seen, st.retunes);
        CHECK(st.resets_seen >= 1);
        CHECK(st.retunes >= 1);
        CHECK(coalesce_calls > calls);
        prep_daemon_free(d);
        loop_free(l);
        emu_cleanup(&e);
        CHECK_INT(setns(self, CLONE_NEWNET), 0);
        close(self);
        close(ns);
        CHECK_INT(sh("ip netns del sl-np-daemon"), 0);
}

/* A ConfigMap volume as the kubelet lays it out: dir/..<ts>/config.json, dir/..data ->
 * ..<ts>, dir/config.json -> ..data/config.json. An update writes a new ..<ts> dir, points
 * a ..data_tmp symlink at it and renames that over ..data: config.json itself never
 * changes, so only the ..data rename tells. */
static void cm_version(const char *dir, int version, const char *text)
{
        char p[256], q[300];
        snprintf(p, sizeof(p), "%s/..2026_%02d", dir, version);
        CHECK_INT(mkdir(p, 0755), 0);
        snprintf(q, sizeof(q), "%s/config.json", p);
        FILE *f = fopen(q, "w");
        CHECK(f != NULL);
        fputs(text, f);
        fclose(f);
        snprintf(p, sizeof(p), "..2026_%02d", version);
        snprintf(q, sizeof(q), "%s/..data_tmp", dir);
        CHECK_INT(symlink(p, q), 0);
        snprintf(p, sizeof(p), "%s/..data", dir);
        CHECK_INT(rename(q, p), 0);
        if (version > 1) { /* the old version goes */
                snprintf(p, sizeof(p), "%s/..2026_%02d/config.json", dir, version - 1);
                CHECK_INT(unlink(p), 0);
                snprintf(p, sizeof(p), "%s/..2026_%02d", dir, version - 1);
                CHECK_INT(rmdir(p), 0);
        }
}

static int changed_calls;
static void on_changed(void *ud)
{
        CHECK(ud == &changed_calls);
        changed_calls++;
}

static void test_configmap(loop *l, emu *e, const prep_daemon_options *base)
{
        char dir[64], path[128], p[160];
        prep_daemon *d = NULL;
        prep_daemon_options o = *base;

        snprintf(dir, sizeof(dir), "/tmp/sl-np-cm-XXXXXX");
        CHECK(mkdtemp(dir) != NULL);
        cm_version(dir, 1, "{\"hugepages\":{\"per_node\":{\"0\":4}}}");
        snprintf(path, sizeof(path), "%s/config.json", dir);
        CHECK_INT(symlink("..data/config.json", path), 0);
        o.config_path = path;
        o.on_config_changed = on_changed;
        o.userdata = &changed_calls;
        CHECK_INT(prep_daemon_new(l, &e->h, &o, &d), 0);
        CHECK_INT(changed_calls, 0);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 4);
        CHECK_STR(emu_read(e, NR), "4");

        cm_version(dir, 2, "{\"hugepages\":{\"per_node\":{\"0\":12}}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).applies == 2, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_get_stats(d).applies, 2);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 12);
        CHECK_STR(emu_read(e, NR), "12");
        CHECK_INT(changed_calls, 1); /* the users of the config are told */

        /* A bad update: rejected, the last good config stays. */
        cm_version(dir, 3, "{\"hugepages\":{\"per_node\":{\"0\":\"many\"}}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).reloads_rejected == 1, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_get_stats(d).reloads_rejected, 1);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 12);
        CHECK_STR(emu_read(e, NR), "12");

        /* Fixed again. */
        cm_version(dir, 4, "{\"hugepages\":{\"per_node\":{\"0\":6}}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).applies == 3, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 6);
        CHECK_STR(emu_read(e, NR), "6");
        CHECK_INT(changed_calls, 2); /* not for the rejected one */
        prep_daemon_free(d);

        unlink(path);
        snprintf(p, sizeof(p), "%s/..data", dir);
        unlink(p);
        snprintf(p, sizeof(p), "%s/..2026_04/config.json", dir);
        unlink(p);
        snprintf(p, sizeof(p), "%s/..2026_04", dir);
        rmdir(p);
        CHECK_INT(rmdir(dir), 0);
}

int main(void)
{
        emu e;
        loop *l = NULL;
        prep_daemon *d = NULL;

        snprintf(cfg_dir, sizeof(cfg_dir), "/tmp/sl-np-cfg-XXXXXX");
        CHECK(mkdtemp(cfg_dir) != NULL);
        snprintf(cfg_path, sizeof(cfg_path), "%s/config.json", cfg_dir);
        node(&e);
        CHECK_INT(loop_new(&l), 0);
        prep_ops ops = {0};
        ops.sysfs = emu_ops(&e);
        ops.tune.coalesce_off = fake_coalesce;
        ops.tune.write = emu_ops_template.write;
        ops.tune.userdata = &e;
        prep_daemon_options o = {.config_path = cfg_path, .scan = emu_scan_fn, .scan_userdata = &e, .ops = &ops,
                                 .drift_check_ms = 50, .debounce_ms = 20, .no_netlink = true};

        /* A bad config: the agent does not start, nothing is touched. */
        write_config("{\"hugepages\":{\"per_node\":{\"0\":\"lots\"}}}");
        CHECK_INT(prep_daemon_new(l, &e.h, &o, &d), -EINVAL);
        CHECK(d == NULL);
        CHECK_STR(emu_log_str(&e), "");

        /* A good one: applied at start. */
        write_config("{\"hugepages\":{\"per_node\":{\"0\":8}},\"tuning\":{\"irq_core\":1,\"interrupt_moderation_off\":true}}");
        CHECK_INT(prep_daemon_new(l, &e.h, &o, &d), 0);
        CHECK_STR(emu_driver(&e, ENA1), "vfio-pci");
        CHECK_STR(emu_read(&e, NR), "8");
        CHECK_STR(emu_read(&e, "/proc/irq/30/smp_affinity_list"), "1");
        CHECK_INT(coalesce_calls, 1);
        prep_daemon_stats st = prep_daemon_get_stats(d);
        CHECK_INT(st.applies, 1);
        CHECK_INT(st.last_exit, 0);
        /* Nothing changed: no reload at all (the debounce timer starts disarmed). */
        uint64_t t_quiet = loop_now_ms() + 100;
        while (loop_now_ms() < t_quiet)
                loop_run_once(l, 20);
        CHECK_INT(prep_daemon_get_stats(d).reloads, 0);
        CHECK_INT(prep_daemon_get_stats(d).reloads_rejected, 0);

        /* A bad config arrives: rejected, the last good one stays, nothing re-applied. */
        emu_reset_log(&e);
        write_config("{\"hugepages\":{\"per_node\":{\"0\":16}},\"tuning\":{\"irq_core\":\"one\"}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).reloads_rejected == 1, TEST_WAIT_MS);
        st = prep_daemon_get_stats(d);
        CHECK_INT(st.reloads_rejected, 1);
        CHECK_INT(st.applies, 1);
        CHECK_INT(prep_daemon_config(d)->tuning.irq_core, 1);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 8);
        CHECK_STR(emu_read(&e, NR), "8");

        /* A good change: applied. */
        write_config("{\"hugepages\":{\"per_node\":{\"0\":16}},\"tuning\":{\"irq_core\":1,\"interrupt_moderation_off\":true}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).applies == 2, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_get_stats(d).applies, 2);
        CHECK_STR(emu_read(&e, NR), "16");
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 16);
        /* Only the hugepages write; the NIC is already bound. */
        CHECK_STR(emu_log_str(&e), NR "=16");

        /* SIGHUP: a forced reload re-applies even when unchanged; a plain one does not. */
        CHECK_INT(prep_daemon_reload(d, false), 0);
        CHECK_INT(prep_daemon_get_stats(d).applies, 2);
        CHECK_INT(prep_daemon_reload(d, true), 0);
        CHECK_INT(prep_daemon_get_stats(d).applies, 3);

        /* An ENA reset seen as link events: carrier down, then up -> tuning re-applied. */
        int before = coalesce_calls;
        tune_link_event up = {.ifindex = 2, .ifname = "eth0", .up = true, .carrier = true};
        tune_link_event down = up;
        down.carrier = false;
        prep_daemon_link_event(d, &up);
        CHECK_INT(prep_daemon_get_stats(d).resets_seen, 0);
        emu_write_file(&e, "/proc/irq/30/smp_affinity_list", "0-1\n"); /* what the reset did */
        prep_daemon_link_event(d, &down);
        prep_daemon_link_event(d, &up);
        st = prep_daemon_get_stats(d);
        CHECK_INT(st.resets_seen, 1);
        CHECK_INT(st.retunes, 1);
        CHECK_INT(coalesce_calls, before + 1);
        CHECK_STR(emu_read(&e, "/proc/irq/30/smp_affinity_list"), "1");

        /* A reset the link events missed: the drift timer catches the IRQ. */
        emu_write_file(&e, "/proc/irq/30/smp_affinity_list", "0-1\n");
        RUN_UNTIL(l, prep_daemon_get_stats(d).retunes == 2, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_get_stats(d).retunes, 2);
        CHECK_STR(emu_read(&e, "/proc/irq/30/smp_affinity_list"), "1");
        /* And nothing more while it stays put. */
        uint64_t t_end = loop_now_ms() + 200;
        while (loop_now_ms() < t_end)
                loop_run_once(l, 20);
        CHECK_INT(prep_daemon_get_stats(d).retunes, 2);

        /* The config file disappears: defaults are not forced on a running node? The
         * path is not the default one, so it is an error and the last config stays. */
        unlink(cfg_path);
        RUN_UNTIL(l, prep_daemon_get_stats(d).reloads_rejected == 2, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_get_stats(d).reloads_rejected, 2);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 16);

        /* Its directory goes and comes back with a new config: noticed (the old watch
         * died with the dir), applied. */
        CHECK_INT(rmdir(cfg_dir), 0);
        t_end = loop_now_ms() + 100;
        while (loop_now_ms() < t_end)
                loop_run_once(l, 20);
        CHECK_INT(mkdir(cfg_dir, 0700), 0);
        write_config("{\"hugepages\":{\"per_node\":{\"0\":24}}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).applies == 4, TEST_WAIT_MS);
        CHECK_INT(prep_daemon_get_stats(d).applies, 4);
        CHECK_INT(prep_daemon_config(d)->huge[0].pages[0], 24);
        CHECK_STR(emu_read(&e, NR), "24");
        /* and still watched: the next edit is seen */
        write_config("{\"hugepages\":{\"per_node\":{\"0\":20}}}");
        RUN_UNTIL(l, prep_daemon_get_stats(d).applies == 5, TEST_WAIT_MS);
        CHECK_STR(emu_read(&e, NR), "20");

        prep_daemon_free(d);
        test_configmap(l, &e, &o);
        loop_free(l);

        /* The one-shot path (run --once): under the fake root the default ops are used,
         * so sysfs writes go to the tree. The NIC is bound already: exit 0. */
        write_config("{}");
        CHECK_INT(prep_once(&e.h, cfg_path, emu_scan_fn, &e, false), 0);
        write_config("{\"nics\":{\"max\":\"two\"}}");
        CHECK_INT(prep_once(&e.h, cfg_path, emu_scan_fn, &e, false), 2);
        /* A failing step: a hugepage node that does not exist. */
        write_config("{\"hugepages\":{\"per_node\":{\"5\":1}}}");
        CHECK_INT(prep_once(&e.h, cfg_path, emu_scan_fn, &e, true), 1);

        emu_cleanup(&e);
        test_real_netlink();
        unlink(cfg_path);
        rmdir(cfg_dir);
        return test_done();
}
