/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's Node labels, Events from verdict changes, the pinning mode, the bind
 * address, Prometheus escaping. Pure; never logs. */
#include "report.h"

#include "parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static size_t healthy(const device_list *l)
{
        size_t n = 0;
        for (size_t i = 0; l && i < l->n; i++)
                n += device_healthy(&l->items[i]);
        return n;
}

bool report_node_ready(const report_input *in, char *why, size_t len)
{
        size_t fails = 0;
        const char *first = NULL;

        if (!in->verdicts) {
                snprintf(why, len, "the node has not been checked yet");
                return false;
        }
        for (size_t i = 0; i < in->verdicts->n; i++)
                if (in->verdicts->items[i].level == VERDICT_FAIL) {
                        if (!fails++)
                                first = in->verdicts->items[i].check;
                }
        if (fails) {
                snprintf(why, len, "%zu node check%s fail%s (%s%s)", fails, fails == 1 ? "" : "s", fails == 1 ? "s" : "",
                         first, fails > 1 ? ", ..." : "");
                return false;
        }
        if (!in->nic_registered || !in->core_registered) {
                snprintf(why, len, "the %s device plugin is not registered with the kubelet",
                         !in->nic_registered ? "NIC" : "core");
                return false;
        }
        if (!healthy(in->nics) || !healthy(in->cores)) {
                snprintf(why, len, "no Healthy %s advertised", !healthy(in->nics) ? "DPDK NIC" : "isolated core");
                return false;
        }
        if (len)
                why[0] = '\0';
        return true;
}

static void put(report_labels *r, const char *key, const char *value)
{
        size_t i = r->n++;
        r->l[i].key = key;
        if (!value) {
                r->l[i].value = NULL;
                return;
        }
        snprintf(r->values[i], sizeof(r->values[i]), "%s", value);
        r->l[i].value = r->values[i];
}

void report_node_labels(const report_input *in, report_labels *ret)
{
        report_labels r;
        char why[256], num[32];
        const char *kind = NULL;
        size_t nics = healthy(in->nics), cores = healthy(in->cores);

        memset(&r, 0, sizeof(r));
        put(&r, REPORT_LABEL_READY, report_node_ready(in, why, sizeof(why)) ? "true" : "false");
        for (size_t i = 0; in->nics && i < in->nics->n; i++) {
                const device_entry *d = &in->nics->items[i];
                if (!device_healthy(d))
                        continue;
                const char *k = (strcmp(d->nic_kind, "ena") == 0 || strcmp(d->nic_kind, "mana") == 0) ? d->nic_kind : "other";
                kind = !kind || strcmp(kind, k) == 0 ? k : "mixed";
        }
        put(&r, REPORT_LABEL_NIC_KIND, kind);
        snprintf(num, sizeof(num), "%zu", nics);
        put(&r, REPORT_LABEL_NICS, num);
        snprintf(num, sizeof(num), "%zu", cores);
        put(&r, REPORT_LABEL_CORES, num);
        put(&r, REPORT_LABEL_PIN_MODE, !cores ? "none" : in->pin_mode ? in->pin_mode : "unknown");
        *ret = r;
        for (size_t i = 0; i < ret->n; i++) /* into ret's own strings, not r's */
                if (ret->l[i].value)
                        ret->l[i].value = ret->values[i];
}

/* Cut s (NUL-terminated in buf) to at most max bytes at a UTF-8 boundary. */
static void cut_utf8(char *buf, size_t max)
{
        size_t n = strlen(buf);
        if (n <= max)
                return;
        n = max;
        while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80)
                n--;
        buf[n] = '\0';
}

void report_verdict_line(const verdict *v, char *buf, size_t len)
{
        static const char *const tags[_VERDICT_MAX] = {"PASS", "WARN", "FAIL", "SKIP"};
        const char *tag = (unsigned)v->level < _VERDICT_MAX ? tags[v->level] : "?";
        char *s = NULL;
        int n;

        if (!len)
                return;
        if (v->remedy && v->level != VERDICT_PASS)
                n = asprintf(&s, "%s %s: %s; remedy: %s", tag, v->check, v->message, v->remedy);
        else
                n = asprintf(&s, "%s %s: %s", tag, v->check, v->message);
        if (n < 0) {
                snprintf(buf, len, "%s %s", tag, v->check);
                return;
        }
        cut_utf8(s, len - 1);
        snprintf(buf, len, "%s", s);
        free(s);
}

