/* SPDX-License-Identifier: Apache-2.0 */
/* Collecting the link usage (agent/node/netlink.c). The real kernel, as root, in a network
 * namespace of this run's own: an address, routes only in table 100 (with an `ip rule`
 * that names no interface, as the VPC CNI does), a rule naming an interface, an
 * interface with only its IPv6 link-local address (free), one enslaved to a bridge, one
 * under a vlan, a route through a nexthop object, two default routes with metrics 512
 * and 513; the byte bound; the DaemonSet's namespace check (a PID namespace of the test's
 * own, its PID 1 in this network namespace, the agent in it or not). Recorded dumps
 * under a fake root (whole, missing, cut short, with trailing bytes, a refused nexthop
 * dump), and netlink_recv (another sender's datagram dropped, a cut one refused), which
 * need no privilege: test-netlink runs those, test-netlink-root (--root) the real kernel. */
#include "netlink.h"

#include "cleanup.h"
#include "nlbuild.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char ns[32];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
        char cmd[512], full[600];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        snprintf(full, sizeof(full), "%s >/dev/null 2>&1", cmd);
        int r = system(full);
        if (r != 0)
                fprintf(stderr, "command failed (%d): %s\n", r, cmd);
        return r;
}

static void expect_use(const nlparse_usage *u, const char *name, int want, const char *why_part)
{
        char why[NLPARSE_WHY_LEN] = "";
        int r = nlparse_in_use(u, name, why, sizeof(why));
        CHECK_INT(r, want);
        if (why_part && !strstr(why, why_part)) {
                test_failures++;
                fprintf(stderr, "%s:%d: %s: \"%s\" does not say \"%s\"\n", __FILE__, __LINE__, name, why, why_part);
        }
        printf("  %-8s %s\n", name, r == 1 ? why : r == 0 ? "free" : strerror(-r));
}

