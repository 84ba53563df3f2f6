/* SPDX-License-Identifier: Apache-2.0 */
/* kernel_args.manage end to end, the way `spinlane-agent prepare`, `preflight` and
 * `restore` run on fixture nodes without isolcpus, for both boot loaders: the exact files
 * written (the grub.d drop-in, the state file, the reboot sentinel under the host's
 * /var/run link) and the exact tool calls (fake update-grub / grubby in the tree), a second
 * run that writes nothing, a failed tool retried, the kernel-args verdict before and
 * after a simulated reboot (the args in /proc/cmdline), a conflicting argument that is not
 * spinlane's, and restore taking back exactly what was written. */
#include "fixture.h"

#include <sys/stat.h>

static char dir[512];
static char bin[1024];

static int run(const char *args, char *out, size_t size) { return fixture_run(bin, args, "2>&1", out, size); }

static char *slurp(const char *root, const char *path)
{
        static char buf[8192];
        char full[1024];
        snprintf(full, sizeof(full), "%s%s", root, path);
        FILE *f = fopen(full, "r");
        if (!f)
                return NULL;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static bool exists(const char *root, const char *path)
{
        char full[1024];
        struct stat st;
        snprintf(full, sizeof(full), "%s%s", root, path);
        return lstat(full, &st) == 0;
}

#define ARGS "isolcpus=managed_irq,domain,2-7,10-15 nohz_full=2-7,10-15 rcu_nocbs=2-7,10-15 irqaffinity=0-1,8-9 " \
             "hugepagesz=2M hugepages=1024 hugepagesz=1G hugepages=2"
#define CFG "{\"nics\":{\"kinds\":[\"ena\"]},\"cores\":{\"cpus\":\"2-7,10-15\"},\"kernel_args\":{\"manage\":true}," \
            "\"hugepages\":[{\"page_size\":\"2M\",\"per_node\":{\"0\":1024}},{\"page_size\":\"1G\",\"per_node\":{\"0\":2}}]}"
#define STATE(loader)                                                                                              \
        "{\n  \"version\": 1,\n  \"loader\": \"" loader "\",\n  \"args\": [\n"                                    \
        "    \"isolcpus=managed_irq,domain,2-7,10-15\",\n    \"nohz_full=2-7,10-15\",\n"                          \
        "    \"rcu_nocbs=2-7,10-15\",\n    \"irqaffinity=0-1,8-9\",\n    \"hugepagesz=2M hugepages=1024\",\n"     \
        "    \"hugepagesz=1G hugepages=2\"\n  ],\n  \"sentinel_created\": true,\n  \"complete\": true\n}\n"
#define CMDLINE "BOOT_IMAGE=/boot/vmlinuz root=UUID=0b7c1e59 ro console=ttyS0"

/* One boot loader: fixture name, the tool's log lines for write and restore, the
 * sentinel's real place in the tree. */
static void test_loader(const char *fixture, bool grub, const char *sentinel)
{
        static char out[1 << 16];
        char root[700], cfg[700], args[2048], path[1024];
        const char *tool_write = grub ? "update-grub\n"
                                      : "grubby [--update-kernel=ALL] [--args=" ARGS "]\n";
        const char *tool_restore = grub ? "update-grub\n"
                                        : "grubby [--update-kernel=ALL] [--remove-args=" ARGS "]\n";
        char log2[1024];

        fprintf(stderr, "-- %s\n", fixture);
        snprintf(root, sizeof(root), "%s/%s", dir, fixture);
        snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
        fixture_write(cfg, CFG);

        /* before: nothing written, the verdict says what is missing */
        snprintf(args, sizeof(args), "preflight --root '%s' --config '%s'", root, cfg);
        run(args, out, sizeof(out));
        CHECK(strstr(out, "WARN kernel-args: not written to the boot loader yet: " ARGS ";") != NULL);

        /* a tool that fails: FAIL, recorded (restore would know), retried next time */
        snprintf(path, sizeof(path), "%s/spinlane-fixture/%s.exit", root, grub ? "update-grub" : "grubby");
        fixture_write(path, "3\n");
        snprintf(args, sizeof(args), "prepare --root '%s' --config '%s'", root, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL prep-kernel-args: writing the boot loader") != NULL);
        CHECK(strstr(out, "failed: exit status 3: ") != NULL);
        CHECK(!exists(root, sentinel));
        unlink(path);
        fixture_write(strcat(strcpy(path, root), "/spinlane-fixture/tools.log"), "");

        /* the write */
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "WARN prep-kernel-args: written to the boot loader (") != NULL);
        CHECK(strstr(out, "reboot pending for " ARGS ";") != NULL);
        CHECK_STR(slurp(root, "/spinlane-fixture/tools.log"), tool_write);
        if (grub) {
                CHECK_STR(slurp(root, "/etc/default/grub.d/99-spinlane.cfg"),
                          "# Written by spinlane-agent (kernel_args.manage in its config). `spinlane-agent restore`\n"
                          "# removes this file; change the agent's config, not this file.\n"
                          "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT " ARGS "\"\n");
                /* the image's own drop-in is untouched */
                CHECK_STR(slurp(root, "/etc/default/grub.d/50-cloudimg-settings.cfg"),
                          "GRUB_CMDLINE_LINUX_DEFAULT=\"console=tty1 console=ttyS0 earlyprintk=ttyS0\"\n");
        } else
                CHECK(!exists(root, "/etc/default/grub.d"));
        CHECK_STR(slurp(root, "/var/lib/spinlane/kernel-args.json"), grub ? STATE("grub-dropin") : STATE("grubby"));
        CHECK(exists(root, sentinel));
        /* /proc/cmdline is the running kernel's: never written */
        CHECK_STR(slurp(root, "/proc/cmdline"), CMDLINE "\n");

        /* idempotent: a second pass calls no tool and rewrites nothing */
        struct stat a, b;
        snprintf(path, sizeof(path), "%s/var/lib/spinlane/kernel-args.json", root);
        CHECK(stat(path, &a) == 0);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "WARN prep-kernel-args: in the boot loader (") != NULL);
        CHECK_STR(slurp(root, "/spinlane-fixture/tools.log"), tool_write);
        CHECK(stat(path, &b) == 0);
        CHECK(a.st_ino == b.st_ino && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_mtim.tv_sec == b.st_mtim.tv_sec);

        /* the verdict before the reboot */
        snprintf(args, sizeof(args), "preflight --json --root '%s' --config '%s'", root, cfg);
        run(args, out, sizeof(out));
        CHECK(strstr(out, "{\"check\": \"kernel-args\", \"verdict\": \"warn\", \"message\": \"reboot pending: " ARGS) != NULL ||
              strstr(out, "\"check\":\"kernel-args\",\"verdict\":\"warn\",\"message\":\"reboot pending: " ARGS) != NULL);

        /* the reboot: the kernel runs with the args; /run is a tmpfs, the sentinel is gone */
        snprintf(path, sizeof(path), "%s/proc/cmdline", root);
        fixture_write(path, CMDLINE " " ARGS "\n");
        snprintf(path, sizeof(path), "%s%s", root, sentinel);
        CHECK(unlink(path) == 0);
        snprintf(args, sizeof(args), "preflight --root '%s' --config '%s'", root, cfg);
        run(args, out, sizeof(out));
        CHECK(strstr(out, "PASS kernel-args: the running kernel has " ARGS "\n") != NULL);
        snprintf(args, sizeof(args), "prepare --root '%s' --config '%s'", root, cfg);
        run(args, out, sizeof(out));
        CHECK(strstr(out, "PASS prep-kernel-args: the running kernel has " ARGS "\n") != NULL);
        CHECK_STR(slurp(root, "/spinlane-fixture/tools.log"), tool_write); /* nothing run */
        CHECK(!exists(root, sentinel));                                    /* none set again */

        /* restore: exactly what was written goes; the running kernel still has it, so
         * the sentinel asks for the reboot that takes it out */
        snprintf(args, sizeof(args), "restore --root '%s'", root);
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "took back the kernel arguments " ARGS " (") != NULL);
        CHECK(strstr(out, "the running kernel still has them: reboot the node") != NULL);
        snprintf(log2, sizeof(log2), "%s%s", tool_write, tool_restore);
        CHECK_STR(slurp(root, "/spinlane-fixture/tools.log"), log2);
        CHECK(!exists(root, "/etc/default/grub.d/99-spinlane.cfg"));
        CHECK(!exists(root, "/var/lib/spinlane/kernel-args.json"));
        CHECK(exists(root, sentinel));
        if (grub)
                CHECK(exists(root, "/etc/default/grub.d/50-cloudimg-settings.cfg"));
        /* restore again: nothing recorded, nothing run */
        CHECK_INT(run(args, out, sizeof(out)), 0);
        CHECK(strstr(out, "nothing to take back") != NULL);
        CHECK_STR(slurp(root, "/spinlane-fixture/tools.log"), log2);
}

