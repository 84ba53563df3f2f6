/* SPDX-License-Identifier: Apache-2.0 */
/* The boot-loader tools' bound (agent/prep/kargs-write.c) on the fixture nodes with their
 * fake update-grub / grubby: a tool that hangs (with a child of its own) is killed with
 * its process group after the timeout and the step fails closed (prep-kernel-args FAIL
 * naming the tool and the bound, the write recorded as incomplete, no reboot sentinel),
 * the next pass redoes it; restore with a hung grubby fails and keeps its record; a tool
 * that exits leaving a child on its output is not waited for. The timeout is the test
 * hook kargs_ops.timeout_ms; the tests wait only for the tool's own state. */
#include "kargs-write.h"

#include "fixture.h"
#include "nodeprep-test.h"
#include "testutil.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>

#define TIMEOUT_MS 3000 /* long enough for a shell to reach its hang on a loaded machine */
#define CFG "{\"nics\":{\"kinds\":[\"ena\"]},\"cores\":{\"cpus\":\"2-7,10-15\"},\"kernel_args\":{\"manage\":true}}"

static char dir[512];

static void path_of(char *buf, size_t size, const char *fixture, const char *rel)
{
        snprintf(buf, size, "%s/%s%s", dir, fixture, rel);
}

static bool exists(const char *fixture, const char *rel)
{
        char p[1024];
        struct stat st;
        path_of(p, sizeof(p), fixture, rel);
        return lstat(p, &st) == 0;
}

/* The pid the fake tool's child wrote, 0 when none. */
static pid_t child_pid(const char *fixture, const char *tool)
{
        char p[1024], rel[128];
        long pid = 0;
        snprintf(rel, sizeof(rel), "/spinlane-fixture/%s.pid", tool);
        path_of(p, sizeof(p), fixture, rel);
        FILE *f = fopen(p, "r");
        if (!f)
                return 0;
        if (fscanf(f, "%ld", &pid) != 1)
                pid = 0;
        fclose(f);
        unlink(p);
        return (pid_t)pid;
}

/* Whether pid is gone (or a zombie: dead, left for its new parent to reap), waited for
 * with the tests' generous bound. */
static bool gone(pid_t pid)
{
        for (int waited = 0; waited < TEST_WAIT_MS; waited += 10) {
                char p[64], stat[512];
                snprintf(p, sizeof(p), "/proc/%ld/stat", (long)pid);
                FILE *f = fopen(p, "r");
                if (!f)
                        return true;
                size_t n = fread(stat, 1, sizeof(stat) - 1, f);
                fclose(f);
                stat[n] = '\0';
                const char *rp = strrchr(stat, ')');
                if (rp && (rp[2] == 'Z' || rp[2] == 'X'))
                        return true;
                (void)poll(NULL, 0, 10);
        }
        return false;
}

static void set_hang(const char *fixture, const char *tool, bool on)
{
        char p[1024], rel[128];
        snprintf(rel, sizeof(rel), "/spinlane-fixture/%s.hang", tool);
        path_of(p, sizeof(p), fixture, rel);
        if (on)
                fixture_write(p, "");
        else
                unlink(p);
}

static int apply_cfg(const char *fixture, const char *cfg, verdict_list *vl, kargs_result *res)
{
        char root[700];
        hostfs h;
        inventory *inv = NULL;
        config c = test_config(cfg);
        kargs_ops ops = kargs_ops_default;
        ops.timeout_ms = TIMEOUT_MS;

        snprintf(root, sizeof(root), "%s/%s", dir, fixture);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                TEST_FATAL("no inventory of %s", root);
        int r = kargs_apply(&h, &ops, &c, inv, vl, res);
        inventory_free(inv);
        return r;
}

static int apply(const char *fixture, verdict_list *vl, kargs_result *res)
{
        return apply_cfg(fixture, CFG, vl, res);
}

static int restore(const char *fixture, char *msg, size_t size)
{
        char root[700];
        hostfs h;
        inventory *inv = NULL;
        kargs_ops ops = kargs_ops_default;
        ops.timeout_ms = TIMEOUT_MS;

        snprintf(root, sizeof(root), "%s/%s", dir, fixture);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                TEST_FATAL("no inventory of %s", root);
        int r = kargs_restore(&h, &ops, inv, msg, size);
        inventory_free(inv);
        return r;
}

static const char *message(const verdict_list *vl)
{
        const verdict *v = verdict_find(vl, PREP_CHECK_KERNEL_ARGS);
        return v ? v->message : "(none)";
}

