/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's event loop on epoll, signalfd, timerfd and inotify. Never logs. */
#include "loop.h"

#include "cleanup.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

typedef enum { SRC_FD, SRC_SIGNAL, SRC_TIMER, SRC_INOTIFY } src_kind;

typedef struct source {
        struct source *next;
        src_kind kind;
        int fd;
        bool owned; /* close on removal */
        bool dead;  /* removed during dispatch; freed after the round */
        loop_fd_fn fd_fn;
        loop_signal_fn sig_fn;
        loop_timer_fn timer_fn;
        loop_inotify_fn inotify_fn;
        void *userdata;
} source;

struct loop {
        int epfd;
        source *sources;
        bool exiting;
        int exit_code;
        bool dispatching;
        sigset_t blocked;
        bool have_signals;
};

uint64_t loop_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int loop_new(loop **ret)
{
        loop *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                int r = -errno;
                free(l);
                return r;
        }
        *ret = l;
        return 0;
}

static void source_free(source *s)
{
        if (s->owned && s->fd >= 0)
                close(s->fd);
        free(s);
}

static void reap(loop *l)
{
        for (source **p = &l->sources; *p;) {
                source *s = *p;
                if (s->dead) {
                        *p = s->next;
                        source_free(s);
                } else {
                        p = &s->next;
                }
        }
}

void loop_free(loop *l)
{
        if (!l)
                return;
        while (l->sources) {
                source *s = l->sources;
                l->sources = s->next;
                source_free(s);
        }
        if (l->have_signals)
                sigprocmask(SIG_UNBLOCK, &l->blocked, NULL);
        close(l->epfd);
        free(l);
}

static source *find(loop *l, int fd)
{
        for (source *s = l->sources; s; s = s->next)
                if (s->fd == fd && !s->dead)
                        return s;
        return NULL;
}

/* A copy of *tmpl on the loop, its fd watched for events; nothing changed on failure. */
static int add_source(loop *l, const source *tmpl, uint32_t events)
{
        struct epoll_event ev = {.events = events};
        source *s;

        if (find(l, tmpl->fd))
                return -EEXIST;
        s = malloc(sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = *tmpl;
        ev.data.ptr = s;
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0) {
                int r = -errno;
                free(s);
                return r;
        }
        s->next = l->sources;
        l->sources = s;
        return 0;
}

int loop_add_fd(loop *l, int fd, uint32_t events, loop_fd_fn fn, void *userdata)
{
        return add_source(l, &(source){.kind = SRC_FD, .fd = fd, .fd_fn = fn, .userdata = userdata}, events);
}

int loop_add_inotify(loop *l, int fd, loop_inotify_fn fn, void *userdata)
{
        return add_source(l, &(source){.kind = SRC_INOTIFY, .fd = fd, .inotify_fn = fn, .userdata = userdata},
                          EPOLLIN);
}

static int remove_source(loop *l, int fd, src_kind kind)
{
        source *s = find(l, fd);

        /* the caller's fds, plain or inotify, go the same way */
        if (!s || (s->kind != kind && !(kind == SRC_FD && s->kind == SRC_INOTIFY)))
                return -ENOENT;
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        s->dead = true;
        if (!l->dispatching)
                reap(l);
        return 0;
}

int loop_remove_fd(loop *l, int fd) { return remove_source(l, fd, SRC_FD); }

int loop_add_signals(loop *l, const int *signals, size_t n, loop_signal_fn fn, void *userdata)
{
        sigset_t set;
        int r;

        if (l->have_signals)
                return -EEXIST;
        sigemptyset(&set);
        for (size_t i = 0; i < n; i++)
                sigaddset(&set, signals[i]);
        _cleanup_close_ int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = add_source(l, &(source){.kind = SRC_SIGNAL, .fd = fd, .owned = true, .sig_fn = fn, .userdata = userdata},
                       EPOLLIN);
        if (r < 0)
                return r;
        TAKE_FD(fd);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return -errno;
        l->blocked = set;
        l->have_signals = true;
        return 0;
}

static void ms_to_ts(uint64_t ms, struct timespec *ts)
{
        ts->tv_sec = (time_t)(ms / 1000);
        ts->tv_nsec = (long)(ms % 1000) * 1000000;
}

