/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation: the order of the steps, the choice of NICs, and turning each step's
 * outcome into verdicts and log lines. Never logs; all writes go through prep_ops. */
#include "prep.h"

#include "cleanup.h"
#include "hugepages.h"
#include "netlink.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int no_coalesce(void *userdata, const char *ifname)
{
        (void)userdata, (void)ifname;
        return -ENOSYS;
}

static int real_link_down(void *userdata, const char *ifname)
{
        (void)userdata;
        return tune_link_down_ioctl(ifname);
}

static int no_link_down(void *userdata, const char *ifname)
{
        (void)userdata, (void)ifname;
        return -ENOSYS;
}

void prep_ops_default(const hostfs *h, prep_ops *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->sysfs = bind_ops_default;
        ret->tune = tune_ops_default;
        ret->link_down = real_link_down;
        ret->kargs = kargs_ops_default;
        if (!hostfs_is_live(h)) {
                /* ioctls act on this network namespace, not on a fake tree under --root;
                 * under a live --root /host the agent runs with the host's network. */
                ret->tune.coalesce_off = no_coalesce;
                ret->link_down = no_link_down;
        }
}

static void line(prep_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(prep_report *r, const char *fmt, ...)
{
        va_list ap;
        if (r->n_lines >= PREP_MAX_NICS)
                return;
        va_start(ap, fmt);
        vsnprintf(r->lines[r->n_lines++], sizeof(r->lines[0]), fmt, ap);
        va_end(ap);
}

/* Azure's accelerated networking pairs each MANA VF netdev with a synthetic hv_netvsc
 * netdev of the same MAC and enslaves the VF to it (the kernel's adjacency links in sysfs:
 * the VF's "master" and "upper_<synthetic>", the synthetic's "lower_<vf>"). The synthetic
 * netdev of vf into ret (size bytes): 0 found, -ENOENT none (no master link), -EXDEV a
 * master that is not the VF's pair (another MAC, or not on hv_netvsc: a bridge, a bond),
 * else -errno of a read. The pair of a selected VF is never the node's primary: the
 * inventory maps the default route's synthetic netdev to its VF by this same MAC and marks
 * that VF primary, which the selection never takes. ret untouched on failure. */
static int mana_synthetic(const hostfs *h, const char *vf, char *ret, size_t size)
{
        char p[PATH_MAX], m[64], drv[64], vmac[32], mmac[32];
        int r;

        if (hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/master", vf) < 0)
                return -ENAMETOOLONG;
        r = hostfs_readlink_base(h, p, m, sizeof(m));
        if (r < 0)
                return r == -EINVAL ? -ENOENT : r;
        if (strlen(m) >= size || strlen(m) >= 16)
                return -ENAMETOOLONG;
        if (hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/address", vf) < 0 ||
            (r = hostfs_read_str(h, p, vmac, sizeof(vmac))) < 0)
                return r < 0 ? r : -ENAMETOOLONG;
        if (hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/address", m) < 0 ||
            (r = hostfs_read_str(h, p, mmac, sizeof(mmac))) < 0)
                return r < 0 ? r : -ENAMETOOLONG;
        if (strcasecmp(vmac, mmac) != 0)
                return -EXDEV;
        if (hostfs_fmt(p, sizeof(p), "/sys/class/net/%s/device/driver", m) < 0 ||
            hostfs_readlink_base(h, p, drv, sizeof(drv)) < 0 || strcmp(drv, "hv_netvsc") != 0)
                return -EXDEV;
        snprintf(ret, size, "%s", m);
        return 0;
}

/* Set one kernel netdev of a MANA NIC down (what: "kernel netdev", "synthetic netdev");
 * 0 done or already down (a line says which), else the error with problem filled. */
static int mana_down(const prep_ops *ops, const prep_nic *nic, const char *what, const char *ifname,
                     prep_report *rep, char *problem, size_t psize)
{
        int r = ops->link_down(ops->link_userdata, ifname);
        if (r == 0)
                line(rep, "%s: set its %s %s down", nic->pci, what, ifname);
        else if (r == 1)
                line(rep, "%s: %s %s is already down", nic->pci, what, ifname);
        else if (r == -ENOSYS)
                line(rep, "%s: would set its %s %s down (not the real root)", nic->pci, what, ifname);
        else {
                snprintf(problem, psize, "%s: setting %s down failed: %s", nic->pci, ifname, strerror(-r));
                return r;
        }
        return 0;
}

/* MANA stays on its kernel driver: DPDK's net_mana needs mana_ib and ib_uverbs and the
 * device's /sys/class/infiniband_verbs/uverbsN. With binding.mana_netdev_down the VF's
 * netdev and its synthetic hv_netvsc pair go down: Microsoft's MANA DPDK guide sets both
 * down ("low or zero throughput" otherwise). */
static int mana_check(const hostfs *h, const prep_ops *ops, const config *c, const prep_nic *nic,
                      prep_report *rep, char *problem, size_t psize)
{
        unsigned uv;
        int r;

        problem[0] = '\0';
        if (hostfs_exists(h, "/sys/module/mana_ib") != 1 || hostfs_exists(h, "/sys/module/ib_uverbs") != 1) {
                snprintf(problem, psize, "%s: kernel modules mana_ib and ib_uverbs are not both loaded", nic->pci);
                return -ENOENT;
        }
        if (inv_find_uverbs(h, nic->pci, &uv) < 0) {
                snprintf(problem, psize, "%s: no /sys/class/infiniband_verbs/uverbs* device belongs to it", nic->pci);
                return -ENODEV;
        }
        line(rep, "%s: MANA stays on %s; DPDK reaches it through /dev/infiniband/uverbs%u", nic->pci,
             *nic->driver ? nic->driver : "no driver", uv);
        if (c->binding.mana_netdev_down && *nic->netdev) {
                char syn[16] = "";
                /* the pair is worked out before anything goes down */
                r = mana_synthetic(h, nic->netdev, syn, sizeof(syn));
                if (r < 0 && r != -ENOENT && r != -EXDEV) {
                        snprintf(problem, psize, "%s: cannot tell the synthetic netdev paired with %s: %s; nothing "
                                 "set down", nic->pci, nic->netdev, strerror(-r));
                        return r;
                }
                if ((r = mana_down(ops, nic, "kernel netdev", nic->netdev, rep, problem, psize)) < 0)
                        return r;
                if (*syn && (r = mana_down(ops, nic, "synthetic netdev", syn, rep, problem, psize)) < 0)
                        return r;
        }
        return 0;
}

static int bind_step(const hostfs *h, const prep_ops *ops, const config *c, const prep_nic *nics, size_t n,
                     prep_report *rep)
{
        _cleanup_free_ bind_state *st = calloc(1, sizeof(*st));
        _cleanup_free_ size_t *idx = calloc(n ? n : 1, sizeof(size_t));
        char err[256], fails[1024] = "", warns[1024] = "", mana_fail[1024] = "";
        unsigned bound = 0, already = 0, mana_ok = 0, mana_n = 0;
        bool refused_in_use = false, refused_other = false;
        int r;

        if (!st || !idx)
                return -ENOMEM;
        r = bind_state_load(h, st, err, sizeof(err));
        if (r < 0) {
                json_t *ev = json_pack("{s:s,s:s}", "state_file", BIND_STATE_PATH, "error", err);
                return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_FAIL, ev,
                                   "check which driver each NIC is on (ls -l /sys/bus/pci/devices/*/driver); give "
                                   "them back by hand, then remove the state file",
                                   "%s: %s; no NIC was touched", BIND_STATE_PATH, err);
        }
        size_t k = select_nics(c, nics, n, st, idx, NULL);
        /* Which NICs the node itself uses, read once for all: when that cannot be read
         * whole, no NIC is taken. */
        bool binds = false;
        for (size_t i = 0; i < k; i++)
                binds |= nics[idx[i]].kind != CONFIG_KIND_MANA;
        nlparse_usage *use = NULL;
        if (binds) {
                char why[NLPARSE_WHY_LEN];
                r = netlink_usage_load(h, &use, why, sizeof(why));
                if (r < 0) {
                        json_t *ev = json_pack("{s:s,s:s}", "source", netlink_usage_source(h), "error", why);
                        return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_FAIL, ev,
                                           "fix what is named here; with hostNetwork the agent reads the host's "
                                           "rtnetlink, and it must answer whole",
                                           "cannot tell which NICs the node uses (%s); no NIC was touched", why);
                }
        }
        json_t *ev = json_array();
        for (size_t i = 0; i < k; i++) {
                const prep_nic *nic = &nics[idx[i]];
                if (nic->kind == CONFIG_KIND_MANA) {
                        char problem[256];
                        mana_n++;
                        if (mana_check(h, ops, c, nic, rep, problem, sizeof(problem)) == 0)
                                mana_ok++;
                        else
                                (void)hostfs_fmt_append(mana_fail, sizeof(mana_fail),
                                                        "%s%s", *mana_fail ? "; " : "", problem);
                        continue;
                }
                if (rep->n_nics >= PREP_MAX_NICS)
                        break;
                bind_result *res = &rep->nics[rep->n_nics++];
                bind_nic(h, &ops->sysfs, use, nic->pci, config_driver_name(c->binding.ena), st, res);
                if (ev)
                        json_array_append_new(ev, json_pack("{s:s,s:s,s:s}", "pci", res->pci, "outcome",
                                                            bind_outcome_name(res->outcome), "driver", res->driver));
                switch (res->outcome) {
                case BIND_OK:
                        bound++;
                        break;
                case BIND_ALREADY:
                        already++;
                        break;
                case BIND_REFUSED:
                        (void)hostfs_fmt_append(warns, sizeof(warns), "%s%s", *warns ? "; " : "", res->message);
                        /* -EBUSY: its netdev has an address or a route; else the NIC's
                         * message names the cause (driver not loaded, state file, …) */
                        if (res->err == -EBUSY)
                                refused_in_use = true;
                        else
                                refused_other = true;
                        break;
                default:
                        (void)hostfs_fmt_append(fails, sizeof(fails), "%s%s", *fails ? "; " : "", res->message);
                }
        }
        nlparse_usage_free(use);
        if (mana_n) {
                if (*mana_fail)
                        verdict_add(&rep->verdicts, PREP_CHECK_MANA, VERDICT_FAIL, NULL,
                                    "load mana_ib and ib_uverbs (modprobe mana_ib ib_uverbs); needs rdma-core >= 44",
                                    "%s", mana_fail);
                else
                        verdict_add(&rep->verdicts, PREP_CHECK_MANA, VERDICT_PASS, NULL, NULL,
                                    "%u MANA NIC(s) ready on the kernel driver with uverbs", mana_ok);
        }
        json_t *evidence = json_pack("{s:o,s:s}", "nics", ev ? ev : json_array(), "driver",
                                     config_driver_name(c->binding.ena));
        if (*fails)
                return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_FAIL, evidence,
                                   "see the agent log for each NIC; `spinlane-agent restore` gives NICs back", "%s", fails);
        if (*warns)
                return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_WARN, evidence,
                                   refused_in_use && refused_other
                                           ? "narrow nics.* in the config to NICs without addresses or routes; for the "
                                             "other NICs do what their reason says (load the driver, …)"
                                   : refused_in_use ? "narrow nics.* in the config to NICs without addresses or routes"
                                                    : "do what each NIC's reason says (load the driver, …), then "
                                                      "restart the agent or send it SIGHUP",
                                   "%u bound, %u already bound; %s", bound, already, warns);
        if (rep->n_nics == 0 && mana_n > 0)
                return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_PASS, evidence, NULL,
                                   "no NIC to bind (MANA stays on its kernel driver)");
        if (rep->n_nics == 0 && mana_n == 0)
                return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_WARN, evidence,
                                   "attach a secondary NIC (not the primary) or widen nics.* in the config",
                                   "no NIC matches the config's selection (the primary NIC is never taken)");
        return verdict_add(&rep->verdicts, PREP_CHECK_NIC_BINDING, VERDICT_PASS, evidence, NULL,
                           "%u NIC(s) bound to %s now, %u already bound", bound, config_driver_name(c->binding.ena),
                           already);
}

