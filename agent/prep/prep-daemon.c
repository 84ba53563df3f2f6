/* SPDX-License-Identifier: Apache-2.0 */
/* Node preparation in the event loop: config watch and reload with last-good fallback,
 * ENA reset detection (rtnetlink + IRQ drift timer), and the one-shot path. Top level:
 * logs one event a line. */
#include "prep-daemon.h"

#include "cleanup.h"
#include "log.h"
#include "netlink.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#define DRIFT_DEFAULT_MS 10000
#define DEBOUNCE_DEFAULT_MS 200
#define REWATCH_MS 1000 /* looking for a config dir that is gone */

struct prep_daemon {
        loop *l;
        hostfs h;
        prep_daemon_options o;
        prep_ops ops;
        config cfg;
        bool cfg_from_file;        /* cfg came from the file (else: the defaults at start) */
        char config_path[PATH_MAX];
        char config_dir[PATH_MAX];
        char config_base[NAME_MAX + 1];
        int ifd, wd, debounce_fd, rewatch_fd, nl_fd, drift_fd;
        bool watch_relevant, watch_lost; /* gathered over one round of inotify events */
        prep_tuned tuned[PREP_MAX_NICS];
        tune_watch watches[PREP_MAX_NICS];
        size_t n_tuned;
        verdict_list last;
        bool have_last;
        prep_daemon_stats stats;
};

void prep_log_report(const prep_report *r, bool json, FILE *out)
{
        for (size_t i = 0; i < r->n_nics; i++) {
                const bind_result *b = &r->nics[i];
                switch (b->outcome) {
                case BIND_OK:
                case BIND_ALREADY:
                        log_info("%s", b->message);
                        break;
                case BIND_REFUSED:
                case BIND_ROLLED_BACK:
                        log_warn("%s", b->message);
                        break;
                case BIND_UNSAFE:
                        log_error("%s", b->message);
                        break;
                }
        }
        for (size_t i = 0; i < r->n_lines; i++)
                log_info("%s", r->lines[i]);
        verdict_print(&r->verdicts, out, json);
        fflush(out);
}

/* Scan and apply the current config; log the outcome. */
static int apply(prep_daemon *d, const char *why)
{
        _cleanup_free_ prep_nic *nics = calloc(PREP_MAX_NICS, sizeof(*nics));
        prep_report *rep = NULL;
        size_t n = 0;
        int r;

        if (!nics)
                return log_errno(LOG_ERROR, -ENOMEM, "node preparation");
        r = d->o.scan(d->o.scan_userdata, &d->h, nics, PREP_MAX_NICS, &n);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "node preparation: scanning the node");
        log_info("node preparation: applying the config (%s)", why);
        r = prep_apply(&d->h, &d->ops, &d->cfg, nics, n, &rep);
        if (r < 0)
                return log_errno(LOG_ERROR, r, "node preparation");
        d->stats.applies++;
        d->stats.applies_failed += r != 0;
        d->stats.last_exit = r;
        for (size_t i = 0; i < rep->n_nics; i++)
                if (rep->nics[i].outcome != BIND_ALREADY)
                        goto log_all;
        /* Nothing moved: keep a re-apply quiet unless the verdicts changed. */
        if (d->have_last && verdict_list_equal(&d->last, &rep->verdicts)) {
                log_info("node preparation: nothing changed");
                goto keep;
        }
log_all:
        prep_log_report(rep, d->o.json, stdout);
keep:
        verdict_list_free(&d->last);
        d->last = rep->verdicts;
        rep->verdicts = (verdict_list){0};
        d->have_last = true;
        /* The NICs the kernel keeps and that were tuned: watch them for resets. */
        tune_watch old[PREP_MAX_NICS];
        size_t n_old = d->n_tuned;
        memcpy(old, d->watches, sizeof(old[0]) * n_old);
        d->n_tuned = 0;
        for (size_t i = 0; i < rep->n_tuned; i++) {
                d->tuned[d->n_tuned] = rep->tuned[i];
                tune_watch w = {0};
                snprintf(w.ifname, sizeof(w.ifname), "%s", rep->tuned[i].ifname);
                for (size_t j = 0; j < n_old; j++)
                        if (strcmp(old[j].ifname, w.ifname) == 0)
                                w = old[j];
                d->watches[d->n_tuned++] = w;
        }
        prep_report_free(rep);
        return d->stats.last_exit;
}

