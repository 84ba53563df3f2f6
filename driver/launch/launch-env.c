/* SPDX-License-Identifier: Apache-2.0 */
/* Parsing of the pod's environment into a launch_env. Pure: no I/O, no globals, never
 * logs; every value is length-limited and checked, and a bad one is recorded as an error
 * naming the variable. */
#include "launch-env.h"

#include "alloc-env.h"
#include "envp.h"
#include "ipv4.h"
#include "parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void lenv_quote(const char *s, char *buf, size_t size)
{
        size_t n = 0, len = strlen(s);

        if (size == 0)
                return;
        for (size_t i = 0; i < len && n + 1 < size; i++) {
                unsigned char c = (unsigned char)s[i];
                if (len > 64 && i == 61 && size > 4) {
                        memcpy(buf + n, "...", 3 < size - 1 - n ? 3 : size - 1 - n);
                        n += 3 < size - 1 - n ? 3 : size - 1 - n;
                        break;
                }
                buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
        }
        buf[n] = '\0';
}

const char *lenv_kind_name(lenv_nic_kind k)
{
        return k == LENV_KIND_ENA ? "ena" : k == LENV_KIND_MANA ? "mana" : "other";
}

const char *lenv_driver_name(lenv_nic_driver d)
{
        return d == LENV_DRV_VFIO ? "vfio-pci" : d == LENV_DRV_IGB_UIO ? "igb_uio" : "mana";
}

static void add_err(launch_env *env, const char *check, const char *var, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The last error added (if it was: the list may be full) gets remedy. */
static void set_remedy(launch_env *env, unsigned n_before, const char *remedy)
{
        if (env->n_errs > n_before)
                env->errs[env->n_errs - 1].remedy = remedy;
}

static void add_err(launch_env *env, const char *check, const char *var, const char *fmt, ...)
{
        va_list ap;

        if (env->n_errs >= LENV_MAX_ERRS) {
                env->n_errs_dropped++;
                return;
        }
        lenv_err *e = &env->errs[env->n_errs++];
        e->check = check;
        e->remedy = NULL;
        snprintf(e->var, sizeof(e->var), "%s", var);
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
        va_end(ap);
}

/* Get a variable and bound its length; a too-long value is an error. */
static const char *get_bounded(const char *const *envp, launch_env *env, const char *check,
                               const char *name, size_t max)
{
        const char *v = envp_get(envp, name);
        if (v && strnlen(v, max + 1) > max) {
                add_err(env, check, name, "%s is longer than %zu characters", name, max);
                return NULL;
        }
        return v;
}

/* A comma-separated list into at most max items of item_size; -E2BIG, -ENAMETOOLONG,
 * -EINVAL (empty item). */
static int split_list(const char *s, char *items, size_t item_size, unsigned max, unsigned *ret_n)
{
        unsigned n = 0;

        for (const char *p = s;;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                if (l == 0)
                        return -EINVAL;
                if (n >= max)
                        return -E2BIG;
                if (l >= item_size)
                        return -ENAMETOOLONG;
                memcpy(items + n * item_size, p, l);
                items[n * item_size + l] = '\0';
                n++;
                if (!c)
                        break;
                p = c + 1;
        }
        *ret_n = n;
        return 0;
}

static bool safe_chars(const char *s, const char *extra)
{
        for (const char *p = s; *p; p++) {
                char c = *p;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      strchr(extra, c)))
                        return false;
        }
        return true;
}

