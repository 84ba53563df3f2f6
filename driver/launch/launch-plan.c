/* SPDX-License-Identifier: Apache-2.0 */
/* The driver's environment from the allocation, and the aeron-config check. Pure: no
 * I/O, no globals, never logs. Aeron's names (threading modes, idle strategies, the
 * port-range syntax) are the ones its C driver's context parser accepts. */
#include "launch-plan.h"

#include "alloc-env.h"
#include "cleanup.h"
#include "hostfs.h"
#include "launch-report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void lplan_topo_init(lplan_topo *t)
{
        for (unsigned i = 0; i < CPUSET_MAX; i++)
                t->core_of[i] = -1;
}

int lplan_idle_never_parks(const char *name)
{
        static const char *const yes[] = { "spinning", "noop", "aeron_idle_strategy_busy_spinning",
                                           "aeron_idle_strategy_noop" };
        static const char *const no[] = { "sleeping", "yielding", "backoff", "aeron_idle_strategy_sleeping",
                                          "aeron_idle_strategy_yielding", "aeron_idle_strategy_backoff", "" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcmp(name, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcmp(name, no[i]) == 0)
                        return 0;
        return -1;
}

static int core_key(const lplan_topo *t, int cpu)
{
        if (cpu < 0 || cpu >= CPUSET_MAX)
                return -1;
        return t->core_of[cpu] >= 0 ? t->core_of[cpu] : cpu;
}

const char *lplan_pin_mode_name(lplan_pin_mode m)
{
        switch (m) {
        case LPLAN_PIN_SPINLANE: return "spinlane-pinned";
        case LPLAN_PIN_KUBELET: return "kubelet-pinned";
        default: return "mismatch";
        }
}

static void fmt_list(const cpuset *s, char *buf, size_t size)
{
        if (cpuset_format(s, buf, size) >= size && size > 4)
                memcpy(buf + size - 4, "...", 4);
}

/* The core keys of a set of CPUs. */
static void cores_of(const lplan_topo *t, const cpuset *cpus, cpuset *ret)
{
        cpuset_zero(ret);
        CPUSET_FOREACH(c, cpus)
                cpuset_set(ret, (unsigned)core_key(t, c));
}

/* "{1,5},{2,6}": the CPUs of cpus grouped by physical core, cut with "..." */
static void fmt_cores(const lplan_topo *t, const cpuset *cpus, char *buf, size_t size)
{
        cpuset keys;
        bool ok = true;

        buf[0] = '\0';
        cores_of(t, cpus, &keys);
        CPUSET_FOREACH(k, &keys) {
                cpuset one;
                char list[128];
                cpuset_zero(&one);
                CPUSET_FOREACH(c, cpus)
                        if (core_key(t, c) == k)
                                cpuset_set(&one, (unsigned)c);
                fmt_list(&one, list, sizeof(list));
                ok = ok && hostfs_fmt_append(buf, size, "%s{%s}", buf[0] ? "," : "", list) == 0;
        }
        if (!ok && size > 4)
                memcpy(buf + size - 4, "...", 4);
}

int lplan_choose_cpus(const cpuset *granted, const cpuset *allowed, const cpuset *online, const cpuset *isolated,
                      const lplan_topo *topo, lplan_pin *ret)
{
        char g[256], a[256], x[256], gc[320], why[768] = "";
        cpuset gkeys, akeys, tmp;
        lplan_pin p = { .mode = LPLAN_PIN_MISMATCH, .cpus = *granted };
        unsigned ngrant, nallowed;
        bool whole = true;

        if (cpuset_empty(granted))
                return -EINVAL;
        fmt_list(granted, g, sizeof(g));
        fmt_list(allowed, a, sizeof(a));
        if (cpuset_subset(granted, allowed)) {
                p.mode = LPLAN_PIN_SPINLANE;
                snprintf(p.reason, sizeof(p.reason), "the granted CPUs %s are inside this container's cpuset %s", g, a);
                *ret = p;
                return 0;
        }

        /* Can the cpuset stand in for the grant? Collect every reason it cannot. */
        cores_of(topo, granted, &gkeys);
        cores_of(topo, allowed, &akeys);
        ngrant = cpuset_count(&gkeys);
        nallowed = cpuset_count(&akeys);
        p.cores_granted = ngrant;
        p.cores_allowed = nallowed;
        if (cpuset_empty(allowed))
                hostfs_fmt_append(why, sizeof(why), "; it is empty");
        else if (online && cpuset_subset(online, allowed))
                hostfs_fmt_append(why, sizeof(why), "; it is every online CPU of the node, not an exclusive set");
        if (!cpuset_empty(allowed) && !isolated)
                hostfs_fmt_append(why, sizeof(why),
                                  "; /sys/devices/system/cpu/isolated is unreadable, so its CPUs cannot be shown to be isolated");
        else if (isolated && !cpuset_subset(allowed, isolated)) {
                cpuset_andnot(&tmp, allowed, isolated);
                fmt_list(&tmp, x, sizeof(x));
                hostfs_fmt_append(why, sizeof(why),
                                  "; CPUs %s of it are not isolated on the host (a shared pool, not the static CPU manager's exclusive cores)", x);
        }
        CPUSET_FOREACH(c, allowed) {
                if (topo->core_of[c] < 0) {
                        hostfs_fmt_append(why, sizeof(why), "; the SMT siblings of its CPU %d are unknown", c);
                        whole = false;
                        break;
                }
        }
        for (unsigned d = 0; whole && d < CPUSET_MAX; d++) {
                int k = topo->core_of[d];
                if (k < 0 || !cpuset_has(&akeys, (unsigned)k) || cpuset_has(allowed, d) || (online && !cpuset_has(online, d)))
                        continue;
                /* an online sibling outside the cpuset: name one CPU of that core inside */
                int in = -1;
                CPUSET_FOREACH(c, allowed)
                        if (topo->core_of[c] == k) {
                                in = c;
                                break;
                        }
                hostfs_fmt_append(why, sizeof(why),
                                  "; it splits a physical core: CPU %d is in it but its SMT sibling %u is not (the kubelet without full-pcpus-only)",
                                  in, d);
                whole = false;
        }
        if (nallowed < ngrant)
                hostfs_fmt_append(why, sizeof(why), "; it spans %u physical core%s, fewer than the %u granted", nallowed,
                                  nallowed == 1 ? "" : "s", ngrant);
        if (why[0]) {
                char o[256];
                cpuset_andnot(&tmp, granted, allowed);
                fmt_list(&tmp, o, sizeof(o));
                (void)hostfs_fmt(p.reason, sizeof(p.reason),
                         "the granted CPUs %s are not inside this container's cpuset %s (outside: %s), and the cpuset cannot stand in for them: %s",
                         g, a, o, why + 2);
                *ret = p;
                return 0;
        }

        /* kubelet-pinned: ngrant of the cpuset's cores, those holding granted CPUs first */
        cpuset chosen, pick;
        unsigned n = 0;
        cpuset_and(&tmp, &akeys, &gkeys);
        cpuset_zero(&chosen);
        for (unsigned pass = 0; pass < 2; pass++)
                CPUSET_FOREACH(k, pass == 0 ? &tmp : &akeys) {
                        if (n < ngrant && !cpuset_has(&chosen, (unsigned)k)) {
                                cpuset_set(&chosen, (unsigned)k);
                                n++;
                        }
                }
        cpuset_zero(&pick);
        CPUSET_FOREACH(c, allowed)
                if (cpuset_has(&chosen, (unsigned)core_key(topo, c)))
                        cpuset_set(&pick, (unsigned)c);
        p.mode = LPLAN_PIN_KUBELET;
        p.cpus = pick;
        fmt_cores(topo, &pick, x, sizeof(x));
        fmt_cores(topo, granted, gc, sizeof(gc));
        char pk[256];
        fmt_list(&pick, pk, sizeof(pk));
        (void)hostfs_fmt(p.reason, sizeof(p.reason),
                 "the kubelet's static CPU manager chose cores %s (CPUs %s); spinlane's grant %s (CPUs %s) differs: pinning to the kubelet's exclusive CPUs",
                 x, pk, gc, g);
        if (nallowed > ngrant)
                hostfs_fmt_append(p.reason, sizeof(p.reason), " (%u of the cpuset's %u whole isolated cores, as many as granted)",
                                  ngrant, nallowed);
        *ret = p;
        return 0;
}

static int add_var(lplan *p, const char *name, const char *value, bool defaulted)
{
        size_t n = strlen(value);

        if (p->n_set >= LPLAN_MAX_SET || n >= sizeof(p->set[0].value))
                return -ENAMETOOLONG;
        p->set[p->n_set].name = name;
        memmove(p->set[p->n_set].value, value, n + 1); /* value may live inside *p */
        p->set[p->n_set].defaulted = defaulted;
        p->n_set++;
        return 0;
}

/* Give the unset agents CPUs of the granted cores: the conductor a core of its own
 * when there are enough, then sender and receiver one core each. */
static void assign_affinities(const launch_env *env, const lplan_topo *topo, lplan *p)
{
        int lead[CPUSET_MAX / 2 + 1]; /* first granted CPU of each free core, in order */
        unsigned nfree = 0, next = 0, want = 0;
        int *aff[3] = { &p->aeron.aff_sender, &p->aeron.aff_receiver, &p->aeron.aff_conductor };
        const bool set[3] = { env->aeron.aff_sender_set, env->aeron.aff_receiver_set, env->aeron.aff_conductor_set };
        cpuset seen;

        cpuset_zero(&seen);
        for (unsigned a = 0; a < 3; a++)
                if (set[a] && *aff[a] >= 0 && core_key(topo, *aff[a]) >= 0)
                        cpuset_set(&seen, (unsigned)core_key(topo, *aff[a]));
        CPUSET_FOREACH(c, &p->cpus) {
                int k = core_key(topo, c);
                if (cpuset_has(&seen, (unsigned)k) || nfree >= ELEMENTSOF(lead))
                        continue;
                cpuset_set(&seen, (unsigned)k);
                lead[nfree++] = c;
        }
        for (unsigned a = 0; a < 2; a++)
                if (!set[a])
                        want++;
        if (!set[2] && nfree > want) {
                p->aeron.aff_conductor = lead[next++];
                p->aff_defaulted[2] = true;
        }
        for (unsigned a = 0; a < 2; a++) {
                if (set[a])
                        continue;
                if (next < nfree) {
                        *aff[a] = lead[next++];
                        p->aff_defaulted[a] = true;
                        continue;
                }
                /* out of whole cores: take any granted CPU nobody has (the aeron-config
                 * check then says which two share a core) */
                CPUSET_FOREACH(c, &p->cpus) {
                        if (c != p->aeron.aff_sender && c != p->aeron.aff_receiver && c != p->aeron.aff_conductor) {
                                *aff[a] = c;
                                p->aff_defaulted[a] = true;
                                break;
                        }
                }
        }
}

static void bypass_problem(lplan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bypass_problem(lplan *p, const char *fmt, ...)
{
        char text[320];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        (void)hostfs_fmt_append(p->bypass_problem, sizeof(p->bypass_problem), "%s%s", p->bypass_problem[0] ? "; " : "",
                                text);
}

/* The bypass driver's contract and bindings, where the pod left them unset. */
static int plan_bypass(const launch_env *env, lplan *p)
{
        static const char *const role[2] = { "sender", "receiver" };
        static const char *const dev_var[2] = { BYPASS_ENV_SENDER_DEVICE, BYPASS_ENV_RECEIVER_DEVICE };
        static const char *const ip_var[2] = { BYPASS_ENV_SENDER_IPV4, BYPASS_ENV_RECEIVER_IPV4 };
        static const char *const gw_var[2] = { BYPASS_ENV_SENDER_GATEWAY, BYPASS_ENV_RECEIVER_GATEWAY };
        const lenv_bypass *b = &env->bypass;
        int r;

        p->bypass = !b->bindings[0] || strcmp(b->bindings, LENV_BINDINGS_SYMBOL) == 0;
        p->bypass_problem[0] = '\0';
        if (p->bypass) {
                if (!b->libraries[0] && (r = add_var(p, "AERON_DRIVER_DYNAMIC_LIBRARIES",
                                                     b->library[0] ? b->library : LENV_BINDINGS_LIBRARY, true)) < 0)
                        return r;
                if (!b->bindings[0] &&
                    (r = add_var(p, "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA", LENV_BINDINGS_SYMBOL, true)) < 0)
                        return r;
        }
        for (unsigned k = 0; k < 2; k++) {
                /* one NIC: both roles on it; two or more: sender on the first, receiver on the second */
                unsigned i = k == 1 && env->n_nics >= 2 ? 1 : 0;
                const lenv_nic *nic = env->have_nics && i < env->n_nics ? &env->nics[i] : NULL;
                if (!b->device[k][0]) {
                        if (nic) {
                                if ((r = add_var(p, dev_var[k], nic->pci, true)) < 0)
                                        return r;
                        } else
                                bypass_problem(p, "no NIC for the %s: the allocation has no valid " ALLOC_ENV_DPDK_NICS " and the pod sets no %s",
                                               role[k], dev_var[k]);
                }
                if (!b->ipv4[k][0]) {
                        if (nic && nic->ipv4[0]) {
                                if ((r = add_var(p, ip_var[k], nic->ipv4, true)) < 0)
                                        return r;
                        } else if (nic) {
                                char nic_var[ALLOC_ENV_NAME_MAX];
                                bypass_problem(p, "no address for the %s NIC %s: neither %s (the allocation) nor %s (the pod) is set",
                                               role[k], nic->pci, alloc_env_nic(nic_var, sizeof(nic_var), i, ALLOC_NIC_IPV4),
                                               ip_var[k]);
                        } else if (b->device[k][0])
                                bypass_problem(p, "no address for the %s NIC %s: %s is not set", role[k], b->device[k],
                                               ip_var[k]);
                }
                if (!b->gateway_set[k] && nic && nic->gateway[0] && (r = add_var(p, gw_var[k], nic->gateway, true)) < 0)
                        return r;
        }
        /* the rest of Aeron's low-latency profile: no page faults on the term buffers (the
         * C driver writes every page of a log it maps non-sparse: its pre-touch; there is
         * no driver setting for it), two datagrams per send */
        if (!b->sparse_set && (r = add_var(p, "AERON_TERM_BUFFER_SPARSE_FILE", "false", true)) < 0)
                return r;
        if (!b->per_send_set && (r = add_var(p, "AERON_NETWORK_PUBLICATION_MAX_MESSAGES_PER_SEND", "2", true)) < 0)
                return r;
        return 0;
}

int lplan_build(const launch_env *env, const lplan_pin *pin, const lplan_topo *topo, lplan *ret)
{
        static const char *const aff_names[3] = { "AERON_SENDER_CPU_AFFINITY", "AERON_RECEIVER_CPU_AFFINITY",
                                                  "AERON_CONDUCTOR_CPU_AFFINITY" };
        _cleanup_free_ lplan *p = NULL;
        char cpus[1024], num[16];
        int r, main_lcore, numa = -2;

        if (!env->have_cpus || (pin && cpuset_empty(&pin->cpus)))
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->mode = pin ? pin->mode : LPLAN_PIN_SPINLANE;
        p->cpus = pin ? pin->cpus : env->cpus;
        p->aeron = env->aeron;
        if (!p->aeron.threading_mode[0]) {
                snprintf(p->aeron.threading_mode, sizeof(p->aeron.threading_mode), "DEDICATED");
                p->threading_defaulted = true;
        }
        assign_affinities(env, topo, p);
        if (!p->aeron.idle_sender[0]) {
                snprintf(p->aeron.idle_sender, sizeof(p->aeron.idle_sender), "noop");
                p->idle_sender_defaulted = true;
        }
        if (!p->aeron.idle_receiver[0]) {
                snprintf(p->aeron.idle_receiver, sizeof(p->aeron.idle_receiver), "noop");
                p->idle_receiver_defaulted = true;
        }
        /* a conductor on a core of its own may spin; one that floats must not */
        if (!p->aeron.idle_conductor[0] && p->aeron.aff_conductor >= 0) {
                snprintf(p->aeron.idle_conductor, sizeof(p->aeron.idle_conductor), "spinning");
                p->idle_conductor_defaulted = true;
        }

        /* EAL: lcores = the pinned CPUs, main lcore = the conductor's CPU */
        if (cpuset_format(&p->cpus, cpus, sizeof(cpus)) >= sizeof(cpus))
                return -ENAMETOOLONG;
        main_lcore = p->aeron.aff_conductor >= 0 && cpuset_has(&p->cpus, (unsigned)p->aeron.aff_conductor)
                             ? p->aeron.aff_conductor
                             : cpuset_next(&p->cpus, 0);
        char *ea = p->eal_args;
        const size_t es = sizeof(p->eal_args);
        bool ok = hostfs_fmt_append(ea, es, "-l %s --main-lcore %d --file-prefix spinlane-%s --huge-dir %s", cpus,
                                    main_lcore, env->pod_id, env->huge_dir) == 0;
        for (unsigned i = 0; i < env->n_nics; i++)
                numa = (numa == -2 || numa == env->nics[i].numa) ? env->nics[i].numa : -1;
        if (numa >= 0 && numa < 64) {
                ok = ok && hostfs_fmt_append(ea, es, " --socket-mem ") == 0;
                for (int n = 0; n < numa; n++)
                        ok = ok && hostfs_fmt_append(ea, es, "0,") == 0;
                ok = ok && hostfs_fmt_append(ea, es, "%llu", (unsigned long long)env->memory_mb) == 0;
        } else
                ok = ok && hostfs_fmt_append(ea, es, " -m %llu", (unsigned long long)env->memory_mb) == 0;
        for (unsigned i = 0; i < env->n_nics; i++)
                ok = ok && hostfs_fmt_append(ea, es, " -a %s", env->nics[i].devargs) == 0;
        if (env->eal_extra[0])
                ok = ok && hostfs_fmt_append(ea, es, " %s", env->eal_extra) == 0;
        if (!ok)
                return -ENAMETOOLONG;
        /* words as the transport will split them (no tabs: every part's characters are
         * checked, SPINLANE_EAL_EXTRA_ARGS's included) */
        unsigned words = 0;
        for (const char *w = p->eal_args; *w;) {
                w += strspn(w, " ");
                if (!*w)
                        break;
                words++;
                w += strcspn(w, " ");
        }
        if (words > LPLAN_EAL_MAX_WORDS)
                return -E2BIG;

        r = add_var(p, BYPASS_ENV_EAL_ARGS, p->eal_args, true);
        if (r < 0)
                return r;
        /* which CPUs the driver runs on, and why (the grant or the kubelet's cores) */
        if ((r = add_var(p, BYPASS_ENV_PIN_MODE, lplan_pin_mode_name(p->mode), true)) < 0 ||
            (r = add_var(p, BYPASS_ENV_PINNED_CPUS, cpus, true)) < 0)
                return r;
        if (p->threading_defaulted && (r = add_var(p, "AERON_THREADING_MODE", p->aeron.threading_mode, true)) < 0)
                return r;
        const int affs[3] = { p->aeron.aff_sender, p->aeron.aff_receiver, p->aeron.aff_conductor };
        for (unsigned a = 0; a < 3; a++) {
                if (!p->aff_defaulted[a])
                        continue;
                snprintf(num, sizeof(num), "%d", affs[a]);
                if ((r = add_var(p, aff_names[a], num, true)) < 0)
                        return r;
        }
        if (p->idle_sender_defaulted && (r = add_var(p, "AERON_SENDER_IDLE_STRATEGY", p->aeron.idle_sender, true)) < 0)
                return r;
        if (p->idle_receiver_defaulted &&
            (r = add_var(p, "AERON_RECEIVER_IDLE_STRATEGY", p->aeron.idle_receiver, true)) < 0)
                return r;
        if (p->idle_conductor_defaulted &&
            (r = add_var(p, "AERON_CONDUCTOR_IDLE_STRATEGY", p->aeron.idle_conductor, true)) < 0)
                return r;
        if ((r = plan_bypass(env, p)) < 0)
                return r;
        *ret = *p;
        return 0;
}

static void check_idle(lreport *rep, const char *var, const char *value, bool network)
{
        int k = lplan_idle_never_parks(value);

        if (k == 1)
                return;
        if (strcmp(value, "spin") == 0) {
                lreport_add(rep, VERDICT_FAIL,
                            "%s=spin is not a strategy Aeron's C driver knows (it would look up a symbol \"spin\" and refuse to start)",
                            var);
                lreport_remedy(rep, "Use the idle strategy names \"spinning\" or \"noop\".");
                return;
        }
        if (!network) /* a conductor may idle politely */
                return;
        if (k == 0) {
                lreport_add(rep, VERDICT_FAIL, "%s=%s parks or yields the thread (latency clusters of ~150 us)", var,
                            value);
                lreport_remedy(rep, "Set AERON_SENDER_IDLE_STRATEGY and AERON_RECEIVER_IDLE_STRATEGY to noop or spinning (or leave them unset: the launcher sets noop).");
        } else
                lreport_add(rep, VERDICT_WARN, "%s=%s is a custom strategy; the launcher cannot tell whether it sleeps",
                            var, value);
}

int lplan_check_aeron(const launch_env *env, const lplan *plan, const lplan_topo *topo, verdict_list *vl)
{
        static const char *const names[3] = { "sender", "receiver", "conductor" };
        const lenv_aeron *a = &plan->aeron;
        const int aff[3] = { a->aff_sender, a->aff_receiver, a->aff_conductor };
        lreport rep;
        json_t *ev;

        lreport_init(&rep);
        lreport_env(&rep, env, "aeron-config");
        if (strcmp(a->threading_mode, "DEDICATED") != 0) {
                lreport_add(&rep, VERDICT_FAIL,
                            "AERON_THREADING_MODE=%s: the sender and receiver must each spin on a thread of their own",
                            a->threading_mode);
                lreport_remedy(&rep, "Set AERON_THREADING_MODE=DEDICATED or leave it unset.");
        }
        check_idle(&rep, "AERON_SENDER_IDLE_STRATEGY", a->idle_sender, true);
        check_idle(&rep, "AERON_RECEIVER_IDLE_STRATEGY", a->idle_receiver, true);
        if (a->idle_conductor[0])
                check_idle(&rep, "AERON_CONDUCTOR_IDLE_STRATEGY", a->idle_conductor, false);
        for (unsigned i = 0; i < 3; i++) {
                if (aff[i] < 0) {
                        if (i < 2) {
                                lreport_add(&rep, VERDICT_FAIL, "the %s thread is not pinned (AERON_%s_CPU_AFFINITY unset or -1) and no granted CPU was left for it",
                                            names[i], i == 0 ? "SENDER" : "RECEIVER");
                                lreport_remedy(&rep, "Request at least 2 spinlane.io/isolated-core (3 to give the conductor its own core).");
                        }
                        continue;
                }
                if (!cpuset_has(&plan->cpus, (unsigned)aff[i])) {
                        if (plan->mode == LPLAN_PIN_KUBELET) {
                                char k[256];
                                fmt_list(&plan->cpus, k, sizeof(k));
                                lreport_add(&rep, VERDICT_FAIL,
                                            "the %s is pinned to CPU %d, which is not among the kubelet's exclusive CPUs %s the driver runs on",
                                            names[i], aff[i], k);
                        } else
                                lreport_add(&rep, VERDICT_FAIL, "the %s is pinned to CPU %d, which is not in " ALLOC_ENV_ISOLATED_CPUS,
                                            names[i], aff[i]);
                }
                for (unsigned j = 0; j < i; j++) {
                        if (aff[j] < 0)
                                continue;
                        if (aff[j] == aff[i])
                                lreport_add(&rep, VERDICT_FAIL, "the %s and the %s are both pinned to CPU %d", names[j],
                                            names[i], aff[i]);
                        else if (core_key(topo, aff[j]) == core_key(topo, aff[i]))
                                lreport_add(&rep, VERDICT_FAIL,
                                            "the %s (CPU %d) and the %s (CPU %d) share one physical core", names[j],
                                            aff[j], names[i], aff[i]);
                        else
                                continue;
                        lreport_remedy(&rep, "Pin sender, receiver and conductor to different physical cores among the granted CPUs, or leave the AERON_*_CPU_AFFINITY variables unset.");
                }
        }
        if (a->mtu && (a->mtu > LPLAN_TRANSPORT_MTU_MAX || a->mtu % LPLAN_FRAME_ALIGNMENT)) {
                lreport_add(&rep, VERDICT_FAIL,
                            "AERON_MTU_LENGTH=%llu does not fit one DPDK packet buffer of the transport (at most %d, a multiple of %d)",
                            (unsigned long long)a->mtu, LPLAN_TRANSPORT_MTU_MAX, LPLAN_FRAME_ALIGNMENT);
                lreport_remedy(&rep, "Set AERON_MTU_LENGTH to 1408 or less, or leave it unset.");
        }
        if (a->sender_ports_set && a->receiver_ports_set && a->sender_lo <= a->receiver_hi &&
            a->receiver_lo <= a->sender_hi) {
                lreport_add(&rep, VERDICT_FAIL,
                            "AERON_SENDER_WILDCARD_PORT_RANGE (%u-%u) and AERON_RECEIVER_WILDCARD_PORT_RANGE (%u-%u) overlap",
                            a->sender_lo, a->sender_hi, a->receiver_lo, a->receiver_hi);
                lreport_remedy(&rep, "Give sender and receiver disjoint wildcard port ranges.");
        }
        ev = json_pack("{s:s,s:s,s:s,s:s?,s:i,s:i,s:i}", "threading_mode", a->threading_mode, "sender_idle",
                       a->idle_sender, "receiver_idle", a->idle_receiver, "conductor_idle",
                       a->idle_conductor[0] ? a->idle_conductor : NULL, "sender_cpu", aff[0], "receiver_cpu", aff[1],
                       "conductor_cpu", aff[2]);
        if (ev && a->mtu)
                json_object_set_new(ev, "mtu", json_integer((json_int_t)a->mtu));
        char pass[512], cond[48];
        if (aff[2] >= 0)
                snprintf(cond, sizeof(cond), "conductor CPU %d", aff[2]);
        else
                snprintf(cond, sizeof(cond), "conductor unpinned");
        snprintf(pass, sizeof(pass), "DEDICATED; sender CPU %d, receiver CPU %d, %s, on separate physical cores; sender/receiver idle %s/%s",
                 aff[0], aff[1], cond, a->idle_sender, a->idle_receiver);
        return lreport_emit(&rep, vl, "aeron-config", ev, pass);
}