/* path NULL: no --config (the default file may be absent). */
int prep_config_load(const char *path, config *ret, bool *ret_from_file)
{
        char err[CONFIG_ERR_LEN];
        const char *shown = path ? path : CONFIG_PATH_DEFAULT;
        int r = config_load(path, ret, ret_from_file, err, sizeof(err));
        if (r < 0 && *err && strstr(err, shown))
                log_error("%s", err);
        else if (r < 0)
                log_error("%s (file %s)", *err ? err : strerror(-r), shown);
        return r;
}

int prep_daemon_reload(prep_daemon *d, bool force)
{
        char err[CONFIG_ERR_LEN];
        config c;
        bool from_file = false;
        /* At runtime the file is always named: gone is never "the defaults" (that would
         * advertise and bind NICs the config excluded), only "keep what is in force". */
        int r = config_load(d->config_path, &c, &from_file, err, sizeof(err));
        if (r == -ENOENT) {
                d->stats.reloads_rejected++;
                log_warn("config %s is gone; keeping the config in force (%s)", d->config_path,
                         d->cfg_from_file ? "the last one read from it" : "the defaults the agent started with");
                return -ENOENT;
        }
        if (r < 0) {
                if (*err && strstr(err, d->config_path))
                        log_error("%s", err);
                else
                        log_error("%s (file %s)", *err ? err : strerror(-r), d->config_path);
                d->stats.reloads_rejected++;
                log_warn("config reload rejected; keeping the last good config");
                return -EINVAL;
        }
        d->stats.reloads++;
        d->cfg_from_file = true;
        if (!force && config_equal(&c, &d->cfg)) {
                log_info("config %s reloaded: unchanged", d->config_path);
                return 0;
        }
        d->cfg = c;
        log_info("config %s reloaded", d->config_path);
        return apply(d, force ? "reload" : "config changed");
}

static int retune(prep_daemon *d, const prep_tuned *t, const char *why)
{
        tune_result tr;
        if (!d->cfg.tuning.reapply_on_reset) {
                log_warn("%s (%s): %s; tuning.reapply_on_reset is off, not re-applying", t->ifname, t->pci, why);
                return 0;
        }
        int r = prep_retune(&d->h, &d->ops, &d->cfg, t, &tr);
        d->stats.retunes++;
        if (r < 0)
                log_warn("%s (%s): %s; re-applying tuning: %s", t->ifname, t->pci, why, tr.message);
        else
                log_info("%s (%s): %s; re-applied tuning: %s", t->ifname, t->pci, why, tr.message);
        return r;
}

void prep_daemon_link_event(prep_daemon *d, const tune_link_event *ev)
{
        char why[96];
        for (size_t i = 0; i < d->n_tuned; i++)
                if (tune_watch_event(&d->watches[i], ev, why, sizeof(why)) == 1) {
                        char msg[160];
                        d->stats.resets_seen++;
                        snprintf(msg, sizeof(msg), "device reset detected (%s)", why);
                        retune(d, &d->tuned[i], msg);
                }
}

static int on_netlink(loop *l, int fd, uint32_t events, void *ud)
{
        prep_daemon *d = ud;
        uint8_t buf[16384] __attribute__((aligned(8)));
        (void)l, (void)events;
        for (;;) {
                size_t n;
                int r = netlink_recv(fd, buf, sizeof(buf), &n);
                if (r == -ENOBUFS || r == -EMSGSIZE) {
                        /* Events were lost (the kernel's queue overran, or a datagram
                         * was cut): a reset may hide among them. */
                        log_warn("rtnetlink: events lost (%s); checking IRQ affinity now",
                                 r == -ENOBUFS ? "ENOBUFS" : "a datagram over 16 KiB was cut");
                        (void)loop_timer_set(d->l, d->drift_fd, 1, d->o.drift_check_ms);
                        continue;
                }
                if (r < 0 || n == 0)
                        break;
                tune_link_event ev[64];
                int k = tune_netlink_parse(buf, n, ev, ELEMENTSOF(ev));
                if (k < 0) {
                        log_warn("rtnetlink: malformed message (%zu bytes), ignoring", n);
                        continue;
                }
                for (int i = 0; i < k; i++)
                        prep_daemon_link_event(d, &ev[i]);
        }
        return 0;
}

