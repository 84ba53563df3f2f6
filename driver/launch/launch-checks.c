/* SPDX-License-Identifier: Apache-2.0 */
/* The pod checks: each reads what the container sees under --root through hostfs and
 * ends in exactly one verdict. Outside values are quoted in messages; never logs. */
#include "launch-checks.h"

#include "alloc-env.h"
#include "cleanup.h"
#include "launch-cgroup.h"
#include "launch-report.h"
#include "parse.h"
#include "procparse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct ctx {
        const hostfs *h;
        const launch_env *env;
        lcg_self self;
        lcg_mounts mounts;
        int self_err, mounts_err; /* 0 when read and parsed */
        lplan_topo topo;
        lplan plan;
        bool have_plan;
        int plan_err;    /* lplan_build's error when the grant was valid but no plan came */
        lplan_pin pin;   /* the CPUs chosen for the driver (grant or the kubelet's) */
        bool have_pin;
        cpuset isolated; /* /sys/devices/system/cpu/isolated */
        bool have_isolated;
        cpuset pinned;   /* the chosen CPUs and every pinned agent */
        cpuset allowed;  /* what this process may run on (cpuset check) */
        bool have_allowed;
        json_t *allowed_ev; /* the evidence load_allowed() gathered, for the cpuset verdict */
        cpuset online;
        bool have_online;
} ctx;

static const char REMEDY_QUOTA[] =
        "Run the pod in the Guaranteed QoS class with integer CPU requests equal to the limits, on nodes whose kubelet uses cpuManagerPolicy: static; on Kubernetes >= 1.33 the DisableCPUQuotaWithExclusiveCPUs behaviour (on by default) then removes the quota. On older clusters set the kubelet's cpuCFSQuota: false on the node pool.";

/* The container's cpuset is the node's shared pool (every online CPU, or CPUs that are
 * not isolated): the kubelet's CPU manager gave it no exclusive CPUs (it is off, or the
 * pod is not Guaranteed with integer CPUs), so DisableCPUQuotaWithExclusiveCPUs cannot
 * lift the quota. */
static const char REMEDY_QUOTA_SHARED[] =
        "This container runs on the node's shared CPU pool, so the kubelet gave it no exclusive CPUs (cpuManagerPolicy: none, or a pod that is not Guaranteed with integer CPUs) and DisableCPUQuotaWithExclusiveCPUs does not apply: with the CPU manager off, set the kubelet's cpuCFSQuota: false on the node pool; or run the kubelet with cpuManagerPolicy: static and make the pod Guaranteed with integer CPU requests equal to the limits.";

static bool on_shared_pool(const ctx *c);

/* ---- small readers ---- */

static int read_small(const hostfs *h, const char *path, char *buf, size_t size)
{
        return hostfs_read(h, path, buf, size, NULL);
}

static int read_cpulist(const hostfs *h, const char *path, cpuset *ret)
{
        char buf[8192];
        size_t len;
        int r = hostfs_read(h, path, buf, sizeof(buf), &len);
        if (r < 0)
                return r;
        return cpuset_parse(buf, len, ret);
}

static void fmt_set(const cpuset *s, char *buf, size_t size)
{
        if (cpuset_format(s, buf, size) >= size && size > 4)
                memcpy(buf + size - 4, "...", 4);
}

static void load_cgroup_view(ctx *c)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = hostfs_read_alloc(c->h, "/proc/self/cgroup", 64 * 1024, &text, &len);
        c->self_err = r < 0 ? r : lcg_parse_self(text, len, &c->self);
        free(TAKE_PTR(text));
        r = hostfs_read_alloc(c->h, "/proc/self/mountinfo", HOSTFS_MAX_FILE, &text, &len);
        c->mounts_err = r < 0 ? r : lcg_parse_mountinfo(text, len, &c->mounts);
}

/* Where the cgroup of a controller lives; on failure adds a problem naming the file. */
static int cgroup_dir(ctx *c, lreport *rep, const char *controller, verdict_level level, char *dir,
                      size_t size, char *mp, size_t mpsize, bool *v2)
{
        int r;

        if (c->self_err < 0) {
                lreport_add(rep, level, "cannot read /proc/self/cgroup: %s", strerror(-c->self_err));
                return -EIO; /* reported; not -ENOENT, which means "no such controller" */
        }
        if (c->mounts_err < 0) {
                lreport_add(rep, level, "cannot read /proc/self/mountinfo: %s", strerror(-c->mounts_err));
                return -EIO;
        }
        r = lcg_resolve(&c->self, &c->mounts, controller, dir, size, mp, mpsize, v2);
        if (r == -ENOENT)
                return r; /* callers decide: no such controller in this container */
        if (r < 0) {
                lreport_add(rep, level,
                            "the %s cgroup of this process (from /proc/self/cgroup) is not reachable through any mount in /proc/self/mountinfo: %s",
                            controller, strerror(-r));
                return r;
        }
        return 0;
}

/* ---- allocation-env ---- */

static int check_allocation(ctx *c, verdict_list *vl)
{
        const launch_env *env = c->env;
        char cpus[256], msg[512];
        lreport rep;
        json_t *ev, *nics;

        lreport_init(&rep);
        lreport_env(&rep, env, "allocation-env");
        if (env->n_errs_dropped)
                lreport_add(&rep, VERDICT_FAIL, "%u more problems with the environment were not listed", env->n_errs_dropped);
        /* a valid grant the driver's environment cannot be computed from: say why here
         * (otherwise only aeron-config's skip and a bare refusal to start would show) */
        if (env->have_cpus && !c->have_plan) {
                if (c->plan_err == -E2BIG)
                        lreport_add(&rep, VERDICT_FAIL,
                                    BYPASS_ENV_EAL_ARGS " would hold more than %d words, more than the transport accepts (shorten " LAUNCH_ENV_EAL_EXTRA_ARGS ")",
                                    LPLAN_EAL_MAX_WORDS);
                else if (c->plan_err == -ENAMETOOLONG)
                        lreport_add(&rep, VERDICT_FAIL,
                                    BYPASS_ENV_EAL_ARGS " would be longer than %zu characters (the pinned CPU list, the NICs' devargs and " LAUNCH_ENV_EAL_EXTRA_ARGS ")",
                                    sizeof(c->plan.eal_args) - 1);
                else
                        lreport_add(&rep, VERDICT_FAIL, "the driver's environment cannot be computed: %s",
                                    strerror(-c->plan_err));
        }
        fmt_set(&env->cpus, cpus, sizeof(cpus));
        nics = json_array();
        for (unsigned i = 0; i < env->n_nics && nics; i++)
                json_array_append_new(nics, json_pack("{s:s,s:s,s:s,s:i}", "pci", env->nics[i].pci, "kind",
                                                      lenv_kind_name(env->nics[i].kind), "driver",
                                                      lenv_driver_name(env->nics[i].driver), "numa_node",
                                                      env->nics[i].numa));
        ev = json_pack("{s:s,s:o*,s:s}", "cpus", env->have_cpus ? cpus : "", "nics", nics, "pod_id", env->pod_id);
        snprintf(msg, sizeof(msg), "granted CPUs %s and %u NIC%s", cpus, env->n_nics, env->n_nics == 1 ? "" : "s");
        return lreport_emit(&rep, vl, "allocation-env", ev, msg);
}