static void build_namespace(void)
{
        CHECK_INT(sh("ip netns add %s", ns), 0);
        CHECK_INT(sh("ip -n %s link set lo up", ns), 0);
        static const char *const pairs[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
        for (size_t i = 0; i < ELEMENTSOF(pairs); i++) {
                CHECK_INT(sh("ip -n %s link add %s0 type veth peer name %s1", ns, pairs[i], pairs[i]), 0);
                CHECK_INT(sh("ip -n %s link set %s0 up", ns, pairs[i]), 0);
                CHECK_INT(sh("ip -n %s link set %s1 up", ns, pairs[i]), 0);
        }
        /* a0: an IPv4 address */
        CHECK_INT(sh("ip -n %s addr add 192.0.2.1/24 dev a0", ns), 0);
        /* b0: a route only in table 100, looked up by a rule that names no interface */
        CHECK_INT(sh("ip -n %s route add 198.51.100.0/24 dev b0 table 100", ns), 0);
        CHECK_INT(sh("ip -n %s rule add from 10.9.9.9 lookup 100 pref 512", ns), 0);
        /* c0: named by a rule (iif) */
        CHECK_INT(sh("ip -n %s rule add iif c0 lookup 100 pref 1536", ns), 0);
        /* d0: nothing but the IPv6 link-local address the kernel gives it */
        /* e0: enslaved to a bridge */
        CHECK_INT(sh("ip -n %s link add br0 type bridge", ns), 0);
        CHECK_INT(sh("ip -n %s link set e0 master br0", ns), 0);
        /* f0: a macvlan on top (the upper device names it in IFLA_LINK); j0: the underlay
         * of a vxlan (IFLA_VXLAN_LINK) */
        CHECK_INT(sh("ip -n %s link add link f0 name f0.mv type macvlan", ns), 0);
        CHECK_INT(sh("ip -n %s link add vx0 type vxlan id 5 dev j0 dstport 4789", ns), 0);
        /* g0: a route through a nexthop object */
        CHECK_INT(sh("ip -n %s nexthop add id 7 dev g0", ns), 0);
        CHECK_INT(sh("ip -n %s route add 203.0.113.0/24 nhid 7 table 200", ns), 0);
        /* h0, i0: two default routes in main, metrics 512 and 513 (amazon-ec2-net-utils) */
        CHECK_INT(sh("ip -n %s addr add 10.1.0.2/24 dev h0", ns), 0);
        CHECK_INT(sh("ip -n %s addr add 10.2.0.2/24 dev i0", ns), 0);
        CHECK_INT(sh("ip -n %s route add default via 10.1.0.1 dev h0 metric 512", ns), 0);
        CHECK_INT(sh("ip -n %s route add default via 10.2.0.1 dev i0 metric 513", ns), 0);
}

/* The IPv6 link-local address of d0 appears once the kernel brings it up: wait for it
 * (a generous bound; the test only reads the kernel's state, it times nothing). */
static bool wait_linklocal(void)
{
        char cmd[160];
        snprintf(cmd, sizeof(cmd), "ip -n %s -6 addr show dev d0 scope link | grep -q fe80", ns);
        for (int i = 0; i < 200; i++) {
                if (system(cmd) == 0)
                        return true;
                usleep(50 * 1000);
        }
        return false;
}

static void test_real(void)
{
        _cleanup_close_ int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        char path[96], why[NLPARSE_WHY_LEN];

        build_namespace();
        CHECK(wait_linklocal());
        snprintf(path, sizeof(path), "/run/netns/%s", ns);
        _cleanup_close_ int nsfd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(self >= 0 && nsfd >= 0);
        if (self < 0 || nsfd < 0 || setns(nsfd, CLONE_NEWNET) < 0) {
                CHECK(!"setns");
                return;
        }

        nlparse_usage *u = NULL;
        int r = netlink_usage_dump(NULL, &u, why, sizeof(why));
        CHECK_INT(r, 0);
        if (r < 0)
                fprintf(stderr, "  %s\n", why);
        if (u) {
                printf("netlink in %s: %zu links, %llu messages\n", ns, u->n_links, (unsigned long long)u->n_msgs);
                expect_use(u, "a0", 1, "has address 192.0.2.1/24");
                expect_use(u, "a1", 0, NULL);
                expect_use(u, "b0", 1, "has route \"198.51.100.0/24 table 100 metric 0\"");
                expect_use(u, "c0", 1, "is named by policy rule \"1536: iif c0 lookup 100\"");
                expect_use(u, "d0", 0, NULL);
                expect_use(u, "e0", 1, "is enslaved to br0");
                expect_use(u, "f0", 1, "is the lower device of f0.mv");
                expect_use(u, "j0", 1, "is the lower device of vx0");
                expect_use(u, "g0", 1, "has route \"203.0.113.0/24 table 200 metric 0\"");
                expect_use(u, "h0", 1, "has route \"default via 10.1.0.1 table main metric 512\"");
                expect_use(u, "i0", 1, "has route \"default via 10.2.0.1 table main metric 513\"");
                expect_use(u, "nope0", -ENOENT, NULL);
                const nlparse_link *h = nlparse_find(u, "h0"), *i = nlparse_find(u, "i0");
                CHECK(h && h->default4 && h->default4_metric == 512);
                CHECK(i && i->default4 && i->default4_metric == 513);
                CHECK(nlparse_find(u, "b0") && !nlparse_find(u, "b0")->default4);
                nlparse_usage_free(u);
        }

        /* Past the byte bound: nothing, and why. */
        u = NULL;
        netlink_limits lim = {.max_bytes = 100};
        CHECK_INT(netlink_usage_dump(&lim, &u, why, sizeof(why)), -E2BIG);
        CHECK(u == NULL);
        CHECK_STR(why, "rtnetlink: the answers exceed 100 bytes (at the links dump)");

        CHECK_INT(setns(self, CLONE_NEWNET), 0);
}

/* In a child: the test's failures as its exit code. */
static int child_done(void)
{
        fflush(stdout);
        fflush(stderr);
        return test_failures > 100 ? 100 : test_failures;
}

static int wait_child(pid_t pid)
{
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid)
                return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* --root /host as the DaemonSet runs it: a live root whose /proc belongs to the host's PID
 * namespace. Here a PID namespace of our own whose PID 1 stays in this network namespace:
 * the agent in the same namespace gets the kernel's answer, one in another namespace
 * (hostNetwork missing) gets nothing, and why. */
static void test_host_netns(void)
{
        char path[96];
        snprintf(path, sizeof(path), "/run/netns/%s", ns);
        pid_t outer = fork();
        if (outer == 0) {
                if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) {
                        perror("unshare");
                        _exit(90);
                }
                pid_t init = fork();
                if (init == 0) { /* PID 1 of the new namespace */
                        char root[] = "/tmp/sl-nl-host-XXXXXX", proc[64], why[NLPARSE_WHY_LEN];
                        hostfs host;
                        nlparse_usage *u = NULL;
                        CHECK(getpid() == 1);
                        CHECK_INT(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0); /* source, type ignored */
                        CHECK(mkdtemp(root) != NULL);
                        snprintf(proc, sizeof(proc), "%s/proc", root);
                        CHECK_INT(mkdir(proc, 0755), 0);
                        CHECK_INT(mount("proc", proc, "proc", 0, NULL), 0);
                        CHECK_INT(hostfs_init(&host, root), 0);
                        CHECK(hostfs_is_live(&host));
                        CHECK_STR(netlink_usage_source(&host), "rtnetlink");
                        CHECK_INT(netlink_usage_load(&host, &u, why, sizeof(why)), 0);
                        CHECK(u && nlparse_find(u, "lo") != NULL);
                        nlparse_usage_free(u);
                        pid_t agent = fork();
                        if (agent == 0) {
                                int fd = open(path, O_RDONLY | O_CLOEXEC);
                                CHECK(fd >= 0 && setns(fd, CLONE_NEWNET) == 0);
                                u = NULL;
                                CHECK_INT(netlink_usage_load(&host, &u, why, sizeof(why)), -EXDEV);
                                CHECK(u == NULL);
                                CHECK(strstr(why, "not in the host's network namespace") != NULL);
                                printf("agent outside the host's netns: %s\n", why);
                                _exit(child_done());
                        }
                        CHECK_INT(wait_child(agent), 0);
                        CHECK_INT(umount(proc), 0);
                        rmdir(proc);
                        rmdir(root);
                        _exit(child_done());
                }
                _exit(wait_child(init));
        }
        CHECK_INT(wait_child(outer), 0);
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(p);
}

