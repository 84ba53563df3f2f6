/* SPDX-License-Identifier: Apache-2.0 */
/* Emulated kernel PCI binding on a fake sysfs tree (see sysfs-emu.h). Mirrors the
 * kernel: unbind needs the device to be on that driver (-ENODEV); bind needs the
 * device driverless (-EBUSY) and a match, where a set driver_override is the only match
 * (-ENODEV); drivers_probe binds the override or the native driver when it is loaded,
 * else silently nothing. */
#include "sysfs-emu.h"

#include "nlbuild.h"
#include "netlink.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int full(emu *e, const char *path, char *buf, size_t size)
{
        return hostfs_path(&e->h, path, buf, size);
}

int emu_write_file(emu *e, const char *path, const char *text)
{
        char p[PATH_MAX], dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                hostfs_mkdir_p(&e->h, dir);
        }
        full(e, path, p, sizeof(p));
        FILE *f = fopen(p, "w");
        if (!f)
                return -errno;
        fputs(text, f);
        fclose(f);
        return 0;
}

int emu_init(emu *e)
{
        memset(e, 0, sizeof(*e));
        snprintf(e->root, sizeof(e->root), "/tmp/sl-np-emu-XXXXXX");
        if (!mkdtemp(e->root))
                return -errno;
        int r = hostfs_init(&e->h, e->root);
        if (r < 0)
                return r;
        hostfs_mkdir_p(&e->h, "/sys/bus/pci/devices");
        hostfs_mkdir_p(&e->h, "/sys/bus/pci/drivers");
        hostfs_mkdir_p(&e->h, "/sys/devices/pci0000:00");
        emu_write_file(e, "/sys/bus/pci/drivers_probe", "");
        e->net_managed = true;
        return emu_net_sync(e);
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(path);
}