/* ---- cpu-quota ---- */

static bool on_shared_pool(const ctx *c)
{
        if (!c->have_allowed)
                return false;
        if (c->have_online && cpuset_subset(&c->online, &c->allowed))
                return true;
        return c->have_isolated && !cpuset_subset(&c->allowed, &c->isolated);
}

static void parent_dir(char *d)
{
        char *s = strrchr(d, '/');
        if (s && s != d)
                *s = '\0';
        else
                strcpy(d, "/");
}

/* The quota of one cgroup dir: 1 quota (ret_q, ret_p, ret_text), 0 none, -ENOENT the
 * files are absent, other negative: unreadable/garbled. */
static int read_quota(ctx *c, const char *dir, bool v2, uint64_t *ret_q, uint64_t *ret_p, char *ret_text,
                      size_t tsize, char *ret_file, size_t fsize)
{
        char path[PATH_MAX], buf[128];
        uint64_t q, p;
        int r;

        if (v2) {
                snprintf(ret_file, fsize, "%s/cpu.max", dir);
                if (hostfs_fmt(path, sizeof(path), "%s/cpu.max", dir) < 0)
                        return -ENAMETOOLONG;
                r = read_small(c->h, path, buf, sizeof(buf));
                if (r < 0)
                        return r;
                parse_strip(buf);
                r = lcg_parse_cpu_max(buf, &q, &p);
                if (r < 0)
                        return -EBADMSG;
                snprintf(ret_text, tsize, "cpu.max \"%s\"", buf);
        } else {
                char pbuf[64];
                snprintf(ret_file, fsize, "%s/cpu.cfs_quota_us", dir);
                if (hostfs_fmt(path, sizeof(path), "%s/cpu.cfs_quota_us", dir) < 0)
                        return -ENAMETOOLONG;
                r = read_small(c->h, path, buf, sizeof(buf));
                if (r < 0)
                        return r;
                parse_strip(buf);
                if (lcg_parse_v1_quota(buf, &q) < 0)
                        return -EBADMSG;
                snprintf(ret_file, fsize, "%s/cpu.cfs_period_us", dir);
                if (hostfs_fmt(path, sizeof(path), "%s/cpu.cfs_period_us", dir) < 0)
                        return -ENAMETOOLONG;
                r = read_small(c->h, path, pbuf, sizeof(pbuf));
                if (r < 0)
                        return r;
                parse_strip(pbuf);
                if (parse_u64(pbuf, UINT64_MAX - 1, &p) < 0 || p == 0)
                        return -EBADMSG;
                snprintf(ret_text, tsize, "cpu.cfs_quota_us %s, cpu.cfs_period_us %s", buf, pbuf);
        }
        if (q == LCG_NO_QUOTA)
                return 0;
        *ret_q = q;
        *ret_p = p;
        return 1;
}

static bool v2_lacks_cpu_controller(ctx *c, const char *dir)
{
        char path[PATH_MAX], buf[512];

        if (hostfs_fmt(path, sizeof(path), "%s/cgroup.controllers", dir) < 0 ||
            read_small(c->h, path, buf, sizeof(buf)) < 0)
                return false;
        parse_strip(buf);
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
                if (strcmp(tok, "cpu") == 0)
                        return false;
        return true;
}

static int check_cpu_quota(ctx *c, verdict_list *vl)
{
        char dir[LCG_PATH_MAX], mp[LCG_PATH_MAX], d[LCG_PATH_MAX], text[320], file[LCG_PATH_MAX + 32];
        lcg_cpu_stat st = { 0 };
        bool v2 = false, have_stat = false;
        lreport rep;
        json_t *ev;
        int r;

        lreport_init(&rep);
        r = cgroup_dir(c, &rep, "cpu", VERDICT_FAIL, dir, sizeof(dir), mp, sizeof(mp), &v2);
        if (r == -ENOENT) {
                lreport_add(&rep, VERDICT_FAIL,
                            "no cgroup hierarchy carrying the cpu controller is mounted in this container (/proc/self/mountinfo), so the absence of a CFS quota cannot be proven");
                lreport_remedy(&rep, "Keep the container runtime's default /sys/fs/cgroup mount.");
        }
        if (r < 0)
                return lreport_emit(&rep, vl, "cpu-quota", json_pack("{s:s}", "controller", "cpu"), "");

        ev = json_pack("{s:s,s:s}", "cgroup", v2 ? "v2" : "v1", "dir", dir);
        {
                char path[PATH_MAX];
                _cleanup_free_ char *buf = NULL;
                size_t len;
                if (hostfs_fmt(path, sizeof(path), "%s/cpu.stat", dir) == 0 &&
                    hostfs_read_alloc(c->h, path, 16 * 1024, &buf, &len) == 0 &&
                    lcg_parse_cpu_stat(buf, len, &st) == 0)
                        have_stat = true;
        }
        if (have_stat && ev) {
                json_object_set_new(ev, "nr_periods", json_integer((json_int_t)st.nr_periods));
                json_object_set_new(ev, "nr_throttled", json_integer((json_int_t)st.nr_throttled));
                json_object_set_new(ev, "throttled_usec", json_integer((json_int_t)st.throttled_usec));
        }

        /* own cgroup, then every ancestor visible below the mount point */
        snprintf(d, sizeof(d), "%s", dir);
        for (bool own = true;; own = false) {
                uint64_t q = 0, p = 0;

                r = read_quota(c, d, v2, &q, &p, text, sizeof(text), file, sizeof(file));
                if (r == 1) {
                        char thr[160] = "";
                        if (have_stat && st.nr_periods)
                                snprintf(thr, sizeof(thr), "; throttled in %llu of %llu periods (%.1f%%, %llu us)",
                                         (unsigned long long)st.nr_throttled, (unsigned long long)st.nr_periods,
                                         100.0 * (double)st.nr_throttled / (double)st.nr_periods,
                                         (unsigned long long)st.throttled_usec);
                        if (own)
                                lreport_add(&rep, VERDICT_FAIL, "container has a CFS quota of %.1f CPUs (%s)%s",
                                            (double)q / (double)p, text, thr);
                        else
                                lreport_add(&rep, VERDICT_FAIL, "parent cgroup %s has a CFS quota of %.1f CPUs (%s)%s", d,
                                            (double)q / (double)p, text, thr);
                        lreport_remedy(&rep, on_shared_pool(c) ? REMEDY_QUOTA_SHARED : REMEDY_QUOTA);
                        if (ev && own) {
                                json_object_set_new(ev, "quota_us", json_integer((json_int_t)q));
                                json_object_set_new(ev, "period_us", json_integer((json_int_t)p));
                        }
                } else if (r == -ENOENT) {
                        /* v2: no cpu.max where the cpu controller is not enabled, nor in
                         * the root cgroup (the top of what is mounted here) */
                        if (own && !(v2 && (v2_lacks_cpu_controller(c, d) || strcmp(d, mp) == 0)))
                                lreport_add(&rep, VERDICT_FAIL, "cannot read %s: %s", file, strerror(-r));
                } else if (r < 0) {
                        lreport_add(&rep, VERDICT_FAIL, "cannot read %s: %s", file,
                                    r == -EBADMSG ? "unexpected content" : strerror(-r));
                }
                if (strcmp(d, mp) == 0 || strlen(d) <= strlen(mp))
                        break;
                parent_dir(d);
        }
        char pass[LCG_PATH_MAX + 64];
        snprintf(pass, sizeof(pass), "no CFS quota on cgroup %s or its ancestors (%s)", dir, v2 ? "v2" : "v1");
        return lreport_emit(&rep, vl, "cpu-quota", ev, pass);
}

