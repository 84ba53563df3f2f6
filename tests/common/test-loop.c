/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for the event loop: fds, removal inside callbacks, timers, signals. */
#include "loop.h"
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <sys/eventfd.h>
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
        return test_done();
}
