/* SPDX-License-Identifier: Apache-2.0 */
/* NIC binding engine: sysfs writes through bind_ops, verification by reading the driver
 * link back, roll-back on failure, recorded in the bind state (agent/node/bind-state.h)
 * before the first write. Never logs; every outcome is a bind_result with its message. */
#include "bind.h"

#include "cleanup.h"
#include "netlink.h"
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

static int default_write(void *userdata, const hostfs *h, const char *path, const char *data)
{
        (void)userdata;
        return hostfs_write(h, path, data);
}

/* target under the root, for a mount or umount: only under a live root (-ENOSYS else). */
static int live_path(const hostfs *h, const char *target, char *buf, size_t size)
{
        if (!hostfs_is_live(h))
                return -ENOSYS;
        return hostfs_path(h, target, buf, size);
}

static int default_mount(void *userdata, const hostfs *h, const char *source, const char *target, const char *fstype,
                         unsigned long flags, const char *data)
{
        char full[PATH_MAX];
        int r;
        (void)userdata;
        if ((r = live_path(h, target, full, sizeof(full))) < 0)
                return r;
        return mount(source, full, fstype, flags, data) < 0 ? -errno : 0;
}

static int default_umount(void *userdata, const hostfs *h, const char *target)
{
        char full[PATH_MAX];
        int r;
        (void)userdata;
        if ((r = live_path(h, target, full, sizeof(full))) < 0)
                return r;
        return umount2(full, UMOUNT_NOFOLLOW) < 0 ? -errno : 0;
}

static int default_mkdir(void *userdata, const hostfs *h, const char *path)
{
        (void)userdata;
        return hostfs_mkdir_p(h, path);
}

const bind_ops bind_ops_default = {default_write, NULL, default_mount, default_umount, default_mkdir};

int bind_ops_mount(const bind_ops *ops, const hostfs *h, const char *source, const char *target, const char *fstype,
                   unsigned long flags, const char *data)
{
        if (!ops || !ops->mount)
                return default_mount(NULL, h, source, target, fstype, flags, data);
        return ops->mount(ops->userdata, h, source, target, fstype, flags, data);
}

int bind_ops_umount(const bind_ops *ops, const hostfs *h, const char *target)
{
        if (!ops || !ops->umount)
                return default_umount(NULL, h, target);
        return ops->umount(ops->userdata, h, target);
}

int bind_ops_mkdir(const bind_ops *ops, const hostfs *h, const char *path)
{
        if (!ops || !ops->mkdir)
                return default_mkdir(NULL, h, path);
        return ops->mkdir(ops->userdata, h, path);
}

const char *bind_outcome_name(bind_outcome o)
{
        switch (o) {
        case BIND_OK:
                return "bound";
        case BIND_ALREADY:
                return "already";
        case BIND_REFUSED:
                return "refused";
        case BIND_ROLLED_BACK:
                return "rolled-back";
        case BIND_UNSAFE:
                return "unsafe";
        }
        return "?";
}


static void state_drop(bind_state *s, const char *pci);
/* Undo this call's change to the state: drop a new entry, or put the old target back. */
static void state_undo(bind_state *s, const char *pci, bool added, const char *old_target)
{
        bind_state_entry *e = (bind_state_entry *)bind_state_find(s, pci);
        if (!e)
                return;
        if (added)
                state_drop(s, pci);
        else
                snprintf(e->target, sizeof(e->target), "%s", old_target);
}

static void state_drop(bind_state *s, const char *pci)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->e[i].pci, pci) == 0) {
                        memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(s->e[0]));
                        s->n--;
                        return;
                }
}

/* ---- sysfs ---- */