/* ---- topology, smt-siblings ---- */

static const char *who_pins(ctx *c, int cpu)
{
        bool kubelet = c->have_pin && c->pin.mode == LPLAN_PIN_KUBELET;
        if (kubelet && cpuset_has(&c->pin.cpus, (unsigned)cpu))
                return "the kubelet's exclusive cpuset";
        if (!kubelet && cpuset_has(&c->env->cpus, (unsigned)cpu))
                return ALLOC_ENV_ISOLATED_CPUS;
        if (c->have_plan) {
                if (c->plan.aeron.aff_sender == cpu)
                        return "AERON_SENDER_CPU_AFFINITY";
                if (c->plan.aeron.aff_receiver == cpu)
                        return "AERON_RECEIVER_CPU_AFFINITY";
                if (c->plan.aeron.aff_conductor == cpu)
                        return "AERON_CONDUCTOR_CPU_AFFINITY";
        }
        return "an AERON_*_CPU_AFFINITY variable";
}

/* Reads thread_siblings_list of every CPU in set into the topology, recording the
 * core of each sibling listed too (so a sibling outside set is known as one). */
static void load_topology(ctx *c, const cpuset *set)
{
        CPUSET_FOREACH(cpu, set) {
                char path[128];
                cpuset sib;
                if (c->topo.core_of[cpu] >= 0)
                        continue; /* a sibling read before */
                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
                if (read_cpulist(c->h, path, &sib) < 0 || !cpuset_has(&sib, (unsigned)cpu))
                        continue;
                int core = cpuset_next(&sib, 0);
                CPUSET_FOREACH(s, &sib)
                        if (c->topo.core_of[s] < 0)
                                c->topo.core_of[s] = core;
        }
}

static int check_smt(ctx *c, verdict_list *vl)
{
        const cpuset *granted = c->have_pin ? &c->pin.cpus : &c->env->cpus;
        lreport rep;
        json_t *ev, *shared = json_array();
        char buf[256];
        bool sibling_problem = false;

        lreport_init(&rep);
        if (!c->env->have_cpus) {
                json_decref(shared);
                return verdict_add(vl, "smt-siblings", VERDICT_SKIP, NULL, NULL, "no granted CPUs to check (see allocation-env)");
        }
        CPUSET_FOREACH(cpu, &c->pinned) {
                char path[128];
                cpuset sib;
                int r;

                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
                if (hostfs_exists(c->h, path) <= 0) {
                        lreport_add(&rep, VERDICT_FAIL, "CPU %d (from %s) does not exist on this node", cpu, who_pins(c, cpu));
                        lreport_remedy(&rep, "The CPU ids must be the node's; check the device plugin's " ALLOC_ENV_ISOLATED_CPUS " and the pod's AERON_*_CPU_AFFINITY.");
                        continue;
                }
                if (c->have_online && !cpuset_has(&c->online, (unsigned)cpu)) {
                        lreport_add(&rep, VERDICT_FAIL, "CPU %d (from %s) is offline", cpu, who_pins(c, cpu));
                        continue;
                }
                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
                r = read_cpulist(c->h, path, &sib);
                if (r < 0) {
                        lreport_add(&rep, VERDICT_FAIL, "cannot read %s: %s", path,
                                    r == -EINVAL ? "not a CPU list" : strerror(-r));
                        continue;
                }
                CPUSET_FOREACH(s, &sib) {
                        if (s == cpu || cpuset_has(granted, (unsigned)s))
                                continue;
                        if (c->have_online && !cpuset_has(&c->online, (unsigned)s))
                                continue; /* an offline sibling runs nothing */
                        bool in_cpuset = c->have_allowed && cpuset_has(&c->allowed, (unsigned)s);
                        sibling_problem = true;
                        lreport_add(&rep, VERDICT_FAIL,
                                    "CPU %d's SMT sibling %d is not granted to this pod %s", cpu, s,
                                    in_cpuset ? "but is in this container's cpuset (the driver's own other threads or the shared pool run there)"
                                              : "and runs on the node's shared pool (other pods' work)");
                        json_array_append_new(shared, json_pack("{s:i,s:i,s:b}", "cpu", cpu, "sibling", s, "in_cpuset", in_cpuset));
                }
        }
        if (sibling_problem)
                lreport_remedy(&rep, "Grant whole physical cores: request spinlane.io/isolated-core or claim isolated-core.spinlane.io devices (every SMT sibling of a core), run the kubelet with cpuManagerPolicyOptions full-pcpus-only=true, or take the siblings offline.");
        fmt_set(&c->pinned, buf, sizeof(buf));
        ev = json_pack("{s:s,s:o}", "pinned", buf, "unshared_siblings_violations", shared);
        char pass[512];
        snprintf(pass, sizeof(pass), "every SMT sibling of CPUs %s is granted to this pod or offline", buf);
        return lreport_emit(&rep, vl, "smt-siblings", ev, pass);
}