int report_checks_from(const verdict_list *l, report_checks *ret)
{
        report_checks c = {0};

        if (l->n > REPORT_MAX_CHECKS)
                return -E2BIG;
        if (l->n) {
                c.items = calloc(l->n, sizeof(*c.items));
                if (!c.items)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < l->n; i++) {
                const verdict *v = &l->items[i];
                if (strlen(v->check) >= KEV_CHECK_MAX)
                        continue;
                report_check *x = &c.items[c.n++];
                snprintf(x->check, sizeof(x->check), "%s", v->check);
                x->level = v->level;
                report_verdict_line(v, x->line, sizeof(x->line));
        }
        *ret = c;
        return 0;
}

void report_checks_free(report_checks *c)
{
        if (!c)
                return;
        free(c->items);
        *c = (report_checks){0};
}

static const report_check *find(const report_checks *c, const char *check)
{
        for (size_t i = 0; c && i < c->n; i++)
                if (strcmp(c->items[i].check, check) == 0)
                        return &c->items[i];
        return NULL;
}

static bool add_event_as(report_event *ret, size_t *n, const char *check, bool warning, const char *suffix,
                         const char *note)
{
        report_event e;
        if (*n >= REPORT_MAX_EVENTS)
                return false;
        memset(&e, 0, sizeof(e));
        if (kube_reason_from_check(check, suffix, e.reason, sizeof(e.reason)) < 0)
                return false;
        snprintf(e.check, sizeof(e.check), "%s", check);
        e.type = warning ? "Warning" : "Normal";
        snprintf(e.note, sizeof(e.note), "%s", note);
        ret[(*n)++] = e;
        return true;
}

static bool add_event(report_event *ret, size_t *n, const char *check, bool warning, const char *note)
{
        return add_event_as(ret, n, check, warning, warning ? "Failed" : "Recovered", note);
}

/* Checks whose WARN asks someone to act (a reboot), so it raises a Warning of its own. */
static bool warn_raises(const char *check)
{
        return strcmp(check, "kernel-args") == 0;
}

size_t report_events(const report_checks *old, const report_checks *now, report_event *ret)
{
        size_t n = 0;

        for (size_t i = 0; now && i < now->n; i++) {
                const report_check *c = &now->items[i], *o = find(old, c->check);
                bool was = o && o->level == VERDICT_FAIL, is = c->level == VERDICT_FAIL;
                bool was_w = o && o->level == VERDICT_WARN && warn_raises(c->check),
                     is_w = c->level == VERDICT_WARN && warn_raises(c->check);
                if (is && (!was || strcmp(o->line, c->line) != 0))
                        add_event(ret, &n, c->check, true, c->line);
                else if (is_w && (!was_w || strcmp(o->line, c->line) != 0))
                        add_event_as(ret, &n, c->check, true, "Pending", c->line);
                else if ((was && !is) || (was_w && !is_w && c->level != VERDICT_FAIL))
                        add_event(ret, &n, c->check, false, c->line);
        }
        for (size_t i = 0; old && i < old->n; i++) {
                const report_check *o = &old->items[i];
                char note[KEV_CHECK_MAX + 32];
                if (o->level != VERDICT_FAIL || find(now, o->check))
                        continue;
                snprintf(note, sizeof(note), "%s: no longer checked", o->check);
                add_event(ret, &n, o->check, false, note);
        }
        return n;
}

