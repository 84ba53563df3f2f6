/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel arguments spinlane manages: the plan from the config and the topology, the
 * comparison with /proc/cmdline, the state file (pure parser and printer, atomic save),
 * and the `kernel-args` verdict. Pure but kargs_state_load/_save; never logs. */
#include "kargs.h"

#include "bind-state.h"
#include "cleanup.h"
#include "parse.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const loader_names[_KARGS_LOADER_MAX] = {
        [KARGS_LOADER_NONE] = "none",
        [KARGS_LOADER_GRUB_DROPIN] = "grub-dropin",
        [KARGS_LOADER_GRUBBY] = "grubby",
};

const char *kargs_loader_name(kargs_loader l)
{
        return l >= 0 && l < _KARGS_LOADER_MAX ? loader_names[l] : "?";
}

/* The CPU-list arguments, in the order they are written. */
static const char *const cpu_args[] = {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"};
#define N_CPU_ARGS (sizeof(cpu_args) / sizeof(cpu_args[0]))

static bool is_cpu_arg(const char *name)
{
        for (size_t i = 0; i < N_CPU_ARGS; i++)
                if (strcmp(name, cpu_args[i]) == 0)
                        return true;
        return false;
}

static int page_size_text(uint64_t kb, char *buf, size_t size)
{
        return format_size_kb(kb, SIZE_UNITS_KERNEL, buf, size);
}

static int set_cpu_arg(kargs_arg *a, const char *name, const char *value)
{
        size_t nl = strlen(name), vl = strlen(value);
        memset(a, 0, sizeof(*a));
        if (nl >= sizeof(a->name) || vl >= sizeof(a->value))
                return -E2BIG;
        memcpy(a->name, name, nl + 1);
        memcpy(a->value, value, vl + 1);
        if (hostfs_fmt(a->text, sizeof(a->text), "%s=%s", name, value) < 0)
                return -E2BIG;
        return 0;
}

static int set_huge_arg(kargs_arg *a, uint64_t page_kb, uint64_t pages)
{
        char sz[32];
        memset(a, 0, sizeof(*a));
        if (page_size_text(page_kb, sz, sizeof(sz)) < 0)
                return -EINVAL;
        snprintf(a->name, sizeof(a->name), "hugepages");
        a->page_kb = page_kb;
        snprintf(a->value, sizeof(a->value), "%llu", (unsigned long long)pages);
        return hostfs_fmt(a->text, sizeof(a->text), "hugepagesz=%s hugepages=%s", sz, a->value) < 0 ? -E2BIG : 0;
}

int kargs_plan_compute(const config *c, const inventory *inv, kargs_plan *ret, char *why, size_t why_size)
{
        kargs_plan p;
        cpuset listed, partial;
        char list[KARGS_VALUE_LEN + 64], hk[KARGS_VALUE_LEN + 64], flags[KARGS_VALUE_LEN + 64];

        if (why && why_size)
                why[0] = '\0';
        memset(&p, 0, sizeof(p));
        if (!c->cores.have_cpus) {
                hostfs_fmt(why, why_size, "cores.cpus is not set: no cores to isolate");
                return -EINVAL;
        }
        if (!inv->have_online || inv->n_cores == 0) {
                hostfs_fmt(why, why_size, "the node's online CPUs and cores are unknown (see the inventory's problems)");
                return -EINVAL;
        }
        /* The whole cores of cores.cpus, as the isolated-core pool takes them
         * (agent/node/select.c): a core counts when every sibling is listed. */
        cpuset_zero(&listed);
        cpuset_zero(&partial);
        for (size_t i = 0; i < inv->n_cores; i++) {
                const inv_core *core = &inv->cores[i];
                if (cpuset_subset(&core->cpus, &c->cores.cpus))
                        cpuset_or(&listed, &listed, &core->cpus);
                else if (cpuset_intersects(&core->cpus, &c->cores.cpus)) {
                        cpuset part;
                        cpuset_and(&part, &core->cpus, &c->cores.cpus);
                        cpuset_or(&partial, &partial, &part);
                }
        }
        cpuset_and(&p.isolate, &listed, &inv->online);
        cpuset_andnot(&p.housekeeping, &inv->online, &p.isolate);
        if (!cpuset_empty(&partial))
                cpuset_format(&partial, p.left_out, sizeof(p.left_out));
        if (cpuset_empty(&p.isolate)) {
                hostfs_fmt(why, why_size, "cores.cpus names no whole online core (every SMT sibling of a core must be listed)");
                return -EINVAL;
        }
        if (cpuset_empty(&p.housekeeping)) {
                hostfs_fmt(why, why_size, "cores.cpus covers every online CPU: none would be left for the kernel, the "
                                          "kubelet and the system");
                return -EINVAL;
        }
        cpuset_format(&p.isolate, list, sizeof(list));
        cpuset_format(&p.housekeeping, hk, sizeof(hk));
        /* managed_irq: keep managed (multi-queue driver) interrupts off the cores too;
         * domain: out of the scheduler's load balancing (what a bare list means). */
        hostfs_fmt(flags, sizeof(flags), "managed_irq,domain,%s", list);
        if (set_cpu_arg(&p.want.a[p.want.n++], "isolcpus", flags) < 0 ||
            set_cpu_arg(&p.want.a[p.want.n++], "nohz_full", list) < 0 ||
            set_cpu_arg(&p.want.a[p.want.n++], "rcu_nocbs", list) < 0 ||
            set_cpu_arg(&p.want.a[p.want.n++], "irqaffinity", hk) < 0) {
                hostfs_fmt(why, why_size, "the CPU lists are longer than %d characters", KARGS_VALUE_LEN - 1);
                return -EINVAL;
        }
        /* Boot pages are taken before anything else runs: a node given more than it has
         * does not boot. Every NUMA node asked for must exist, and all sizes together
         * must leave the system max(KARGS_HUGE_RESERVE_KB, MemTotal/8). */
        uint64_t boot_kb = 0;
        for (size_t i = 0; i < c->n_huge; i++)
                for (int n = 0; n < CONFIG_MAX_NUMA; n++) {
                        if (!c->huge[i].want[n] || c->huge[i].pages[n] == 0)
                                continue;
                        if (inv->n_numa && !inventory_find_numa(inv, n)) {
                                char have[64] = "";
                                for (size_t k = 0; k < inv->n_numa; k++)
                                        (void)hostfs_fmt_append(have, sizeof(have), "%s%d", k ? "," : "",
                                                                inv->numa[k].id);
                                hostfs_fmt(why, why_size, "hugepages asks for %llu pages on NUMA node %d; this node has "
                                                          "NUMA nodes %s",
                                           (unsigned long long)c->huge[i].pages[n], n, have);
                                return -ERANGE;
                        }
                        uint64_t kb = c->huge[i].pages[n] * c->huge[i].size_kb;
                        if (c->huge[i].size_kb && kb / c->huge[i].size_kb != c->huge[i].pages[n])
                                kb = UINT64_MAX; /* overflow: more than any node */
                        boot_kb = boot_kb > UINT64_MAX - kb ? UINT64_MAX : boot_kb + kb;
                }
        if (boot_kb && inv->mem_total_kb) {
                uint64_t reserve = inv->mem_total_kb / 8 > KARGS_HUGE_RESERVE_KB ? inv->mem_total_kb / 8
                                                                                  : KARGS_HUGE_RESERVE_KB;
                uint64_t limit = inv->mem_total_kb > reserve ? inv->mem_total_kb - reserve : 0;
                if (boot_kb > limit) {
                        hostfs_fmt(why, why_size, "hugepages asks for %llu MiB of boot hugepages; this node has "
                                                  "%llu MiB of memory (MemTotal), and at most %llu MiB may be taken "
                                                  "(%llu MiB stay for the system)",
                                   (unsigned long long)(boot_kb / 1024), (unsigned long long)(inv->mem_total_kb / 1024),
                                   (unsigned long long)(limit / 1024), (unsigned long long)(reserve / 1024));
                        return -ERANGE;
                }
        }
        for (size_t i = 0; i < c->n_huge && p.want.n < KARGS_MAX; i++) {
                uint64_t total = 0;
                for (int n = 0; n < CONFIG_MAX_NUMA; n++)
                        if (c->huge[i].want[n])
                                total += c->huge[i].pages[n];
                if (total == 0)
                        continue;
                /* the kernel spreads boot pages over the nodes; the agent then sets each
                 * node's count at run time (hugepages). */
                if (set_huge_arg(&p.want.a[p.want.n++], c->huge[i].size_kb, total) < 0) {
                        hostfs_fmt(why, why_size, "page size %llu kB cannot be written", (unsigned long long)c->huge[i].size_kb);
                        return -EINVAL;
                }
        }
        *ret = p;
        return 0;
}

/* A page size of the command line (memparse: K, M, G suffixes). */
static int cmdline_page_kb(const char *s, uint64_t *ret)
{
        uint64_t kb;
        if (parse_size_kb(s, strlen(s), 0, &kb) < 0 || kb == 0)
                return -EINVAL;
        *ret = kb;
        return 0;
}

void kargs_from_cmdline(const inventory *inv, kargs_list *ret)
{
        kargs_list l = {0};
        uint64_t page_kb = 0; /* the hugepagesz= in force; 0: the default size */

        for (size_t i = 0; i < inv->n_cmdline && l.n < KARGS_MAX; i++) {
                const inv_cmdline_flag *f = &inv->cmdline[i];
                if (strcmp(f->name, "hugepagesz") == 0) {
                        if (cmdline_page_kb(f->value, &page_kb) < 0)
                                page_kb = 0;
                } else if (strcmp(f->name, "hugepages") == 0) {
                        uint64_t n;
                        if (page_kb && parse_u64(f->value, UINT32_MAX, &n) == 0)
                                (void)set_huge_arg(&l.a[l.n++], page_kb, n);
                        page_kb = 0;
                } else if (is_cpu_arg(f->name)) {
                        if (set_cpu_arg(&l.a[l.n], f->name, f->value) == 0)
                                l.n++;
                }
        }
        *ret = l;
}

bool kargs_same(const kargs_arg *a, const kargs_arg *b)
{
        return strcmp(a->name, b->name) == 0 && a->page_kb == b->page_kb;
}

/* A CPU-list value as a set; isolcpus' leading flags (nohz, domain, managed_irq) are skipped. */
static int value_cpus(const kargs_arg *a, cpuset *ret)
{
        const char *v = a->value;
        if (strcmp(a->name, "isolcpus") == 0)
                for (;;) {
                        const char *flags[] = {"nohz,", "domain,", "managed_irq,"};
                        bool more = false;
                        for (size_t i = 0; i < 3; i++)
                                if (strncmp(v, flags[i], strlen(flags[i])) == 0) {
                                        v += strlen(flags[i]);
                                        more = true;
                                }
                        if (!more)
                                break;
                }
        return cpuset_parse(v, strlen(v), ret);
}

bool kargs_equal(const kargs_arg *a, const kargs_arg *b)
{
        if (!kargs_same(a, b))
                return false;
        if (strcmp(a->name, "hugepages") == 0)
                return strcmp(a->value, b->value) == 0;
        cpuset x, y;
        if (value_cpus(a, &x) < 0 || value_cpus(b, &y) < 0)
                return strcmp(a->value, b->value) == 0;
        return cpuset_equal(&x, &y);
}

int kargs_find_equal(const kargs_list *l, const kargs_arg *a)
{
        for (size_t i = 0; i < l->n; i++)
                if (kargs_equal(&l->a[i], a))
                        return (int)i;
        return -1;
}

int kargs_arg_parse(const char *text, kargs_arg *ret)
{
        kargs_arg a;
        char buf[KARGS_TEXT_LEN], *eq;

        if (!text || strlen(text) >= sizeof(buf))
                return -EINVAL;
        snprintf(buf, sizeof(buf), "%s", text);
        if (strncmp(buf, "hugepagesz=", 11) == 0) {
                char *sp = strchr(buf, ' ');
                uint64_t kb, n;
                if (!sp || strncmp(sp + 1, "hugepages=", 10) != 0)
                        return -EINVAL;
                *sp = '\0';
                if (cmdline_page_kb(buf + 11, &kb) < 0 || parse_u64(sp + 11, UINT32_MAX, &n) < 0 ||
                    set_huge_arg(&a, kb, n) < 0 || strcmp(a.text, text) != 0)
                        return -EINVAL;
                *ret = a;
                return 0;
        }
        eq = strchr(buf, '=');
        if (!eq)
                return -EINVAL;
        *eq = '\0';
        cpuset s;
        if (!is_cpu_arg(buf) || strpbrk(eq + 1, " \t\n\"'\\$`") || set_cpu_arg(&a, buf, eq + 1) < 0)
                return -EINVAL;
        if (value_cpus(&a, &s) < 0)
                return -EINVAL;
        *ret = a;
        return 0;
}

/* ---- state file ---- */

int kargs_state_parse(const char *text, size_t len, kargs_state *ret, char *err, size_t err_size)
{
        json_t *root, *args, *e;
        kargs_state s = {0};
        size_t i;
        int loader = -1;

#define BAD(...) STATE_JSON_BAD(root, err, err_size, __VA_ARGS__)

        int r = state_json_open(text, len, KARGS_STATE_MAX_TEXT, &root, err, err_size);
        if (r < 0)
                return r;
        const char *ln = json_string_value(json_object_get(root, "loader"));
        for (int k = 0; ln && k < _KARGS_LOADER_MAX; k++)
                if (strcmp(ln, loader_names[k]) == 0)
                        loader = k;
        if (loader < 0)
                BAD("state file's \"loader\" is not one of none, grub-dropin, grubby");
        s.loader = (kargs_loader)loader;
        args = json_object_get(root, "args");
        if (!json_is_array(args) || json_array_size(args) > KARGS_MAX)
                BAD("state file has no \"args\" array of at most %d entries", KARGS_MAX);
        json_array_foreach(args, i, e) {
                if (!json_is_string(e) || kargs_arg_parse(json_string_value(e), &s.written.a[s.written.n]) < 0)
                        BAD("state file's args[%zu] is not an argument spinlane writes", i);
                for (size_t k = 0; k < s.written.n; k++)
                        if (kargs_same(&s.written.a[k], &s.written.a[s.written.n]))
                                BAD("state file's args[%zu] repeats args[%zu]", i, k);
                s.written.n++;
        }
        json_t *sen = json_object_get(root, "sentinel_created");
        if (!json_is_boolean(sen))
                BAD("state file has no \"sentinel_created\" true or false");
        s.sentinel_created = json_is_true(sen);
        json_t *done = json_object_get(root, "complete");
        if (!json_is_boolean(done))
                BAD("state file has no \"complete\" true or false");
        s.complete = json_is_true(done);
        json_decref(root);
#undef BAD
        *ret = s;
        return 0;
}

char *kargs_state_format(const kargs_state *s)
{
        json_t *args = json_array();
        for (size_t i = 0; args && i < s->written.n; i++)
                json_array_append_new(args, json_string(s->written.a[i].text));
        json_t *root = json_pack("{s:i,s:s,s:o,s:b,s:b}", "version", 1, "loader", kargs_loader_name(s->loader), "args",
                                 args ? args : json_array(), "sentinel_created", s->sentinel_created, "complete",
                                 s->complete);
        if (!root)
                return NULL;
        char *text = json_dumps(root, JSON_INDENT(2));
        json_decref(root);
        if (!text)
                return NULL;
        /* one trailing newline, as an editor leaves it */
        size_t n = strlen(text);
        char *out = realloc(text, n + 2);
        if (!out) {
                free(text);
                return NULL;
        }
        out[n] = '\n';
        out[n + 1] = '\0';
        return out;
}

int kargs_state_load(const hostfs *h, kargs_state *ret, char *err, size_t err_size)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = hostfs_read_alloc(h, KARGS_STATE_PATH, KARGS_STATE_MAX_TEXT, &text, &len);
        if (r == -ENOENT) {
                memset(ret, 0, sizeof(*ret));
                return 0;
        }
        if (r < 0) {
                if (err && err_size)
                        snprintf(err, err_size, "cannot read it: %s", strerror(-r));
                return r == -EFBIG ? -EBADMSG : r;
        }
        r = kargs_state_parse(text, len, ret, err, err_size);
        return r < 0 ? r : 1;
}