/* ---- cpuset ---- */

static void load_allowed(ctx *c, lreport *rep, json_t *ev)
{
        char buf[8192], dir[LCG_PATH_MAX], path[PATH_MAX], list[256];
        bool v2;
        cpuset s;
        int r;

        /* Cpus_allowed_list: what this process (and the threads it starts) may run on */
        r = read_small(c->h, "/proc/self/status", buf, sizeof(buf));
        if (r == -EFBIG) {
                _cleanup_free_ char *big = NULL;
                size_t len;
                r = hostfs_read_alloc(c->h, "/proc/self/status", 64 * 1024, &big, &len);
                if (r == 0)
                        snprintf(buf, sizeof(buf), "%s", strstr(big, "Cpus_allowed_list:") ? strstr(big, "Cpus_allowed_list:") : "");
        }
        if (r < 0) {
                lreport_add(rep, VERDICT_FAIL, "cannot read /proc/self/status: %s", strerror(-r));
                return;
        }
        char *line = strstr(buf, "Cpus_allowed_list:");
        if (!line) {
                lreport_add(rep, VERDICT_FAIL, "/proc/self/status has no Cpus_allowed_list");
                return;
        }
        line += strlen("Cpus_allowed_list:");
        line += strspn(line, " \t");
        size_t n = strcspn(line, "\n");
        if (cpuset_parse(line, n, &s) < 0) {
                lreport_add(rep, VERDICT_FAIL, "the Cpus_allowed_list of /proc/self/status is not a CPU list");
                return;
        }
        c->allowed = s;
        c->have_allowed = true;
        fmt_set(&s, list, sizeof(list));
        json_object_set_new(ev, "cpus_allowed_list", json_string(list));

        /* and the cgroup's effective cpuset, when this container can see it */
        lreport tmp;
        lreport_init(&tmp);
        if (cgroup_dir(c, &tmp, "cpuset", VERDICT_WARN, dir, sizeof(dir), NULL, 0, &v2) < 0)
                return;
        const char *names[2] = { v2 ? "cpuset.cpus.effective" : "cpuset.effective_cpus", v2 ? NULL : "cpuset.cpus" };
        for (unsigned i = 0; i < 2 && names[i]; i++) {
                if (hostfs_fmt(path, sizeof(path), "%s/%s", dir, names[i]) < 0)
                        return;
                if (read_cpulist(c->h, path, &s) == 0 && !cpuset_empty(&s)) {
                        cpuset_and(&c->allowed, &c->allowed, &s);
                        fmt_set(&s, list, sizeof(list));
                        json_object_set_new(ev, "cgroup_cpuset", json_string(list));
                        json_object_set_new(ev, "cgroup_cpuset_file", json_string(path));
                        return;
                }
        }
}

static int check_cpuset(ctx *c, verdict_list *vl)
{
        char miss[256], allowed[256], list[256];
        lreport rep;
        json_t *ev = json_object();
        cpuset out;

        lreport_init(&rep);
        if (!c->env->have_cpus) {
                json_decref(ev);
                return verdict_add(vl, "cpuset", VERDICT_SKIP, NULL, NULL, "no granted CPUs to check (see allocation-env)");
        }
        if (!c->have_allowed) {
                load_allowed(c, &rep, ev);
                if (!c->have_allowed)
                        return lreport_emit(&rep, vl, "cpuset", ev, "");
        } else {
                /* loaded before the SMT check; re-add the evidence */
                fmt_set(&c->allowed, allowed, sizeof(allowed));
                json_object_set_new(ev, "allowed", json_string(allowed));
                if (ev && c->allowed_ev)
                        json_object_update(ev, c->allowed_ev);
        }
        fmt_set(&c->allowed, allowed, sizeof(allowed));
        if (ev && c->have_pin) {
                json_object_set_new(ev, "mode", json_string(lplan_pin_mode_name(c->pin.mode)));
                fmt_set(&c->env->cpus, list, sizeof(list));
                json_object_set_new(ev, "granted", json_string(list));
                fmt_set(&c->pin.cpus, list, sizeof(list));
                json_object_set_new(ev, "pinned", json_string(list));
                json_object_set_new(ev, "reason", json_string(c->pin.reason));
        }
        if (c->have_pin && c->pin.mode == LPLAN_PIN_MISMATCH) {
                lreport_add(&rep, VERDICT_FAIL, "%s", c->pin.reason);
                /* a kubelet cpuset of exclusive cores, only too small: the CPU request
                 * that fits is the count of the granted CPUs (all their siblings) */
                if (!cpuset_empty(&c->allowed) && c->pin.cores_allowed < c->pin.cores_granted &&
                    c->have_isolated && cpuset_subset(&c->allowed, &c->isolated)) {
                        unsigned ncpu = cpuset_count(&c->env->cpus), ng = c->pin.cores_granted;
                        char fit[320];
                        snprintf(fit, sizeof(fit),
                                 "Set the container's requests.cpu and limits.cpu to \"%u\": the %u CPUs of the %u granted core%s (cores x SMT threads), so the static CPU manager gives as many whole cores as spinlane granted.",
                                 ncpu, ncpu, ng, ng == 1 ? "" : "s");
                        lreport_remedy(&rep, fit);
                }
                lreport_remedy(&rep, "Either run the node pool with the static CPU manager (cpuManagerPolicy: static, full-pcpus-only, reservedSystemCPUs = the CPUs outside isolcpus) and request whole cores (integer CPUs = isolated-core x SMT threads), or with cpuManagerPolicy: none and cpuCFSQuota: false so the container's cpuset is the shared set that holds the grant.");
        }
        /* every other pinned CPU (the Aeron affinities) must be inside too */
        cpuset_andnot(&out, &c->pinned, &c->allowed);
        if (c->have_pin && c->pin.mode == LPLAN_PIN_MISMATCH)
                cpuset_andnot(&out, &out, &c->pin.cpus); /* already said */
        if (!cpuset_empty(&out)) {
                fmt_set(&out, miss, sizeof(miss));
                CPUSET_FOREACH(cpu, &out)
                        lreport_add(&rep, VERDICT_FAIL, "CPU %d (from %s) is outside this container's cpuset %s", cpu,
                                    who_pins(c, cpu), allowed);
                lreport_remedy(&rep, "Pin Aeron agents only to CPUs of the container's cpuset (or leave the AERON_*_CPU_AFFINITY variables unset).");
        }
        char pass[1200];
        snprintf(pass, sizeof(pass), "%s: %s", lplan_pin_mode_name(c->have_pin ? c->pin.mode : LPLAN_PIN_SPINLANE),
                 c->have_pin ? c->pin.reason : "pinned CPUs are inside this container's cpuset");
        return lreport_emit(&rep, vl, "cpuset", ev, pass);
}