int report_pin_mode_parse(const char *text, size_t len, const char **ret)
{
        json_error_t e;
        json_t *j, *p;
        const char *mode;

        if (len > REPORT_CPU_MANAGER_STATE_MAX)
                return -E2BIG;
        j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
        if (!j)
                return -EBADMSG;
        p = json_object_get(j, "policyName");
        if (!json_is_object(j) || !json_is_string(p)) {
                json_decref(j);
                return -EBADMSG;
        }
        if (strcmp(json_string_value(p), "static") == 0)
                mode = "kubelet-pinned";
        else if (strcmp(json_string_value(p), "none") == 0)
                mode = "spinlane-pinned";
        else
                mode = "unknown";
        json_decref(j);
        *ret = mode;
        return 0;
}

/* A TCP port, 1..65535, through the one number parser; at most 5 digits, as before. */
static int port_parse(const char *s, uint16_t *ret)
{
        uint64_t v;
        if (strlen(s) > 5 || parse_u64(s, 65535, &v) < 0 || v < 1)
                return -EINVAL;
        *ret = (uint16_t)v;
        return 0;
}

int report_bind_parse(const char *s, report_bind *ret, char *err, size_t err_size)
{
        return report_bind_parse_named("--metrics-bind-address", s, ret, err, err_size);
}

int report_bind_parse_named(const char *name, const char *s, report_bind *ret, char *err, size_t err_size)
{
        report_bind b;
        char host[64];
        const char *colon;

        memset(&b, 0, sizeof(b));
        if (!s || strcmp(s, "0") == 0) {
                b.off = true;
                *ret = b;
                return 0;
        }
        if (strlen(s) >= sizeof(host) + 8)
                goto bad;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
                        goto bad;
                snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
                if (inet_pton(AF_INET6, host, b.addr) != 1)
                        goto bad;
                b.family = AF_INET6;
                colon = close + 1;
        } else {
                colon = strrchr(s, ':');
                if (!colon || (size_t)(colon - s) >= sizeof(host) || memchr(s, ':', (size_t)(colon - s)))
                        goto bad;
                snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
                if (!*host) {
                        b.any = true;
                } else if (strcmp(host, "localhost") == 0) {
                        b.family = AF_INET;
                        b.addr[0] = 127, b.addr[3] = 1;
                } else if (inet_pton(AF_INET, host, b.addr) == 1) {
                        b.family = AF_INET;
                } else {
                        goto bad;
                }
        }
        if (port_parse(colon + 1, &b.port) < 0)
                goto bad;
        *ret = b;
        return 0;
bad:
        snprintf(err, err_size,
                 "%s: expected \"0\" (off), \":PORT\", \"IPv4:PORT\", \"[IPv6]:PORT\" or "
                 "\"localhost:PORT\" with PORT 1..65535, got \"%.80s\"",
                 name, s);
        return -EINVAL;
}

void report_prom_escape(const char *s, char *buf, size_t len)
{
        size_t o = 0;
        if (!len)
                return;
        for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
                char esc[3] = {0};
                size_t need;
                if (*p == '\\' || *p == '"' || *p == '\n') {
                        esc[0] = '\\';
                        esc[1] = *p == '\n' ? 'n' : (char)*p;
                        need = 2;
                } else {
                        esc[0] = *p < 0x20 ? '?' : (char)*p;
                        need = 1;
                }
                if (o + need >= len)
                        break;
                memcpy(buf + o, esc, need);
                o += need;
        }
        /* never end inside a UTF-8 sequence */
        size_t end = o;
        while (end > 0 && ((unsigned char)buf[end - 1] & 0x80)) {
                size_t start = end - 1;
                while (start > 0 && ((unsigned char)buf[start] & 0xC0) == 0x80)
                        start--;
                unsigned char lead = (unsigned char)buf[start];
                size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
                if (end - start >= want)
                        break;
                end = start;
        }
        buf[end] = '\0';
}

bool report_bind_is_loopback(const report_bind *b)
{
        static const uint8_t v6_loopback[16] = {[15] = 1};

        if (!b || b->off || b->any)
                return false;
        if (b->family == AF_INET)
                return b->addr[0] == 127;
        return b->family == AF_INET6 && memcmp(b->addr, v6_loopback, 16) == 0;
}
