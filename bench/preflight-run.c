/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark helper for bench/preflight.sh: runs a command RUNS times (after WARMUP runs)
 * with fork+exec from this small process, and prints the median, p90 and min wall time
 * and the peak RSS of the child (ru_maxrss of wait4; a forked child keeps the larger of
 * its pre-exec and post-exec high-water marks, so the parent is kept tiny: no Python),
 * and the median CPU time (user+sys), which other load on the machine disturbs less.
 * Usage: preflight-run RUNS WARMUP COMMAND [ARGS...] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
        if (argc < 4) {
                fprintf(stderr, "usage: %s RUNS WARMUP COMMAND [ARGS...]\n", argv[0]);
                return 2;
        }
        int runs = atoi(argv[1]), warm = atoi(argv[2]);
        if (runs < 1 || runs > 100000 || warm < 0)
                return 2;
        double *ms = calloc((size_t)runs, sizeof(double)), *cpu = calloc((size_t)runs, sizeof(double));
        long maxrss = 0;
        for (int i = 0; i < warm + runs; i++) {
                struct timespec a, b;
                struct rusage ru;
                int st;
                clock_gettime(CLOCK_MONOTONIC, &a);
                pid_t p = fork();
                if (p == 0) {
                        int fd = open("/dev/null", O_WRONLY);
                        dup2(fd, 1);
                        dup2(fd, 2);
                        execv(argv[3], argv + 3);
                        _exit(127);
                }
                if (p < 0 || wait4(p, &st, 0, &ru) < 0)
                        return 2;
                clock_gettime(CLOCK_MONOTONIC, &b);
                if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
                        fprintf(stderr, "%s exited with status %d\n", argv[3], st);
                        return 2;
                }
                if (i >= warm) {
                        ms[i - warm] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
                        cpu[i - warm] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                                        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
                        if (ru.ru_maxrss > maxrss)
                                maxrss = ru.ru_maxrss;
                }
        }
        qsort(ms, (size_t)runs, sizeof(double), cmp);
        qsort(cpu, (size_t)runs, sizeof(double), cmp);
        printf("wall median %.2f ms  p90 %.2f ms  min %.2f ms | cpu median %.2f ms | peak RSS %.2f MiB (%d runs)\n",
               ms[runs / 2], ms[runs * 9 / 10], ms[0], cpu[runs / 2], maxrss / 1024.0, runs);
        free(ms);
        free(cpu);
        return 0;
}
