/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's one event loop: epoll over file descriptors, with helpers for signals
 * (signalfd), timers (timerfd) and inotify event reading. Single-threaded; other threads hand work in through
 * an eventfd they write to. Owns the signalfd/timerfd it creates; never logs. */
#ifndef SPIN_LOOP_H
#define SPIN_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/inotify.h>

typedef struct loop loop;

/* Called with the epoll events of fd. A negative return stops loop_run() with it. */
typedef int (*loop_fd_fn)(loop *l, int fd, uint32_t events, void *userdata);
typedef int (*loop_signal_fn)(loop *l, int signo, void *userdata);
typedef int (*loop_timer_fn)(loop *l, void *userdata);
/* Called once per inotify event read (a queue overflow is an event too: wd -1, mask
 * IN_Q_OVERFLOW, meaning some events were lost), then once with ev NULL when the round's
 * reading is done, so that a caller can act once on what it gathered. ev is valid only
 * during the call. A negative return stops loop_run() with it (no end call follows). */
typedef int (*loop_inotify_fn)(loop *l, const struct inotify_event *ev, void *userdata);

int loop_new(loop **ret);
/* Frees the loop and closes the signalfd/timerfds it created (not the caller's fds). */
void loop_free(loop *l);

/* Watch fd (not owned) for events (EPOLLIN, …). -EEXIST if already watched. */
int loop_add_fd(loop *l, int fd, uint32_t events, loop_fd_fn fn, void *userdata);
/* An inotify fd (not owned; made by inotify_init1(IN_NONBLOCK), the caller adds its
 * watches): on readiness the loop reads it into an aligned buffer until EAGAIN, at most
 * LOOP_INOTIFY_READS_MAX reads a round (the rest comes in the next round), and hands each
 * event to fn, then calls fn(NULL). A read error other than EAGAIN/EINTR ends the round
 * as EAGAIN does; a malformed event (longer than what was read) ends the buffer's walk.
 * Removed with loop_remove_fd(). -EEXIST if fd is already watched. */
#define LOOP_INOTIFY_READS_MAX 64
int loop_add_inotify(loop *l, int fd, loop_inotify_fn fn, void *userdata);
/* Stop watching fd (an fd or inotify source); safe to call from inside a callback (also
 * for that very fd). */
int loop_remove_fd(loop *l, int fd);

/* Block these signals and deliver them through a signalfd. One handler per loop. */
int loop_add_signals(loop *l, const int *signals, size_t n, loop_signal_fn fn, void *userdata);

/* A timerfd: first expiry after first_ms, then every interval_ms (0 = once).
 * ret_fd (optional) identifies it for loop_timer_set() and loop_remove_timer(). */
int loop_add_timer(loop *l, uint64_t first_ms, uint64_t interval_ms, loop_timer_fn fn,
                   void *userdata, int *ret_fd);
/* Re-arm (0, 0 disarms). */
int loop_timer_set(loop *l, int timer_fd, uint64_t first_ms, uint64_t interval_ms);
/* Arm once for at_ms on loop_now_ms()'s clock (a time already past: at once);
 * UINT64_MAX disarms. */
int loop_timer_at(loop *l, int timer_fd, uint64_t at_ms);
int loop_remove_timer(loop *l, int timer_fd);

/* Dispatch until loop_exit() or a callback error. Returns the exit code given to
 * loop_exit(), or the callback's negative errno. */
int loop_run(loop *l);
/* Run one round: wait at most timeout_ms (-1 forever) and dispatch what is ready.
 * Returns 1 if loop_exit() was called, 0 otherwise, negative on error. */
int loop_run_once(loop *l, int timeout_ms);
void loop_exit(loop *l, int code);

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t loop_now_ms(void);

#endif