/* ---- isolated-cpus ---- */

static int check_isolated(ctx *c, verdict_list *vl)
{
        char list[256], notiso[256], nohz[256] = "";
        cpuset iso, out, nz;
        lreport rep;
        int r;

        lreport_init(&rep);
        if (!c->env->have_cpus)
                return verdict_add(vl, "isolated-cpus", VERDICT_SKIP, NULL, NULL, "no granted CPUs to check (see allocation-env)");
        r = read_cpulist(c->h, "/sys/devices/system/cpu/isolated", &iso);
        if (r < 0)
                return verdict_add(vl, "isolated-cpus", VERDICT_WARN, NULL, NULL,
                                   "cannot read /sys/devices/system/cpu/isolated (%s): isolation of the pinned CPUs is unknown",
                                   r == -EINVAL ? "not a CPU list" : strerror(-r));
        if (read_cpulist(c->h, "/sys/devices/system/cpu/nohz_full", &nz) == 0)
                fmt_set(&nz, nohz, sizeof(nohz));
        fmt_set(&iso, list, sizeof(list));
        cpuset_andnot(&out, &c->pinned, &iso);
        if (!cpuset_empty(&out)) {
                fmt_set(&out, notiso, sizeof(notiso));
                lreport_add(&rep, VERDICT_WARN, "CPUs %s are not isolated on the host (isolated: \"%s\"): kernel threads and IRQs may run there",
                            notiso, list);
                lreport_remedy(&rep, "Boot the node pool with isolcpus= (and nohz_full=) covering the spinlane core pool; the spinlane agent only advertises isolated cores.");
        }
        char pass[512];
        snprintf(pass, sizeof(pass), "pinned CPUs are isolated on the host (isolated: %s)", list);
        return lreport_emit(&rep, vl, "isolated-cpus", json_pack("{s:s,s:s}", "isolated", list, "nohz_full", nohz), pass);
}

/* ---- hugepages ---- */

/* The kubelet's hugepage resource size name: "2MB" as in hugepages-2Mi's node label. */
static void size_name(uint64_t kb, char *buf, size_t size)
{
        format_size_kb(kb, (size_units){ "KB", "MB", "GB" }, buf, size);
}

static int default_pagesize_kb(ctx *c, uint64_t *ret)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        uint64_t v;
        int r = hostfs_read_alloc(c->h, "/proc/meminfo", 64 * 1024, &buf, &len);
        if (r < 0)
                return r;
        r = procparse_meminfo(buf, len, "Hugepagesize", &v); /* the agent's parser, common/ */
        if (r == 0)
                return -ENOENT;
        if (r < 0 || v == 0 || v > UINT64_MAX / 1024)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int check_hugepages(ctx *c, verdict_list *vl)
{
        const launch_env *env = c->env;
        const lcg_mount *mnt = NULL;
        uint64_t kb = 0, need, free_pages = 0, room = UINT64_MAX;
        char path[PATH_MAX], sname[32], dir[LCG_PATH_MAX];
        lreport rep;
        json_t *ev = json_object();
        bool v2;
        int r;

        lreport_init(&rep);
        lreport_env(&rep, env, "hugepages");
        if (c->mounts_err < 0) {
                lreport_add(&rep, VERDICT_FAIL, "cannot read /proc/self/mountinfo: %s", strerror(-c->mounts_err));
                return lreport_emit(&rep, vl, "hugepages", ev, "");
        }
        for (unsigned i = 0; i < c->mounts.n && !mnt; i++)
                if (c->mounts.m[i].type == LCG_FS_HUGETLBFS && strcmp(c->mounts.m[i].point, env->huge_dir) == 0)
                        mnt = &c->mounts.m[i];
        json_object_set_new(ev, "huge_dir", json_string(env->huge_dir));
        json_object_set_new(ev, "memory_mb", json_integer((json_int_t)env->memory_mb));
        if (!mnt) {
                lreport_add(&rep, VERDICT_FAIL, "no hugetlbfs is mounted at %s (" ALLOC_ENV_HUGEPAGE_DIR ") in this container",
                            env->huge_dir);
                lreport_remedy(&rep, "Mount an emptyDir with medium: HugePages-2Mi at " ALLOC_ENV_HUGEPAGE_DIR " (default /dev/hugepages) and request hugepages-2Mi (requests == limits): the pod's own hugetlbfs (the agent's default, hugetlbfs.pod_mount false); only with hugetlbfs.pod_mount true does the device plugin mount the node's shared one with a spinlane.io/dpdk-nic.");
                return lreport_emit(&rep, vl, "hugepages", ev, "");
        }
        r = lcg_hugetlbfs_pagesize_kb(mnt->super, &kb);
        if (r == -ENOENT)
                r = default_pagesize_kb(c, &kb);
        if (r < 0) {
                lreport_add(&rep, VERDICT_FAIL, "cannot tell the page size of the hugetlbfs at %s (mount options \"%s\", /proc/meminfo)",
                            env->huge_dir, mnt->super);
                return lreport_emit(&rep, vl, "hugepages", ev, "");
        }
        need = (env->memory_mb * 1024 + kb - 1) / kb;
        size_name(kb, sname, sizeof(sname));
        json_object_set_new(ev, "pagesize_kb", json_integer((json_int_t)kb));
        json_object_set_new(ev, "pages_needed", json_integer((json_int_t)need));

        snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/free_hugepages", (unsigned long long)kb);
        r = hostfs_read_u64(c->h, path, UINT64_MAX, &free_pages);
        if (r < 0) {
                lreport_add(&rep, VERDICT_FAIL, "cannot read %s: %s", path, strerror(-r));
                return lreport_emit(&rep, vl, "hugepages", ev, "");
        }
        json_object_set_new(ev, "node_free_pages", json_integer((json_int_t)free_pages));

        lreport tmp;
        lreport_init(&tmp);
        r = cgroup_dir(c, &tmp, "hugetlb", VERDICT_WARN, dir, sizeof(dir), NULL, 0, &v2);
        if (r == 0) {
                char lim[PATH_MAX], use[PATH_MAX], buf[64];
                uint64_t l, u = 0;
                hostfs_fmt(lim, sizeof(lim), v2 ? "%s/hugetlb.%s.max" : "%s/hugetlb.%s.limit_in_bytes", dir, sname);
                hostfs_fmt(use, sizeof(use), v2 ? "%s/hugetlb.%s.current" : "%s/hugetlb.%s.usage_in_bytes", dir, sname);
                if (read_small(c->h, lim, buf, sizeof(buf)) == 0) {
                        if (lcg_parse_limit(buf, &l) < 0) {
                                lreport_add(&rep, VERDICT_FAIL, "cannot read %s: unexpected content", lim);
                        } else {
                                if (read_small(c->h, use, buf, sizeof(buf)) == 0)
                                        (void)lcg_parse_limit(buf, &u);
                                if (l != UINT64_MAX && l < (UINT64_MAX >> 2)) {
                                        room = (l > u ? l - u : 0) / (kb * 1024);
                                        json_object_set_new(ev, "cgroup_limit_bytes", json_integer((json_int_t)l));
                                        json_object_set_new(ev, "cgroup_usage_bytes", json_integer((json_int_t)u));
                                }
                                json_object_set_new(ev, "cgroup_limit_file", json_string(lim));
                        }
                }
        }
        uint64_t avail = free_pages < room ? free_pages : room;
        if (avail < need) {
                if (room < free_pages)
                        lreport_add(&rep, VERDICT_FAIL,
                                    "the container's hugetlb cgroup leaves %llu free %s pages, DPDK needs %llu (" LAUNCH_ENV_DPDK_MEMORY_MB "=%llu)",
                                    (unsigned long long)room, sname, (unsigned long long)need,
                                    (unsigned long long)env->memory_mb);
                else
                        lreport_add(&rep, VERDICT_FAIL, "the node has %llu free %s pages, DPDK needs %llu (" LAUNCH_ENV_DPDK_MEMORY_MB "=%llu)",
                                    (unsigned long long)free_pages, sname, (unsigned long long)need,
                                    (unsigned long long)env->memory_mb);
                lreport_remedy(&rep, "Request at least " LAUNCH_ENV_DPDK_MEMORY_MB " of hugepages-2Mi (requests == limits), or lower " LAUNCH_ENV_DPDK_MEMORY_MB ".");
        }
        char pass[512];
        snprintf(pass, sizeof(pass), "hugetlbfs at %s with %llu free %s pages for %llu MiB (%llu pages)", env->huge_dir,
                 (unsigned long long)avail, sname, (unsigned long long)env->memory_mb, (unsigned long long)need);
        return lreport_emit(&rep, vl, "hugepages", ev, pass);
}

