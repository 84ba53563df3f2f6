/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel arguments into the boot loader: detection from the host tree, the grub drop-in
 * and grubby paths, the state file saved before each write, the reboot sentinel, restore.
 * Host tools run through kargs_ops (tests place fake tools in the fixture's tree). Never
 * logs. */
#include "kargs-write.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture (Linux 5.3) */
#endif

static const char *const grubby_paths[] = {"/usr/sbin/grubby", "/usr/bin/grubby", "/sbin/grubby", NULL};
static const char *const update_grub_paths[] = {"/usr/sbin/update-grub", "/sbin/update-grub", NULL};

/* The last non-empty line of out (in place). */
static void last_line(char *out)
{
        size_t n = strlen(out);
        while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
                out[--n] = '\0';
        char *nl = strrchr(out, '\n');
        if (nl)
                memmove(out, nl + 1, strlen(nl + 1) + 1);
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what is in the pipe now into out (bounded; the rest drained). 1 at EOF, 0 when
 * nothing more is ready. */
static int read_ready(int fd, char *out, size_t out_size, size_t *used)
{
        char drain[4096];
        for (;;) {
                ssize_t n;
                bool keep = out_size && *used + 1 < out_size;
                if (keep)
                        n = read(fd, out + *used, out_size - 1 - *used);
                else
                        n = read(fd, drain, sizeof(drain));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return 0; /* EAGAIN; another error ends the reading like EOF does */
                if (n == 0)
                        return 1;
                if (keep) {
                        *used += (size_t)n;
                        out[*used] = '\0';
                }
        }
}

/* Wait for pid until deadline (ms, CLOCK_MONOTONIC) while reading its output from fd:
 * 1 exited (status in *status), 0 the deadline passed, negative errno. The output
 * stops being read once the tool has exited (a child it left behind may keep the pipe
 * open). Without a pidfd (a kernel before 5.3, a seccomp profile without pidfd_open)
 * the exit is looked for every 20 ms. */
static int wait_tool(pid_t pid, int fd, int64_t deadline, char *out, size_t out_size, size_t *used, int *status)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        bool eof = fd < 0;

        for (;;) {
                pid_t w = waitpid(pid, status, WNOHANG);
                if (w == pid) {
                        if (!eof)
                                (void)read_ready(fd, out, out_size, used);
                        return 1;
                }
                if (w < 0 && errno != EINTR)
                        return -errno;
                int64_t left = deadline - now_ms();
                if (left <= 0)
                        return 0;
                struct pollfd fds[2] = {{.fd = eof ? -1 : fd, .events = POLLIN},
                                        {.fd = pidfd, .events = POLLIN}};
                int wait = left > INT_MAX ? INT_MAX : (int)left;
                if (pidfd < 0 && wait > 20)
                        wait = 20;
                if (poll(fds, 2, wait) < 0 && errno != EINTR)
                        return -errno;
                if (!eof && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        eof = read_ready(fd, out, out_size, used) == 1;
        }
}

static int run_default(void *userdata, const hostfs *h, char *const argv[], unsigned timeout_ms, char *out,
                       size_t out_size)
{
        char exe[PATH_MAX], fake_env[PATH_MAX + 32];
        bool live = hostfs_is_live(h);
        int p[2], status = 0, r;
        size_t used = 0;
        (void)userdata;

        if (out_size)
                out[0] = '\0';
        if (!argv || !argv[0] || argv[0][0] != '/')
                return -EINVAL;
        if (timeout_ms == 0)
                timeout_ms = KARGS_TOOL_TIMEOUT_MS;
        if (live)
                snprintf(exe, sizeof(exe), "%s", argv[0]);
        else if ((r = hostfs_path(h, argv[0], exe, sizeof(exe))) < 0)
                return r;
        snprintf(fake_env, sizeof(fake_env), "SPINLANE_FAKE_ROOT=%s", h->root);
        char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", live ? NULL : fake_env, NULL};
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        int64_t deadline = now_ms() + timeout_ms;
        pid_t pid = fork();
        if (pid < 0) {
                r = -errno;
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (pid == 0) {
                /* the child: only async-signal-safe calls until exec; a process group of
                 * its own, so that a timeout kills whatever the tool started too */
                (void)setpgid(0, 0);
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null >= 0)
                        dup2(null, 0);
                dup2(p[1], 1);
                dup2(p[1], 2);
                if (live && h->root[0] && (chroot(h->root) < 0 || chdir("/") < 0))
                        _exit(126);
                execve(exe, argv, envp);
                _exit(127);
        }
        (void)setpgid(pid, pid); /* either side may win the race; both ask the same */
        close(p[1]);
        /* the read end only: the tool's stdout stays blocking */
        (void)fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
        r = wait_tool(pid, p[0], deadline, out, out_size, &used, &status);
        close(p[0]);
        if (r <= 0) {
                /* past the deadline (or the wait failed): the whole group goes, then the
                 * tool is reaped (SIGKILL cannot be caught; the bound only guards against
                 * a process stuck in the kernel) */
                (void)kill(-pid, SIGKILL);
                (void)kill(pid, SIGKILL);
                int w = wait_tool(pid, -1, now_ms() + 10000, NULL, 0, &used, &status);
                if (out_size) {
                        char unit[16];
                        if (timeout_ms % 1000)
                                snprintf(unit, sizeof(unit), "%u ms", timeout_ms);
                        else
                                snprintf(unit, sizeof(unit), "%u s", timeout_ms / 1000);
                        if (r == 0)
                                snprintf(out, out_size, "%s did not finish within %s: killed it (SIGKILL to its "
                                                        "process group)%s",
                                         argv[0], unit, w == 1 ? "" : ", not reaped yet");
                        else
                                snprintf(out, out_size, "waiting for %s failed: %s; killed it", argv[0],
                                         strerror(-r));
                }
                return r == 0 ? -ETIME : r;
        }
        if (out_size)
                last_line(out);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        if (out_size) {
                char tail[256];
                snprintf(tail, sizeof(tail), "%s", out);
                if (WIFEXITED(status))
                        snprintf(out, out_size, "exit status %d%s%s", WEXITSTATUS(status), *tail ? ": " : "", tail);
                else
                        snprintf(out, out_size, "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
                return -ENOENT;
        return -EIO;
}

const kargs_ops kargs_ops_default = {.run = run_default};

/* One KEY= of os-release text into buf (quotes stripped); "" when absent. Pure. */
static void os_release_get(const char *text, const char *key, char *buf, size_t size)
{
        size_t kl = strlen(key);
        buf[0] = '\0';
        for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                if (strncmp(l, key, kl) != 0 || l[kl] != '=')
                        continue;
                const char *v = l + kl + 1, *e = strchr(v, '\n');
                size_t n = e ? (size_t)(e - v) : strlen(v);
                if (n && (*v == '"' || *v == '\'')) {
                        v++, n--;
                        if (n && (v[n - 1] == '"' || v[n - 1] == '\''))
                                n--;
                }
                if (n >= size)
                        n = size - 1;
                memcpy(buf, v, n);
                buf[n] = '\0';
        }
}

/* Whether a space-separated list holds one of words. */
static bool has_word(const char *list, const char *const *words)
{
        char buf[512], *save = NULL; /* holds kargs_detect's "ID ID_LIKE" (< 260) */
        snprintf(buf, sizeof(buf), "%s", list);
        for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
                for (size_t i = 0; words[i]; i++)
                        if (strcmp(w, words[i]) == 0)
                                return true;
        return false;
}

static const char *first_existing(const hostfs *h, const char *const *paths)
{
        for (size_t i = 0; paths[i]; i++)
                if (hostfs_exists(h, paths[i]) == 1)
                        return paths[i];
        return NULL;
}

kargs_loader kargs_detect(const hostfs *h, char *tool, size_t tool_size, char *why, size_t why_size)
{
        static const char *const debian[] = {"debian", "ubuntu", NULL};
        static const char *const rpm[] = {"amzn", "fedora", "rhel", "centos", "rocky", "almalinux", NULL};
        char text[4096], id[64], like[192], both[260];
        size_t len = 0;
        const char *grubby = first_existing(h, grubby_paths), *upd = first_existing(h, update_grub_paths);

        tool[0] = '\0';
        if (why_size)
                why[0] = '\0';
        if (hostfs_read(h, "/etc/os-release", text, sizeof(text) - 1, &len) < 0 &&
            hostfs_read(h, "/usr/lib/os-release", text, sizeof(text) - 1, &len) < 0)
                len = 0;
        text[len] = '\0';
        os_release_get(text, "ID", id, sizeof(id));
        os_release_get(text, "ID_LIKE", like, sizeof(like));
        snprintf(both, sizeof(both), "%s %s", id, like);
        if (has_word(both, debian)) {
                if (upd) {
                        snprintf(tool, tool_size, "%s", upd);
                        return KARGS_LOADER_GRUB_DROPIN;
                }
                hostfs_fmt(why, why_size, "%s without update-grub (/usr/sbin/update-grub)", id);
                return KARGS_LOADER_NONE;
        }
        if (has_word(both, rpm)) {
                if (grubby) {
                        snprintf(tool, tool_size, "%s", grubby);
                        return KARGS_LOADER_GRUBBY;
                }
                hostfs_fmt(why, why_size, "%s without grubby (/usr/sbin/grubby)", id);
                return KARGS_LOADER_NONE;
        }
        if (grubby) {
                snprintf(tool, tool_size, "%s", grubby);
                return KARGS_LOADER_GRUBBY;
        }
        if (upd) {
                snprintf(tool, tool_size, "%s", upd);
                return KARGS_LOADER_GRUB_DROPIN;
        }
        hostfs_fmt(why, why_size, "os-release ID \"%s\": neither grubby nor update-grub is on the host", id);
        return KARGS_LOADER_NONE;
}

void kargs_dropin_text(const kargs_list *args, char *buf, size_t size)
{
        char line[KARGS_LINE_LEN];
        if (size)
                buf[0] = '\0';
        if (args->n == 0)
                return;
        kargs_list_join(args, line, sizeof(line));
        hostfs_fmt(buf, size,
                   "# Written by spinlane-agent (kernel_args.manage in its config). `spinlane-agent restore`\n"
                   "# removes this file; change the agent's config, not this file.\n"
                   "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT %s\"\n",
                   line);
}

int kargs_sentinel_path(const hostfs *h, char *buf, size_t size)
{
        char path[PATH_MAX], target[PATH_MAX];
        int r;

        if ((r = hostfs_path(h, "/var/run", path, sizeof(path))) < 0)
                return r;
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n < 0 || target[0] != '/')
                /* a directory, or a relative link (AL2023: ../run); hostfs resolves it
                 * inside the root, a ".." that climbs out stops at the root */
                return hostfs_fmt(buf, size, "%s", KARGS_SENTINEL);
        target[n] = '\0';
        /* absolute: named as the host has it, resolved from the root by hostfs */
        return hostfs_fmt(buf, size, "%s/reboot-required", target);
}

static void say(kargs_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(kargs_result *res, const char *fmt, ...)
{
        va_list ap;
        if (res->n_lines >= sizeof(res->lines) / sizeof(res->lines[0]))
                return;
        va_start(ap, fmt);
        vsnprintf(res->lines[res->n_lines++], KARGS_MSG_LEN, fmt, ap);
        va_end(ap);
}

static int run_tool(const hostfs *h, const kargs_ops *ops, const char *tool, const char *a1, const char *a2,
                    char *out, size_t out_size)
{
        char *argv[] = {(char *)tool, (char *)a1, (char *)a2, NULL};
        return ops->run(ops->userdata, h, argv, ops->timeout_ms ? ops->timeout_ms : KARGS_TOOL_TIMEOUT_MS, out,
                        out_size);
}

/* The grubby call for args: --args="..." or --remove-args="...". */
static int grubby(const hostfs *h, const kargs_ops *ops, const char *tool, bool remove, const kargs_list *args,
                  char *out, size_t out_size)
{
        char line[KARGS_LINE_LEN], opt[KARGS_LINE_LEN + 32];
        kargs_list_join(args, line, sizeof(line));
        snprintf(opt, sizeof(opt), "%s=%s", remove ? "--remove-args" : "--args", line);
        return run_tool(h, ops, tool, "--update-kernel=ALL", opt, out, out_size);
}

static bool dropin_is(const hostfs *h, const char *want)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        if (hostfs_read_alloc(h, KARGS_GRUB_DROPIN, 64 * 1024, &text, &len) < 0)
                return !*want ? true : false;
        return strlen(want) == len && memcmp(text, want, len) == 0;
}

static void tool_of(const hostfs *h, kargs_loader l, char *tool, size_t size)
{
        const char *t = first_existing(h, l == KARGS_LOADER_GRUBBY ? grubby_paths : update_grub_paths);
        snprintf(tool, size, "%s", t ? t : (l == KARGS_LOADER_GRUBBY ? grubby_paths[0] : update_grub_paths[0]));
}

/* Set the sentinel when pending (record whether spinlane created it); remove spinlane's
 * when no longer pending. */
static int sentinel_sync(const hostfs *h, bool pending, kargs_state *st, kargs_result *res, char *err, size_t esz)
{
        char path[PATH_MAX];
        int r = kargs_sentinel_path(h, path, sizeof(path));
        if (r < 0) {
                (void)hostfs_fmt(err, esz, "the host's /var/run is a link spinlane will not follow: %s", strerror(-r));
                return r;
        }
        int ex = hostfs_exists(h, path);
        if (pending && ex != 1) {
                if ((r = hostfs_write_atomic(h, path, "*** System restart required (spinlane: kernel arguments) ***\n",
                                             0644)) < 0) {
                        (void)hostfs_fmt(err, esz, "creating %s: %s", path, strerror(-r));
                        return r;
                }
                st->sentinel_created = true;
                res->sentinel_set = true;
                say(res, "created the reboot sentinel %s", path);
        } else if (!pending && st->sentinel_created) {
                if (ex == 1 && (r = hostfs_unlink(h, path)) < 0) {
                        (void)hostfs_fmt(err, esz, "removing %s: %s", path, strerror(-r));
                        return r;
                }
                if (ex == 1)
                        say(res, "removed spinlane's reboot sentinel %s (no reboot needed now)", path);
                st->sentinel_created = false;
        }
        return 0;
}

int kargs_apply(const hostfs *h, const kargs_ops *ops, const config *c, const inventory *inv, verdict_list *l,
                kargs_result *ret)
{
        char why[256], err[KARGS_MSG_LEN], out[512], tool[KARGS_TOOL_LEN], want[KARGS_LINE_LEN],
                dropin[KARGS_LINE_LEN + 256];
        kargs_state st, old;
        kargs_list running;
        kargs_plan p;
        kargs_diff d;
        int r;

        memset(ret, 0, sizeof(*ret));
        if (!ops)
                ops = &kargs_ops_default;
        if ((r = kargs_plan_compute(c, inv, &p, why, sizeof(why))) < 0)
                return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL, NULL,
                                   r == -ERANGE ? "ask for hugepages this node has room for, on its NUMA nodes"
                                                : "list whole cores (every SMT sibling) in cores.cpus and leave at "
                                                  "least one core for the system",
                                   "no kernel arguments written: %s", why);
        r = kargs_state_load(h, &st, err, sizeof(err));
        if (r < 0)
                return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL,
                                   json_pack("{s:s}", "state_file", KARGS_STATE_PATH),
                                   "check the boot loader's arguments by hand, then remove the state file",
                                   "%s: %s; nothing written", KARGS_STATE_PATH, err);
        old = st;
        kargs_from_cmdline(inv, &running);
        kargs_diff_compute(&p, &running, &st, &d);
        kargs_list_join(&p.want, want, sizeof(want));
        if (d.conflicts.n) {
                char conf[KARGS_LINE_LEN];
                kargs_list_join(&d.conflicts, conf, sizeof(conf));
                return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL, json_pack("{s:s,s:s}", "conflicts", conf,
                                                                                   "want", want),
                                   "remove them from the node image's boot arguments, or set kernel_args.manage: false "
                                   "and manage the arguments yourself",
                                   "the kernel command line has %s, not written by spinlane, where the config needs "
                                   "%s; nothing written",
                                   conf, want);
        }
        kargs_loader loader = st.written.n ? st.loader : kargs_detect(h, tool, sizeof(tool), why, sizeof(why));
        if (st.written.n)
                tool_of(h, loader, tool, sizeof(tool));
        if (loader == KARGS_LOADER_NONE && d.keep.n)
                return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL, json_pack("{s:s}", "want", want),
                                   "add the arguments to the node image's boot loader yourself (and set "
                                   "kernel_args.manage: false)",
                                   "no boot loader spinlane can write (%s); the config needs %s", why, want);
        bool need = d.add.n || d.remove.n;
        if (st.written.n && !st.complete) {
                /* the last write did not run through: all of it again (grubby --args
                 * replaces an argument of the same name; the drop-in is rewritten whole) */
                d.add = d.keep;
                need = true;
        }
        if (loader == KARGS_LOADER_GRUB_DROPIN) {
                kargs_dropin_text(&d.keep, dropin, sizeof(dropin));
                need |= !dropin_is(h, dropin);
        }
        if (need) {
                /* recorded before the first write: whatever happens next, restore knows
                 * every argument that may be in the boot loader */
                st.loader = loader;
                st.complete = false;
                for (size_t i = 0; i < d.add.n; i++)
                        if (kargs_find_equal(&st.written, &d.add.a[i]) < 0 && st.written.n < KARGS_MAX)
                                st.written.a[st.written.n++] = d.add.a[i];
                if ((r = kargs_state_save(h, &st)) < 0)
                        return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL, NULL,
                                           "the agent needs write access to the host's /var/lib/spinlane",
                                           "saving %s: %s; nothing written", KARGS_STATE_PATH, strerror(-r));
                if (loader == KARGS_LOADER_GRUB_DROPIN) {
                        if (*dropin) {
                                r = hostfs_mkdir_p(h, "/etc/default/grub.d");
                                if (r >= 0)
                                        r = hostfs_write_atomic(h, KARGS_GRUB_DROPIN, dropin, 0644);
                                snprintf(out, sizeof(out), "writing %s: %s", KARGS_GRUB_DROPIN, strerror(-r));
                        } else {
                                r = hostfs_unlink(h, KARGS_GRUB_DROPIN);
                                snprintf(out, sizeof(out), "removing %s: %s", KARGS_GRUB_DROPIN, strerror(-r));
                        }
                        if (r >= 0) {
                                say(ret, "%s %s", *dropin ? "wrote" : "removed", KARGS_GRUB_DROPIN);
                                r = run_tool(h, ops, tool, NULL, NULL, out, sizeof(out));
                                if (r >= 0)
                                        say(ret, "ran %s", tool);
                        }
                } else {
                        r = 0;
                        if (d.remove.n && (r = grubby(h, ops, tool, true, &d.remove, out, sizeof(out))) >= 0) {
                                char line[KARGS_LINE_LEN];
                                kargs_list_join(&d.remove, line, sizeof(line));
                                say(ret, "ran %s --update-kernel=ALL --remove-args=\"%s\"", tool, line);
                        }
                        if (r >= 0 && d.add.n && (r = grubby(h, ops, tool, false, &d.add, out, sizeof(out))) >= 0) {
                                char line[KARGS_LINE_LEN];
                                kargs_list_join(&d.add, line, sizeof(line));
                                say(ret, "ran %s --update-kernel=ALL --args=\"%s\"", tool, line);
                        }
                }
                if (r < 0)
                        return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL,
                                           json_pack("{s:s,s:s}", "loader", kargs_loader_name(loader), "tool", tool),
                                           "see the agent log; `spinlane-agent restore` takes back what is recorded",
                                           "writing the boot loader (%s) failed: %s", kargs_loader_name(loader), out);
                st.written = d.keep;
                st.complete = true;
                ret->wrote = true;
        }
        ret->reboot_pending = d.reboot_pending;
        if ((r = sentinel_sync(h, d.reboot_pending, &st, ret, err, sizeof(err))) >= 0 &&
            (memcmp(&st, &old, sizeof(st)) != 0 || need))
                r = kargs_state_save(h, &st);
        if (r < 0)
                return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_FAIL, NULL,
                                   "the agent needs write access to the host's /var/lib/spinlane and /run", "%s",
                                   *err ? err : strerror(-r));
        json_t *ev = json_pack("{s:s,s:s,s:b,s:b}", "want", want, "loader", kargs_loader_name(loader), "wrote",
                               ret->wrote, "reboot_pending", d.reboot_pending);
        if (d.reboot_pending)
                return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_WARN, ev,
                                   "reboot the node (kured does it one node at a time when it sees " KARGS_SENTINEL ")",
                                   "%s (%s): reboot pending for %s", ret->wrote ? "written to the boot loader" : "in the boot loader",
                                   kargs_loader_name(loader), want);
        return verdict_add(l, PREP_CHECK_KERNEL_ARGS, VERDICT_PASS, ev, NULL, "the running kernel has %s%s", want,
                           ret->wrote ? " (boot loader updated)" : "");
}

