/* SPDX-License-Identifier: Apache-2.0 */
/* spinlane-stat: serves the media driver's counters (its CnC file, cnc.dat in the Aeron
 * directory) as Prometheus text on /metrics. Keeps the file mapped read-only and maps it
 * again when the driver restarts (another file at the path: its device and inode, or the
 * pid and start timestamp in its header, changed; or its size). One libmicrohttpd thread
 * answers every request, so the mapping has one user; the main thread waits for SIGTERM.
 * Logs only here, at start and on a bad argument. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "cleanup.h"
#include "httpd-reply.h"
#include "parse.h"
#include "stat-cnc.h"
#include "stat-prom.h"
#include "version.h"

#define STAT_DEFAULT_BIND "127.0.0.1:9472"
#define STAT_FILE_MAX ((size_t)2 << 30)         /* a CnC file over 2 GiB is not mapped */
#define STAT_MAX_CONNECTIONS 16
#define STAT_TIMEOUT_S 10
#define STAT_REQUEST_BYTES 16384

typedef struct cnc_map {
        char path[4096];
        uint8_t *addr;
        size_t len;
        dev_t dev;
        ino_t ino;
        int64_t pid, start_ms;
        bool had;               /* a file was mapped before: the next one is a remap */
        uint64_t remaps, read_errors;
} cnc_map;

static void cnc_unmap(cnc_map *m)
{
        if (m->addr)
                munmap(m->addr, m->len);
        m->addr = NULL;
        m->len = 0;
}

/* The bytes of the file now at m->path, mapped again when it is another file. */
static int cnc_refresh(cnc_map *m)
{
        struct stat st;
        stat_cnc_header h;

        if (stat(m->path, &st) < 0) {
                cnc_unmap(m);
                return -errno;
        }
        if (m->addr && st.st_dev == m->dev && st.st_ino == m->ino && (size_t)st.st_size == m->len) {
                /* the same file: the same driver unless its header says otherwise */
                if (stat_cnc_header_parse(m->addr, m->len, &h) != 0 || (h.pid == m->pid && h.start_timestamp_ms == m->start_ms))
                        return 0;
        }
        cnc_unmap(m);
        if (st.st_size <= 0 || (uint64_t)st.st_size > STAT_FILE_MAX || !S_ISREG(st.st_mode))
                return -EBADMSG;
        _cleanup_close_ int fd = open(m->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0 || (uint64_t)st.st_size > STAT_FILE_MAX || !S_ISREG(st.st_mode))
                return -EBADMSG;
        void *a = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (a == MAP_FAILED)
                return -errno;
        m->addr = a;
        m->len = (size_t)st.st_size;
        m->dev = st.st_dev;
        m->ino = st.st_ino;
        m->pid = m->start_ms = 0;
        if (stat_cnc_header_parse(m->addr, m->len, &h) == 0) {
                m->pid = h.pid;
                m->start_ms = h.start_timestamp_ms;
        }
        if (m->had)
                m->remaps++;
        m->had = true;
        return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size, void **req_cls)
{
        static char ok[] = "ok\n", not_allowed[] = "only GET and HEAD\n", failed[] = "metrics unavailable\n",
                    not_found[] = "not found: try /metrics\n";
        const char *text = "text/plain; charset=utf-8";
        cnc_map *m = cls;
        (void)version, (void)upload_data, (void)req_cls;

        *upload_data_size = 0;
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return httpd_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, text, not_allowed, sizeof(not_allowed) - 1, false);
        if (strcmp(url, "/healthz") == 0)
                return httpd_reply(c, MHD_HTTP_OK, text, ok, sizeof(ok) - 1, false);
        if (strcmp(url, "/metrics") != 0)
                return httpd_reply(c, MHD_HTTP_NOT_FOUND, text, not_found, sizeof(not_found) - 1, false);

        int r = cnc_refresh(m);
        if (r < 0)
                m->read_errors++;
        stat_prom_self self = { .version = SPINLANE_VERSION, .remaps = m->remaps, .read_errors = m->read_errors };
        char *body = NULL;
        size_t len = 0;
        if (stat_prom_render(r < 0 ? NULL : m->addr, r < 0 ? 0 : m->len, &self, &body, &len) < 0)
                return httpd_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, text, failed, sizeof(failed) - 1, false);
        return httpd_reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len, true);
}