int bind_current_driver(const hostfs *h, const char *pci, char *buf, size_t size)
{
        char path[PATH_MAX];
        int r;

        if ((r = hostfs_fmt(path, sizeof(path), "/sys/bus/pci/devices/%s", pci)) < 0)
                return r;
        r = hostfs_exists(h, path);
        if (r <= 0)
                return r == 0 ? -ENODEV : r;
        if ((r = hostfs_fmt(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", pci)) < 0)
                return r;
        r = hostfs_readlink_base(h, path, buf, size);
        if (r == -ENOENT) {
                if (size)
                        buf[0] = '\0';
                return 0;
        }
        return r;
}

static int driver_loaded(const hostfs *h, const char *driver)
{
        char path[PATH_MAX];
        int r = hostfs_fmt(path, sizeof(path), "/sys/bus/pci/drivers/%s", driver);
        return r < 0 ? r : hostfs_exists(h, path);
}

/* The first kernel netdev of the device ("" none). */
static void first_netdev(const hostfs *h, const char *pci, char *buf, size_t size)
{
        char path[PATH_MAX];
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        buf[0] = '\0';
        if (hostfs_fmt(path, sizeof(path), "/sys/bus/pci/devices/%s/net", pci) < 0 || hostfs_opendir(h, path, &d) < 0)
                return;
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                if (de->d_name[0] != '.' && n < size && !*buf)
                        memcpy(buf, de->d_name, n + 1); /* fits: checked above */
        }
}

/* The MAC of pci's netdev ("" when unreadable): <pci>/net/<if>/address, which is
 * /sys/class/net/<if>/address on a live host (a fake tree may have only the latter). */
static void netdev_mac(const hostfs *h, const char *pci, const char *netdev, char *buf, size_t size)
{
        char path[PATH_MAX], val[64];
        uint8_t mac[6];

        buf[0] = '\0';
        if (!*netdev)
                return;
        if ((hostfs_fmt(path, sizeof(path), "/sys/bus/pci/devices/%s/net/%s/address", pci, netdev) == 0 &&
             hostfs_read_str(h, path, val, sizeof(val)) >= 0 && parse_mac(val, mac) == 0) ||
            (hostfs_fmt(path, sizeof(path), "/sys/class/net/%s/address", netdev) == 0 &&
             hostfs_read_str(h, path, val, sizeof(val)) >= 0 && parse_mac(val, mac) == 0))
                snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

/* The netdevs in dir (<pci>/net or <pci>/virtioN/net): 1 when one is in use, 0 when none
 * is (or dir is absent), negative when it cannot tell; why says which either way. */
static int dir_in_use(const hostfs *h, const nlparse_usage *use, const char *dir, char *why, size_t why_size)
{
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r = hostfs_opendir(h, dir, &d);

        if (r == -ENOENT)
                return 0; /* no kernel netdev: nothing of the node's networking on it */
        if (r < 0) {
                snprintf(why, why_size, "cannot list %s: %s", dir, strerror(-r));
                return r;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (strlen(de->d_name) >= IFNAMSIZ) {
                        snprintf(why, why_size, "%s holds a netdev name longer than %d bytes", dir, IFNAMSIZ - 1);
                        return -EINVAL;
                }
                r = nlparse_in_use(use, de->d_name, why, why_size);
                if (r == -ENOENT)
                        snprintf(why, why_size, "%s has no entry in the node's link usage (another network namespace, "
                                 "or renamed?)", de->d_name);
                if (r != 0)
                        return r;
        }
        return 0;
}

int bind_netdev_in_use(const hostfs *h, const nlparse_usage *use, const char *pci, char *why, size_t why_size)
{
        char path[PATH_MAX], dev[PATH_MAX];
        nlparse_usage *own = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (!use) {
                r = netlink_usage_load(h, &own, why, why_size);
                if (r < 0)
                        return r;
                use = own;
        }
        if ((r = hostfs_fmt(dev, sizeof(dev), "/sys/bus/pci/devices/%s", pci)) < 0 ||
            (r = hostfs_fmt(path, sizeof(path), "%s/net", dev)) < 0)
                goto out;
        r = dir_in_use(h, use, path, why, why_size);
        if (r != 0)
                goto out;
        /* virtio-net keeps its netdev under its virtio device: <pci>/virtioN/net/<if> */
        r = hostfs_opendir(h, dev, &d);
        if (r < 0) {
                snprintf(why, why_size, "cannot list %s: %s", dev, strerror(-r));
                goto out;
        }
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, "virtio", 6) != 0 ||
                    hostfs_fmt(path, sizeof(path), "%s/%s/net", dev, de->d_name) < 0)
                        continue;
                r = dir_in_use(h, use, path, why, why_size);
                if (r != 0)
                        goto out;
        }
        r = 0;
out:
        nlparse_usage_free(own);
        return r;
}

/* ---- binding ---- */

static void result_init(bind_result *res, const char *pci)
{
        memset(res, 0, sizeof(*res));
        snprintf(res->pci, sizeof(res->pci), "%s", pci);
}

