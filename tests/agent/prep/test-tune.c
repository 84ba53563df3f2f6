/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel-path tuning: /proc/interrupts parsing, IRQ affinity on a fake tree (moved,
 * already there, kernel-managed refusals, drift after a "reset"), netlink message
 * parsing and reset detection; then the real thing in a network namespace of our own:
 * the ethtool coalescing ioctl on a veth and rtnetlink link events. */
#include "tune.h"

#include "cleanup.h"
#include "netlink.h"
#include "nodeprep-test.h"
#include "sysfs-emu.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *interrupts =
        "           CPU0       CPU1\n"
        "  0:         31          0   IO-APIC   2-edge      timer\n"
        " 24:          0          0   PCI-MSI 81920-edge      ena-mgmnt@pci:0000:00:05.0\n"
        " 25:     100000        200   PCI-MSI 81921-edge      eth0-Tx-Rx-0\n"
        " 26:     100000        200   PCI-MSI 81922-edge      eth0-Tx-Rx-1\n"
        " 27:          0          0   PCI-MSI 98304-edge      eth10-Tx-Rx-0\n"
        " 28:          0          0   PCI-MSI 98305-edge      veth0, eth0\n"
        "NMI:          0          0   Non-maskable interrupts\n"
        "LOC:        100        100   Local timer interrupts\n";

static void test_parse_interrupts(void)
{
        int irqs[8];
        CHECK_INT(tune_parse_interrupts(interrupts, "eth0", "0000:00:05.0", irqs, 8), 4);
        CHECK_INT(irqs[0], 24);
        CHECK_INT(irqs[1], 25);
        CHECK_INT(irqs[2], 26);
        CHECK_INT(irqs[3], 28);
        CHECK_INT(tune_parse_interrupts(interrupts, "eth10", NULL, irqs, 8), 1);
        CHECK_INT(irqs[0], 27);
        CHECK_INT(tune_parse_interrupts(interrupts, "eth", NULL, irqs, 8), 0);
        CHECK_INT(tune_parse_interrupts(interrupts, "eth0", "0000:00:05.0", irqs, 2), -E2BIG);
        CHECK_INT(tune_parse_interrupts("", "eth0", NULL, irqs, 8), 0);
        CHECK_INT(tune_parse_interrupts("CPU0\n 99999999999: 1 x eth0\n", "eth0", NULL, irqs, 8), 0);
}

typedef struct rec {
        emu *e;
        int coalesce_ret;
        int coalesce_calls;
        int eio_irq;
} rec;

static int rec_coalesce(void *ud, const char *ifname)
{
        rec *r = ud;
        (void)ifname;
        r->coalesce_calls++;
        return r->coalesce_ret;
}

static int rec_write(void *ud, const hostfs *h, const char *path, const char *data)
{
        rec *r = ud;
        char eio[64];
        snprintf(eio, sizeof(eio), "/proc/irq/%d/smp_affinity_list", r->eio_irq);
        if (r->e->n_log < EMU_MAX_LOG)
                snprintf(r->e->log[r->e->n_log++], sizeof(r->e->log[0]), "%s=%s", path, data);
        if (strcmp(path, eio) == 0)
                return -EIO;
        return hostfs_write(h, path, data);
}

