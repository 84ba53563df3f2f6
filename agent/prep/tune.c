/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel-path tuning: the ethtool coalescing ioctl, IRQ discovery and affinity, rtnetlink
 * link events for reset detection (read with node/nlparse's walker). Never logs. */
#include "tune.h"

#include "cleanup.h"
#include "cpuset.h"
#include "netlink.h"
#include "nlparse.h"
#include "parse.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* An ioctl socket, and ifr named for ifname. -EINVAL for a bad name. */
static int ifreq_socket(const char *ifname, struct ifreq *ifr)
{
        if (!ifname || strlen(ifname) >= IFNAMSIZ || !*ifname)
                return -EINVAL;
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        memcpy(ifr->ifr_name, ifname, strlen(ifname) + 1);
        return fd;
}

int tune_coalesce_off_ioctl(const char *ifname)
{
        struct ethtool_coalesce ec = {.cmd = ETHTOOL_GCOALESCE};
        struct ifreq ifr = {0};

        _cleanup_close_ int fd = ifreq_socket(ifname, &ifr);
        if (fd < 0)
                return fd;
        ifr.ifr_data = (void *)&ec;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return errno == EINVAL ? -EOPNOTSUPP : -errno;
        if (!ec.use_adaptive_rx_coalesce && ec.rx_coalesce_usecs == 0)
                return 1;
        ec.cmd = ETHTOOL_SCOALESCE;
        ec.use_adaptive_rx_coalesce = 0;
        ec.rx_coalesce_usecs = 0;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return errno == EINVAL ? -EOPNOTSUPP : -errno;
        /* Read back: a driver may ignore what it does not support. */
        memset(&ec, 0, sizeof(ec));
        ec.cmd = ETHTOOL_GCOALESCE;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return -errno;
        if (ec.use_adaptive_rx_coalesce || ec.rx_coalesce_usecs != 0)
                return -EOPNOTSUPP;
        return 0;
}

int tune_link_down_ioctl(const char *ifname)
{
        struct ifreq ifr = {0};

        _cleanup_close_ int fd = ifreq_socket(ifname, &ifr);
        if (fd < 0)
                return fd;
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        if (!(ifr.ifr_flags & IFF_UP))
                return 1;
        ifr.ifr_flags &= ~IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                return -errno;
        return 0;
}

static int default_coalesce(void *userdata, const char *ifname)
{
        (void)userdata;
        return tune_coalesce_off_ioctl(ifname);
}

static int default_write(void *userdata, const hostfs *h, const char *path, const char *data)
{
        (void)userdata;
        return hostfs_write(h, path, data);
}

const tune_ops tune_ops_default = {default_coalesce, default_write, NULL};

static int add_irq(int *irqs, size_t max, size_t *n, int irq)
{
        for (size_t i = 0; i < *n; i++)
                if (irqs[i] == irq)
                        return 0;
        if (*n >= max)
                return -E2BIG;
        irqs[(*n)++] = irq;
        return 0;
}

/* Does the action text name ifname as a whole word ("eth1", "eth1-rx-0", "eth1:q0")
 * or the PCI address? */
static bool names_nic(const char *actions, const char *ifname, const char *pci)
{
        size_t n = ifname ? strlen(ifname) : 0;
        if (pci && *pci && strstr(actions, pci))
                return true;
        if (!n)
                return false;
        for (const char *p = strstr(actions, ifname); p; p = strstr(p + 1, ifname)) {
                bool start = p == actions || p[-1] == ' ' || p[-1] == ',' || p[-1] == '\t';
                char after = p[n];
                bool end = after == '\0' || after == '-' || after == ':' || after == ',' || after == ' ' ||
                           after == '@' || after == '\n';
                if (start && end)
                        return true;
        }
        return false;
}

int tune_parse_interrupts(const char *text, const char *ifname, const char *pci, int *irqs, size_t max)
{
        const char *line = text;
        size_t n = 0;
        bool first = true;

        while (line && *line) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t)(nl - line) : strlen(line);
                char buf[1024], num[16];
                if (!first && len < sizeof(buf)) {
                        memcpy(buf, line, len);
                        buf[len] = '\0';
                        const char *p = buf;
                        while (*p == ' ')
                                p++;
                        const char *colon = strchr(p, ':');
                        size_t k = colon ? (size_t)(colon - p) : 0;
                        int irq;
                        if (k > 0 && k < sizeof(num)) {
                                memcpy(num, p, k);
                                num[k] = '\0';
                                /* Only numbered IRQs; NMI, LOC, ... are not device interrupts. */
                                if (parse_int(num, 0, 1 << 24, &irq) == 0) {
                                        /* Skip the per-CPU counts and the chip name: the
                                         * action list is the last field; match anywhere
                                         * after the colon by word. */
                                        if (names_nic(colon + 1, ifname, pci) && add_irq(irqs, max, &n, irq) < 0)
                                                return -E2BIG;
                                }
                        }
                }
                first = false;
                line = nl ? nl + 1 : NULL;
        }
        return (int)n;
}