static int result_set(bind_result *res, bind_outcome o, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int result_set(bind_result *res, bind_outcome o, int err, const char *fmt, ...)
{
        va_list ap;
        res->outcome = o;
        if (!res->err)
                res->err = err;
        va_start(ap, fmt);
        vsnprintf(res->message, sizeof(res->message), fmt, ap);
        va_end(ap);
        return err;
}

static int do_write(const bind_ops *ops, const hostfs *h, const char *data, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int do_write(const bind_ops *ops, const hostfs *h, const char *data, const char *fmt, ...)
{
        char path[PATH_MAX];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        return ops->write(ops->userdata, h, path, data);
}

static bool device_gone(const hostfs *h, const char *pci)
{
        char cur[BIND_DRIVER_LEN];
        return bind_current_driver(h, pci, cur, sizeof(cur)) == -ENODEV;
}

/* Put pci back on want ("" = no driver), leaving driver_override at override ("" =
 * cleared; a userspace driver such as igb_uio only binds through its override).
 * Returns 0 when verified, -ENODEV when the device is gone. */
static int put_back(const hostfs *h, const bind_ops *ops, const char *pci, const char *want,
                    const char *override, char *step, size_t step_size)
{
        char cur[BIND_DRIVER_LEN];
        int r;

        if (device_gone(h, pci))
                return -ENODEV;
        r = do_write(ops, h, *override ? override : "\n", "/sys/bus/pci/devices/%s/driver_override", pci);
        if (r < 0) {
                if (device_gone(h, pci))
                        return -ENODEV;
                snprintf(step, step_size, "%s driver_override: %s", *override ? "restoring" : "clearing",
                         strerror(-r));
                return r;
        }
        if ((r = bind_current_driver(h, pci, cur, sizeof(cur))) < 0) {
                snprintf(step, step_size, "reading its driver: %s", strerror(-r));
                return r;
        }
        if (strcmp(cur, want) == 0)
                return 0;
        if (*cur) {
                r = do_write(ops, h, pci, "/sys/bus/pci/drivers/%s/unbind", cur);
                if (r < 0) {
                        if (device_gone(h, pci))
                                return -ENODEV;
                        snprintf(step, step_size, "unbinding from %s: %s", cur, strerror(-r));
                        return r;
                }
        }
        if (*want) {
                r = do_write(ops, h, pci, "/sys/bus/pci/drivers/%s/bind", want);
                if (r < 0 && r != -ENODEV)
                        r = do_write(ops, h, pci, "/sys/bus/pci/drivers_probe");
                if (r < 0) {
                        if (device_gone(h, pci))
                                return -ENODEV;
                        snprintf(step, step_size, "binding to %s: %s", want, strerror(-r));
                        return r;
                }
        }
        if ((r = bind_current_driver(h, pci, cur, sizeof(cur))) < 0) {
                if (r == -ENODEV)
                        return r;
                snprintf(step, step_size, "reading its driver: %s", strerror(-r));
                return r;
        }
        if (strcmp(cur, want) != 0) {
                snprintf(step, step_size, "it is on \"%s\" instead of \"%s\"", cur, want);
                return -EIO;
        }
        return 0;
}

int bind_nic(const hostfs *h, const bind_ops *ops, const nlparse_usage *use, const char *pci, const char *target,
             bind_state *state, bind_result *res)
{
        char cur[BIND_DRIVER_LEN], why[NLPARSE_WHY_LEN], step[256], path[PATH_MAX], old_target[BIND_DRIVER_LEN] = "";
        const char *failed_at;
        bool added = false;
        int r, r2;

        result_init(res, pci);
        if (!ops)
                ops = &bind_ops_default;
        if (!parse_is_pci_addr(pci) || !bind_driver_name_valid(target))
                return result_set(res, BIND_REFUSED, -EINVAL, "%s: bad PCI address or driver name \"%s\"", pci,
                                  target);
        r = bind_current_driver(h, pci, cur, sizeof(cur));
        if (r == -ENODEV)
                return result_set(res, BIND_REFUSED, r, "%s: device is gone (no /sys/bus/pci/devices/%s); nothing changed",
                                  pci, pci);
        if (r < 0)
                return result_set(res, BIND_REFUSED, r, "%s: cannot read its driver: %s; nothing changed", pci,
                                  strerror(-r));
        snprintf(res->driver, sizeof(res->driver), "%s", cur);
        if (strcmp(cur, target) == 0) {
                const bind_state_entry *e = bind_state_find(state, pci);
                return result_set(res, BIND_ALREADY, 0, "%s: already on %s%s%s%s", pci, target,
                                  e ? " (original driver " : "", e ? (*e->original ? e->original : "none") : "",
                                  e ? ")" : "");
        }
        r = bind_netdev_in_use(h, use, pci, why, sizeof(why));
        if (r > 0)
                return result_set(res, BIND_REFUSED, -EBUSY, "%s: refused: the node uses it: %s; nothing changed", pci,
                                  why);
        if (r < 0)
                return result_set(res, BIND_REFUSED, r,
                                  "%s: refused: cannot tell whether the node uses it: %s; nothing changed", pci, why);
        r = driver_loaded(h, target);
        if (r <= 0)
                return result_set(res, BIND_REFUSED, r < 0 ? r : -ENOENT,
                                  "%s: driver %s is not loaded (no /sys/bus/pci/drivers/%s; modprobe %s); nothing changed",
                                  pci, target, target, target);
        if ((r = hostfs_fmt(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", pci)) < 0 ||
            (r = hostfs_exists(h, path)) <= 0)
                return result_set(res, BIND_REFUSED, r < 0 ? r : -ENOTSUP,
                                  "%s: kernel has no driver_override for it; nothing changed", pci);

        /* Remember the original driver before the first write. */
        if (!bind_state_find(state, pci)) {
                if (state->n >= BIND_STATE_MAX)
                        return result_set(res, BIND_REFUSED, -E2BIG, "%s: state file is full (%d NICs); nothing changed",
                                          pci, BIND_STATE_MAX);
                bind_state_entry *e = &state->e[state->n++];
                snprintf(e->pci, sizeof(e->pci), "%s", pci);
                snprintf(e->original, sizeof(e->original), "%s", cur);
                snprintf(e->target, sizeof(e->target), "%s", target);
                first_netdev(h, pci, e->netdev, sizeof(e->netdev));
                netdev_mac(h, pci, e->netdev, e->mac, sizeof(e->mac));
                added = true;
        } else {
                bind_state_entry *e = (bind_state_entry *)bind_state_find(state, pci);
                snprintf(old_target, sizeof(old_target), "%s", e->target);
                snprintf(e->target, sizeof(e->target), "%s", target);
                if (!e->mac[0]) { /* an entry of an older file: its MAC while it is still readable */
                        char nd[16];
                        first_netdev(h, pci, nd, sizeof(nd));
                        netdev_mac(h, pci, nd, e->mac, sizeof(e->mac));
                }
        }
        r = bind_state_save(h, state);
        if (r < 0) {
                state_undo(state, pci, added, old_target);
                return result_set(res, BIND_REFUSED, r, "%s: cannot write the state file %s: %s; nothing changed", pci,
                                  BIND_STATE_PATH, strerror(-r));
        }
        /* Roll-back goes to the driver it is on now (the recorded original, unless an
         * earlier run already moved it to another userspace driver). */
        char original[BIND_DRIVER_LEN], prev_target[BIND_DRIVER_LEN];
        snprintf(original, sizeof(original), "%s", cur);
        snprintf(prev_target, sizeof(prev_target), "%s", added ? target : old_target);

        failed_at = "driver_override";
        r = do_write(ops, h, target, "/sys/bus/pci/devices/%s/driver_override", pci);
        if (r < 0)
                goto rollback;
        if (*cur) {
                failed_at = "unbind";
                r = do_write(ops, h, pci, "/sys/bus/pci/drivers/%s/unbind", cur);
                if (r < 0)
                        goto rollback;
        }
        failed_at = "drivers_probe";
        r = do_write(ops, h, pci, "/sys/bus/pci/drivers_probe");
        if (r < 0)
                goto rollback;
        failed_at = "verify";
        r = bind_current_driver(h, pci, cur, sizeof(cur));
        if (r < 0)
                goto rollback;
        if (strcmp(cur, target) != 0) {
                r = -EIO;
                goto rollback;
        }
        snprintf(res->driver, sizeof(res->driver), "%s", cur);
        return result_set(res, BIND_OK, 0, "%s: bound to %s (was %s)", pci, target, *original ? original : "none");

rollback:
        step[0] = '\0';
        char reason[160];
        if (strcmp(failed_at, "driver_override") == 0 && bind_current_driver(h, pci, cur, sizeof(cur)) == 0 &&
            strcmp(cur, original) == 0) {
                /* The first write failed: the kernel changed nothing, so there is nothing to
                 * undo (clearing the override would fail the same way). */
                state_undo(state, pci, added, prev_target);
                (void)bind_state_save(h, state);
                snprintf(res->driver, sizeof(res->driver), "%s", cur);
                return result_set(res, BIND_ROLLED_BACK, r,
                                  "%s: binding to %s failed (writing driver_override: %s); nothing changed, still on %s",
                                  pci, target, strerror(-r), *cur ? cur : "no driver");
        }
        if (strcmp(failed_at, "verify") == 0 && r == -EIO)
                snprintf(reason, sizeof(reason), "after drivers_probe it is on \"%s\", not %s", cur, target);
        else
                snprintf(reason, sizeof(reason), "%s failed: %s", failed_at, strerror(-r));
        {
                const bind_state_entry *e = bind_state_find(state, pci);
                bool kernel = !e || strcmp(e->original, original) == 0;
                r2 = put_back(h, ops, pci, original, kernel ? "" : original, step, sizeof(step));
        }
        if (r2 == 0 || r2 == -ENODEV) {
                bool gone = r2 == -ENODEV;
                char orig_copy[BIND_DRIVER_LEN];
                snprintf(orig_copy, sizeof(orig_copy), "%s", original);
                if (gone)
                        state_drop(state, pci);
                else
                        state_undo(state, pci, added, prev_target);
                int r3 = bind_state_save(h, state);
                snprintf(res->driver, sizeof(res->driver), "%s", gone ? "" : orig_copy);
                if (gone)
                        return result_set(res, BIND_ROLLED_BACK, r,
                                          "%s: binding to %s failed (%s) and the device is gone; nothing left to roll back%s",
                                          pci, target, reason, r3 < 0 ? " (state file not updated)" : "");
                return result_set(res, BIND_ROLLED_BACK, r, "%s: binding to %s failed (%s); rolled back to %s%s", pci,
                                  target, reason, *orig_copy ? orig_copy : "no driver",
                                  r3 < 0 ? " (state file not updated)" : "");
        }
        (void)bind_current_driver(h, pci, res->driver, sizeof(res->driver));
        return result_set(res, BIND_UNSAFE, r,
                          "%s: binding to %s failed (%s) and rolling back to %s failed (%s): it is on \"%s\"; "
                          "run `spinlane-agent restore`",
                          pci, target, reason, *original ? original : "no driver", step, res->driver);
}

int bind_restore(const hostfs *h, const bind_ops *ops, bind_state *state, bind_result *ret, size_t *ret_n)
{
        bind_state keep = {.n = 0};
        size_t n = 0;
        int first = 0, r;

        if (!ops)
                ops = &bind_ops_default;
        for (size_t i = 0; i < state->n; i++) {
                const bind_state_entry *e = &state->e[i];
                bind_result *res = &ret[n++];
                char cur[BIND_DRIVER_LEN], step[256];
                const char *orig = *e->original ? e->original : "no driver";

                result_init(res, e->pci);
                r = bind_current_driver(h, e->pci, cur, sizeof(cur));
                if (r == -ENODEV) {
                        result_set(res, BIND_OK, 0, "%s: device is gone; forgotten", e->pci);
                        continue;
                }
                step[0] = '\0';
                r = put_back(h, ops, e->pci, e->original, "", step, sizeof(step));
                if (r == -ENODEV) {
                        result_set(res, BIND_OK, 0, "%s: device is gone; forgotten", e->pci);
                        continue;
                }
                if (r < 0) {
                        (void)bind_current_driver(h, e->pci, res->driver, sizeof(res->driver));
                        result_set(res, BIND_UNSAFE, r, "%s: could not give it back to %s (%s); it is on \"%s\"; kept in state",
                                   e->pci, orig, step, res->driver);
                        if (!first)
                                first = r;
                        keep.e[keep.n++] = *e;
                        continue;
                }
                snprintf(res->driver, sizeof(res->driver), "%s", e->original);
                if (strcmp(cur, e->original) == 0)
                        result_set(res, BIND_ALREADY, 0, "%s: already on %s", e->pci, orig);
                else
                        result_set(res, BIND_OK, 0, "%s: restored to %s (was on %s)", e->pci, orig,
                                   *cur ? cur : "no driver");
        }
        *ret_n = n;
        *state = keep;
        r = bind_state_save(h, state);
        if (r < 0 && !first)
                first = r;
        return first;
}