static int tune_step(const hostfs *h, const prep_ops *ops, const config *c, const prep_nic *nics, size_t n,
                     prep_report *rep)
{
        char fails[1024] = "", untouched[1024] = "";
        unsigned ok = 0, done = 0;

        if (!c->tuning.interrupt_moderation_off && c->tuning.irq_core < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                const prep_nic *nic = &nics[i];
                bool taken = false;
                if (nic->kind < 0 || nic->kind >= _CONFIG_KIND_MAX || !c->nics.kinds[nic->kind] || !*nic->netdev ||
                    inv_driver_userspace(nic->driver))
                        continue;
                for (size_t j = 0; j < rep->n_nics; j++)
                        if (strcmp(rep->nics[j].pci, nic->pci) == 0 && inv_driver_userspace(rep->nics[j].driver))
                                taken = true;
                if (taken || rep->n_tuned >= PREP_MAX_NICS)
                        continue;
                tune_result tr;
                int r = tune_apply(h, &ops->tune, nic->netdev, nic->pci, c->tuning.interrupt_moderation_off,
                                   c->tuning.irq_core, &tr);
                line(rep, "%s (%s)", tr.message, nic->pci);
                prep_tuned *t = &rep->tuned[rep->n_tuned++];
                snprintf(t->ifname, sizeof(t->ifname), "%s", nic->netdev);
                snprintf(t->pci, sizeof(t->pci), "%s", nic->pci);
                if (r < 0) {
                        (void)hostfs_fmt_append(fails, sizeof(fails), "%s%s", *fails ? "; " : "", tr.message);
                        continue;
                }
                ok++;
                /* tuned: moderation set or found off, or an IRQ is on the core; not when
                 * the ioctl was impossible (a fake root, no driver support) and no IRQ
                 * was found */
                if (tr.coalesce == 0 || tr.coalesce == 1 || tr.n_irqs_ok > 0)
                        done++;
                else
                        (void)hostfs_fmt_append(untouched, sizeof(untouched), "%s%s", *untouched ? "; " : "", tr.message);
        }
        if (*fails)
                return verdict_add(&rep->verdicts, PREP_CHECK_KERNEL_TUNING, VERDICT_WARN, NULL,
                                   "the agent needs CAP_NET_ADMIN and write access to /proc/irq", "%s", fails);
        if (ok == 0)
                return verdict_add(&rep->verdicts, PREP_CHECK_KERNEL_TUNING, VERDICT_SKIP, NULL, NULL,
                                   "no kernel NIC of the selected kinds to tune");
        if (done == 0)
                return verdict_add(&rep->verdicts, PREP_CHECK_KERNEL_TUNING, VERDICT_SKIP, NULL, NULL,
                                   "nothing tuned%s: %s", hostfs_is_live(h) ? "" : " (not a live root)", untouched);
        if (done < ok)
                return verdict_add(&rep->verdicts, PREP_CHECK_KERNEL_TUNING, VERDICT_PASS, NULL, NULL,
                                   "%u of %u kernel NIC(s) tuned (see the agent log); left as is: %s", done, ok,
                                   untouched);
        return verdict_add(&rep->verdicts, PREP_CHECK_KERNEL_TUNING, VERDICT_PASS, NULL, NULL,
                           "%u kernel NIC(s) tuned (see the agent log)", done);
}