static void write_bytes(const char *path, const uint8_t *b, size_t n)
{
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(b, 1, n, f) == n);
        if (f)
                fclose(f);
}

/* A fake tree: NETLINK_RECORDED_DUMP, read in pieces (bigger than one read). */
static void test_recorded(void)
{
        char root[] = "/tmp/sl-nl-rec-XXXXXX", dir[128], file[160], why[NLPARSE_WHY_LEN];
        hostfs h;
        nlparse_usage *u = NULL;

        CHECK(mkdtemp(root) != NULL);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK(!hostfs_is_live(&h));
        CHECK_STR(netlink_usage_source(&h), NETLINK_RECORDED_DUMP);
        snprintf(dir, sizeof(dir), "%s/spinlane-fixture", root);
        snprintf(file, sizeof(file), "%s%s", root, NETLINK_RECORDED_DUMP);

        /* missing: nothing, and why */
        CHECK_INT(netlink_usage_load(&h, &u, why, sizeof(why)), -ENOENT);
        CHECK_STR(why, NETLINK_RECORDED_DUMP ": No such file or directory");
        CHECK(u == NULL);

        /* 3 000 routes in table 2 (about 250 KiB): read whole, every one counted */
        nlfacts f;
        memset(&f, 0, sizeof(f));
        nlf_link(&f, 1, "lo", 0, 0, "");
        nlf_link(&f, 2, "eth0", 0, 0, "");
        nlf_link(&f, 3, "eth1", 0, 0, "");
        nlf_route(&f, "default", "10.0.0.1", 2, RT_TABLE_MAIN, 100);
        for (int i = 0; i < 3000; i++) {
                char dst[32];
                snprintf(dst, sizeof(dst), "10.%d.%d.0/24", 100 + i / 250, i % 250);
                nlf_route(&f, dst, "10.1.0.1", 3, 2, 0);
        }
        mkdir(dir, 0755);
        CHECK_INT(nlf_write(&f, file), 0);
        CHECK_INT(netlink_usage_load(&h, &u, why, sizeof(why)), 0);
        if (u) {
                CHECK_INT(nlparse_find(u, "eth1")->n_routes, 3000);
                CHECK(nlparse_find(u, "eth0")->default4);
                nlparse_usage_free(u);
                u = NULL;
        }

        /* cut short, or with bytes after the last dump */
        size_t n;
        uint8_t *b = nlf_bytes(&f, &n);
        write_bytes(file, b, n - 20);
        CHECK_INT(netlink_usage_load(&h, &u, why, sizeof(why)), -ENODATA);
        CHECK_STR(why, NETLINK_RECORDED_DUMP ": ends inside the IPv6 routes dump");
        b = realloc(b, n + 4);
        memset(b + n, 0, 4);
        write_bytes(file, b, n + 4);
        CHECK_INT(netlink_usage_load(&h, &u, why, sizeof(why)), -EBADMSG);
        CHECK_STR(why, NETLINK_RECORDED_DUMP ": data after the last dump");
        free(b);
        CHECK(u == NULL);

        /* a kernel without nexthop objects, and a recorded kernel error */
        f.nexthop_error = -EOPNOTSUPP;
        CHECK_INT(nlf_write(&f, file), 0);
        CHECK_INT(netlink_usage_load(&h, &u, why, sizeof(why)), 0);
        nlparse_usage_free(u);
        u = NULL;
        f.nexthop_error = -EPERM;
        CHECK_INT(nlf_write(&f, file), 0);
        CHECK_INT(netlink_usage_load(&h, &u, why, sizeof(why)), -EPERM);
        CHECK_STR(why, NETLINK_RECORDED_DUMP ": the nexthops dump recorded an error: Operation not permitted");
        nlf_free(&f);
        nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* netlink_recv, no root needed: nothing queued, a datagram from another process
 * dropped before the kernel's answer behind it, a datagram larger than the buffer. */
static void send_getlink(int fd)
{
        struct {
                struct nlmsghdr nh;
                struct ifinfomsg ifi;
        } req = {.nh = {.nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
                        .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1}};
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        CHECK_INT((int)sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)), (int)sizeof(req));
}