/* ---- devices ---- */

static int open_rw(const hostfs *h, const char *path)
{
        _cleanup_close_ int fd = hostfs_open_flags(h, path, O_RDWR | O_NONBLOCK | O_NOCTTY, 0);
        return fd < 0 ? fd : 0;
}

/* vfio's enable_unsafe_noiommu_mode as the container sees it (sysfs is the host's):
 * DPDK itself reads this file to choose physical addresses (IOVA as PA). */
static bool vfio_noiommu_mode(const hostfs *h)
{
        char v[8];
        return hostfs_read_str(h, "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode", v, sizeof(v)) >= 0 &&
               (v[0] == 'Y' || v[0] == 'y' || v[0] == '1');
}

/* Whether the VFIO group behind a container path /dev/vfio/<N> is a no-IOMMU one
 * (/sys/kernel/iommu_groups/<N>/name "vfio-noiommu"); unknown (no such file): mode. */
static bool vfio_group_noiommu(const hostfs *h, const char *dev, bool mode)
{
        char path[96], name[32];
        int g;

        if (parse_int(dev + strlen("/dev/vfio/"), 0, 1 << 20, &g) < 0 ||
            hostfs_fmt(path, sizeof(path), "/sys/kernel/iommu_groups/%d/name", g) < 0 ||
            hostfs_read_str(h, path, name, sizeof(name)) < 0)
                return mode;
        return strcmp(parse_strip(name), "vfio-noiommu") == 0;
}

static bool has_cap(uint64_t caps, unsigned cap)
{
        return (caps >> cap) & 1;
}

/* A MANA NIC's netdev as DPDK's net_mana looks for it: net_mana finds the port's MAC by
 * reading <ibdev>/device/net/<if>/dev_port and address, i.e. the PCI device's net/
 * directory in sysfs. sysfs lists a device's netdevs only in the network namespace that
 * holds them: in a container with its own netns (no hostNetwork, no host /sys) the
 * directory is empty. FAIL naming the path when no <if>/address there is visible (or, the
 * MAC granted, none equals it). */
static void check_mana_netdev(ctx *c, const lenv_nic *nic, lreport *rep)
{
        char dir[96], path[PATH_MAX], addr[64], seen[256] = "";
        bool any = false, match = false;
        DIR *d = NULL;
        struct dirent *e;
        int r;

        snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/net", nic->pci);
        r = hostfs_opendir(c->h, dir, &d);
        if (r == 0) {
                while ((e = readdir(d))) {
                        if (e->d_name[0] == '.')
                                continue;
                        if (hostfs_fmt(path, sizeof(path), "%s/%s/address", dir, e->d_name) < 0 ||
                            hostfs_read_str(c->h, path, addr, sizeof(addr)) < 0)
                                continue;
                        any = true;
                        (void)hostfs_fmt_append(seen, sizeof(seen), "%s%s %s", *seen ? ", " : "", e->d_name, addr);
                        if (!nic->mac[0] || strcasecmp(addr, nic->mac) == 0)
                                match = true;
                }
                closedir(d);
        }
        if (!any)
                lreport_add(rep, VERDICT_FAIL,
                            "NIC %s is MANA but no %s/<if>/address is visible in this container (%s: %s): DPDK's net_mana "
                            "finds the port's MAC there, and sysfs shows a device's netdevs only in the network namespace "
                            "that holds them",
                            nic->pci, dir, dir, r < 0 ? strerror(-r) : "no netdev listed");
        else if (!match)
                lreport_add(rep, VERDICT_FAIL,
                            "NIC %s is MANA but no %s/<if>/address equals its MAC %s (seen: %s): net_mana cannot find the "
                            "port",
                            nic->pci, dir, nic->mac, seen);
        if (!any || !match)
                lreport_remedy(rep, "Give the driver container the host's view of the devices in sysfs: mount the host's "
                                    "/sys/devices read-only at /sys/devices (the chart's driver pods do so on MANA), or run "
                                    "the pod with hostNetwork.");
}