static bool safe_abs_path(const char *s)
{
        return s[0] == '/' && safe_chars(s, "/._-") && !strstr(s, "/../") &&
               !(strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/..") == 0);
}

static void parse_cpus(const char *const *envp, launch_env *env)
{
        char q[80];
        const char *v = get_bounded(envp, env, "allocation-env", ALLOC_ENV_ISOLATED_CPUS, 4096);
        cpuset set;
        int r;

        if (!v) {
                if (!envp_get(envp, ALLOC_ENV_ISOLATED_CPUS)) {
                        unsigned n0 = env->n_errs;
                        add_err(env, "allocation-env", ALLOC_ENV_ISOLATED_CPUS,
                                ALLOC_ENV_ISOLATED_CPUS " is not set: the container was granted no spinlane.io/isolated-core");
                        set_remedy(env, n0, LENV_REMEDY_NO_GRANT);
                }
                return;
        }
        lenv_quote(v, q, sizeof(q));
        r = cpuset_parse(v, strlen(v), &set);
        if (r == -ERANGE) {
                add_err(env, "allocation-env", ALLOC_ENV_ISOLATED_CPUS,
                        ALLOC_ENV_ISOLATED_CPUS "=\"%s\" names a CPU >= %d", q, CPUSET_MAX);
                return;
        }
        if (r < 0) {
                add_err(env, "allocation-env", ALLOC_ENV_ISOLATED_CPUS,
                        ALLOC_ENV_ISOLATED_CPUS "=\"%s\" is not a CPU list (like \"2-3,6-7\")", q);
                return;
        }
        if (cpuset_empty(&set)) {
                unsigned n0 = env->n_errs;
                add_err(env, "allocation-env", ALLOC_ENV_ISOLATED_CPUS,
                        ALLOC_ENV_ISOLATED_CPUS " is empty: the container was granted no CPUs");
                set_remedy(env, n0, LENV_REMEDY_NO_GRANT);
                return;
        }
        env->cpus = set;
        env->have_cpus = true;

        v = get_bounded(envp, env, "allocation-env", ALLOC_ENV_ISOLATED_CORES, 4096);
        if (!v)
                return;
        lenv_quote(v, q, sizeof(q));
        /* the device plugin's ids are "p<package>c<core>" (agent inventory); plain numbers
         * are accepted too. Only their number is used (the count of granted cores). */
        unsigned n = 0;
        bool ok = v[0] != '\0';
        for (const char *t = v; ok && *t;) {
                size_t len = strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
                if (len == 0 || len > 32 || (t[len] != ',' && t[len] != '\0') || (t[len] == ',' && t[len + 1] == '\0'))
                        ok = false;
                n++;
                t += len + (t[len] == ',');
        }
        if (!ok) {
                add_err(env, "allocation-env", ALLOC_ENV_ISOLATED_CORES,
                        ALLOC_ENV_ISOLATED_CORES "=\"%s\" is not a list of core ids", q);
                return;
        }
        if (n > cpuset_count(&env->cpus)) {
                add_err(env, "allocation-env", ALLOC_ENV_ISOLATED_CORES,
                        ALLOC_ENV_ISOLATED_CORES "=\"%s\" names %u cores but " ALLOC_ENV_ISOLATED_CPUS " only %u CPUs",
                        q, n, cpuset_count(&env->cpus));
                return;
        }
        env->n_cores = n;
        env->have_cores = true;
}

/* SPINLANE_NIC_<i>_IPV4 ("a.b.c.d/len", a host address of its subnet) and _GATEWAY
 * (another host of that subnet, or "" for none): both always sent by the device plugin.
 * False on an error (recorded, naming the variable). */
static bool parse_nic_address(const char *const *envp, launch_env *env, unsigned i, lenv_nic *nic)
{
        char name[ALLOC_ENV_NAME_MAX], q[80], cidr[IPV4_CIDR_STR_MAX];
        const char *v = get_bounded(envp, env, "allocation-env", alloc_env_nic(name, sizeof(name), i, ALLOC_NIC_IPV4), 64);
        ipv4_cidr c;
        uint32_t gw = 0;

        if (!v) {
                if (!envp_get(envp, name))
                        add_err(env, "allocation-env", name,
                                "%s is not set: the device plugin gave this NIC no address (see the agent's nic-address verdict)",
                                name);
                return false;
        }
        lenv_quote(v, q, sizeof(q));
        if (ipv4_cidr_parse(v, strlen(v), &c) < 0 || c.prefix_len == 0) {
                add_err(env, "allocation-env", name, "%s=\"%s\" is not an IPv4 address with its prefix (a.b.c.d/len)",
                        name, q);
                return false;
        }
        if (ipv4_check_host(c.addr, c) < 0 || !ipv4_is_unicast(c.addr)) {
                add_err(env, "allocation-env", name,
                        "%s=\"%s\" cannot be a host's address (zero, loopback, multicast, or the network or broadcast "
                        "address of its subnet)", name, q);
                return false;
        }
        v = get_bounded(envp, env, "allocation-env", alloc_env_nic(name, sizeof(name), i, ALLOC_NIC_GATEWAY), 64);
        if (!v) {
                if (!envp_get(envp, name))
                        add_err(env, "allocation-env", name,
                                "%s is not set (the device plugin sends it, empty when the NIC has no gateway)", name);
                return false;
        }
        lenv_quote(v, q, sizeof(q));
        if (*v && (ipv4_parse(v, strlen(v), &gw) < 0 || !ipv4_is_unicast(gw))) {
                add_err(env, "allocation-env", name, "%s=\"%s\" is neither an IPv4 address (a.b.c.d) nor empty", name, q);
                return false;
        }
        if (gw && (ipv4_check_host(gw, c) < 0 || gw == c.addr)) {
                add_err(env, "allocation-env", name, "%s=%s is not another host of the subnet of " ALLOC_ENV_NIC_FMT(ALLOC_NIC_IPV4) "=%s",
                        name, q, i, ipv4_cidr_format(c, cidr));
                return false;
        }
        ipv4_cidr_format(c, nic->ipv4);
        if (gw)
                ipv4_format(gw, nic->gateway);
        else
                nic->gateway[0] = '\0';
        return true;
}

/* One NIC's SPINLANE_NIC_<i>_* variables; false on any error (already recorded). */
static bool parse_nic(const char *const *envp, launch_env *env, unsigned i, const char *bdf)
{
        lenv_nic *nic = &env->nics[i];
        char name[48], q[80];
        const char *v;
        bool ok = true;
        int r;

        memset(nic, 0, sizeof(*nic));
        size_t bl = strnlen(bdf, sizeof(nic->pci) - 1);
        memcpy(nic->pci, bdf, bl);
        nic->pci[bl] = '\0';
        nic->numa = -1;

#define NICVAR(field) alloc_env_nic(name, sizeof(name), i, field)
        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_PCI), 64);
        if (v && strcmp(v, bdf) != 0) {
                lenv_quote(v, q, sizeof(q));
                add_err(env, "allocation-env", name,
                        "%s=\"%s\" contradicts entry %u of " ALLOC_ENV_DPDK_NICS " (\"%s\")", name, q, i, bdf);
                ok = false;
        }
        /* empty: the kernel no longer knows it (a NIC bound to vfio), as the plugin sends it */
        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_MAC), 64);
        if (v && *v) {
                uint8_t mac[6];
                lenv_quote(v, q, sizeof(q));
                if (parse_mac(v, mac) < 0) {
                        add_err(env, "allocation-env", name, "%s=\"%s\" is not a MAC address", name, q);
                        ok = false;
                } else
                        snprintf(nic->mac, sizeof(nic->mac), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0],
                                 mac[1], mac[2], mac[3], mac[4], mac[5]);
        }
        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_NUMA), 64);
        if (v) {
                lenv_quote(v, q, sizeof(q));
                r = parse_int(v, -1, 1023, &nic->numa);
                if (r < 0) {
                        add_err(env, "allocation-env", name, "%s=\"%s\" is not a NUMA node (-1..1023)", name, q);
                        ok = false;
                }
        }
        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_KIND), 64);
        if (v) {
                lenv_quote(v, q, sizeof(q));
                if (strcmp(v, "ena") == 0)
                        nic->kind = LENV_KIND_ENA;
                else if (strcmp(v, "mana") == 0)
                        nic->kind = LENV_KIND_MANA;
                else if (strcmp(v, "other") == 0)
                        nic->kind = LENV_KIND_OTHER;
                else {
                        add_err(env, "allocation-env", name, "%s=\"%s\" is not one of ena, mana, other", name, q);
                        ok = false;
                }
        }
        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_DRIVER), 64);
        if (!v) {
                if (!envp_get(envp, name))
                        add_err(env, "allocation-env", name, "%s is not set", name);
                ok = false;
        } else {
                lenv_quote(v, q, sizeof(q));
                if (strcmp(v, "vfio-pci") == 0)
                        nic->driver = LENV_DRV_VFIO;
                else if (strcmp(v, "igb_uio") == 0)
                        nic->driver = LENV_DRV_IGB_UIO;
                else if (strcmp(v, "mana") == 0)
                        nic->driver = LENV_DRV_MANA;
                else {
                        add_err(env, "allocation-env", name,
                                "%s=\"%s\" is not one of vfio-pci, igb_uio, mana", name, q);
                        ok = false;
                }
                if (ok && ((nic->driver == LENV_DRV_MANA) != (nic->kind == LENV_KIND_MANA))) {
                        add_err(env, "allocation-env", name,
                                "%s=%s contradicts " ALLOC_ENV_NIC_FMT(ALLOC_NIC_KIND) "=%s (MANA NICs and only they use the mana driver)",
                                name, v, i, lenv_kind_name(nic->kind));
                        ok = false;
                }
        }
        if (ok && nic->kind == LENV_KIND_MANA && !nic->mac[0]) {
                add_err(env, "allocation-env", NICVAR(ALLOC_NIC_MAC),
                        "%s is not set: a MANA port is selected by its MAC", name);
                ok = false;
        }
        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_DEVARGS), sizeof(nic->devargs) - 1);
        if (v) {
                bl = strlen(bdf);
                lenv_quote(v, q, sizeof(q));
                if (strncmp(v, bdf, bl) != 0 || (v[bl] != '\0' && v[bl] != ',') ||
                    !safe_chars(v, ":.,=_-")) {
                        add_err(env, "allocation-env", name,
                                "%s=\"%s\" must be the NIC's PCI address \"%s\" with optional \",key=value\" devargs",
                                name, q, bdf);
                        ok = false;
                } else
                        snprintf(nic->devargs, sizeof(nic->devargs), "%s", v);
        } else if (envp_get(envp, name))
                ok = false;
        else if (nic->kind == LENV_KIND_MANA) {
                char mac[sizeof(nic->mac)];
                memcpy(mac, nic->mac, sizeof(mac));
                snprintf(nic->devargs, sizeof(nic->devargs), "%s,mac=%s", bdf, mac);
        }
        else
                snprintf(nic->devargs, sizeof(nic->devargs), "%s", bdf);

        if (!parse_nic_address(envp, env, i, nic))
                ok = false;

        v = get_bounded(envp, env, "allocation-env", NICVAR(ALLOC_NIC_DEVICES), 1024);
        if (!v) {
                if (!envp_get(envp, name))
                        add_err(env, "allocation-env", name,
                                "%s is not set: the device plugin passed no device nodes", name);
                return false;
        }
        lenv_quote(v, q, sizeof(q));
        r = split_list(v, &nic->devices[0][0], sizeof(nic->devices[0]), LENV_MAX_DEVICES, &nic->n_devices);
        if (r < 0) {
                add_err(env, "allocation-env", name,
                        "%s=\"%s\" is not a comma-separated list of at most %d device paths", name, q,
                        LENV_MAX_DEVICES);
                return false;
        }
        for (unsigned d = 0; d < nic->n_devices; d++)
                if (strncmp(nic->devices[d], "/dev/", 5) != 0 || !safe_abs_path(nic->devices[d])) {
                        add_err(env, "allocation-env", name, "%s=\"%s\": device paths must lie under /dev/",
                                name, q);
                        return false;
                }