static void test_recv(void)
{
        uint8_t buf[64 * 1024] __attribute__((aligned(8)));
        struct sockaddr_nl me = {0};
        socklen_t sl = sizeof(me);
        size_t n = 12345;

        _cleanup_close_ int a = netlink_subscribe(SOCK_RAW, NETLINK_ROUTE, 0);
        _cleanup_close_ int b = netlink_subscribe(SOCK_RAW, NETLINK_ROUTE, 0);
        CHECK(a >= 0 && b >= 0);
        if (a < 0 || b < 0)
                return;
        CHECK_INT(netlink_recv(a, buf, sizeof(buf), &n), -EAGAIN);
        CHECK(n == 12345); /* untouched on failure */
        CHECK_INT(getsockname(a, (struct sockaddr *)&me, &sl), 0);
        CHECK(me.nl_pid != 0);

        /* b (another socket, as another process would) sends a's address a message that
         * looks like the kernel's; then the kernel answers a dump request of a. */
        struct nlmsghdr fake = {.nlmsg_len = sizeof(fake) + 4, .nlmsg_type = NLMSG_DONE};
        uint8_t fb[sizeof(fake) + 4] = {0};
        memcpy(fb, &fake, sizeof(fake));
        struct sockaddr_nl to = {.nl_family = AF_NETLINK, .nl_pid = me.nl_pid};
        CHECK_INT((int)sendto(b, fb, sizeof(fb), 0, (struct sockaddr *)&to, sizeof(to)), (int)sizeof(fb));
        send_getlink(a);
        CHECK_INT(netlink_recv(a, buf, sizeof(buf), &n), 0);
        struct nlmsghdr nh;
        memcpy(&nh, buf, sizeof(nh));
        CHECK(n > sizeof(fb));
        CHECK_INT(nh.nlmsg_type, RTM_NEWLINK); /* the kernel's, not b's NLMSG_DONE */
        while (netlink_recv(a, buf, sizeof(buf), &n) == 0)
                ; /* the rest of that dump */

        /* A datagram larger than the buffer: refused, not handed on cut. */
        send_getlink(a);
        n = 12345;
        CHECK_INT(netlink_recv(a, buf, 20, &n), -EMSGSIZE);
        CHECK(n == 12345);
}

/* Two ctest tests, one binary: bare, the recorded dumps (no privilege needed, never
 * skipped); with "--root" (test-netlink-root) only the real kernel, skipped before it acts
 * when the machine lacks root or iproute2. */
int main(int argc, char **argv)
{
        if (argc > 2 || (argc == 2 && strcmp(argv[1], "--root") != 0))
                TEST_FATAL("usage: %s [--root]", argv[0]);
        if (argc == 1) {
                test_recorded();
                test_recv();
                return test_done();
        }
        if (geteuid() != 0)
                TEST_SKIP("real rtnetlink in a network namespace: not root");
        if (system("ip -V >/dev/null 2>&1") != 0)
                TEST_SKIP("real rtnetlink in a network namespace: no iproute2 (ip)");
        snprintf(ns, sizeof(ns), "sl-nl-%d", (int)getpid());
        test_real();
        test_host_netns();
        CHECK_INT(sh("ip netns del %s", ns), 0);
        return test_done();
}