/* kernel_args.manage: the arguments into the boot loader, from a fresh inventory (the
 * cores, the online CPUs and /proc/cmdline as they are now). */
static int kargs_step(const hostfs *h, const prep_ops *ops, const config *c, prep_report *rep)
{
        inventory *inv = NULL;
        kargs_result kr;
        int r;

        if (!c->kernel_args.manage)
                return 0;
        if ((r = inventory_scan(h, &inv)) < 0)
                return r == -ENOMEM ? r
                                    : verdict_add(&rep->verdicts, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL, NULL, NULL,
                                                  "scanning the node failed: %s; nothing written", strerror(-r));
        r = kargs_apply(h, ops->kargs.run ? &ops->kargs : NULL, c, inv, &rep->verdicts, &kr);
        inventory_free(inv);
        for (size_t i = 0; i < kr.n_lines; i++)
                line(rep, "kernel arguments: %s", kr.lines[i]);
        rep->kargs_wrote = kr.wrote;
        rep->kargs_reboot_pending = kr.reboot_pending;
        return r;
}

int prep_apply(const hostfs *h, const prep_ops *ops, const config *c, const prep_nic *nics, size_t n,
               prep_report **ret)
{
        prep_ops def;
        int r;

        if (!ops) {
                prep_ops_default(h, &def);
                ops = &def;
        }
        prep_report *rep = calloc(1, sizeof(*rep));
        if (!rep)
                return -ENOMEM;
        if ((r = bind_step(h, ops, c, nics, n, rep)) < 0 || (r = huge_reserve(h, &ops->sysfs, c, &rep->verdicts)) < 0 ||
            (r = huge_mount(h, &ops->sysfs, c, &rep->verdicts, &rep->hugetlbfs_mounted)) < 0 ||
            (r = tune_step(h, ops, c, nics, n, rep)) < 0 || (r = kargs_step(h, ops, c, rep)) < 0) {
                prep_report_free(rep);
                return r;
        }
        *ret = rep;
        return verdict_exit_code(&rep->verdicts);
}

void prep_report_free(prep_report *r)
{
        if (!r)
                return;
        verdict_list_free(&r->verdicts);
        free(r);
}

int prep_retune(const hostfs *h, const prep_ops *ops, const config *c, const prep_tuned *t, tune_result *ret)
{
        prep_ops def;
        if (!ops) {
                prep_ops_default(h, &def);
                ops = &def;
        }
        return tune_apply(h, &ops->tune, t->ifname, t->pci, c->tuning.interrupt_moderation_off, c->tuning.irq_core,
                          ret);
}