static void test_apply_hangs(void)
{
        verdict_list vl = {0};
        kargs_result res;
        kargs_state st;
        char root[700], err[256];
        hostfs h;

        fprintf(stderr, "-- update-grub hangs\n");
        set_hang("aks-ubuntu-plain", "update-grub", true);
        CHECK_INT(apply("aks-ubuntu-plain", &vl, &res), 0);
        const verdict *v = verdict_find(&vl, PREP_CHECK_KERNEL_ARGS);
        CHECK(v && v->level == VERDICT_FAIL);
        fprintf(stderr, "   %s\n", message(&vl));
        CHECK(strstr(message(&vl), "writing the boot loader (grub-dropin) failed: /usr/sbin/update-grub did not "
                                   "finish within 3 s: killed it (SIGKILL to its process group)") != NULL);
        CHECK(!res.wrote && !res.sentinel_set);
        /* the tool's own child died with it */
        pid_t pid = child_pid("aks-ubuntu-plain", "update-grub");
        CHECK(pid > 0);
        if (pid > 0)
                CHECK(gone(pid));
        /* fail closed: recorded as not run through (restore knows, the next pass redoes
         * it), no sentinel asks for a reboot into a half-written boot loader */
        snprintf(root, sizeof(root), "%s/aks-ubuntu-plain", dir);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(kargs_state_load(&h, &st, err, sizeof(err)), 1);
        CHECK(!st.complete && st.written.n == 4);
        CHECK(!exists("aks-ubuntu-plain", "/run/reboot-required"));
        verdict_list_free(&vl);

        /* the tool back to normal: the next pass runs it through */
        set_hang("aks-ubuntu-plain", "update-grub", false);
        CHECK_INT(apply("aks-ubuntu-plain", &vl, &res), 0);
        v = verdict_find(&vl, PREP_CHECK_KERNEL_ARGS);
        CHECK(v && v->level == VERDICT_WARN);
        CHECK(res.wrote && res.reboot_pending && res.sentinel_set);
        CHECK_INT(kargs_state_load(&h, &st, err, sizeof(err)), 1);
        CHECK(st.complete);
        CHECK(exists("aks-ubuntu-plain", "/run/reboot-required"));
        verdict_list_free(&vl);
}

static void test_restore_hangs(void)
{
        verdict_list vl = {0};
        kargs_result res;
        char msg[1024];

        fprintf(stderr, "-- grubby hangs on restore\n");
        CHECK_INT(apply("eks-al2023-plain", &vl, &res), 0);
        CHECK(res.wrote);
        verdict_list_free(&vl);
        set_hang("eks-al2023-plain", "grubby", true);
        CHECK_INT(restore("eks-al2023-plain", msg, sizeof(msg)), -ETIME);
        fprintf(stderr, "   %s\n", msg);
        CHECK(strstr(msg, "/usr/sbin/grubby --remove-args failed: /usr/sbin/grubby did not finish within 3 s: killed "
                          "it") != NULL);
        CHECK(strstr(msg, "still recorded") != NULL);
        pid_t pid = child_pid("eks-al2023-plain", "grubby");
        CHECK(pid > 0);
        if (pid > 0)
                CHECK(gone(pid));
        CHECK(exists("eks-al2023-plain", "/var/lib/spinlane/kernel-args.json"));
        set_hang("eks-al2023-plain", "grubby", false);
        CHECK_INT(restore("eks-al2023-plain", msg, sizeof(msg)), 0);
        CHECK(strstr(msg, "took back the kernel arguments isolcpus=") != NULL);
        CHECK(!exists("eks-al2023-plain", "/var/lib/spinlane/kernel-args.json"));
}

/* A tool that exits 0 and leaves a child holding its output open: done when it exits. */
static void test_exit_leaves_child(void)
{
        char root[700], p[1024], out[256];
        hostfs h;

        fprintf(stderr, "-- a tool that leaves a child behind\n");
        path_of(p, sizeof(p), "eks-al2023-plain", "/usr/sbin/grubby");
        fixture_write(p, "#!/bin/sh\nsleep 3600 &\necho $! > \"$SPINLANE_FAKE_ROOT/spinlane-fixture/grubby.pid\"\n"
                         "echo left one\nexit 0\n");
        CHECK(chmod(p, 0755) == 0);
        snprintf(root, sizeof(root), "%s/eks-al2023-plain", dir);
        CHECK_INT(hostfs_init(&h, root), 0);
        char *argv[] = {"/usr/sbin/grubby", "--info=ALL", NULL};
        /* the timeout is the bound: a run that waited for the child's EOF fails here */
        CHECK_INT(kargs_ops_default.run(NULL, &h, argv, TIMEOUT_MS, out, sizeof(out)), 0);
        CHECK_STR(out, "left one");
        pid_t pid = child_pid("eks-al2023-plain", "grubby");
        CHECK(pid > 0);
        if (pid > 0) {
                kill(pid, SIGKILL);
                CHECK(gone(pid));
        }
        /* and one that cannot be started */
        char *none[] = {"/usr/sbin/no-such-tool", NULL};
        CHECK_INT(kargs_ops_default.run(NULL, &h, none, TIMEOUT_MS, out, sizeof(out)), -ENOENT);
}