#undef NICVAR
        return ok;
}

static void parse_nics(const char *const *envp, launch_env *env)
{
        char list[LENV_MAX_NICS][16], q[80];
        unsigned n;
        bool ok = true;
        const char *v = get_bounded(envp, env, "allocation-env", ALLOC_ENV_DPDK_NICS, 1024);

        if (!v) {
                if (!envp_get(envp, ALLOC_ENV_DPDK_NICS)) {
                        unsigned n0 = env->n_errs;
                        add_err(env, "allocation-env", ALLOC_ENV_DPDK_NICS,
                                ALLOC_ENV_DPDK_NICS " is not set: the container was granted no spinlane.io/dpdk-nic");
                        set_remedy(env, n0, LENV_REMEDY_NO_GRANT);
                }
                return;
        }
        lenv_quote(v, q, sizeof(q));
        if (split_list(v, &list[0][0], sizeof(list[0]), LENV_MAX_NICS, &n) < 0) {
                add_err(env, "allocation-env", ALLOC_ENV_DPDK_NICS,
                        ALLOC_ENV_DPDK_NICS "=\"%s\" is not a comma-separated list of at most %d PCI addresses",
                        q, LENV_MAX_NICS);
                return;
        }
        for (unsigned i = 0; i < n; i++) {
                if (!parse_is_pci_addr(list[i])) {
                        add_err(env, "allocation-env", ALLOC_ENV_DPDK_NICS,
                                ALLOC_ENV_DPDK_NICS "=\"%s\": entry %u is not a PCI address (dddd:bb:dd.f)", q, i);
                        return;
                }
                for (unsigned j = 0; j < i; j++)
                        if (strcmp(list[i], list[j]) == 0) {
                                add_err(env, "allocation-env", ALLOC_ENV_DPDK_NICS,
                                        ALLOC_ENV_DPDK_NICS "=\"%s\" names %s twice", q, list[i]);
                                return;
                        }
        }
        for (unsigned i = 0; i < n; i++)
                if (!parse_nic(envp, env, i, list[i]))
                        ok = false;
        env->n_nics = n;
        env->have_nics = ok;
}