void emu_cleanup(emu *e)
{
        if (e->root[0])
                nftw(e->root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int emu_add_driver(emu *e, const char *name)
{
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/bind", name);
        emu_write_file(e, path, "");
        snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind", name);
        return emu_write_file(e, path, "");
}

static emu_dev *find_dev(emu *e, const char *pci)
{
        for (int i = 0; i < e->n_devs; i++)
                if (strcmp(e->devs[i].pci, pci) == 0)
                        return &e->devs[i];
        return NULL;
}

static void dev_dir(emu *e, const char *pci, char *buf, size_t size)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s", pci);
        full(e, p, buf, size);
}

static bool dev_exists(emu *e, const char *pci)
{
        char p[PATH_MAX];
        struct stat st;
        dev_dir(e, pci, p, sizeof(p));
        return stat(p, &st) == 0;
}

/* Link the device to driver ("" = unlink) and create/remove its netdev. */
static void set_driver_files(emu *e, const char *pci, const char *driver);
/* Link the device to driver ("" = unlink), its netdev with it, and the kernel's rtnetlink
 * view follows. */
static void set_driver(emu *e, const char *pci, const char *driver)
{
        set_driver_files(e, pci, driver);
        if (e->net_managed)
                emu_net_sync(e);
}

static void set_driver_files(emu *e, const char *pci, const char *driver)
{
        char d[PATH_MAX], link[PATH_MAX + 16], target[128], net[PATH_MAX + 64];
        emu_dev *dev = find_dev(e, pci);

        char stash[PATH_MAX + 16];
        struct stat st;

        dev_dir(e, pci, d, sizeof(d));
        snprintf(link, sizeof(link), "%s/driver", d);
        unlink(link);
        snprintf(net, sizeof(net), "%s/net", d);
        snprintf(stash, sizeof(stash), "%s/.net-stash", d);
        /* The kernel netdev goes away with the driver; keep its files to bring it back. */
        if (stat(net, &st) == 0) {
                nftw(stash, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
                rename(net, stash);
        }
        if (!*driver)
                return;
        snprintf(target, sizeof(target), "../../../bus/pci/drivers/%s", driver);
        if (symlink(target, link) < 0)
                abort();
        if (dev && dev->netdev[0] && strcmp(driver, dev->native) == 0) {
                if (stat(stash, &st) == 0)
                        rename(stash, net);
                else {
                        char n2[PATH_MAX];
                        snprintf(n2, sizeof(n2), "/sys/devices/pci0000:00/%s/net/%s", pci, dev->netdev);
                        hostfs_mkdir_p(&e->h, n2);
                }
        }
}

int emu_add_nic(emu *e, const char *pci, const char *vendor, const char *device, const char *native,
                const char *driver, const char *netdev)
{
        char d[PATH_MAX], p[PATH_MAX + 32], link[PATH_MAX], target[128];
        emu_dev *dev = &e->devs[e->n_devs++];

        snprintf(dev->pci, sizeof(dev->pci), "%s", pci);
        snprintf(dev->native, sizeof(dev->native), "%s", native);
        snprintf(dev->netdev, sizeof(dev->netdev), "%s", netdev ? netdev : "");
        dev_dir(e, pci, d, sizeof(d));
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s", pci);
        hostfs_mkdir_p(&e->h, p);
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s/vendor", pci);
        emu_write_file(e, p, vendor);
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s/device", pci);
        emu_write_file(e, p, device);
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s/class", pci);
        emu_write_file(e, p, "0x020000\n");
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s/numa_node", pci);
        emu_write_file(e, p, "0\n");
        snprintf(p, sizeof(p), "/sys/devices/pci0000:00/%s/driver_override", pci);
        emu_write_file(e, p, "(null)\n");
        snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s", pci);
        full(e, p, link, sizeof(link));
        snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s", pci);
        if (symlink(target, link) < 0)
                return -errno;
        set_driver(e, pci, driver);
        return 0;
}

emu_fault *emu_fault_add(emu *e, const char *path, const char *data, int err)
{
        emu_fault *f = &e->faults[e->n_faults++];
        memset(f, 0, sizeof(*f));
        snprintf(f->path, sizeof(f->path), "%s", path);
        snprintf(f->data, sizeof(f->data), "%s", data ? data : "");
        f->err = err;
        return f;
}

void emu_reset_log(emu *e) { e->n_log = 0; }

const char *emu_log_str(emu *e)
{
        static char buf[EMU_MAX_LOG * 320];
        buf[0] = '\0';
        for (int i = 0; i < e->n_log; i++) {
                if (i)
                        strcat(buf, "|");
                strcat(buf, e->log[i]);
        }
        return buf;
}

char *emu_read(emu *e, const char *path)
{
        static char buf[4096];
        if (hostfs_read_str(&e->h, path, buf, sizeof(buf)) < 0)
                buf[0] = '\0';
        return buf;
}

const char *emu_driver(emu *e, const char *pci)
{
        static char buf[64];
        int r = bind_current_driver(&e->h, pci, buf, sizeof(buf));
        if (r == -ENODEV)
                return "GONE";
        return r < 0 ? "ERR" : buf;
}

bool emu_has_netdev(emu *e, const char *pci)
{
        emu_dev *dev = find_dev(e, pci);
        char p[PATH_MAX];
        if (!dev || !dev->netdev[0])
                return false;
        snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/net/%s", pci, dev->netdev);
        return hostfs_exists(&e->h, p) == 1;
}

static void vanish(emu *e, const char *pci)
{
        char d[PATH_MAX], p[PATH_MAX], link[PATH_MAX];
        dev_dir(e, pci, d, sizeof(d));
        nftw(d, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
        snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s", pci);
        full(e, p, link, sizeof(link));
        unlink(link);
}

static const char *override_of(emu *e, const char *pci)
{
        static char buf[64];
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/driver_override", pci);
        if (hostfs_read_str(&e->h, p, buf, sizeof(buf)) < 0 || strcmp(buf, "(null)") == 0)
                buf[0] = '\0';
        return buf;
}

static bool driver_dir(emu *e, const char *name)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/sys/bus/pci/drivers/%s", name);
        return hostfs_exists(&e->h, p) == 1;
}

static int emu_write(void *userdata, const hostfs *h, const char *path, const char *data)
{
        emu *e = userdata;
        char shown[64], pci[64], drv[64];
        size_t n;

        (void)h;
        snprintf(shown, sizeof(shown), "%s", data);
        n = strlen(shown);
        if (n && shown[n - 1] == '\n')
                snprintf(shown + n - 1, sizeof(shown) - n + 1, "\\n");
        if (e->n_log < EMU_MAX_LOG)
                snprintf(e->log[e->n_log++], sizeof(e->log[0]), "%s=%s", path, shown);

        for (int i = 0; i < e->n_faults; i++) {
                emu_fault *f = &e->faults[i];
                if (strcmp(f->path, path) != 0 || (f->data[0] && strcmp(f->data, data) != 0))
                        continue;
                if (f->skip > 0) {
                        f->skip--;
                        continue;
                }
                if (f->times < 0)
                        continue;
                if (f->times > 0 && --f->times == 0)
                        f->times = -1; /* used up */
                if (f->vanish) {
                        vanish(e, data);
                        return -ENODEV;
                }
                if (f->no_effect)
                        return 0;
                return f->err;
        }

        /* The write itself: the file must exist (sysfs has no O_CREAT). */
        int r = hostfs_write(h, path, data);
        if (r < 0)
                return r;

        snprintf(pci, sizeof(pci), "%s", data);
        n = strlen(pci);
        if (n && pci[n - 1] == '\n')
                pci[n - 1] = '\0';
        if (strcmp(path, "/sys/bus/pci/drivers_probe") == 0) {
                if (!dev_exists(e, pci))
                        return -ENODEV;
                if (*emu_driver(e, pci))
                        return 0;
                const char *ov = override_of(e, pci);
                emu_dev *dev = find_dev(e, pci);
                const char *want = *ov ? ov : dev ? dev->native : "";
                if (*want && driver_dir(e, want))
                        set_driver(e, pci, want);
                return 0;
        }
        if (sscanf(path, "/sys/bus/pci/drivers/%63[^/]/bind", drv) == 1 && strstr(path, "/bind")) {
                if (!dev_exists(e, pci))
                        return -ENODEV;
                if (*emu_driver(e, pci))
                        return -EBUSY;
                const char *ov = override_of(e, pci);
                emu_dev *dev = find_dev(e, pci);
                if (*ov ? strcmp(ov, drv) != 0 : (!dev || strcmp(dev->native, drv) != 0))
                        return -ENODEV;
                set_driver(e, pci, drv);
                return 0;
        }
        if (sscanf(path, "/sys/bus/pci/drivers/%63[^/]/unbind", drv) == 1 && strstr(path, "/unbind")) {
                if (!dev_exists(e, pci) || strcmp(emu_driver(e, pci), drv) != 0)
                        return -ENODEV;
                set_driver(e, pci, "");
                return 0;
        }
        if (strstr(path, "/driver_override")) {
                /* The kernel shows "(null)" for no override; emulate that on a clear. */
                if (strcmp(data, "\n") == 0 || strcmp(data, "") == 0)
                        return hostfs_write(h, path, "(null)\n");
                return 0;
        }
        return 0;
}

const bind_ops emu_ops_template = {emu_write, NULL};

/* A fresh "scan" of the emulated tree, as the inventory would give it. */
size_t emu_scan_nics(emu *e, prep_nic *nics)
{
        size_t n = 0;
        for (int i = 0; i < e->n_devs; i++) {
                const emu_dev *d = &e->devs[i];
                const char *drv = emu_driver(e, d->pci);
                if (strcmp(drv, "GONE") == 0)
                        continue;
                prep_nic *p = &nics[n++];
                memset(p, 0, sizeof(*p));
                snprintf(p->pci, sizeof(p->pci), "%s", d->pci);
                snprintf(p->driver, sizeof(p->driver), "%.31s", drv);
                if (emu_has_netdev(e, d->pci))
                        snprintf(p->netdev, sizeof(p->netdev), "%s", d->netdev);
                char path[128];
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", d->pci);
                p->vendor = (uint16_t)strtoul(emu_read(e, path), NULL, 16);
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", d->pci);
                p->device = (uint16_t)strtoul(emu_read(e, path), NULL, 16);
                p->kind = p->vendor == 0x1d0f ? CONFIG_KIND_ENA : p->vendor == 0x1414 ? CONFIG_KIND_MANA : CONFIG_KIND_OTHER;
                p->primary = strcmp(p->netdev, "eth0") == 0;
        }
        return n;
}

int emu_scan_fn(void *userdata, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n)
{
        emu *e = userdata;
        (void)h;
        if (max < (size_t)e->n_devs)
                return -E2BIG;
        *ret_n = emu_scan_nics(e, ret);
        return 0;
}

int emu_adopt(emu *e, const char *root)
{
        char p[PATH_MAX];
        DIR *d;
        struct dirent *de;
        int r;

        memset(e, 0, sizeof(*e));
        snprintf(e->root, sizeof(e->root), "%s", root);
        if ((r = hostfs_init(&e->h, root)) < 0)
                return r;
        if ((r = emu_write_file(e, "/sys/bus/pci/drivers_probe", "")) < 0)
                return r;
        full(e, "/sys/bus/pci/drivers", p, sizeof(p));
        if ((d = opendir(p))) {
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                emu_add_driver(e, de->d_name);
                closedir(d);
        }
        full(e, "/sys/bus/pci/devices", p, sizeof(p));
        if (!(d = opendir(p)))
                return -errno;
        while ((de = readdir(d))) {
                char f[PATH_MAX], cls[32] = "", ven[32] = "";
                if (de->d_name[0] == '.' || e->n_devs >= EMU_MAX_DEV)
                        continue;
                snprintf(f, sizeof(f), "/sys/bus/pci/devices/%s/class", de->d_name);
                snprintf(cls, sizeof(cls), "%s", emu_read(e, f));
                if (strncmp(cls, "0x02", 4) != 0)
                        continue;
                snprintf(f, sizeof(f), "/sys/bus/pci/devices/%s/vendor", de->d_name);
                snprintf(ven, sizeof(ven), "%s", emu_read(e, f));
                emu_dev *dev = &e->devs[e->n_devs++];
                memset(dev, 0, sizeof(*dev));
                snprintf(dev->pci, sizeof(dev->pci), "%.15s", de->d_name);
                snprintf(dev->native, sizeof(dev->native), "%s",
                         strcmp(ven, "0x1d0f") == 0 ? "ena" : strcmp(ven, "0x1414") == 0 ? "mana" : "");
                snprintf(f, sizeof(f), "/sys/bus/pci/devices/%s/driver_override", de->d_name);
                emu_write_file(e, f, "(null)\n");
                snprintf(f, sizeof(f), "/sys/bus/pci/devices/%s/net", de->d_name);
                char nd[PATH_MAX];
                DIR *n;
                full(e, f, nd, sizeof(nd));
                if ((n = opendir(nd))) {
                        struct dirent *ne;
                        while ((ne = readdir(n)))
                                if (ne->d_name[0] != '.' && !dev->netdev[0])
                                        snprintf(dev->netdev, sizeof(dev->netdev), "%.15s", ne->d_name);
                        closedir(n);
                }
        }
        closedir(d);
        return 0;
}

/* ---- rtnetlink ---- */

static int net_index(emu *e, const char *ifname)
{
        for (int i = 0; i < e->n_devs; i++)
                if (strcmp(e->devs[i].netdev, ifname) == 0)
                        return emu_has_netdev(e, e->devs[i].pci) ? 10 + i : 0;
        int extra = 0;
        for (int i = 0; i < e->n_net; i++)
                if (e->net[i].kind == 'l') {
                        if (strcmp(e->net[i].ifname, ifname) == 0)
                                return 200 + extra;
                        extra++;
                }
        return 0;
}

static const char *master_of(emu *e, const char *ifname)
{
        for (int i = 0; i < e->n_net; i++)
                if (e->net[i].kind == 'm' && strcmp(e->net[i].ifname, ifname) == 0)
                        return e->net[i].y;
        return NULL;
}

int emu_net_sync(emu *e)
{
        char path[PATH_MAX], dir[PATH_MAX];
        nlfacts f;

        memset(&f, 0, sizeof(f));
        nlf_link(&f, 1, "lo", 0, 0, "");
        nlf_addr(&f, 1, "127.0.0.1/8");
        for (int i = 0; i < e->n_devs; i++)
                if (e->devs[i].netdev[0] && emu_has_netdev(e, e->devs[i].pci)) {
                        const char *m = master_of(e, e->devs[i].netdev);
                        nlf_link(&f, 10 + i, e->devs[i].netdev, m ? (uint32_t)net_index(e, m) : 0, 0, "");
                }
        for (int i = 0; i < e->n_net; i++)
                if (e->net[i].kind == 'l')
                        nlf_link(&f, net_index(e, e->net[i].ifname), e->net[i].ifname, 0, 0, "bridge");
        for (int i = 0; i < e->n_net; i++) {
                const emu_net_fact *x = &e->net[i];
                int idx = net_index(e, x->ifname);
                if (x->kind == 'a' && idx)
                        nlf_addr(&f, idx, x->x);
                else if (x->kind == 'r' && idx)
                        nlf_route(&f, x->x, *x->y ? x->y : NULL, idx, x->table, x->metric);
                else if (x->kind == 'u')
                        nlf_rule(&f, x->metric, x->ifname, NULL, x->table);
        }
        snprintf(dir, sizeof(dir), "%s", NETLINK_RECORDED_DUMP);
        *strrchr(dir, '/') = '\0';
        hostfs_mkdir_p(&e->h, dir);
        full(e, NETLINK_RECORDED_DUMP, path, sizeof(path));
        int r = nlf_write(&f, path);
        nlf_free(&f);
        return r;
}

static emu_net_fact *net_add(emu *e, char kind, const char *ifname)
{
        if (e->n_net >= EMU_MAX_NET)
                abort();
        emu_net_fact *x = &e->net[e->n_net++];
        memset(x, 0, sizeof(*x));
        x->kind = kind;
        snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
        e->net_managed = true;
        return x;
}

void emu_net_addr(emu *e, const char *ifname, const char *cidr)
{
        snprintf(net_add(e, 'a', ifname)->x, sizeof(e->net[0].x), "%s", cidr);
        emu_net_sync(e);
}

void emu_net_route(emu *e, const char *ifname, const char *dst, const char *gw, unsigned table, unsigned metric)
{
        emu_net_fact *x = net_add(e, 'r', ifname);
        snprintf(x->x, sizeof(x->x), "%s", dst);
        snprintf(x->y, sizeof(x->y), "%s", gw ? gw : "");
        x->table = table;
        x->metric = metric;
        emu_net_sync(e);
}

void emu_net_rule(emu *e, const char *ifname, unsigned table, unsigned pref)
{
        emu_net_fact *x = net_add(e, 'u', ifname);
        x->table = table;
        x->metric = pref;
        emu_net_sync(e);
}

void emu_net_link(emu *e, const char *ifname, const char *master)
{
        if (master)
                snprintf(net_add(e, 'm', ifname)->y, sizeof(e->net[0].y), "%s", master);
        else
                net_add(e, 'l', ifname);
        emu_net_sync(e);
}

void emu_net_clear(emu *e)
{
        int k = 0;
        for (int i = 0; i < e->n_net; i++)
                if (e->net[i].kind == 'l')
                        e->net[k++] = e->net[i];
        e->n_net = k;
        e->net_managed = true;
        emu_net_sync(e);
}