int kargs_restore(const hostfs *h, const kargs_ops *ops, const inventory *inv, char *msg, size_t msg_size)
{
        char err[256], out[512], tool[KARGS_TOOL_LEN], line[KARGS_LINE_LEN], path[PATH_MAX];
        kargs_state st;
        kargs_list running;
        int r;

        if (!ops)
                ops = &kargs_ops_default;
        r = kargs_state_load(h, &st, err, sizeof(err));
        if (r < 0) {
                hostfs_fmt(msg, msg_size, "%s: %s; nothing taken back (check the boot loader's arguments by hand, "
                                          "then remove the file)", KARGS_STATE_PATH, err);
                return r;
        }
        if (r == 0 || (st.written.n == 0 && !st.sentinel_created)) {
                hostfs_fmt(msg, msg_size, "nothing to take back: %s records no kernel argument", KARGS_STATE_PATH);
                return 0;
        }
        kargs_list_join(&st.written, line, sizeof(line));
        tool_of(h, st.loader, tool, sizeof(tool));
        if (st.written.n && st.loader == KARGS_LOADER_GRUB_DROPIN) {
                if ((r = hostfs_unlink(h, KARGS_GRUB_DROPIN)) < 0) {
                        hostfs_fmt(msg, msg_size, "removing %s: %s; still recorded", KARGS_GRUB_DROPIN, strerror(-r));
                        return r;
                }
                if ((r = run_tool(h, ops, tool, NULL, NULL, out, sizeof(out))) < 0) {
                        hostfs_fmt(msg, msg_size, "removed %s but %s failed: %s; still recorded (run restore again)",
                                   KARGS_GRUB_DROPIN, tool, out);
                        return r;
                }
        } else if (st.written.n && st.loader == KARGS_LOADER_GRUBBY) {
                if ((r = grubby(h, ops, tool, true, &st.written, out, sizeof(out))) < 0) {
                        hostfs_fmt(msg, msg_size, "%s --remove-args failed: %s; still recorded", tool, out);
                        return r;
                }
        }
        kargs_from_cmdline(inv, &running);
        bool running_ours = false;
        for (size_t i = 0; i < st.written.n; i++)
                running_ours |= kargs_find_equal(&running, &st.written.a[i]) >= 0;
        r = kargs_sentinel_path(h, path, sizeof(path));
        if (r >= 0 && running_ours && hostfs_exists(h, path) != 1)
                r = hostfs_write_atomic(h, path, "*** System restart required (spinlane: kernel arguments) ***\n", 0644);
        else if (r >= 0 && !running_ours && st.sentinel_created)
                r = hostfs_unlink(h, path);
        if (r < 0) {
                hostfs_fmt(msg, msg_size, "took back %s but the reboot sentinel %s: %s", line, path, strerror(-r));
                return r;
        }
        kargs_state empty = {0};
        if ((r = kargs_state_save(h, &empty)) < 0) {
                hostfs_fmt(msg, msg_size, "took back %s but removing %s failed: %s", line, KARGS_STATE_PATH, strerror(-r));
                return r;
        }
        hostfs_fmt(msg, msg_size, "took back the kernel arguments %s (%s)%s", *line ? line : "(none)",
                   kargs_loader_name(st.loader),
                   running_ours ? "; the running kernel still has them: reboot the node (" KARGS_SENTINEL " is set)" : "");
        return 0;
}
