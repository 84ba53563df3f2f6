/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the pod environment parser and the plan built from it. The input is a
 * list of NAME=value lines; every recorded error must name its variable, a plan must
 * only pin granted CPUs it was given, and the aeron-config check must not crash. */
#include "launch-env.h"
#include "launch-plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static launch_env env;
        static lplan plan;
        static lplan_topo topo;
        char *copy = malloc(size + 1);
        const char *envp[65];
        unsigned n = 0;

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        copy[size] = '\0';
        for (char *p = copy; p && n < 64;) {
                char *nl = strchr(p, '\n');
                if (nl)
                        *nl = '\0';
                envp[n++] = p;
                p = nl ? nl + 1 : NULL;
        }
        envp[n] = NULL;
        lenv_parse(envp, &env);
        if (env.n_errs > LENV_MAX_ERRS)
                abort();
        for (unsigned i = 0; i < env.n_errs; i++)
                if (!env.errs[i].var[0] || !strstr(env.errs[i].msg, env.errs[i].var))
                        abort();
        /* a topology pairing CPU c with c ^ 1, as on many SMT machines */
        lplan_topo_init(&topo);
        for (unsigned c = 0; c < 64; c++)
                topo.core_of[c] = (int)(c & ~1u);
        if (env.have_cpus && lplan_build(&env, NULL, &topo, &plan) == 0) {
                const int aff[3] = { plan.aeron.aff_sender, plan.aeron.aff_receiver, plan.aeron.aff_conductor };
                const bool set[3] = { env.aeron.aff_sender_set, env.aeron.aff_receiver_set, env.aeron.aff_conductor_set };
                for (unsigned i = 0; i < 3; i++)
                        if (!set[i] && aff[i] >= 0 && !cpuset_has(&env.cpus, (unsigned)aff[i]))
                                abort(); /* the launcher chose a CPU it was not granted */
                verdict_list vl = { 0 };
                lplan_check_aeron(&env, &plan, &topo, &vl);
                verdict_list_free(&vl);
        }
        free(copy);
        return 0;
}