static void parse_memory(const char *const *envp, launch_env *env)
{
        char q[80];
        const char *v = get_bounded(envp, env, "hugepages", ALLOC_ENV_HUGEPAGE_DIR, sizeof(env->huge_dir) - 1);

        snprintf(env->huge_dir, sizeof(env->huge_dir), "%s", LENV_DEFAULT_HUGE_DIR);
        if (v) {
                lenv_quote(v, q, sizeof(q));
                if (!safe_abs_path(v))
                        add_err(env, "hugepages", ALLOC_ENV_HUGEPAGE_DIR,
                                ALLOC_ENV_HUGEPAGE_DIR "=\"%s\" is not an absolute path of [A-Za-z0-9/._-]", q);
                else
                        snprintf(env->huge_dir, sizeof(env->huge_dir), "%s", v);
        }
        env->memory_mb = LENV_DEFAULT_MEMORY_MB;
        v = get_bounded(envp, env, "hugepages", LAUNCH_ENV_DPDK_MEMORY_MB, 64);
        if (v) {
                uint64_t mb;
                lenv_quote(v, q, sizeof(q));
                if (parse_u64(v, LENV_MAX_MEMORY_MB, &mb) < 0 || mb == 0)
                        add_err(env, "hugepages", LAUNCH_ENV_DPDK_MEMORY_MB,
                                LAUNCH_ENV_DPDK_MEMORY_MB "=\"%s\" is not a size in MiB (1..%d)", q, LENV_MAX_MEMORY_MB);
                else
                        env->memory_mb = mb;
        }
}