int tune_nic_irqs(const hostfs *h, const char *ifname, const char *pci, int *irqs, size_t max)
{
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX];
        size_t n = 0;
        int r;

        if (pci && *pci) {
                _cleanup_closedir_ DIR *d = NULL;
                if ((r = hostfs_fmt(path, sizeof(path), "/sys/bus/pci/devices/%s/msi_irqs", pci)) < 0)
                        return r;
                if (hostfs_opendir(h, path, &d) == 0) {
                        struct dirent *de;
                        while ((de = readdir(d))) {
                                int irq;
                                if (parse_int(de->d_name, 0, 1 << 24, &irq) == 0 && add_irq(irqs, max, &n, irq) < 0)
                                        return -E2BIG;
                        }
                }
        }
        if (hostfs_read_alloc(h, "/proc/interrupts", 0, &text, NULL) == 0) {
                int tmp[TUNE_MAX_IRQS];
                r = tune_parse_interrupts(text, ifname, pci, tmp, ELEMENTSOF(tmp));
                if (r < 0)
                        return r;
                for (int i = 0; i < r; i++)
                        if (add_irq(irqs, max, &n, tmp[i]) < 0)
                                return -E2BIG;
        }
        /* Sorted, for stable logs and tests. */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && irqs[j - 1] > irqs[j]; j--) {
                        int t = irqs[j];
                        irqs[j] = irqs[j - 1];
                        irqs[j - 1] = t;
                }
        return (int)n;
}

static int irq_on_core(const hostfs *h, int irq, int core)
{
        char path[64], buf[4096];
        cpuset set;
        int r;

        snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
        r = hostfs_read_str(h, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (cpuset_parse(buf, strlen(buf), &set) < 0)
                return -EINVAL;
        return cpuset_count(&set) == 1 && cpuset_has(&set, (unsigned)core);
}

int tune_apply(const hostfs *h, const tune_ops *ops, const char *ifname, const char *pci, bool moderation_off,
               int irq_core, tune_result *res)
{
        int first = 0, r;

        memset(res, 0, sizeof(*res));
        if (!ops)
                ops = &tune_ops_default;
        snprintf(res->message, sizeof(res->message), "%s:", ifname);
        res->coalesce = 2;
        if (moderation_off) {
                r = ops->coalesce_off(ops->userdata, ifname);
                res->coalesce = r;
                if (r == 0)
                        (void)hostfs_fmt_append(res->message, sizeof(res->message),
                                                " interrupt moderation off (adaptive-rx off, rx-usecs 0);");
                else if (r == 1)
                        (void)hostfs_fmt_append(res->message, sizeof(res->message),
                                                " interrupt moderation already off;");
                else if (r == -EOPNOTSUPP)
                        (void)hostfs_fmt_append(res->message, sizeof(res->message),
                                                " interrupt moderation: not supported by the driver, left as is;");
                else if (r == -ENOSYS)
                        (void)hostfs_fmt_append(res->message, sizeof(res->message),
                                                " interrupt moderation: not the real root, left as is;");
                else {
                        (void)hostfs_fmt_append(res->message, sizeof(res->message),
                                                " interrupt moderation: %s;", strerror(-r));
                        first = r;
                }
        }
        if (irq_core >= 0) {
                int irqs[TUNE_MAX_IRQS];
                char want[16], refused[256] = "";
                r = tune_nic_irqs(h, ifname, pci, irqs, ELEMENTSOF(irqs));
                if (r < 0) {
                        (void)hostfs_fmt_append(res->message, sizeof(res->message), " IRQs: %s;", strerror(-r));
                        return first ? first : r;
                }
                res->n_irqs = (size_t)r;
                snprintf(want, sizeof(want), "%d\n", irq_core);
                for (size_t i = 0; i < res->n_irqs; i++) {
                        char path[64];
                        if (irq_on_core(h, irqs[i], irq_core) == 1) {
                                res->n_irqs_ok++;
                                continue;
                        }
                        snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irqs[i]);
                        r = ops->write(ops->userdata, h, path, want);
                        res->n_irqs_moved += r == 0;
                        if (r == 0 && irq_on_core(h, irqs[i], irq_core) == 1) {
                                res->n_irqs_ok++;
                                continue;
                        }
                        /* Kernel-managed IRQs (EIO) cannot be moved; note and go on. */
                        res->n_irqs_refused++;
                        (void)hostfs_fmt_append(refused, sizeof(refused), "%s%d (%s)", *refused ? ", " : "", irqs[i],
                                                r < 0 ? strerror(-r) : "did not stick");
                        if (!first && r != -EIO)
                                first = r < 0 ? r : -EIO;
                }
                if (res->n_irqs == 0)
                        (void)hostfs_fmt_append(res->message, sizeof(res->message), " no IRQs found");
                else
                        (void)hostfs_fmt_append(res->message, sizeof(res->message),
                                                " %zu of %zu IRQs on CPU %d", res->n_irqs_ok,
                               res->n_irqs, irq_core);
                if (*refused)
                        (void)hostfs_fmt_append(res->message, sizeof(res->message), ", not moved: %s", refused);
        }
        size_t n = strlen(res->message);
        if (n && res->message[n - 1] == ';')
                res->message[n - 1] = '\0';
        return first;
}