static void test_apply_fake(void)
{
        emu e;
        tune_result res;
        CHECK_INT(emu_init(&e), 0);
        emu_add_driver(&e, "ena");
        emu_add_nic(&e, "0000:00:05.0", "0x1d0f\n", "0xec20\n", "ena", "ena", "eth0");
        emu_write_file(&e, "/sys/devices/pci0000:00/0000:00:05.0/msi_irqs/24", "msi\n");
        emu_write_file(&e, "/sys/devices/pci0000:00/0000:00:05.0/msi_irqs/25", "msi\n");
        emu_write_file(&e, "/proc/interrupts", interrupts);
        for (int irq = 24; irq <= 28; irq++) {
                char p[64];
                snprintf(p, sizeof(p), "/proc/irq/%d/smp_affinity_list", irq);
                emu_write_file(&e, p, irq == 26 ? "1\n" : "0-1\n");
        }
        rec r = {&e, 0, 0, 28};
        tune_ops ops = {rec_coalesce, rec_write, &r};

        CHECK_INT(tune_apply(&e.h, &ops, "eth0", "0000:00:05.0", true, 1, &res), 0);
        CHECK_INT(r.coalesce_calls, 1);
        CHECK_INT(res.coalesce, 0);
        CHECK_INT(res.n_irqs, 4);
        CHECK_INT(res.n_irqs_ok, 3);
        CHECK_INT(res.n_irqs_moved, 2);
        CHECK_INT(res.n_irqs_refused, 1);
        CHECK_STR(emu_log_str(&e), "/proc/irq/24/smp_affinity_list=1\n|/proc/irq/25/smp_affinity_list=1\n|"
                                   "/proc/irq/28/smp_affinity_list=1\n");
        CHECK_STR(res.message, "eth0: interrupt moderation off (adaptive-rx off, rx-usecs 0); 3 of 4 IRQs on CPU 1, "
                               "not moved: 28 (Input/output error)");
        CHECK_STR(emu_read(&e, "/proc/irq/24/smp_affinity_list"), "1");

        /* Again: nothing to write (28 is tried again, and refused again). */
        emu_reset_log(&e);
        r.coalesce_ret = 1;
        r.eio_irq = -1;
        emu_write_file(&e, "/proc/irq/28/smp_affinity_list", "1\n");
        CHECK_INT(tune_apply(&e.h, &ops, "eth0", "0000:00:05.0", true, 1, &res), 0);
        CHECK_STR(emu_log_str(&e), "");
        CHECK_STR(res.message, "eth0: interrupt moderation already off; 4 of 4 IRQs on CPU 1");
        CHECK_INT(tune_irqs_drifted(&e.h, "eth0", "0000:00:05.0", 1), 0);

        /* A device reset puts IRQs back on all CPUs: drift is seen and fixed. */
        emu_write_file(&e, "/proc/irq/25/smp_affinity_list", "0-1\n");
        CHECK_INT(tune_irqs_drifted(&e.h, "eth0", "0000:00:05.0", 1), 1);
        r.coalesce_ret = -EOPNOTSUPP;
        CHECK_INT(tune_apply(&e.h, &ops, "eth0", "0000:00:05.0", true, 1, &res), 0);
        CHECK_STR(res.message, "eth0: interrupt moderation: not supported by the driver, left as is; 4 of 4 IRQs on CPU 1");
        CHECK_INT(tune_irqs_drifted(&e.h, "eth0", "0000:00:05.0", 1), 0);

        /* A read-only affinity file (not EIO): an error. Coalescing failure too. */
        r.coalesce_ret = -EPERM;
        emu_write_file(&e, "/proc/irq/25/smp_affinity_list", "0\n");
        r.eio_irq = -1;
        CHECK_INT(tune_apply(&e.h, &ops, "eth0", "0000:00:05.0", true, -1, &res), -EPERM);
        CHECK_STR(res.message, "eth0: interrupt moderation: Operation not permitted");
        /* Nothing asked: nothing done. */
        r.coalesce_calls = 0;
        emu_reset_log(&e);
        CHECK_INT(tune_apply(&e.h, &ops, "eth0", "0000:00:05.0", false, -1, &res), 0);
        CHECK_INT(r.coalesce_calls, 0);
        CHECK_STR(emu_log_str(&e), "");
        emu_cleanup(&e);
}

/* Build a netlink datagram of link messages. */
static size_t nl_msg(uint8_t *buf, size_t off, uint16_t type, int ifindex, unsigned flags, const char *name)
{
        struct nlmsghdr *nh = (struct nlmsghdr *)(buf + off);
        struct ifinfomsg *ifi = NLMSG_DATA(nh);
        struct rtattr *ra = (struct rtattr *)((uint8_t *)ifi + NLMSG_ALIGN(sizeof(*ifi)));
        memset(nh, 0, 256);
        ifi->ifi_index = ifindex;
        ifi->ifi_flags = flags;
        ra->rta_type = IFLA_IFNAME;
        ra->rta_len = (unsigned short)RTA_LENGTH(strlen(name) + 1);
        memcpy(RTA_DATA(ra), name, strlen(name) + 1);
        nh->nlmsg_type = type;
        nh->nlmsg_len = (uint32_t)(NLMSG_ALIGN(sizeof(*nh)) + NLMSG_ALIGN(sizeof(*ifi)) + RTA_ALIGN(ra->rta_len));
        return off + NLMSG_ALIGN(nh->nlmsg_len);
}