static void parse_identity(const char *const *envp, launch_env *env)
{
        static const char *const names[] = { LAUNCH_ENV_POD_UID, "POD_UID", "HOSTNAME" };
        const char *v = NULL;
        size_t n = 0;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !v; i++) {
                v = envp_get(envp, names[i]);
                if (v && !*v)
                        v = NULL;
        }
        if (!v)
                v = "local";
        /* keep [A-Za-z0-9-], at most 40 characters: it names files under /var/run/dpdk */
        for (const char *p = v; *p && n < 40; p++)
                if (safe_chars((char[]){ *p, 0 }, "-"))
                        env->pod_id[n++] = *p;
        env->pod_id[n] = '\0';
        if (n == 0)
                snprintf(env->pod_id, sizeof(env->pod_id), "local");

        v = get_bounded(envp, env, "allocation-env", LAUNCH_ENV_EAL_EXTRA_ARGS, sizeof(env->eal_extra) - 1);
        if (v) {
                if (!safe_chars(v, " /:.,=_-+@")) {
                        char q[80];
                        lenv_quote(v, q, sizeof(q));
                        add_err(env, "allocation-env", LAUNCH_ENV_EAL_EXTRA_ARGS,
                                LAUNCH_ENV_EAL_EXTRA_ARGS "=\"%s\" holds characters other than [A-Za-z0-9 /:.,=_+@-]", q);
                } else
                        snprintf(env->eal_extra, sizeof(env->eal_extra), "%s", v);
        }
}