int kargs_state_save(const hostfs *h, const kargs_state *s)
{
        int r;

        if (s->written.n == 0 && !s->sentinel_created) {
                return hostfs_unlink(h, KARGS_STATE_PATH);
        }
        _cleanup_free_ char *text = kargs_state_format(s);
        if (!text)
                return -ENOMEM;
        if ((r = hostfs_mkdir_p(h, "/var/lib/spinlane")) < 0)
                return r;
        return hostfs_write_atomic(h, KARGS_STATE_PATH, text, 0644);
}

/* ---- the decision ---- */

static void push(kargs_list *l, const kargs_arg *a)
{
        if (l->n < KARGS_MAX)
                l->a[l->n++] = *a;
}

void kargs_diff_compute(const kargs_plan *p, const kargs_list *running, const kargs_state *st, kargs_diff *ret)
{
        kargs_diff d;
        static const kargs_list none;
        const kargs_list *w = st ? &st->written : &none;

        memset(&d, 0, sizeof(d));
        for (size_t i = 0; i < p->want.n; i++) {
                const kargs_arg *a = &p->want.a[i];
                bool ours_written = kargs_find_equal(w, a) >= 0, foreign_running = false;
                /* running with this value from someone else: theirs, never written again */
                if (kargs_find_equal(running, a) >= 0 && !ours_written) {
                        bool ours_same_key = false;
                        for (size_t k = 0; k < w->n; k++)
                                ours_same_key |= kargs_same(&w->a[k], a);
                        if (!ours_same_key)
                                continue;
                }
                /* another value of the same argument that spinlane did not write */
                for (size_t k = 0; k < running->n; k++) {
                        const kargs_arg *r = &running->a[k];
                        if (kargs_same(r, a) && !kargs_equal(r, a) && kargs_find_equal(w, r) < 0)
                                foreign_running = true, push(&d.conflicts, r);
                }
                if (foreign_running)
                        continue;
                push(&d.keep, a);
                if (!ours_written || strcmp(w->a[kargs_find_equal(w, a)].text, a->text) != 0)
                        push(&d.add, a);
                if (kargs_find_equal(running, a) < 0)
                        d.reboot_pending = true;
        }
        for (size_t k = 0; k < w->n; k++) {
                bool kept = false;
                for (size_t i = 0; i < d.keep.n; i++)
                        kept |= strcmp(d.keep.a[i].text, w->a[k].text) == 0;
                if (kept)
                        continue;
                push(&d.remove, &w->a[k]);
                if (kargs_find_equal(running, &w->a[k]) >= 0)
                        d.reboot_pending = true;
        }
        *ret = d;
}

