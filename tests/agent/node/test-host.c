/* SPDX-License-Identifier: Apache-2.0 */
/* Smoke test on the real host: the inventory and the node checks run read-only on this
 * machine and print a summary. The machine need not be DPDK-ready: only that every
 * check answers, the JSON document is whole and the exit code is 0 or 1, is asserted. */
#include "checks.h"
#include "devmap-json.h"
#include "hostfs.h"
#include "inventory.h"
#include "testutil.h"

#include <sys/wait.h>

int main(void)
{
        hostfs h;
        inventory *inv = NULL;
        verdict_list l = {0};
        char cmd[4096];

        CHECK_INT(hostfs_init(&h, NULL), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                return 1;
        CHECK(inv->have_online);
        CHECK(cpuset_count(&inv->online) > 0);
        CHECK(inv->n_cores > 0);
        CHECK_INT(checks_node(inv, NULL, &l), 0);
        CHECK_INT(l.n, 11);
        for (size_t i = 0; i < l.n; i++)
                CHECK((unsigned)l.items[i].level < _VERDICT_MAX);
        json_t *j = inventory_json_under(inv, NULL, NULL);
        CHECK(j && json_object_get(j, "resources") && json_object_get(j, "nics") && json_object_get(j, "cores"));
        printf("this host: %zu CPUs online in %zu cores, %zu NUMA nodes, %zu NICs, %zu hugepage sizes, %zu "
               "problems\n",
               (size_t)cpuset_count(&inv->online), inv->n_cores, inv->n_numa, inv->n_nics, inv->n_huge,
               inv->n_problems);
        verdict_print(&l, stdout, false);
        json_decref(j);
        verdict_list_free(&l);
        inventory_free(inv);

        /* the binary, as a person runs it */
        const char *bin = getenv("SPINLANE_BINARY_DIR");
        if (bin) {
                snprintf(cmd, sizeof(cmd), "'%s/agent/spinlane-agent' preflight --json > /dev/null", bin);
                int r = system(cmd);
                CHECK(WIFEXITED(r) && (WEXITSTATUS(r) == 0 || WEXITSTATUS(r) == 1));
        }
        return test_done();
}