static void parse_affinity(const char *const *envp, launch_env *env, const char *name, int *ret, bool *ret_set)
{
        const char *v = get_bounded(envp, env, "aeron-config", name, 64);
        char q[80];

        *ret = -1;
        *ret_set = false;
        if (!v)
                return;
        lenv_quote(v, q, sizeof(q));
        if (parse_int(v, -1, CPUSET_MAX - 1, ret) < 0) {
                *ret = -1;
                add_err(env, "aeron-config", name, "%s=\"%s\" is not a CPU id (or -1)", name, q);
                return;
        }
        *ret_set = true;
}

static void parse_string(const char *const *envp, launch_env *env, const char *name, char *buf, size_t size)
{
        const char *v = get_bounded(envp, env, "aeron-config", name, size - 1);

        buf[0] = '\0';
        if (!v)
                return;
        if (!*v || !safe_chars(v, "_-.:")) {
                char q[80];
                lenv_quote(v, q, sizeof(q));
                add_err(env, "aeron-config", name, "%s=\"%s\" is not a name Aeron knows", name, q);
                return;
        }
        snprintf(buf, size, "%s", v);
}

/* Aeron reads a port range as two numbers separated by white space ("20000 20999"). */
static void parse_ports(const char *const *envp, launch_env *env, const char *name, bool *ret_set,
                        unsigned *ret_lo, unsigned *ret_hi)
{
        const char *v = get_bounded(envp, env, "aeron-config", name, 64);
        char buf[65], q[80], *sp;
        uint64_t lo, hi;

        *ret_set = false;
        if (!v)
                return;
        lenv_quote(v, q, sizeof(q));
        snprintf(buf, sizeof(buf), "%s", v);
        sp = strchr(buf, ' ');
        if (!sp)
                goto bad;
        *sp = '\0';
        while (*++sp == ' ')
                ;
        if (parse_u64(buf, 65535, &lo) < 0 || parse_u64(sp, 65535, &hi) < 0)
                goto bad;
        if (lo > hi) {
                add_err(env, "aeron-config", name, "%s=\"%s\" is an empty range (low > high)", name, q);
                return;
        }
        *ret_lo = (unsigned)lo;
        *ret_hi = (unsigned)hi;
        *ret_set = true;
        return;
bad:
        add_err(env, "aeron-config", name,
                "%s=\"%s\" is not \"<low> <high>\" (two ports separated by a space, as Aeron reads it)", name, q);
}

static void parse_mtu(const char *const *envp, launch_env *env)
{
        const char *v = get_bounded(envp, env, "aeron-config", "AERON_MTU_LENGTH", 32);
        char buf[33], q[80];
        uint64_t mul = 1, n;
        size_t l;

        env->aeron.mtu = 0;
        if (!v)
                return;
        lenv_quote(v, q, sizeof(q));
        snprintf(buf, sizeof(buf), "%s", v);
        l = strlen(buf);
        if (l > 0 && (buf[l - 1] == 'k' || buf[l - 1] == 'K'))
                mul = 1024, buf[l - 1] = '\0';
        else if (l > 0 && (buf[l - 1] == 'm' || buf[l - 1] == 'M'))
                mul = 1024 * 1024, buf[l - 1] = '\0';
        if (parse_u64(buf, UINT32_MAX, &n) < 0 || n == 0) {
                add_err(env, "aeron-config", "AERON_MTU_LENGTH", "AERON_MTU_LENGTH=\"%s\" is not a length", q);
                return;
        }
        env->aeron.mtu = n * mul;
}