static int check_devices(ctx *c, verdict_list *vl)
{
        const launch_env *env = c->env;
        bool pins = false;      /* a VFIO NIC with an IOMMU: type1 pins the DPDK memory */
        bool iova_pa = false;   /* DPDK must use physical addresses (no-IOMMU VFIO, igb_uio) */
        bool noiommu = false;   /* a no-IOMMU VFIO group must be opened */
        const char *pa_nic = NULL, *noiommu_nic = NULL;
        bool mode = vfio_noiommu_mode(c->h);
        unsigned ndev = 0;
        lreport rep;
        json_t *ev = json_object(), *devs = json_array();

        lreport_init(&rep);
        if (!env->have_nics) {
                json_decref(ev);
                json_decref(devs);
                return verdict_add(vl, "devices", VERDICT_SKIP, NULL, NULL, "no valid NIC allocation to check (see allocation-env)");
        }
        for (unsigned i = 0; i < env->n_nics; i++) {
                const lenv_nic *nic = &env->nics[i];
                bool container = false, group = false, uio = false, uverbs = false, group_noiommu = mode;

                for (unsigned d = 0; d < nic->n_devices; d++) {
                        const char *p = nic->devices[d];
                        int r;
                        if (strcmp(p, "/dev/vfio/vfio") == 0)
                                container = true;
                        else if (strncmp(p, "/dev/vfio/", 10) == 0) {
                                group = true;
                                group_noiommu = vfio_group_noiommu(c->h, p, mode);
                        } else if (strncmp(p, "/dev/uio", 8) == 0)
                                uio = true;
                        else if (strncmp(p, "/dev/infiniband/uverbs", 22) == 0)
                                uverbs = true;
                        r = hostfs_exists(c->h, p);
                        if (r == 0) {
                                lreport_add(&rep, VERDICT_FAIL, "NIC %s: device node %s (" ALLOC_ENV_NIC_FMT(ALLOC_NIC_DEVICES) ") does not exist in this container",
                                            nic->pci, p, i);
                                continue;
                        }
                        r = r < 0 ? r : open_rw(c->h, p);
                        if (r < 0) {
                                lreport_add(&rep, VERDICT_FAIL, "NIC %s: cannot open %s: %s", nic->pci, p, strerror(-r));
                                if (r == -EBUSY)
                                        lreport_remedy(&rep, "Another process holds the VFIO group: a second container was given the same NIC.");
                                else if (r == -EACCES || r == -EPERM)
                                        lreport_remedy(&rep, "The device cgroup must allow the node (the device plugin's DeviceSpec permissions \"rw\"); a no-IOMMU VFIO group opens only with CAP_SYS_RAWIO.");
                                continue;
                        }
                        ndev++;
                        json_array_append_new(devs, json_string(p));
                }
                if (nic->driver == LENV_DRV_VFIO) {
                        if (!container || !group)
                                lreport_add(&rep, VERDICT_FAIL, "NIC %s uses vfio-pci but " ALLOC_ENV_NIC_FMT(ALLOC_NIC_DEVICES) " lacks %s",
                                            nic->pci, i, !container ? "/dev/vfio/vfio" : "its /dev/vfio/<group>");
                        if (group_noiommu && !noiommu_nic) {
                                noiommu = true;
                                noiommu_nic = nic->pci;
                        }
                        pins = pins || !group_noiommu;
                        if ((mode || group_noiommu) && !pa_nic) {
                                iova_pa = true;
                                pa_nic = nic->pci;
                        }
                } else if (nic->driver == LENV_DRV_IGB_UIO) {
                        if (!uio)
                                lreport_add(&rep, VERDICT_FAIL, "NIC %s uses igb_uio but " ALLOC_ENV_NIC_FMT(ALLOC_NIC_DEVICES) " has no /dev/uioN", nic->pci, i);
                        if (!pa_nic) {
                                iova_pa = true;
                                pa_nic = nic->pci;
                        }
                } else if (nic->driver == LENV_DRV_MANA) {
                        if (!uverbs)
                                lreport_add(&rep, VERDICT_FAIL, "NIC %s is MANA but " ALLOC_ENV_NIC_FMT(ALLOC_NIC_DEVICES) " has no /dev/infiniband/uverbsN",
                                            nic->pci, i);
                        check_mana_netdev(c, nic, &rep);
                }
        }
        if (rep.level == VERDICT_FAIL)
                lreport_remedy(&rep, "The spinlane device plugin passes each NIC's device nodes; check that the pod requests spinlane.io/dpdk-nic (with DRA: claims a device of class dpdk-nic.spinlane.io) and that the agent on the node is healthy.");
        json_object_set_new(ev, "opened", devs);
        json_object_set_new(ev, "iova", json_string(iova_pa ? "pa" : "va"));

        /* the capabilities this process has (CapEff of /proc/self/status) */
        uint64_t caps = 0;
        bool have_caps = false;
        if (iova_pa || noiommu || pins) {
                _cleanup_free_ char *st = NULL;
                size_t len;
                int r = hostfs_read_alloc(c->h, "/proc/self/status", 64 * 1024, &st, &len);
                if (r == 0)
                        r = lcg_parse_capeff(st, len, &caps);
                have_caps = r == 0;
                if (have_caps) {
                        char hex[24];
                        snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)caps);
                        json_object_set_new(ev, "cap_eff", json_string(hex));
                }
        }
        if (iova_pa || noiommu) {
                const char *why = noiommu ? "vfio in no-IOMMU mode" : mode ? "vfio with enable_unsafe_noiommu_mode on" : "igb_uio";
                if (!have_caps)
                        lreport_add(&rep, VERDICT_WARN, "NIC %s uses %s: cannot tell from /proc/self/status (no CapEff) whether this container has the capabilities DPDK needs there",
                                    pa_nic ? pa_nic : noiommu_nic, why);
                if (have_caps && iova_pa && !has_cap(caps, LCG_CAP_SYS_ADMIN))
                        lreport_add(&rep, VERDICT_FAIL,
                                    "NIC %s uses %s, so DPDK runs with physical addresses (IOVA as PA) and must read /proc/self/pagemap, which needs CAP_SYS_ADMIN; this container lacks CAP_SYS_ADMIN",
                                    pa_nic, why);
                if (have_caps && noiommu && !has_cap(caps, LCG_CAP_SYS_RAWIO))
                        lreport_add(&rep, VERDICT_FAIL,
                                    "NIC %s is in a no-IOMMU VFIO group, which opens only with CAP_SYS_RAWIO; this container lacks CAP_SYS_RAWIO",
                                    noiommu_nic);
                if (have_caps && ((iova_pa && !has_cap(caps, LCG_CAP_SYS_ADMIN)) || (noiommu && !has_cap(caps, LCG_CAP_SYS_RAWIO))))
                        lreport_remedy(&rep, "Add the missing capabilities to the driver container's securityContext.capabilities.add: SYS_ADMIN (physical addresses from /proc/self/pagemap) and SYS_RAWIO (to open a no-IOMMU VFIO group); on a node with an IOMMU (metal instances) vfio-pci needs neither.");
        }
        if (pins) {
                _cleanup_free_ char *buf = NULL;
                size_t len;
                uint64_t lim = 0;
                uint64_t need = env->memory_mb * 1024 * 1024;
                int r = hostfs_read_alloc(c->h, "/proc/self/limits", 16 * 1024, &buf, &len);
                if (r == 0)
                        r = lcg_parse_memlock(buf, len, &lim);
                if (have_caps && has_cap(caps, LCG_CAP_IPC_LOCK))
                        ; /* vfio type1 does not count the pinned pages of a CAP_IPC_LOCK process */
                else if (r < 0)
                        lreport_add(&rep, VERDICT_FAIL, "cannot read the locked-memory limit from /proc/self/limits: %s",
                                    r == -ENOENT ? "no \"Max locked memory\" line" : strerror(-r));
                else if (lim < need) {
                        lreport_add(&rep, VERDICT_FAIL,
                                    "RLIMIT_MEMLOCK is %llu bytes and the container lacks CAP_IPC_LOCK; VFIO must lock the %llu MiB of DPDK memory",
                                    (unsigned long long)lim, (unsigned long long)env->memory_mb);
                        lreport_remedy(&rep, "Add IPC_LOCK to the driver container's securityContext.capabilities.add (VFIO then does not count the pinned memory against RLIMIT_MEMLOCK), or raise the limit containers inherit from the runtime: LimitMEMLOCK=infinity in a systemd drop-in for containerd.service, then restart containerd.");
                }
                if (r == 0)
                        json_object_set_new(ev, "memlock_bytes", lim == UINT64_MAX ? json_string("unlimited") : json_integer((json_int_t)lim));
        }
        char pass[160];
        snprintf(pass, sizeof(pass), "%u device node%s of %u NIC%s exist and open%s%s", ndev, ndev == 1 ? "" : "s",
                 env->n_nics, env->n_nics == 1 ? "" : "s",
                 !pins ? "" : have_caps && has_cap(caps, LCG_CAP_IPC_LOCK) ? "; CAP_IPC_LOCK lets VFIO lock the DPDK memory" : "; memlock suffices for VFIO",
                 iova_pa ? "; CAP_SYS_ADMIN for physical addresses" : "");
        return lreport_emit(&rep, vl, "devices", ev, pass);
}