int tune_irqs_drifted(const hostfs *h, const char *ifname, const char *pci, int irq_core)
{
        int irqs[TUNE_MAX_IRQS];
        int n = tune_nic_irqs(h, ifname, pci, irqs, ELEMENTSOF(irqs));
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++)
                if (irq_on_core(h, irqs[i], irq_core) == 0)
                        return 1;
        return 0;
}

int tune_netlink_open(void)
{
        return netlink_subscribe(SOCK_RAW, NETLINK_ROUTE, RTMGRP_LINK);
}

_Static_assert(sizeof(((tune_link_event *)0)->ifname) == NLPARSE_NAME_LEN, "an event's name is nlparse's");

int tune_netlink_parse(const void *buf, size_t len, tune_link_event *ev, size_t max)
{
        size_t off = 0, n = 0;
        nlparse_msg m;
        int r;

        while ((r = nlparse_msg_next(buf, len, &off, &m)) > 0) {
                uint16_t type = m.hdr.nlmsg_type;
                if ((type != RTM_NEWLINK && type != RTM_DELLINK) || n >= max)
                        continue;
                struct ifinfomsg ifi;
                if (m.len < NLMSG_HDRLEN + sizeof(ifi))
                        return -EBADMSG;
                memcpy(&ifi, m.data + NLMSG_HDRLEN, sizeof(ifi));
                tune_link_event e = {.ifindex = ifi.ifi_index,
                                     .up = (ifi.ifi_flags & IFF_UP) != 0,
                                     .carrier = (ifi.ifi_flags & IFF_LOWER_UP) != 0,
                                     .deleted = type == RTM_DELLINK};
                size_t a = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifi));
                nlparse_attr at;
                while ((r = nlparse_attr_next(m.data, m.len, &a, &at)) > 0)
                        if (at.type == IFLA_IFNAME && (r = nlparse_attr_name(&at, e.ifname)) < 0)
                                return r;
                if (r < 0)
                        return r;
                ev[n++] = e;
        }
        if (r < 0 || off != len)
                return -EBADMSG; /* a bad length, or a message cut at the datagram's end */
        return (int)n;
}

int tune_watch_event(tune_watch *w, const tune_link_event *ev, char *why, size_t why_size)
{
        if (strcmp(ev->ifname, w->ifname) != 0)
                return 0;
        if (ev->deleted) {
                w->saw_down = true;
                w->carrier = false;
                return 0;
        }
        if (w->ifindex && ev->ifindex != w->ifindex) {
                snprintf(why, why_size, "netdev recreated (ifindex %d -> %d)", w->ifindex, ev->ifindex);
                w->ifindex = ev->ifindex;
                w->carrier = ev->carrier;
                w->saw_down = false;
                return ev->carrier ? 1 : (w->saw_down = true, 0);
        }
        w->ifindex = ev->ifindex;
        if (!ev->carrier || !ev->up) {
                w->saw_down = true;
                w->carrier = false;
                return 0;
        }
        w->carrier = true;
        if (w->saw_down) {
                w->saw_down = false;
                snprintf(why, why_size, "link came back (carrier down -> up)");
                return 1;
        }
        return 0;
}