/* A contract variable the pod set by hand: kept verbatim when it fits (the driver's own
 * parser, which spinlane-launch runs in its aeron-bindings check, judges it). */
static void parse_verbatim(const char *const *envp, launch_env *env, const char *name, char *buf, size_t size,
                           bool *ret_set)
{
        const char *v = get_bounded(envp, env, "aeron-bindings", name, size - 1);

        buf[0] = '\0';
        if (ret_set)
                *ret_set = v != NULL;
        if (!v)
                return;
        if (!safe_chars(v, "_-.:/,+=@")) {
                char q[80];
                lenv_quote(v, q, sizeof(q));
                add_err(env, "aeron-bindings", name, "%s=\"%s\" holds characters other than [A-Za-z0-9_.:/,+=@-]", name,
                        q);
                if (ret_set)
                        *ret_set = false;
                return;
        }
        snprintf(buf, size, "%s", v);
}

static void parse_bypass(const char *const *envp, launch_env *env)
{
        static const char *const roles[2] = { BYPASS_ROLE_SENDER, BYPASS_ROLE_RECEIVER };
        lenv_bypass *b = &env->bypass;
        char name[ALLOC_ENV_NAME_MAX];

        for (unsigned r = 0; r < 2; r++) {
                parse_verbatim(envp, env, bypass_env_role(name, sizeof(name), roles[r], BYPASS_DEVICE), b->device[r],
                               sizeof(b->device[r]), NULL);
                parse_verbatim(envp, env, bypass_env_role(name, sizeof(name), roles[r], BYPASS_IPV4), b->ipv4[r],
                               sizeof(b->ipv4[r]), NULL);
                parse_verbatim(envp, env, bypass_env_role(name, sizeof(name), roles[r], BYPASS_GATEWAY), b->gateway[r],
                               sizeof(b->gateway[r]), &b->gateway_set[r]);
        }
        parse_verbatim(envp, env, "AERON_DRIVER_DYNAMIC_LIBRARIES", b->libraries, sizeof(b->libraries), NULL);
        parse_verbatim(envp, env, "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA", b->bindings, sizeof(b->bindings), NULL);
        parse_verbatim(envp, env, LAUNCH_ENV_AERON_LIBRARY, b->library, sizeof(b->library), NULL);
        b->sparse_set = envp_get(envp, "AERON_TERM_BUFFER_SPARSE_FILE") != NULL;
        b->per_send_set = envp_get(envp, "AERON_NETWORK_PUBLICATION_MAX_MESSAGES_PER_SEND") != NULL;
}

/* A number in lo..hi into *ret (unset: def), an error naming the variable otherwise. */
static void parse_uint(const char *const *envp, launch_env *env, const char *check, const char *name, unsigned lo,
                       unsigned hi, unsigned def, unsigned *ret)
{
        char q[80];
        uint64_t n;
        const char *v = get_bounded(envp, env, check, name, 32);
        *ret = def;
        if (!v)
                return;
        lenv_quote(v, q, sizeof(q));
        if (parse_u64(v, hi, &n) < 0 || n < lo)
                add_err(env, check, name, "%s=\"%s\" is not a number in %u..%u", name, q, lo, hi);
        else
                *ret = (unsigned)n;
}

