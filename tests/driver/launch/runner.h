/* SPDX-License-Identifier: Apache-2.0 */
/* Runs a program with a given argv and envp, optionally moving the child into a cgroup
 * first (writing its pid to cgroup.procs before exec), and captures its stdout and exit
 * code. Header-only test helper. */
#ifndef SPIN_TEST_LAUNCH_RUNNER_H
#define SPIN_TEST_LAUNCH_RUNNER_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Returns the exit code (or 128+signal), the output in *ret_out (malloc'ed). */
static int run_capture(char *const argv[], char *const envp[], const char *cgroup_procs, char **ret_out)
{
        int fds[2];
        if (pipe(fds) < 0) {
                perror("pipe");
                exit(1);
        }
        pid_t pid = fork();
        if (pid < 0) {
                perror("fork");
                exit(1);
        }
        if (pid == 0) {
                dup2(fds[1], 1);
                close(fds[0]);
                close(fds[1]);
                if (cgroup_procs) {
                        FILE *f = fopen(cgroup_procs, "w");
                        if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
                                perror(cgroup_procs);
                                _exit(99);
                        }
                }
                execve(argv[0], argv, envp);
                perror(argv[0]);
                _exit(98);
        }
        close(fds[1]);
        size_t cap = 4096, n = 0;
        char *buf = malloc(cap);
        for (;;) {
                if (n + 1024 > cap)
                        buf = realloc(buf, cap *= 2);
                ssize_t k = read(fds[0], buf + n, cap - n - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = '\0';
        close(fds[0]);
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        *ret_out = buf;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The value of NAME=... on a line of its own in text (as env(1) prints it), or NULL. */
__attribute__((unused)) static const char *env_line(const char *text, const char *name, char *buf, size_t size)
{
        size_t n = strlen(name);
        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                if (strncmp(p, name, n) == 0 && p[n] == '=') {
                        size_t l = strcspn(p + n + 1, "\n");
                        if (l >= size)
                                l = size - 1;
                        memcpy(buf, p + n + 1, l);
                        buf[l] = '\0';
                        return buf;
                }
        }
        return NULL;
}

#endif
