/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent explain` on every fixture node: one line per NIC and core of the
 * inventory, each with a state and a reason; the devices it calls advertised are exactly
 * inventory --json's resources; one device asked about gives its line and the exit code
 * (0 Healthy, 1 not, 2 unknown); the human lines read as documented. */
#include "fixture.h"

#include <string.h>

static char bin[1024];
static char dir[512];
static char out[1 << 20];

static json_t *json_of(const char *args)
{
        CHECK_INT(fixture_run(bin, args, "2>/dev/null", out, sizeof(out)), 0);
        json_error_t e;
        json_t *j = json_loads(out, 0, &e);
        CHECK(j != NULL);
        return j;
}

/* explain --json: one object per line */
static json_t *explain_lines(const char *root)
{
        char args[1024];
        snprintf(args, sizeof(args), "explain --json --root %s", root);
        CHECK_INT(fixture_run(bin, args, "2>/dev/null", out, sizeof(out)), 0);
        json_t *a = json_array();
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
                json_error_t e;
                json_t *j = json_loads(line, 0, &e);
                CHECK(j != NULL);
                if (j)
                        json_array_append_new(a, j);
        }
        return a;
}

static json_t *find(json_t *lines, const char *resource, const char *id)
{
        size_t i;
        json_t *v;
        json_array_foreach(lines, i, v) {
                if (strcmp(json_string_value(json_object_get(v, "resource")), resource) == 0 &&
                    strcmp(json_string_value(json_object_get(v, "id")), id) == 0)
                        return v;
        }
        return NULL;
}

static bool listed(json_t *line)
{
        return line && strcmp(json_string_value(json_object_get(line, "state")), "not-advertised") != 0;
}

static bool in_resources(json_t *res, const char *id)
{
        size_t i;
        json_t *v;
        json_array_foreach(res, i, v) {
                if (strcmp(json_string_value(json_object_get(v, "id")), id) == 0)
                        return true;
        }
        return false;
}

static void check_node(const char *name)
{
        char root[1024], args[1200];
        snprintf(root, sizeof(root), "%s/%s", dir, name);
        snprintf(args, sizeof(args), "inventory --json --root %s", root);
        json_t *inv = json_of(args);
        json_t *lines = explain_lines(root);
        json_t *nics = json_object_get(inv, "nics"), *cores = json_object_get(inv, "cores");
        json_t *res = json_object_get(inv, "resources");
        json_t *rn = json_object_get(res, "spinlane.io/dpdk-nic"), *rc = json_object_get(res, "spinlane.io/isolated-core");

        /* every device once, nothing else */
        CHECK_INT(json_array_size(lines), json_array_size(nics) + json_array_size(cores));
        size_t i;
        json_t *v;
        json_array_foreach(nics, i, v) {
                const char *pci = json_string_value(json_object_get(v, "pci"));
                json_t *l = find(lines, "spinlane.io/dpdk-nic", pci);
                if (!l)
                        fprintf(stderr, "%s: NIC %s has no explain line\n", name, pci);
                CHECK(l != NULL);
                if (!l)
                        continue;
                CHECK(*json_string_value(json_object_get(l, "reason")) != '\0');
                CHECK(*json_string_value(json_object_get(l, "detail")) != '\0');
                CHECK(listed(l) == in_resources(rn, pci));
        }
        json_array_foreach(cores, i, v) {
                const char *id = json_string_value(json_object_get(v, "id"));
                json_t *l = find(lines, "spinlane.io/isolated-core", id);
                CHECK(l != NULL);
                if (l)
                        CHECK(listed(l) == in_resources(rc, id));
        }
        json_decref(lines);
        json_decref(inv);
}

static void check_reason(const char *node, const char *resource, const char *id, const char *state,
                         const char *reason)
{
        char root[1024];
        snprintf(root, sizeof(root), "%s/%s", dir, node);
        json_t *lines = explain_lines(root);
        json_t *l = find(lines, resource, id);
        CHECK(l != NULL);
        if (l) {
                CHECK_STR(json_string_value(json_object_get(l, "state")), state);
                CHECK_STR(json_string_value(json_object_get(l, "reason")), reason);
        }
        json_decref(lines);
}

int main(void)
{
        const char *b = getenv("SPINLANE_BINARY_DIR");
        if (!b)
                TEST_SKIP("SPINLANE_BINARY_DIR is not set (run under ctest)");
        snprintf(bin, sizeof(bin), "'%s/agent/spinlane-agent'", b);
        static const char nodes[] = "eks-x86 eks-al2023 graviton aks-mana broken big";
        fixture_make(dir, sizeof(dir), nodes);
        char copy[sizeof(nodes)];
        snprintf(copy, sizeof(copy), "%s", nodes);
        for (char *save = NULL, *n = strtok_r(copy, " ", &save); n; n = strtok_r(NULL, " ", &save))
                check_node(n);

        const char *nic = "spinlane.io/dpdk-nic", *core = "spinlane.io/isolated-core";
        check_reason("eks-x86", nic, "0000:00:05.0", "not-advertised", "primary");
        check_reason("eks-x86", nic, "0000:00:06.0", "unhealthy", "no-address"); /* MAC not recorded */
        check_reason("eks-x86", core, "p0c0", "not-advertised", "not-isolated");
        check_reason("eks-x86", core, "p0c2", "healthy", "ok");
        check_reason("eks-al2023", nic, "0000:00:06.0", "not-advertised", "in-use");
        check_reason("eks-al2023", nic, "0000:00:08.0", "not-advertised", "not-ready");
        check_reason("aks-mana", nic, "7870:00:00.0", "not-advertised", "primary");
        check_reason("broken", nic, "0000:00:06.0", "not-advertised", "in-use");
        check_reason("broken", core, "p0c3", "not-advertised", "split");

        /* one device: its line, the exit code says whether it is Healthy */
        char args[4096];
        snprintf(args, sizeof(args), "explain p0c2 --root %s/eks-x86", dir);
        CHECK_INT(fixture_run(bin, args, "2>/dev/null", out, sizeof(out)), 0);
        CHECK_STR(out, "spinlane.io/isolated-core p0c2: advertised, Healthy: CPUs 2,10, NUMA node 0\n");
        snprintf(args, sizeof(args), "explain --root %s/eks-x86 0000:00:05.0", dir);
        CHECK_INT(fixture_run(bin, args, "2>/dev/null", out, sizeof(out)), 1);
        CHECK_STR(out, "spinlane.io/dpdk-nic 0000:00:05.0: not advertised (primary): eth0 carries the node's default "
                       "route (metric 100): never taken\n");
        snprintf(args, sizeof(args), "explain 0000:00:99.0 --root %s/eks-x86", dir);
        CHECK_INT(fixture_run(bin, args, "2>&1", out, sizeof(out)), 2);
        CHECK(strstr(out, "no NIC with PCI address 0000:00:99.0 and no core 0000:00:99.0") != NULL);
        snprintf(args, sizeof(args), "explain p0c2 p0c3 --root %s/eks-x86", dir);
        CHECK_INT(fixture_run(bin, args, "2>&1", out, sizeof(out)), 2);
        CHECK(strstr(out, "unexpected argument 'p0c3'") != NULL);
        /* a config narrows it: the reason names the selector */
        char cfg[1024];
        snprintf(cfg, sizeof(cfg), "%s/pci.json", dir);
        fixture_write(cfg, "{\"nics\":{\"pci\":[\"0000:00:07.0\"]}}");
        snprintf(args, sizeof(args), "explain 0000:00:06.0 --config %s --root %s/eks-x86", cfg, dir);
        CHECK_INT(fixture_run(bin, args, "2>/dev/null", out, sizeof(out)), 1);
        CHECK_STR(out, "spinlane.io/dpdk-nic 0000:00:06.0: not advertised (not-selected): nics.pci does not list "
                       "0000:00:06.0\n");
        /* other commands still take no device */
        snprintf(args, sizeof(args), "preflight p0c2 --root %s/eks-x86", dir);
        CHECK_INT(fixture_run(bin, args, "2>&1", out, sizeof(out)), 2);
        fixture_remove(dir);
        return test_done();
}
