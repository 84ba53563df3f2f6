/* SPDX-License-Identifier: Apache-2.0 */
/* The real thing: a cgroup v1 CFS quota made on this machine. Creates a cgroup under the
 * v1 cpu hierarchy, sets a quota of half a CPU, runs spinlane-launch --check-only inside
 * it (the child writes its pid to cgroup.procs before exec) against the real root, and
 * asserts the cpu-quota fail; then without a quota, the pass. Removes the cgroup. */
#include "runner.h"
#include "testutil.h"

#include <sys/stat.h>

#define CPU_V1 "/sys/fs/cgroup/cpu"

static void write_file(const char *dir, const char *name, const char *value)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "w");
        if (!f || fputs(value, f) < 0 || fclose(f) != 0) {
                perror(path);
                exit(1);
        }
}

static const char *verdict_line(const char *out, const char *id, char *buf, size_t size)
{
        char key[64];
        snprintf(key, sizeof(key), "\"check\":\"%s\"", id);
        const char *p = strstr(out, key);
        if (!p)
                return NULL;
        while (p > out && p[-1] != '\n')
                p--;
        size_t l = strcspn(p, "\n");
        if (l >= size)
                l = size - 1;
        memcpy(buf, p, l);
        buf[l] = '\0';
        return buf;
}

int main(int argc, char **argv)
{
        char dir[256], procs[300], line[4096], *out;
        struct stat st;

        if (argc < 2)
                TEST_SKIP("usage: test-launch-realquota PATH-TO-spinlane-launch");
        if (geteuid() != 0)
                TEST_SKIP("needs root to create a cgroup");
        if (stat(CPU_V1 "/cpu.cfs_quota_us", &st) < 0)
                TEST_SKIP("no cgroup v1 cpu controller at " CPU_V1);
        snprintf(dir, sizeof(dir), CPU_V1 "/sl-launch-test-%d", (int)getpid());
        if (mkdir(dir, 0755) < 0)
                TEST_SKIP("cannot create %s: %s", dir, strerror(errno));
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
        write_file(dir, "cpu.cfs_period_us", "100000");
        write_file(dir, "cpu.cfs_quota_us", "50000");

        char *envp[] = { "SPINLANE_ISOLATED_CPUS=0-1", "PATH=/usr/bin:/bin", NULL };
        char *args[] = { argv[1], "--json", "--check-only", "--root", "/", NULL };

        int rc = run_capture(args, envp, procs, &out);
        CHECK_INT(rc, 1);
        const char *l = verdict_line(out, "cpu-quota", line, sizeof(line));
        CHECK(l != NULL);
        if (l) {
                CHECK(strstr(l, "\"verdict\":\"fail\"") != NULL);
                CHECK(strstr(l, "container has a CFS quota of 0.5 CPUs (cpu.cfs_quota_us 50000, cpu.cfs_period_us 100000)") != NULL);
                char want[300];
                snprintf(want, sizeof(want), "\"dir\":\"%s\"", dir);
                CHECK(strstr(l, want) != NULL);
                CHECK(strstr(l, "\"quota_us\":50000") != NULL);
        }
        free(out);

        /* the same cgroup without a quota passes */
        write_file(dir, "cpu.cfs_quota_us", "-1");
        rc = run_capture(args, envp, procs, &out);
        l = verdict_line(out, "cpu-quota", line, sizeof(line));
        CHECK(l && strstr(l, "\"verdict\":\"pass\"") != NULL);
        free(out);

        /* the children have exited, so the cgroup is empty and can go */
        if (rmdir(dir) < 0) {
                fprintf(stderr, "rmdir %s: %s\n", dir, strerror(errno));
                test_failures++;
        }
        return test_done();
}