static int on_drift(loop *l, void *ud)
{
        prep_daemon *d = ud;
        (void)l;
        if (d->cfg.tuning.irq_core < 0)
                return 0;
        for (size_t i = 0; i < d->n_tuned; i++) {
                int r = tune_irqs_drifted(&d->h, d->tuned[i].ifname, d->tuned[i].pci, d->cfg.tuning.irq_core);
                if (r == 1)
                        retune(d, &d->tuned[i], "IRQs left the housekeeping CPU (device reset?)");
        }
        return 0;
}

static int on_debounce(loop *l, void *ud)
{
        prep_daemon *d = ud;
        (void)l;
        unsigned before = d->stats.reloads;
        config old = d->cfg;
        (void)prep_daemon_reload(d, false);
        if (d->stats.reloads != before && !config_equal(&old, &d->cfg) && d->o.on_config_changed)
                d->o.on_config_changed(d->o.userdata);
        return 0;
}

static int config_watch(prep_daemon *d)
{
        if (d->wd >= 0)
                return 0;
        d->wd = inotify_add_watch(d->ifd, d->config_dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE |
                                                                 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
        return d->wd >= 0 ? 0 : -errno;
}

/* The config dir is gone (or was never there): look for it once a second; when it is
 * back, watch it and reload. */
static int on_rewatch(loop *l, void *ud)
{
        prep_daemon *d = ud;
        if (config_watch(d) < 0)
                return 0;
        log_info("config %s: watching %s again", d->config_path, d->config_dir);
        (void)loop_timer_set(l, d->rewatch_fd, 0, 0);
        (void)loop_timer_set(l, d->debounce_fd, d->o.debounce_ms, 0);
        return 0;
}

/* One event from the config dir's watch; gathered until the round's end (ev NULL). */
static int on_config_dir(loop *l, const struct inotify_event *ev, void *ud)
{
        prep_daemon *d = ud;
        if (ev) {
                /* The dir itself went (removed, renamed): its watch is gone. */
                if (ev->wd == d->wd && (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)))
                        d->watch_lost = true;
                /* The file itself, or a ConfigMap's "..data" symlink swap; a
                 * queue overflow may have hidden either. */
                if (ev->mask & IN_Q_OVERFLOW)
                        d->watch_relevant = true;
                else if (ev->len && (strcmp(ev->name, d->config_base) == 0 || strcmp(ev->name, "..data") == 0))
                        d->watch_relevant = true;
                return 0;
        }
        bool relevant = d->watch_relevant, lost = d->watch_lost;
        d->watch_relevant = d->watch_lost = false;
        if (lost && d->wd >= 0) {
                (void)inotify_rm_watch(d->ifd, d->wd); /* IN_MOVE_SELF: the watch follows the old dir */
                d->wd = -1;
                log_warn("config %s: %s is gone; looking for it every %d ms", d->config_path, d->config_dir,
                         REWATCH_MS);
                (void)loop_timer_set(l, d->rewatch_fd, REWATCH_MS, REWATCH_MS);
                relevant = true;
        }
        if (relevant)
                (void)loop_timer_set(l, d->debounce_fd, d->o.debounce_ms, 0);
        return 0;
}