static void test_netlink_parse_and_watch(void)
{
        uint8_t buf[1024] __attribute__((aligned(8)));
        tune_link_event ev[4];
        size_t len = 0;
        char why[64] = "";

        len = nl_msg(buf, len, RTM_NEWLINK, 3, IFF_UP, "eth1");
        len = nl_msg(buf, len, RTM_NEWLINK, 3, IFF_UP | IFF_LOWER_UP, "eth1");
        len = nl_msg(buf, len, RTM_DELLINK, 4, 0, "eth2");
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), 3);
        CHECK_STR(ev[0].ifname, "eth1");
        CHECK(ev[0].up && !ev[0].carrier && !ev[0].deleted);
        CHECK(ev[1].carrier);
        CHECK(ev[2].deleted);
        CHECK_INT(tune_netlink_parse(buf, len, ev, 1), 1);
        CHECK_INT(tune_netlink_parse(buf, len - 1, ev, 4), -EBADMSG);
        ((struct nlmsghdr *)buf)->nlmsg_len = 8;
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), -EBADMSG);

        /* The walker's checks (node/nlparse, as for the dumps). */
        struct nlmsghdr *nh = (struct nlmsghdr *)buf;
        struct rtattr *ra = (struct rtattr *)(buf + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg)));
        len = nl_msg(buf, 0, RTM_NEWADDR, 3, IFF_UP, "eth1"); /* not a link message: skipped */
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), 0);
        len = nl_msg(buf, 0, RTM_NEWLINK, 3, IFF_UP, "eth1");
        nh->nlmsg_len -= 2; /* not a multiple of 4 */
        CHECK_INT(tune_netlink_parse(buf, nh->nlmsg_len, ev, 4), -EBADMSG);
        len = nl_msg(buf, 0, RTM_NEWLINK, 3, IFF_UP, "eth1");
        ra->rta_len = RTA_LENGTH(4); /* "eth1" without its NUL */
        nh->nlmsg_len = (uint32_t)(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg)) + RTA_LENGTH(4));
        CHECK_INT(tune_netlink_parse(buf, nh->nlmsg_len, ev, 4), -EBADMSG);
        len = nl_msg(buf, 0, RTM_NEWLINK, 3, IFF_UP, "eth/1"); /* not a name */
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), -EBADMSG);
        len = nl_msg(buf, 0, RTM_NEWLINK, 3, IFF_UP, "abcdefghijklmnop"); /* 16 bytes */
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), -EBADMSG);
        len = nl_msg(buf, 0, RTM_NEWLINK, 3, IFF_UP, "eth1");
        ra->rta_len = 200; /* past its message */
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), -EBADMSG);
        len = nl_msg(buf, 0, RTM_NEWLINK, 3, IFF_UP, "eth1");
        CHECK_INT(tune_netlink_parse(buf, len, ev, 4), 1);
        CHECK_STR(ev[0].ifname, "eth1");

        tune_watch w = {.ifname = "eth1"};
        tune_link_event up = {.ifindex = 3, .ifname = "eth1", .up = true, .carrier = true};
        tune_link_event down = up;
        down.carrier = false;
        tune_link_event other = up;
        snprintf(other.ifname, sizeof(other.ifname), "eth9");
        CHECK_INT(tune_watch_event(&w, &up, why, sizeof(why)), 0);
        CHECK_INT(tune_watch_event(&w, &other, why, sizeof(why)), 0);
        CHECK_INT(tune_watch_event(&w, &down, why, sizeof(why)), 0);
        CHECK_INT(tune_watch_event(&w, &down, why, sizeof(why)), 0);
        CHECK_INT(tune_watch_event(&w, &up, why, sizeof(why)), 1);
        CHECK_STR(why, "link came back (carrier down -> up)");
        CHECK_INT(tune_watch_event(&w, &up, why, sizeof(why)), 0);
        tune_link_event again = up;
        again.ifindex = 7;
        CHECK_INT(tune_watch_event(&w, &again, why, sizeof(why)), 1);
        CHECK_STR(why, "netdev recreated (ifindex 3 -> 7)");
}