/* Issue 31: grub.d linked out of the root and a relative /var/run link climbing out of
 * it. kargs_apply writes and restore deletes nothing there: the drop-in and the sentinel
 * resolve inside the root (where the links lead nowhere), the file outside is kept. */
static void test_links_out_of_root(void)
{
        verdict_list vl = {0};
        kargs_result res;
        char msg[1024], outside[700], p[1024], q[1024], text[256] = "";
        struct stat st;

        fprintf(stderr, "-- grub.d and /var/run linked out of the root\n");
        CHECK_INT(restore("aks-ubuntu-plain", msg, sizeof(msg)), 0);
        snprintf(outside, sizeof(outside), "%s/outside", dir);
        CHECK_INT(mkdir(outside, 0755), 0);
        snprintf(p, sizeof(p), "%s/run", outside);
        CHECK_INT(mkdir(p, 0755), 0);
        /* the real grub.d moves out; the root's is a link to it */
        path_of(p, sizeof(p), "aks-ubuntu-plain", "/etc/default/grub.d");
        snprintf(q, sizeof(q), "%s/grub.d", outside);
        CHECK_INT(rename(p, q), 0);
        CHECK_INT(symlink(q, p), 0);
        snprintf(q, sizeof(q), "%s/grub.d/99-spinlane.cfg", outside);
        fixture_write(q, "# theirs\n");
        path_of(p, sizeof(p), "aks-ubuntu-plain", "/var/run");
        CHECK_INT(unlink(p), 0);
        CHECK_INT(symlink("../../outside/run", p), 0);

        (void)apply("aks-ubuntu-plain", &vl, &res);
        fprintf(stderr, "   %s\n", message(&vl));
        verdict_list_free(&vl);
        (void)restore("aks-ubuntu-plain", msg, sizeof(msg));
        fprintf(stderr, "   restore: %s\n", msg);

        FILE *f = fopen(q, "r");
        CHECK(f != NULL);
        if (f) {
                size_t n = fread(text, 1, sizeof(text) - 1, f);
                text[n] = '\0';
                fclose(f);
        }
        CHECK_STR(text, "# theirs\n");
        snprintf(p, sizeof(p), "%s/run/reboot-required", outside);
        CHECK(lstat(p, &st) < 0);
}

/* Issue 31: boot hugepages beyond the node's memory (2 TiB of 2 MiB pages on the fixture's
 * 31 GiB) or on a NUMA node it lacks: FAIL naming what was asked and what the node has,
 * nothing written (no state, no drop-in). */
static void test_huge_bound(void)
{
        static const struct {
                const char *huge, *want;
        } cases[] = {
                {"[{\"page_size\":\"2M\",\"per_node\":{\"0\":1048576}}]",
                 "hugepages asks for 2097152 MiB of boot hugepages; this node has 31744 MiB of memory (MemTotal), "
                 "and at most 27776 MiB may be taken (3968 MiB stay for the system)"},
                {"[{\"page_size\":\"1G\",\"per_node\":{\"0\":28}}]", "hugepages asks for 28672 MiB"},
                {"[{\"page_size\":\"2M\",\"per_node\":{\"5\":16}}]",
                 "hugepages asks for 16 pages on NUMA node 5; this node has NUMA nodes 0"},
        };
        char cfg[512];

        fprintf(stderr, "-- boot hugepages beyond the node\n");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                verdict_list vl = {0};
                kargs_result res;
                snprintf(cfg, sizeof(cfg),
                         "{\"nics\":{\"kinds\":[\"ena\"]},\"cores\":{\"cpus\":\"2-7,10-15\"},"
                         "\"kernel_args\":{\"manage\":true},\"hugepages\":%s}", cases[i].huge);
                CHECK_INT(apply_cfg("eks-al2023-plain", cfg, &vl, &res), 0);
                const verdict *v = verdict_find(&vl, PREP_CHECK_KERNEL_ARGS);
                fprintf(stderr, "   %s\n", message(&vl));
                CHECK(v && v->level == VERDICT_FAIL);
                CHECK(strstr(message(&vl), cases[i].want) != NULL);
                CHECK(!res.wrote);
                CHECK(!exists("eks-al2023-plain", KARGS_STATE_PATH));
                verdict_list_free(&vl);
        }
}

int main(void)
{
        if (access("/bin/sh", X_OK) != 0)
                TEST_SKIP("no /bin/sh for the fixture's fake boot-loader tools");
        fixture_make(dir, sizeof(dir), "aks-ubuntu-plain eks-al2023-plain");
        test_huge_bound();
        test_apply_hangs();
        test_restore_hangs();
        test_exit_leaves_child();
        test_links_out_of_root();
        fixture_remove(dir);
        return test_done();
}
