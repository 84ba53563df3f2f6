/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for the event loop: fds, removal inside callbacks, timers, signals, inotify (a
 * real watch on a temporary dir, a real queue overflow). */
#include "loop.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

static int fd_hits, timer_hits, sig_seen;

static int on_event(loop *l, int fd, uint32_t events, void *ud)
{
        uint64_t v;
        (void)ud;
        CHECK(events & EPOLLIN);
        CHECK_INT(read(fd, &v, sizeof(v)), sizeof(v));
        fd_hits++;
        /* removing oneself inside the callback must be safe */
        CHECK_INT(loop_remove_fd(l, fd), 0);
        return 0;
}

static int on_timer(loop *l, void *ud)
{
        (void)ud;
        if (++timer_hits == 3)
                loop_exit(l, 5);
        return 0;
}

static int at_hits;

static int on_at(loop *l, void *ud)
{
        (void)l;
        (void)ud;
        at_hits++;
        return 0;
}

static int on_signal(loop *l, int signo, void *ud)
{
        (void)ud;
        sig_seen = signo;
        loop_exit(l, 9);
        return 0;
}

static int on_fail(loop *l, int fd, uint32_t events, void *ud)
{
        (void)l, (void)fd, (void)events, (void)ud;
        return -EIO;
}

/* What the inotify callback saw. */
static struct {
        int events, ends, overflows, created;
        bool exit_on_create, remove_on_event;
        int fail_after; /* fail on this many events (0: never) */
        int fd;
} ino;

static int on_inotify(loop *l, const struct inotify_event *ev, void *ud)
{
        CHECK(ud == &ino);
        if (!ev) {
                ino.ends++;
                return 0;
        }
        ino.events++;
        CHECK((uintptr_t)ev % __alignof__(struct inotify_event) == 0);
        if (ev->mask & IN_Q_OVERFLOW) {
                CHECK_INT(ev->wd, -1);
                ino.overflows++;
        }
        if ((ev->mask & IN_CREATE) && ev->len && strcmp(ev->name, "a-file") == 0) {
                ino.created++;
                if (ino.exit_on_create)
                        loop_exit(l, 3);
        }
        if (ino.remove_on_event)
                CHECK_INT(loop_remove_fd(l, ino.fd), 0);
        if (ino.fail_after && ino.events == ino.fail_after)
                return -EBADMSG;
        return 0;
}

/* Rounds until cond or TEST_WAIT_MS. */
#define RUN_UNTIL(l, cond)                                                                 \
        do {                                                                               \
                uint64_t _t0 = loop_now_ms();                                              \
                while (!(cond) && loop_now_ms() - _t0 < TEST_WAIT_MS)                      \
                        CHECK(loop_run_once((l), 100) >= 0);                               \
                CHECK(cond);                                                               \
        } while (0)

/* fs.inotify.max_queued_events, or 0 when it cannot be read. */
static long max_queued_events(void)
{
        FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "re");
        long v = 0;
        if (f) {
                if (fscanf(f, "%ld", &v) != 1)
                        v = 0;
                fclose(f);
        }
        return v;
}