int prep_daemon_new(loop *l, const hostfs *h, const prep_daemon_options *o, prep_daemon **ret)
{
        bool from_file = false;
        int r;

        if (!o || !o->scan)
                return -EINVAL;
        prep_daemon *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->l = l;
        d->h = *h;
        d->o = *o;
        d->o.initial = NULL; /* copied below, not kept */
        d->ifd = d->wd = d->debounce_fd = d->rewatch_fd = d->nl_fd = d->drift_fd = -1;
        if (!d->o.drift_check_ms)
                d->o.drift_check_ms = DRIFT_DEFAULT_MS;
        if (!d->o.debounce_ms)
                d->o.debounce_ms = DEBOUNCE_DEFAULT_MS;
        if (o->ops)
                d->ops = *o->ops;
        else
                prep_ops_default(h, &d->ops);
        snprintf(d->config_path, sizeof(d->config_path), "%s", o->config_path ? o->config_path : CONFIG_PATH_DEFAULT);
        {
                char a[PATH_MAX], b[PATH_MAX];
                snprintf(a, sizeof(a), "%s", d->config_path);
                snprintf(b, sizeof(b), "%s", d->config_path);
                snprintf(d->config_dir, sizeof(d->config_dir), "%s", dirname(a));
                snprintf(d->config_base, sizeof(d->config_base), "%s", basename(b));
        }
        r = o->initial ? 0 : prep_config_load(o->config_path, &d->cfg, &from_file);
        if (o->initial) {
                d->cfg = *o->initial;
                from_file = o->initial_from_file;
        }
        if (r < 0) {
                log_error("node preparation: not starting without a good config");
                free(d);
                return -EINVAL;
        }
        d->cfg_from_file = from_file;
        log_info("config %s%s", d->config_path, from_file ? "" : " absent: using the defaults");

        r = apply(d, "start");
        if (r < 0) {
                prep_daemon_free(d);
                return r;
        }
        /* Config changes: watch the directory (editors and ConfigMaps replace the file). */
        d->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (d->ifd >= 0) {
                if ((r = loop_add_inotify(l, d->ifd, on_config_dir, d)) < 0 ||
                    (r = loop_add_timer(l, 0, 0, on_debounce, d, &d->debounce_fd)) < 0 ||
                    (r = loop_add_timer(l, 0, 0, on_rewatch, d, &d->rewatch_fd)) < 0 ||
                    /* loop_add_timer(0, 0) fires once right away: disarm until needed */
                    (r = loop_timer_set(l, d->debounce_fd, 0, 0)) < 0 ||
                    (r = loop_timer_set(l, d->rewatch_fd, 0, 0)) < 0) {
                        prep_daemon_free(d);
                        return r;
                }
                r = config_watch(d);
                if (r < 0) {
                        log_warn("config %s: cannot watch %s (%s); looking for it every %d ms, or reload with SIGHUP",
                                 d->config_path, d->config_dir, strerror(-r), REWATCH_MS);
                        (void)loop_timer_set(l, d->rewatch_fd, REWATCH_MS, REWATCH_MS);
                }
        } else
                log_warn("config %s: cannot watch %s (%s); reload with SIGHUP", d->config_path, d->config_dir,
                         strerror(errno));
        /* Resets: link events and the drift timer. */
        if (!o->no_netlink) {
                d->nl_fd = tune_netlink_open();
                if (d->nl_fd < 0)
                        log_warn("rtnetlink: %s; ENA resets are found by the IRQ drift check only", strerror(-d->nl_fd));
                else if ((r = loop_add_fd(l, d->nl_fd, EPOLLIN, on_netlink, d)) < 0) {
                        prep_daemon_free(d);
                        return r;
                }
        }
        r = loop_add_timer(l, d->o.drift_check_ms, d->o.drift_check_ms, on_drift, d, &d->drift_fd);
        if (r < 0) {
                prep_daemon_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

void prep_daemon_free(prep_daemon *d)
{
        if (!d)
                return;
        if (d->ifd >= 0) {
                loop_remove_fd(d->l, d->ifd);
                close(d->ifd);
        }
        if (d->nl_fd >= 0) {
                loop_remove_fd(d->l, d->nl_fd);
                close(d->nl_fd);
        }
        if (d->debounce_fd >= 0)
                loop_remove_timer(d->l, d->debounce_fd);
        if (d->rewatch_fd >= 0)
                loop_remove_timer(d->l, d->rewatch_fd);
        if (d->drift_fd >= 0)
                loop_remove_timer(d->l, d->drift_fd);
        verdict_list_free(&d->last);
        free(d);
}

const config *prep_daemon_config(const prep_daemon *d) { return &d->cfg; }
prep_daemon_stats prep_daemon_get_stats(const prep_daemon *d) { return d->stats; }

int prep_once(const hostfs *h, const char *config_path, prep_scan_fn scan, void *scan_userdata, bool json)
{
        _cleanup_free_ prep_nic *nics = calloc(PREP_MAX_NICS, sizeof(*nics));
        prep_report *rep = NULL;
        bool from_file = false;
        config c;
        size_t n = 0;
        int r;

        if (!nics)
                return 2;
        if (prep_config_load(config_path, &c, &from_file) < 0)
                return 2;
        log_info("config %s%s", config_path ? config_path : CONFIG_PATH_DEFAULT,
                 from_file ? "" : " absent: using the defaults");
        r = scan(scan_userdata, h, nics, PREP_MAX_NICS, &n);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "scanning the node");
                return 2;
        }
        r = prep_apply(h, NULL, &c, nics, n, &rep);
        if (r < 0) {
                log_errno(LOG_ERROR, r, "node preparation");
                return 2;
        }
        prep_log_report(rep, json, stdout);
        prep_report_free(rep);
        return r;
}