/* "HOST:PORT": an IPv4 address, [IPv6], or nothing (every address) before the colon. */
static int listen_on(const char *spec, char *where, size_t where_size)
{
        struct sockaddr_storage ss = { 0 };
        socklen_t sl;
        const char *colon = strrchr(spec, ':');
        char host[INET6_ADDRSTRLEN + 2];
        int port, fam, one = 1, zero = 0;

        if (!colon || (size_t)(colon - spec) >= sizeof(host) || parse_int(colon + 1, 0, 65535, &port) < 0)
                return -EINVAL;
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        if (host[0] == '[') {
                size_t n = strlen(host);
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                if (n < 3 || host[n - 1] != ']')
                        return -EINVAL;
                host[n - 1] = '\0';
                a->sin6_family = AF_INET6;
                a->sin6_port = htons((uint16_t)port);
                if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
                        return -EINVAL;
                fam = AF_INET6;
                sl = sizeof(*a);
        } else {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                a->sin_family = AF_INET;
                a->sin_port = htons((uint16_t)port);
                if (host[0] && inet_pton(AF_INET, host, &a->sin_addr) != 1)
                        return -EINVAL;
                fam = AF_INET;
                sl = sizeof(*a);
        }
        int fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (fam == AF_INET6)
                (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 64) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        sl = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
                char a[INET6_ADDRSTRLEN] = "?";
                if (fam == AF_INET6) {
                        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
                        snprintf(where, where_size, "[%s]:%u", a, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
                } else {
                        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
                        snprintf(where, where_size, "%s:%u", a, ntohs(((struct sockaddr_in *)&ss)->sin_port));
                }
        }
        return fd;
}

static void usage(FILE *f)
{
        fprintf(f, "usage: spinlane-stat [--aeron-dir DIR] [--metrics-bind-address HOST:PORT]\n"
                   "Serves the Aeron media driver's counters (DIR/cnc.dat) as Prometheus text on /metrics.\n"
                   "  --aeron-dir DIR      the driver's Aeron directory (default: $AERON_DIR, else /dev/shm/aeron-USER)\n"
                   "  --metrics-bind-address HOST:PORT\n"
                   "                       where to listen (default " STAT_DEFAULT_BIND "; \":9472\" every address;\n"
                   "                       port 0 picks one, printed at start)\n"
                   "  --version            print the version and exit\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "aeron-dir", required_argument, NULL, 'd' },
                { "metrics-bind-address", required_argument, NULL, 'b' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *dir = getenv("AERON_DIR"), *bind_spec = STAT_DEFAULT_BIND;
        char def[256], where[INET6_ADDRSTRLEN + 16] = "?";
        static cnc_map m;
        int c;

        while ((c = getopt_long(argc, argv, "hV", opts, NULL)) >= 0) {
                switch (c) {
                case 'd': dir = optarg; break;
                case 'b': bind_spec = optarg; break;
                case 'h': usage(stdout); return 0;
                case 'V': printf("spinlane-stat %s\n", SPINLANE_VERSION); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "spinlane-stat: unexpected argument \"%s\"\n", argv[optind]);
                usage(stderr);
                return 2;
        }
        if (!dir || !*dir) {
                struct passwd *pw = getpwuid(geteuid());
                snprintf(def, sizeof(def), "/dev/shm/aeron-%s", pw && pw->pw_name ? pw->pw_name : "default");
                dir = def;
        }
        if ((size_t)snprintf(m.path, sizeof(m.path), "%s/cnc.dat", dir) >= sizeof(m.path)) {
                fprintf(stderr, "spinlane-stat: --aeron-dir \"%s\" is too long\n", dir);
                return 2;
        }
        int fd = listen_on(bind_spec, where, sizeof(where));
        if (fd == -EINVAL) {
                fprintf(stderr, "spinlane-stat: --metrics-bind-address \"%s\": expected HOST:PORT (an IPv4 address, [IPv6] or nothing, and a port)\n",
                        bind_spec);
                return 2;
        }
        if (fd < 0) {
                fprintf(stderr, "spinlane-stat: cannot listen on %s: %s\n", bind_spec, strerror(-fd));
                return 1;
        }
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* before MHD's thread: it inherits the mask */
        struct MHD_Daemon *d = MHD_start_daemon(
                MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, on_request, &m,
                MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)STAT_MAX_CONNECTIONS,
                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)STAT_TIMEOUT_S,
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)STAT_REQUEST_BYTES, MHD_OPTION_END);
        if (!d) {
                close(fd);
                fprintf(stderr, "spinlane-stat: the HTTP server (libmicrohttpd) did not start\n");
                return 1;
        }
        fprintf(stderr, "spinlane-stat %s: serving /metrics on %s from %s\n", SPINLANE_VERSION, where, m.path);
        for (;;) {
                int sig;
                if (sigwait(&set, &sig) == 0 && sig != SIGPIPE)
                        break;
        }
        MHD_stop_daemon(d);
        cnc_unmap(&m);
        return 0;
}