static void parse_datapath(const char *const *envp, launch_env *env)
{
        lenv_datapath *d = &env->datapath;
        char q[80];
        const char *v = get_bounded(envp, env, "datapath", LAUNCH_ENV_DATAPATH, 16);

        d->on = true;
        if (v) {
                if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
                        d->on = false;
                else if (strcmp(v, "on") != 0 && strcmp(v, "1") != 0 && strcmp(v, "true") != 0) {
                        lenv_quote(v, q, sizeof(q));
                        add_err(env, "datapath", LAUNCH_ENV_DATAPATH, LAUNCH_ENV_DATAPATH "=\"%s\" is not on or off", q);
                }
        }
        v = get_bounded(envp, env, "datapath", LAUNCH_ENV_DATAPATH_PEER, 32);
        if (v && *v) {
                const char *colon = strrchr(v, ':');
                uint32_t ip;
                uint64_t port;
                if (!colon || ipv4_parse(v, (size_t)(colon - v), &ip) < 0 || !ipv4_is_unicast(ip) ||
                    parse_u64(colon + 1, 65535, &port) < 0 || port == 0) {
                        lenv_quote(v, q, sizeof(q));
                        add_err(env, "datapath", LAUNCH_ENV_DATAPATH_PEER,
                                LAUNCH_ENV_DATAPATH_PEER "=\"%s\" is not a unicast IPv4 address and a UDP port (a.b.c.d:port)", q);
                } else
                        snprintf(d->peer, sizeof(d->peer), "%u.%u.%u.%u:%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255,
                                 ip & 255, (unsigned)port);
        }
        parse_uint(envp, env, "datapath", LAUNCH_ENV_DATAPATH_MAX_P99_US, 1, LENV_DATAPATH_MAX_P99_US, 0, &d->max_p99_us);
        parse_uint(envp, env, "datapath", LAUNCH_ENV_DATAPATH_ROUNDS, 1, LENV_DATAPATH_MAX_ROUNDS,
                   LENV_DATAPATH_DEFAULT_ROUNDS, &d->rounds);
        parse_uint(envp, env, "datapath", LAUNCH_ENV_DATAPATH_TIMEOUT_MS, LENV_DATAPATH_MIN_TIMEOUT_MS,
                   LENV_DATAPATH_MAX_TIMEOUT_MS, LENV_DATAPATH_DEFAULT_TIMEOUT_MS, &d->timeout_ms);
}

int lenv_parse(const char *const *envp, launch_env *ret)
{
        launch_env *env = ret;
        lenv_aeron *a = &env->aeron;

        memset(env, 0, sizeof(*env));
        parse_cpus(envp, env);
        parse_nics(envp, env);
        parse_memory(envp, env);
        parse_identity(envp, env);

        parse_string(envp, env, "AERON_THREADING_MODE", a->threading_mode, sizeof(a->threading_mode));
        parse_string(envp, env, "AERON_SENDER_IDLE_STRATEGY", a->idle_sender, sizeof(a->idle_sender));
        parse_string(envp, env, "AERON_RECEIVER_IDLE_STRATEGY", a->idle_receiver, sizeof(a->idle_receiver));
        parse_string(envp, env, "AERON_CONDUCTOR_IDLE_STRATEGY", a->idle_conductor, sizeof(a->idle_conductor));
        parse_affinity(envp, env, "AERON_SENDER_CPU_AFFINITY", &a->aff_sender, &a->aff_sender_set);
        parse_affinity(envp, env, "AERON_RECEIVER_CPU_AFFINITY", &a->aff_receiver, &a->aff_receiver_set);
        parse_affinity(envp, env, "AERON_CONDUCTOR_CPU_AFFINITY", &a->aff_conductor, &a->aff_conductor_set);
        parse_mtu(envp, env);
        parse_ports(envp, env, "AERON_SENDER_WILDCARD_PORT_RANGE", &a->sender_ports_set, &a->sender_lo, &a->sender_hi);
        parse_ports(envp, env, "AERON_RECEIVER_WILDCARD_PORT_RANGE", &a->receiver_ports_set, &a->receiver_lo,
                    &a->receiver_hi);
        parse_bypass(envp, env);
        parse_datapath(envp, env);
        return 0;
}