void kargs_list_join(const kargs_list *l, char *buf, size_t size)
{
        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < l->n; i++)
                (void)hostfs_fmt_append(buf, size, "%s%s", i ? " " : "", l->a[i].text);
}

/* ---- the verdict ---- */

int kargs_check(const config *c, const inventory *inv, const kargs_state *st, verdict_list *l)
{
        char why[256], want[KARGS_LINE_LEN], add[KARGS_LINE_LEN], conf[KARGS_LINE_LEN];
        kargs_list running;
        kargs_plan p;
        kargs_diff d;
        int plan_r = kargs_plan_compute(c, inv, &p, why, sizeof(why));
        bool have_plan = plan_r == 0;

        kargs_from_cmdline(inv, &running);
        if (!c->kernel_args.manage) {
                if (!have_plan)
                        return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_SKIP, NULL, NULL,
                                           "kernel_args.manage is off: the boot arguments are the node image's");
                kargs_diff_compute(&p, &running, NULL, &d);
                kargs_list_join(&d.add, add, sizeof(add));
                json_t *ev = json_pack("{s:s}", "missing", add);
                return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_SKIP, ev, NULL,
                                   "kernel_args.manage is off: the boot arguments are the node image's%s%s%s",
                                   *add ? " (the config's cores and hugepages would need: " : "", add, *add ? ")" : "");
        }
        if (!have_plan)
                return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_FAIL, NULL,
                                   plan_r == -ERANGE ? "ask for hugepages this node has room for, on its NUMA nodes"
                                                     : "list whole cores (every SMT sibling) in cores.cpus and leave at "
                                                       "least one core for the system",
                                   "no kernel arguments can be computed: %s", why);
        kargs_diff_compute(&p, &running, st, &d);
        kargs_list_join(&p.want, want, sizeof(want));
        kargs_list_join(&d.add, add, sizeof(add));
        kargs_list_join(&d.conflicts, conf, sizeof(conf));
        json_t *ev = json_pack("{s:s,s:s,s:b,s:s}", "want", want, "loader",
                               kargs_loader_name(st ? st->loader : KARGS_LOADER_NONE), "reboot_pending",
                               d.reboot_pending, "left_out", p.left_out);
        if (d.conflicts.n)
                return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_FAIL, ev,
                                   "remove these from the node image's boot arguments (or set kernel_args.manage: "
                                   "false and manage them yourself)",
                                   "the kernel command line has %s, not spinlane's, and the config needs %s", conf, want);
        if (d.add.n || d.remove.n || (st && st->written.n && !st->complete))
                return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_WARN, ev,
                                   "the agent writes them at its next preparation (see prep-kernel-args); or add them "
                                   "to the boot loader yourself and reboot",
                                   "not written to the boot loader yet: %s", *add ? add : want);
        if (d.reboot_pending)
                return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_WARN, ev,
                                   "reboot the node (kured does it one node at a time when it sees "
                                   KARGS_SENTINEL "); the isolated cores appear after it",
                                   "reboot pending: %s written to the boot loader (%s), not on the running kernel yet",
                                   want, kargs_loader_name(st ? st->loader : KARGS_LOADER_NONE));
        return verdict_add(l, CHECK_KERNEL_ARGS, VERDICT_PASS, ev, NULL, "the running kernel has %s%s%s%s", want,
                           *p.left_out ? " (CPUs " : "", p.left_out, *p.left_out ? " of cores.cpus left out: not whole cores)" : "");
}