#define NS "sl-np-tune"

static int sh(const char *cmd)
{
        char buf[512];
        snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd);
        return system(buf);
}

/* The real kernel in a netns of our own: ethtool ioctl on a veth, link events. */
static void test_real_netns(void)
{
        const char *missing = test_netns_missing();
        if (missing) {
                printf("SKIP real netns: %s\n", missing);
                return;
        }
        sh("ip netns del " NS); /* a leftover of an interrupted run */
        int r = sh("ip netns add " NS);
        CHECK_INT(r, 0); /* the machine can (checked above): a failure, and nothing to go on with */
        if (r != 0)
                return;
        CHECK_INT(sh("ip -n " NS " link add sl-np-v0 type veth peer name sl-np-v1"), 0);
        _cleanup_close_ int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int ns = open("/var/run/netns/" NS, O_RDONLY | O_CLOEXEC);
        CHECK(self >= 0 && ns >= 0);
        CHECK_INT(setns(ns, CLONE_NEWNET), 0);

        _cleanup_close_ int nl = tune_netlink_open();
        CHECK(nl >= 0);
        r = tune_coalesce_off_ioctl("sl-np-v0");
        printf("real: ethtool coalesce off on a veth: %d (%s)\n", r,
               r == 0 ? "changed" : r == 1 ? "already off" : strerror(-r));
        CHECK(r == 0 || r == 1 || r == -EOPNOTSUPP);
        CHECK_INT(tune_coalesce_off_ioctl("sl-np-none"), -ENODEV);

        tune_watch w = {.ifname = "sl-np-v0"};
        CHECK_INT(sh("ip link set sl-np-v1 up"), 0);
        CHECK_INT(sh("ip link set sl-np-v0 up"), 0);   /* carrier up */
        CHECK_INT(sh("ip link set sl-np-v1 down"), 0); /* carrier of v0 drops */
        CHECK_INT(sh("ip link set sl-np-v1 up"), 0);   /* and comes back: a "reset" */
        int resets = 0;
        char why[64] = "";
        uint8_t buf[16384] __attribute__((aligned(8)));
        /* the kernel queued the events when the commands ran: read until the reset is
         * seen and nothing more is queued, waiting up to TEST_WAIT_MS for each message */
        for (;;) {
                struct pollfd pfd = {.fd = nl, .events = POLLIN};
                if (poll(&pfd, 1, resets ? 0 : TEST_WAIT_MS) <= 0)
                        break;
                size_t n;
                int rr = netlink_recv(nl, buf, sizeof(buf), &n); /* what prep-daemon reads with */
                if (rr < 0) {
                        CHECK_INT(rr, -EAGAIN);
                        if (rr == -EAGAIN)
                                continue;
                        break;
                }
                tune_link_event ev[32];
                int k = tune_netlink_parse(buf, n, ev, 32);
                CHECK(k >= 0);
                for (int i = 0; i < k; i++)
                        resets += tune_watch_event(&w, &ev[i], why, sizeof(why));
        }
        printf("real: link events on sl-np-v0 -> %d reset(s) detected (%s)\n", resets, why);
        CHECK(resets >= 1);
        CHECK_STR(why, "link came back (carrier down -> up)");
        CHECK_INT(setns(self, CLONE_NEWNET), 0);
        CHECK_INT(sh("ip netns del " NS), 0);
}

int main(void)
{
        test_parse_interrupts();
        test_apply_fake();
        test_netlink_parse_and_watch();
        test_real_netns();
        return test_done();
}
