/* SPDX-License-Identifier: Apache-2.0 */
/* Runs spinlane-datapath before the driver (fork, exec, a pipe read with a deadline,
 * waitpid) and reads its verdict lines back. ldp_parse is pure; ldp_run does process
 * I/O but never logs: what went wrong becomes a verdict. */
#include "launch-datapath.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc-env.h"

int ldp_parse(const char *buf, size_t len, verdict_list *vl, unsigned *ret_bad)
{
        unsigned bad = 0;
        size_t pos = 0;
        while (pos < len) {
                const char *nl = memchr(buf + pos, '\n', len - pos);
                size_t end = nl ? (size_t)(nl - buf) : len;
                json_error_t je;
                size_t start = pos;
                json_t *o = end > start ? json_loadb(buf + start, end - start, JSON_REJECT_DUPLICATES, &je) : NULL;
                pos = end + 1;
                if (!o) {
                        bad += end > start; /* an empty line is nothing */
                        continue;
                }
                const char *check = json_string_value(json_object_get(o, "check"));
                const char *lvl = json_string_value(json_object_get(o, "verdict"));
                const char *msg = json_string_value(json_object_get(o, "message"));
                json_t *rem = json_object_get(o, "remedy"), *ev = json_object_get(o, "evidence");
                int level = -1;
                for (int l = 0; lvl && l < _VERDICT_MAX; l++)
                        if (strcmp(lvl, verdict_level_name((verdict_level)l)) == 0)
                                level = l;
                if (!check || strcmp(check, "datapath") != 0 || level < 0 || !msg || (rem && !json_is_string(rem) && !json_is_null(rem)) ||
                    (ev && !json_is_object(ev))) {
                        bad++;
                        json_decref(o);
                        continue;
                }
                int r = verdict_add(vl, "datapath", (verdict_level)level, ev ? json_incref(ev) : NULL,
                                    json_is_string(rem) ? json_string_value(rem) : NULL, "%s", msg);
                json_decref(o);
                if (r < 0)
                        return r;
        }
        *ret_bad = bad;
        return 0;
}

static uint64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#define REMEDY_HELPER                                                                                                  \
        "spinlane-datapath is installed beside spinlane-launch in spinlane's driver image; with another image set "  \
        "SPINLANE_DATAPATH=off to start without the check (docs/launch.md)."

int ldp_run(const char *helper, const launch_env *env, char *const *envp, verdict_list *vl)
{
        const lenv_datapath *d = &env->datapath;
        char rounds[16], timeout[16], p99[16];
        char *argv[12];
        int k = 0, fds[2];

        snprintf(rounds, sizeof(rounds), "%u", d->rounds);
        snprintf(timeout, sizeof(timeout), "%u", d->timeout_ms);
        snprintf(p99, sizeof(p99), "%u", d->max_p99_us);
        argv[k++] = (char *)helper;
        argv[k++] = (char *)"--json";
        argv[k++] = (char *)"--rounds";
        argv[k++] = rounds;
        argv[k++] = (char *)"--timeout-ms";
        argv[k++] = timeout;
        if (d->peer[0]) {
                argv[k++] = (char *)"--peer";
                argv[k++] = (char *)d->peer;
        }
        if (d->max_p99_us) {
                argv[k++] = (char *)"--max-p99-us";
                argv[k++] = p99;
        }
        argv[k] = NULL;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return verdict_add(vl, "datapath", VERDICT_FAIL, NULL, NULL, "cannot run %s: pipe: %s", helper, strerror(errno));
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(fds[0]);
                close(fds[1]);
                return verdict_add(vl, "datapath", VERDICT_FAIL, NULL, NULL, "cannot run %s: fork: %s", helper, strerror(e));
        }
        if (pid == 0) {
                dup2(fds[1], STDOUT_FILENO);
                execve(helper, argv, envp);
                dprintf(STDERR_FILENO, "spinlane-launch: exec %s: %s\n", helper, strerror(errno));
                _exit(127);
        }
        close(fds[1]);
        /* the helper bounds every step by timeout_ms (port start and link, ARP per port,
         * each path's first answer) and the rest by rounds x 200 ms at worst */
        uint64_t bound = 8ull * d->timeout_ms + (uint64_t)d->rounds * 200 + 30000, end = now_ms() + bound;
        char *buf = malloc(LDP_OUTPUT_MAX);
        size_t len = 0;
        bool timed_out = false;
        if (!buf) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                close(fds[0]);
                return -ENOMEM;
        }
        for (;;) {
                uint64_t t = now_ms();
                if (t >= end) {
                        timed_out = true;
                        break;
                }
                struct pollfd pf = { .fd = fds[0], .events = POLLIN };
                int pr = poll(&pf, 1, (int)(end - t));
                if (pr < 0 && errno == EINTR)
                        continue;
                if (pr <= 0)
                        continue;
                char tmp[4096];
                ssize_t n = read(fds[0], tmp, sizeof(tmp));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                size_t take = (size_t)n < LDP_OUTPUT_MAX - len ? (size_t)n : LDP_OUTPUT_MAX - len;
                memcpy(buf + len, tmp, take);
                len += take;
        }
        close(fds[0]);
        if (timed_out)
                kill(pid, SIGKILL);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        size_t n_before = vl->n;
        unsigned bad = 0;
        int r = ldp_parse(buf, len, vl, &bad);
        free(buf);
        if (r < 0)
                return r;
        if (timed_out)
                return verdict_add(vl, "datapath", VERDICT_FAIL, NULL, NULL, "%s did not finish within %llu ms (killed)", helper,
                                   (unsigned long long)bound);
        if (vl->n == n_before) {
                if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
                        return verdict_add(vl, "datapath", VERDICT_FAIL, NULL, REMEDY_HELPER, "cannot run %s", helper);
                if (WIFSIGNALED(st))
                        return verdict_add(vl, "datapath", VERDICT_FAIL, NULL, NULL, "%s died of signal %d before a verdict", helper,
                                           WTERMSIG(st));
                return verdict_add(vl, "datapath", VERDICT_FAIL, NULL, NULL, "%s gave no verdict (exit %d, %u unreadable line(s))",
                                   helper, WIFEXITED(st) ? WEXITSTATUS(st) : -1, bad);
        }
        return 0;
}