/* An isolcpus= the node image set, other than the config's: never overwritten. */
static void test_conflict(void)
{
        static char out[1 << 16];
        char root[700], cfg[700], args[2048], path[1024];
        snprintf(root, sizeof(root), "%s/eks-al2023-plain", dir);
        snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
        snprintf(path, sizeof(path), "%s/proc/cmdline", root);
        fixture_write(path, CMDLINE " isolcpus=4-7\n");
        fixture_write(strcat(strcpy(path, root), "/spinlane-fixture/tools.log"), "");
        snprintf(args, sizeof(args), "prepare --root '%s' --config '%s'", root, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL prep-kernel-args: the kernel command line has isolcpus=4-7, not written by spinlane") != NULL);
        CHECK_STR(slurp(root, "/spinlane-fixture/tools.log"), "");
        CHECK(!exists(root, "/var/lib/spinlane/kernel-args.json"));
        snprintf(args, sizeof(args), "preflight --root '%s' --config '%s'", root, cfg);
        CHECK_INT(run(args, out, sizeof(out)), 1);
        CHECK(strstr(out, "FAIL kernel-args: the kernel command line has isolcpus=4-7, not spinlane's") != NULL);
        /* manage off: SKIP, naming what it would add */
        fixture_write(cfg, "{\"cores\":{\"cpus\":\"2-7,10-15\"}}");
        run(args, out, sizeof(out));
        CHECK(strstr(out, "SKIP kernel-args: kernel_args.manage is off: the boot arguments are the node image's (the "
                          "config's cores and hugepages would need: nohz_full=2-7,10-15") != NULL);
}

int main(void)
{
        const char *b = getenv("SPINLANE_BINARY_DIR");

        if (!b)
                TEST_SKIP("SPINLANE_BINARY_DIR is not set (run under ctest)");
        if (access("/bin/sh", X_OK) != 0)
                TEST_SKIP("no /bin/sh for the fixture's fake boot-loader tools");
        snprintf(bin, sizeof(bin), "'%s/agent/spinlane-agent'", b);
        fixture_make(dir, sizeof(dir), "aks-ubuntu-plain eks-al2023-plain");
        /* Ubuntu: /var/run -> /run (absolute: followed under the root); AL2023: ../run */
        test_loader("aks-ubuntu-plain", true, "/run/reboot-required");
        test_loader("eks-al2023-plain", false, "/run/reboot-required");
        test_conflict();
        fixture_remove(dir);
        return test_done();
}