int launch_checks_run(const hostfs *h, const launch_env *env, verdict_list *vl, lplan *ret_plan, bool *ret_have_plan)
{
        _cleanup_free_ ctx *c = calloc(1, sizeof(ctx));
        int r;

        if (!c)
                return -ENOMEM;
        c->h = h;
        c->env = env;
        lplan_topo_init(&c->topo);
        load_cgroup_view(c);
        c->have_online = read_cpulist(h, "/sys/devices/system/cpu/online", &c->online) == 0;
        c->have_isolated = read_cpulist(h, "/sys/devices/system/cpu/isolated", &c->isolated) == 0;

        /* the cpuset first: it decides which CPUs are pinned (the SMT check also uses it
         * to say where a shared sibling lives); problems reading it are the cpuset
         * check's to report */
        c->allowed_ev = json_object();
        if (env->have_cpus && c->allowed_ev) {
                lreport tmp;
                lreport_init(&tmp);
                load_allowed(c, &tmp, c->allowed_ev);
        }

        /* topology of the granted CPUs, the cpuset and any user-pinned CPU */
        cpuset want = env->cpus;
        const lenv_aeron *a = &env->aeron;
        const int user_aff[3] = { a->aff_sender, a->aff_receiver, a->aff_conductor };
        for (unsigned i = 0; i < 3; i++)
                if (user_aff[i] >= 0)
                        cpuset_set(&want, (unsigned)user_aff[i]);
        if (c->have_allowed)
                cpuset_or(&want, &want, &c->allowed);
        load_topology(c, &want);

        /* which CPUs to pin: the grant, or the kubelet's exclusive cores */
        if (env->have_cpus && c->have_allowed &&
            lplan_choose_cpus(&env->cpus, &c->allowed, c->have_online ? &c->online : NULL,
                              c->have_isolated ? &c->isolated : NULL, &c->topo, &c->pin) == 0)
                c->have_pin = true;
        if (env->have_cpus) {
                c->plan_err = lplan_build(env, c->have_pin ? &c->pin : NULL, &c->topo, &c->plan);
                c->have_plan = c->plan_err == 0;
        }
        c->pinned = c->have_pin ? c->pin.cpus : env->have_cpus ? env->cpus : (cpuset){ { 0 } };
        if (c->have_plan) {
                const int aff[3] = { c->plan.aeron.aff_sender, c->plan.aeron.aff_receiver, c->plan.aeron.aff_conductor };
                for (unsigned i = 0; i < 3; i++)
                        if (aff[i] >= 0)
                                cpuset_set(&c->pinned, (unsigned)aff[i]);
        }

        r = check_allocation(c, vl);
        if (r >= 0)
                r = check_cpu_quota(c, vl);
        if (r >= 0)
                r = check_smt(c, vl);
        if (r >= 0)
                r = check_cpuset(c, vl);
        json_decref(c->allowed_ev);
        c->allowed_ev = NULL;
        if (r < 0 || (r = check_isolated(c, vl)) < 0 || (r = check_hugepages(c, vl)) < 0 ||
            (r = check_devices(c, vl)) < 0)
                return r;
        if (c->have_plan)
                r = lplan_check_aeron(env, &c->plan, &c->topo, vl);
        else {
                lreport rep;
                lreport_init(&rep);
                lreport_env(&rep, env, "aeron-config");
                if (rep.n == 0)
                        r = verdict_add(vl, "aeron-config", VERDICT_SKIP, NULL, NULL,
                                        "no granted CPUs to place the Aeron agents on (see allocation-env)");
                else
                        r = lreport_emit(&rep, vl, "aeron-config", NULL, "");
        }
        if (r < 0)
                return r;
        if (c->have_plan)
                *ret_plan = c->plan;
        *ret_have_plan = c->have_plan;
        return 0;
}
