/* SPDX-License-Identifier: Apache-2.0 */
/* `spinlane-agent prepare` and `spinlane-agent restore` as a person runs them on fixture
 * nodes: exit codes 0/1/2, a bad config named by key, JSON lines, and restore with no
 * state, a garbled state, a NIC back on its driver after a reboot, and a NIC the fake
 * tree cannot give back (no kernel behind it: it stays recorded). */
#include "../agent/fixture.h"

#include <sys/wait.h>

static char dir[512];
static char bin[1024];

static int run(const char *args, char *out, size_t size)
{
        char cmd[4096];
        snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
        FILE *p = popen(cmd, "r");
        if (!p)
                return -1;
        size_t n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        int r = pclose(p);
        return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        if (!f) {
                perror(path);
                exit(2);
        }
        fputs(text, f);
        fclose(f);
}

int main(void)
{
        static char out[1 << 16];
        char args[2048], path[1024];
        const char *b = getenv("SPINLANE_BINARY_DIR");

        if (!b)
                TEST_SKIP("SPINLANE_BINARY_DIR is not set (run under ctest)");
        snprintf(bin, sizeof(bin), "'%s/agent/spinlane-agent'", b);
        fixture_make(dir, sizeof(dir), "eks-x86 broken");

        CHECK_INT(run("--help", out, sizeof(out)), 0);
        CHECK(strstr(out, "prepare") && strstr(out, "restore"));
        CHECK_INT(run("prepare --bogus", out, sizeof(out)), 2);
        CHECK_INT(run("restore extra", out, sizeof(out)), 2);

        /* prepare on a ready node: 0. */
        snprintf(path, sizeof(path), "%s/config.json", dir);
        write_file(path, "{\"nics\":{\"kinds\":[\"ena\"]}}");
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "PASS prep-nic-binding: 0 NIC(s) bound to vfio-pci now, 2 already bound\n") != NULL);
        CHECK(strstr(out, "summary: 2 pass, 0 warn, 0 fail, 0 skip\n") != NULL);
        /* --json: every line is a JSON object. */
        snprintf(args, sizeof(args), "prepare --json --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        int lines = 0, good = 0;
        for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
                json_t *j = json_loads(l, 0, NULL);
                lines++;
                good += json_is_object(j);
                json_decref(j);
        }
        CHECK(lines >= 4);
        CHECK_INT(good, lines);

        /* A bad config: 2, and the message names the key and the value. */
        write_file(path, "{\"hugepages\":{\"per_node\":{\"0\":\"lots\"}}}");
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 2);
        CHECK(strstr(out, "config: \"hugepages.per_node.0\": expected an integer >= 0, got \"lots\"") != NULL);
        /* preflight and inventory take the same parser. */
        snprintf(args, sizeof(args), "preflight --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 2);
        CHECK(strstr(out, "\"hugepages.per_node.0\"") != NULL);

        /* A step fails: hugepages on a node that does not exist -> 1. */
        write_file(path, "{\"hugepages\":{\"per_node\":{\"3\":16}}}");
        snprintf(args, sizeof(args), "prepare --root '%s/eks-x86' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL prep-hugepages: node 3, 2 MiB pages: no such NUMA node") != NULL);

        /* broken: the secondary has a route: refused, a warning, exit 0. */
        write_file(path, "{}");
        snprintf(args, sizeof(args), "prepare --root '%s/broken' --config '%s'", dir, path);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "0000:00:06.0: refused: eth1 has a route; nothing changed") != NULL);

        /* restore: nothing recorded. */
        snprintf(args, sizeof(args), "restore --root '%s/broken'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "nothing to restore") != NULL);
        /* A garbled state file: 2, nothing touched, the file stays. */
        snprintf(path, sizeof(path), "%s/broken/var/lib/spinlane", dir);
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
        CHECK_INT(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/broken/var/lib/spinlane/bind-state.json", dir);
        write_file(path, "{\"version\":1,\"count\":1,\"nics\":[{\"pci\":\"0000:00:06.0\",\"origi");
        CHECK_INT(run(args, out, sizeof(out)), 2);
        CHECK(strstr(out, "state file is truncated or garbled") != NULL);
        CHECK(access(path, F_OK) == 0);
        /* After a reboot the NIC is on its original driver again: the record is dropped. */
        write_file(path, "{\"version\":1,\"count\":1,\"nics\":[{\"pci\":\"0000:00:06.0\",\"original_driver\":\"ena\","
                         "\"driver\":\"vfio-pci\",\"netdev\":\"eth1\"}]}");
        char ov[1024];
        snprintf(ov, sizeof(ov), "%s/broken/sys/bus/pci/devices/0000:00:06.0/driver_override", dir);
        write_file(ov, "(null)\n");
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "0000:00:06.0: already on ena") != NULL);
        CHECK(strstr(out, "restore: 1 of 1 NIC(s) back on their original driver") != NULL);
        CHECK(access(path, F_OK) != 0);

        /* eks-x86: a recorded NIC on vfio-pci; the fake tree has no kernel to move it:
         * restore fails for it, says so, and keeps it recorded (exit 1). */
        snprintf(path, sizeof(path), "%s/eks-x86/var/lib/spinlane", dir);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
        CHECK_INT(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/eks-x86/var/lib/spinlane/bind-state.json", dir);
        write_file(path, "{\"version\":1,\"count\":1,\"nics\":[{\"pci\":\"0000:00:06.0\",\"original_driver\":\"ena\","
                         "\"driver\":\"vfio-pci\"}]}");
        snprintf(ov, sizeof(ov), "%s/eks-x86/sys/bus/pci/devices/0000:00:06.0/driver_override", dir);
        write_file(ov, "vfio-pci\n");
        snprintf(args, sizeof(args), "restore --root '%s/eks-x86'", dir);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "0000:00:06.0: could not give it back to ena (unbinding from vfio-pci: No such file or directory)") != NULL);
        CHECK(strstr(out, "the others stay recorded") != NULL);
        CHECK(access(path, F_OK) == 0);

        fixture_remove(dir);
        return test_done();
}
