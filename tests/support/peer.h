/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper: start a Python peer script (a real server on loopback) with /usr/bin/python3,
 * wait for its "READY k=v ..." line, talk to it over its stdin/stdout, stop it by closing
 * its stdin. Header only; used by the http, cloud and kube tests. */
#ifndef SPIN_TEST_PEER_H
#define SPIN_TEST_PEER_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PEER_PYTHON "/usr/bin/python3"

typedef struct peer {
        pid_t pid;
        int in_fd;  /* the peer's stdin */
        int out_fd; /* the peer's stdout */
        char ready[2048];
        char buf[8192];
        size_t buf_len;
} peer;

static inline bool peer_have(const char *prog)
{
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
        return system(cmd) == 0;
}

/* The path of a file in the source tree (SPINLANE_SOURCE_DIR is set by ctest). */
static inline const char *peer_source_path(const char *rel, char *buf, size_t len)
{
        const char *src = getenv("SPINLANE_SOURCE_DIR");
        snprintf(buf, len, "%s/%s", src ? src : ".", rel);
        return buf;
}

/* One line from the peer into line (without '\n'), waiting at most timeout_ms.
 * 1 = a line, 0 = timeout, negative = EOF/error. */
static inline int peer_read_line(peer *p, char *line, size_t len, int timeout_ms)
{
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                char *nl = memchr(p->buf, '\n', p->buf_len);
                if (nl) {
                        size_t n = (size_t)(nl - p->buf);
                        snprintf(line, len, "%.*s", (int)n, p->buf);
                        memmove(p->buf, nl + 1, p->buf_len - n - 1);
                        p->buf_len -= n + 1;
                        return 1;
                }
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
                struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
                int k = poll(&pfd, 1, spent >= timeout_ms ? 0 : (int)(timeout_ms - spent));
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k == 0)
                        return 0;
                if (k < 0)
                        continue;
                if (p->buf_len >= sizeof(p->buf) - 1)
                        return -ENOBUFS;
                ssize_t r = read(p->out_fd, p->buf + p->buf_len, sizeof(p->buf) - 1 - p->buf_len);
                if (r <= 0)
                        return r == 0 ? -EPIPE : -errno;
                p->buf_len += (size_t)r;
        }
}

/* argv[0] is the script path; argv is NULL-terminated. Waits (generously) for READY. */
static inline int peer_start(peer *p, const char *const *argv)
{
        int in[2], out[2];
        memset(p, 0, sizeof(*p));
        if (pipe(in) < 0 || pipe(out) < 0)
                return -errno;
        p->pid = fork();
        if (p->pid < 0)
                return -errno;
        if (p->pid == 0) {
                const char *args[32] = {PEER_PYTHON};
                size_t n = 1;
                for (size_t i = 0; argv[i] && n < 31; i++)
                        args[n++] = argv[i];
                dup2(in[0], 0);
                dup2(out[1], 1);
                close(in[0]);
                close(in[1]);
                close(out[0]);
                close(out[1]);
                execv(PEER_PYTHON, (char *const *)args);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        p->in_fd = in[1];
        p->out_fd = out[0];
        for (;;) {
                int k = peer_read_line(p, p->ready, sizeof(p->ready), 120000);
                if (k <= 0) {
                        fprintf(stderr, "peer %s: no READY line (%d)\n", argv[0], k);
                        return k == 0 ? -ETIMEDOUT : k;
                }
                if (strncmp(p->ready, "READY ", 6) == 0)
                        return 0;
        }
}

/* The value of key=... in the READY line. */
static inline const char *peer_get(const peer *p, const char *key, char *buf, size_t len)
{
        size_t n = strlen(key);
        for (const char *s = p->ready; (s = strstr(s, key)); s += n) {
                if ((s == p->ready || s[-1] == ' ') && s[n] == '=') {
                        const char *v = s + n + 1, *e = strchr(v, ' ');
                        snprintf(buf, len, "%.*s", (int)(e ? (size_t)(e - v) : strlen(v)), v);
                        return buf;
                }
        }
        buf[0] = '\0';
        return NULL;
}

static inline int peer_send(peer *p, const char *line)
{
        size_t n = strlen(line);
        if (write(p->in_fd, line, n) != (ssize_t)n || write(p->in_fd, "\n", 1) != 1)
                return -EPIPE;
        return 0;
}

/* Close the peer's stdin (it stops and cleans up), wait for it. Returns its exit status. */
static inline int peer_stop(peer *p)
{
        int st = 0;
        if (p->pid <= 0)
                return 0;
        close(p->in_fd);
        close(p->out_fd);
        if (waitpid(p->pid, &st, 0) < 0)
                st = -1;
        p->pid = 0;
        return st;
}

#endif
