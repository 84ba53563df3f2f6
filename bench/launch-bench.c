/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark: time from starting spinlane-launch to the driver command running, with all
 * checks, on a pod-view fixture (every check passes) and on this machine's real root.
 * The exec'd command is this program in --stamp mode, which prints CLOCK_MONOTONIC at
 * the top of main; a control arm execs it directly (no launcher) with the same harness,
 * and the difference is the launcher's own cost. Prints p50/p99/max per arm. */
#include "fixture.h"

#include <stdint.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Run argv with envp, return (stamp printed by the child) - (time before fork). */
static int64_t one(char *const argv[], char *const envp[])
{
        int fds[2];
        char buf[256];
        size_t n = 0;

        if (pipe(fds) < 0)
                fx_die("pipe");
        uint64_t t0 = now_ns();
        pid_t pid = fork();
        if (pid == 0) {
                dup2(fds[1], 1);
                int devnull = open("/dev/null", O_WRONLY);
                dup2(devnull, 2);
                close(fds[0]);
                close(fds[1]);
                execve(argv[0], argv, envp);
                _exit(98);
        }
        close(fds[1]);
        for (ssize_t k; (k = read(fds[0], buf + n, sizeof(buf) - 1 - n)) > 0;) {
                n += (size_t)k;
                if (n == sizeof(buf) - 1) /* keep the tail: the stamp is the last line */
                        memmove(buf, buf + 128, n -= 128);
        }
        buf[n] = '\0';
        close(fds[0]);
        int st;
        waitpid(pid, &st, 0);
        const char *s = strstr(buf, "STAMP ");
        if (!s || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return -1;
        return (int64_t)(strtoull(s + 6, NULL, 10) - t0);
}

static int cmp(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return x < y ? -1 : x > y;
}

static void arm(const char *name, char *const argv[], char *const envp[], unsigned runs)
{
        int64_t *t = calloc(runs, sizeof(*t));
        unsigned ok = 0;

        for (unsigned i = 0; i < 20; i++) /* warm-up: page cache, dynamic loader */
                one(argv, envp);
        for (unsigned i = 0; i < runs; i++) {
                int64_t v = one(argv, envp);
                if (v >= 0)
                        t[ok++] = v;
        }
        qsort(t, ok, sizeof(*t), cmp);
        if (ok)
                printf("%-28s runs=%u/%u p50=%.3f ms p99=%.3f ms max=%.3f ms\n", name, ok, runs, t[ok / 2] / 1e6,
                       t[(ok * 99) / 100 < ok ? (ok * 99) / 100 : ok - 1] / 1e6, t[ok - 1] / 1e6);
        else
                printf("%-28s runs=0/%u (every run failed)\n", name, runs);
        free(t);
}

int main(int argc, char **argv)
{
        if (argc >= 2 && strcmp(argv[1], "--stamp") == 0) {
                printf("STAMP %llu\n", (unsigned long long)now_ns());
                return 0;
        }
        if (argc < 2) {
                fprintf(stderr, "usage: bench-launch PATH-TO-spinlane-launch [RUNS]\n");
                return 2;
        }
        unsigned runs = argc >= 3 ? (unsigned)atoi(argv[2]) : 300;
        char self[4096];
        ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (k < 0)
                fx_die("readlink");
        self[k] = '\0';

        char *root = fx_new_root();
        fx_pod p = { .cg = FX_V1, .cgroup_path = "/kubepods/pod1/ctr", .free_hugepages = 512, .cpus_allowed = "1-3,5-7" };
        fx_build(root, &p);
        char *envp[] = { "SPINLANE_ISOLATED_CPUS=1-3,5-7", "SPINLANE_ISOLATED_CORES=1,2,3",
                         "SPINLANE_DPDK_NICS=0000:00:06.0", "SPINLANE_NIC_0_KIND=ena", "SPINLANE_NIC_0_DRIVER=vfio-pci",
                         "SPINLANE_NIC_0_NUMA=0", "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio,/dev/vfio/7",
                         "SPINLANE_NIC_0_IPV4=10.0.1.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.1.1", "HOSTNAME=bench-0", NULL };
        /* the same pod choosing Aeron's kernel UDP: aeron-bindings loads no library */
        char *kernel_env[] = { "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=default", "SPINLANE_ISOLATED_CPUS=1-3,5-7",
                               "SPINLANE_ISOLATED_CORES=1,2,3", "SPINLANE_DPDK_NICS=0000:00:06.0", "SPINLANE_NIC_0_KIND=ena",
                               "SPINLANE_NIC_0_DRIVER=vfio-pci", "SPINLANE_NIC_0_NUMA=0",
                               "SPINLANE_NIC_0_DEVICES=/dev/vfio/vfio,/dev/vfio/7", "SPINLANE_NIC_0_IPV4=10.0.1.10/24", "SPINLANE_NIC_0_GATEWAY=10.0.1.1",
                               "HOSTNAME=bench-0", NULL };
        char *direct[] = { self, "--stamp", NULL };
        char *fixture[] = { argv[1], "--root", root, "--", self, "--stamp", NULL };
        char *real[] = { argv[1], "--warn-only", "--", self, "--stamp", NULL };
        char *real_env[] = { "SPINLANE_ISOLATED_CPUS=0-1", "SPINLANE_DPDK_NICS=0000:00:06.0", "SPINLANE_NIC_0_DRIVER=vfio-pci",
                             "SPINLANE_NIC_0_DEVICES=/dev/null", "HOSTNAME=bench-0", NULL };

        printf("bench-launch: start-to-exec of spinlane-launch, %u runs per arm after 20 warm-up runs\n", runs);
        arm("control (exec, no launcher)", direct, envp, runs);
        arm("launcher, fixture, all pass (loads libspinlane_aeron.so)", fixture, envp, runs);
        arm("launcher, fixture, kernel UDP (no bindings to load)", fixture, kernel_env, runs);
        arm("launcher, real root /", real, real_env, runs);
        fx_remove(root);
        free(root);
        return 0;
}