static void test_inotify(void)
{
        char dir[] = "/tmp/test-loop-XXXXXX", path[PATH_MAX];
        loop *l;

        if (!mkdtemp(dir))
                TEST_FATAL("mkdtemp: %s", strerror(errno));
        snprintf(path, sizeof(path), "%s/a-file", dir);
        int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        CHECK(ifd >= 0);
        CHECK(inotify_add_watch(ifd, dir, IN_CREATE | IN_OPEN | IN_CLOSE_NOWRITE | IN_ONLYDIR) >= 0);
        ino.fd = ifd;

        /* one file made: its event, then the round's end */
        CHECK_INT(loop_new(&l), 0);
        CHECK_INT(loop_add_inotify(l, ifd, on_inotify, &ino), 0);
        CHECK_INT(loop_add_inotify(l, ifd, on_inotify, &ino), -EEXIST);
        CHECK_INT(loop_add_fd(l, ifd, EPOLLIN, on_event, NULL), -EEXIST);
        int f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHECK(f >= 0);
        close(f);
        RUN_UNTIL(l, ino.created == 1 && ino.ends >= 1);
        CHECK_INT(ino.overflows, 0);

        /* a queue overflow comes to the callback; many events take several bounded rounds */
        long max = max_queued_events();
        if (max > 0 && max <= 1000000) {
                ino.events = ino.ends = 0;
                /* open/close alternate, so the kernel cannot merge them */
                for (long i = 0; i <= max / 2 + 1; i++) {
                        f = open(path, O_RDONLY | O_CLOEXEC);
                        CHECK(f >= 0);
                        close(f);
                }
                RUN_UNTIL(l, ino.overflows == 1);
                CHECK(ino.events >= max);
                CHECK(ino.ends >= 2); /* max events of >= 16 bytes: more than one round of 64 4 KiB reads */
        } else {
                printf("inotify overflow part not run: fs.inotify.max_queued_events is %ld\n", max);
        }
        loop_free(l);

        /* a callback's error stops loop_run() with it, without the end call */
        CHECK_INT(loop_new(&l), 0);
        CHECK_INT(loop_add_inotify(l, ifd, on_inotify, &ino), 0);
        ino.events = ino.ends = 0;
        ino.fail_after = 2;
        for (int i = 0; i < 3; i++) {
                f = open(path, O_RDONLY | O_CLOEXEC);
                CHECK(f >= 0);
                close(f);
        }
        CHECK_INT(loop_run(l), -EBADMSG);
        CHECK_INT(ino.events, 2);
        CHECK_INT(ino.ends, 0);
        ino.fail_after = 0;

        /* removed inside its callback: the rest of the buffer (the close) is not handed
         * on, no end call; removed again: -ENOENT */
        ino.events = ino.ends = 0;
        ino.remove_on_event = true;
        f = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(f >= 0);
        close(f);
        RUN_UNTIL(l, ino.events >= 1);
        CHECK_INT(ino.events, 1);
        CHECK_INT(ino.ends, 0);
        CHECK_INT(loop_remove_fd(l, ifd), -ENOENT);
        ino.remove_on_event = false;
        loop_free(l);

        /* loop_exit from the callback ends loop_run() with its code */
        CHECK_INT(loop_new(&l), 0);
        CHECK_INT(loop_add_inotify(l, ifd, on_inotify, &ino), 0);
        CHECK_INT(unlink(path), 0);
        ino.exit_on_create = true;
        f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHECK(f >= 0);
        close(f);
        CHECK_INT(loop_run(l), 3);
        loop_free(l);

        close(ifd);
        CHECK_INT(unlink(path), 0);
        CHECK_INT(rmdir(dir), 0);
}

int main(void)
{
        loop *l;
        uint64_t one = 1;
        int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        int tfd;

        CHECK_INT(loop_new(&l), 0);
        CHECK_INT(loop_add_fd(l, efd, EPOLLIN, on_event, NULL), 0);
        CHECK_INT(loop_add_fd(l, efd, EPOLLIN, on_event, NULL), -EEXIST);
        CHECK_INT(write(efd, &one, sizeof(one)), sizeof(one));
        CHECK_INT(loop_run_once(l, 1000), 0);
        CHECK_INT(fd_hits, 1);
        CHECK_INT(loop_remove_fd(l, efd), -ENOENT);

        uint64_t t0 = loop_now_ms();
        CHECK_INT(loop_add_timer(l, 10, 10, on_timer, NULL, &tfd), 0);
        CHECK_INT(loop_run(l), 5);
        CHECK_INT(timer_hits, 3);
        CHECK(loop_now_ms() - t0 >= 25);

        /* loop_timer_at: once at an absolute time; one already past fires at once;
         * UINT64_MAX disarms (a loop of its own: l has been told to exit) */
        loop *l2;
        int afd;
        CHECK_INT(loop_new(&l2), 0);
        CHECK_INT(loop_add_timer(l2, 0, 0, on_at, NULL, &afd), 0);
        t0 = loop_now_ms();
        CHECK_INT(loop_timer_at(l2, afd, t0 + 20), 0);
        while (at_hits == 0)
                CHECK(loop_run_once(l2, 1000) >= 0);
        CHECK(loop_now_ms() - t0 >= 20);
        CHECK_INT(loop_timer_at(l2, afd, t0), 0);
        CHECK_INT(loop_run_once(l2, 1000), 0);
        CHECK_INT(at_hits, 2);
        CHECK_INT(loop_timer_at(l2, afd, UINT64_MAX), 0);
        CHECK_INT(loop_run_once(l2, 50), 0);
        CHECK_INT(at_hits, 2);
        CHECK_INT(loop_timer_at(l2, -1, 0), -ENOENT);
        loop_free(l2);
        loop_free(l);

        CHECK_INT(loop_new(&l), 0);
        int sigs[] = {SIGUSR1, SIGTERM};
        CHECK_INT(loop_add_signals(l, sigs, 2, on_signal, NULL), 0);
        CHECK_INT(kill(getpid(), SIGUSR1), 0);
        CHECK_INT(loop_run(l), 9);
        CHECK_INT(sig_seen, SIGUSR1);
        loop_free(l);

        CHECK_INT(loop_new(&l), 0);
        CHECK_INT(loop_add_fd(l, efd, EPOLLIN, on_fail, NULL), 0);
        CHECK_INT(write(efd, &one, sizeof(one)), sizeof(one));
        CHECK_INT(loop_run(l), -EIO);
        loop_free(l);
        close(efd);
        test_inotify();
        return test_done();
}