int loop_timer_set(loop *l, int timer_fd, uint64_t first_ms, uint64_t interval_ms)
{
        struct itimerspec its = {0};
        source *s = find(l, timer_fd);

        if (!s || s->kind != SRC_TIMER)
                return -ENOENT;
        /* 0 disarms a timerfd, so "now" is 1 ns */
        if (first_ms == 0 && interval_ms != 0)
                its.it_value.tv_nsec = 1;
        else
                ms_to_ts(first_ms, &its.it_value);
        ms_to_ts(interval_ms, &its.it_interval);
        if (timerfd_settime(timer_fd, 0, &its, NULL) < 0)
                return -errno;
        return 0;
}

int loop_timer_at(loop *l, int timer_fd, uint64_t at_ms)
{
        uint64_t now = loop_now_ms();
        if (at_ms == UINT64_MAX)
                return loop_timer_set(l, timer_fd, 0, 0);
        return loop_timer_set(l, timer_fd, at_ms > now ? at_ms - now : 1, 0);
}

int loop_add_timer(loop *l, uint64_t first_ms, uint64_t interval_ms, loop_timer_fn fn,
                   void *userdata, int *ret_fd)
{
        int r;
        _cleanup_close_ int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

        if (fd < 0)
                return -errno;
        r = add_source(l, &(source){.kind = SRC_TIMER, .fd = fd, .owned = true, .timer_fn = fn, .userdata = userdata},
                       EPOLLIN);
        if (r < 0)
                return r;
        int tfd = TAKE_FD(fd);
        r = loop_timer_set(l, tfd, first_ms ? first_ms : (interval_ms ? 0 : 1), interval_ms);
        if (r < 0) {
                remove_source(l, tfd, SRC_TIMER);
                return r;
        }
        if (ret_fd)
                *ret_fd = tfd;
        return 0;
}

int loop_remove_timer(loop *l, int timer_fd) { return remove_source(l, timer_fd, SRC_TIMER); }

/* Reads s's inotify fd as loop_add_inotify() says; stops when the callback fails or
 * removes the source. */
static int dispatch_inotify(loop *l, source *s)
{
        /* room for at least one event with the longest name (NAME_MAX + 1) */
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        _Static_assert(sizeof(buf) >= sizeof(struct inotify_event) + NAME_MAX + 1, "inotify buffer too small");

        for (unsigned reads = 0; reads < LOOP_INOTIFY_READS_MAX; reads++) {
                ssize_t n = read(s->fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                for (size_t off = 0; (size_t)n - off >= sizeof(struct inotify_event);) {
                        const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
                        if (ev->len > (size_t)n - off - sizeof(*ev))
                                break;
                        off += sizeof(*ev) + ev->len;
                        int r = s->inotify_fn(l, ev, s->userdata);
                        if (r < 0 || s->dead)
                                return r;
                }
        }
        return s->inotify_fn(l, NULL, s->userdata);
}

static int dispatch(loop *l, source *s, uint32_t events)
{
        switch (s->kind) {
        case SRC_FD:
                return s->fd_fn(l, s->fd, events, s->userdata);
        case SRC_SIGNAL: {
                struct signalfd_siginfo si;
                ssize_t k;
                while ((k = read(s->fd, &si, sizeof(si))) == (ssize_t)sizeof(si)) {
                        int r = s->sig_fn(l, (int)si.ssi_signo, s->userdata);
                        if (r < 0 || s->dead)
                                return r;
                }
                return 0;
        }
        case SRC_TIMER: {
                uint64_t expirations;
                if (read(s->fd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
                        return 0; /* spurious (re-armed meanwhile) */
                return s->timer_fn(l, s->userdata);
        }
        case SRC_INOTIFY:
                return dispatch_inotify(l, s);
        }
        return 0;
}

int loop_run_once(loop *l, int timeout_ms)
{
        struct epoll_event evs[32];
        int n, r = 0;

        if (l->exiting)
                return 1;
        n = epoll_wait(l->epfd, evs, (int)ELEMENTSOF(evs), timeout_ms);
        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        l->dispatching = true;
        for (int i = 0; i < n && r >= 0 && !l->exiting; i++) {
                source *s = evs[i].data.ptr;
                if (s->dead)
                        continue;
                r = dispatch(l, s, evs[i].events);
        }
        l->dispatching = false;
        reap(l);
        if (r < 0)
                return r;
        return l->exiting ? 1 : 0;
}

int loop_run(loop *l)
{
        for (;;) {
                int r = loop_run_once(l, -1);
                if (r < 0)
                        return r;
                if (r > 0)
                        return l->exit_code;
        }
}

void loop_exit(loop *l, int code)
{
        l->exiting = true;
        l->exit_code = code;
}
