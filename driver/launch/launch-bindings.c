/* SPDX-License-Identifier: Apache-2.0 */
/* The aeron-bindings check. The driver binary is read (bounded) and its dynamic section
 * parsed by launch-elf; its Aeron libraries are loaded from where its loader would take
 * them (LD_LIBRARY_PATH, DT_RUNPATH/DT_RPATH with $ORIGIN, else the default search) so
 * that the bindings library binds to the same ones; the contract is judged by the
 * adapter's own parser. Never logs. */
#include "launch-bindings.h"

#include "alloc-env.h"
#include "cleanup.h"
#include "envp.h"
#include "hostfs.h"
#include "launch-elf.h"
#include "launch-report.h"
#include "readfile.h"
#include "spa-env.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LBIND_MAX_FILE (16u << 20) /* an aeronmd is tens of KB; a static one a few MB */
#define LBIND_MAX_HANDLES 16

int lbind_resolve_command(const char *command, const char *path, char *ret, size_t size)
{
        if (!command || !*command)
                return -ENOENT;
        if (strchr(command, '/')) {
                if (access(command, X_OK) != 0)
                        return -errno;
                return hostfs_fmt(ret, size, "%s", command);
        }
        for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin";;) {
                const char *c = strchr(p, ':');
                size_t n = c ? (size_t)(c - p) : strlen(p);
                char cand[PATH_MAX];
                struct stat st;
                if (n > 0 && hostfs_fmt(cand, sizeof(cand), "%.*s/%s", (int)n, p, command) == 0 && stat(cand, &st) == 0 &&
                    S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
                        return hostfs_fmt(ret, size, "%s", cand);
                if (!c)
                        break;
                p = c + 1;
        }
        return -ENOENT;
}

/* The file's first LBIND_MAX_FILE bytes. */
static int read_file(const char *path, uint8_t **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = readfile_open(path);
        struct stat st;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        size_t want = (size_t)st.st_size < LBIND_MAX_FILE ? (size_t)st.st_size : LBIND_MAX_FILE;
        uint8_t *buf = malloc(want ? want : 1);
        if (!buf)
                return -ENOMEM;
        size_t n = 0;
        while (n < want) {
                ssize_t k = read(fd, buf + n, want - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        *ret = buf;
        *ret_len = n;
        return 0;
}

struct handles {
        void *h[LBIND_MAX_HANDLES];
        unsigned n;
};

/* The libraries stay loaded: the launcher execs (or exits) right after the checks, and
 * dlclose would orphan what DPDK's constructors allocated. */
static void handles_forget(struct handles *hs)
{
        hs->n = 0;
}

/* dir with $ORIGIN / ${ORIGIN} replaced by origin */
static void expand_origin(const char *dir, size_t n, const char *origin, char *out, size_t size)
{
        out[0] = '\0';
        for (size_t i = 0; i < n;) {
                if (strncmp(dir + i, "${ORIGIN}", 9) == 0 && i + 9 <= n) {
                        (void)hostfs_fmt_append(out, size, "%s", origin);
                        i += 9;
                } else if (strncmp(dir + i, "$ORIGIN", 7) == 0 && i + 7 <= n) {
                        (void)hostfs_fmt_append(out, size, "%s", origin);
                        i += 7;
                } else {
                        (void)hostfs_fmt_append(out, size, "%c", dir[i]);
                        i++;
                }
        }
}

/* Find name in a ':'-separated directory list. */
static bool find_in(const char *dirs, const char *name, const char *origin, char *ret, size_t size)
{
        if (!dirs || !*dirs)
                return false;
        for (const char *p = dirs;;) {
                const char *c = strchr(p, ':');
                size_t n = c ? (size_t)(c - p) : strlen(p);
                char dir[PATH_MAX], cand[PATH_MAX];
                expand_origin(p, n, origin, dir, sizeof(dir));
                if (dir[0] && hostfs_fmt(cand, sizeof(cand), "%s/%s", dir, name) == 0 && access(cand, R_OK) == 0) {
                        (void)hostfs_fmt(ret, size, "%s", cand);
                        return true;
                }
                if (!c)
                        return false;
                p = c + 1;
        }
}

/* Load the driver's Aeron libraries (libaeron.so before libaeron_driver.so) as its own
 * loader would find them, RTLD_GLOBAL: the bindings library then binds to these. */
static void preload_aeron(const char *driver, const lelf_info *elf, const char *ld_path, struct handles *hs,
                          char *where, size_t wsize)
{
        char origin[PATH_MAX], real[PATH_MAX];

        if (realpath(driver, real)) {
                char *s = strrchr(real, '/');
                if (s)
                        *s = '\0';
                (void)hostfs_fmt(origin, sizeof(origin), "%s", real);
        } else
                (void)hostfs_fmt(origin, sizeof(origin), ".");
        for (int pass = 0; pass < 2; pass++)
                for (unsigned i = 0; i < elf->n_needed && hs->n < LBIND_MAX_HANDLES; i++) {
                        const char *name = elf->needed[i];
                        bool is_driver_lib = strstr(name, "aeron_driver") != NULL;
                        if (strncmp(name, "libaeron", 8) != 0 || (pass == 0) == is_driver_lib)
                                continue;
                        char path[PATH_MAX];
                        bool found = elf->runpath[0] ? (find_in(ld_path, name, origin, path, sizeof(path)) ||
                                                        find_in(elf->runpath, name, origin, path, sizeof(path)))
                                                     : (find_in(elf->rpath, name, origin, path, sizeof(path)) ||
                                                        find_in(ld_path, name, origin, path, sizeof(path)));
                        void *h = dlopen(found ? path : name, RTLD_NOW | RTLD_GLOBAL);
                        if (h) {
                                hs->h[hs->n++] = h;
                                if (is_driver_lib)
                                        (void)hostfs_fmt(where, wsize, "%s", found ? path : name);
                        }
                }
}

struct seg_query {
        const void *addr;
        bool found, writable;
};

static int seg_cb(struct dl_phdr_info *info, size_t size, void *data)
{
        struct seg_query *q = data;
        (void)size;
        for (unsigned i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
                if (ph->p_type == PT_LOAD && (uintptr_t)q->addr >= lo && (uintptr_t)q->addr < lo + ph->p_memsz) {
                        q->found = true;
                        q->writable = (ph->p_flags & PF_W) != 0;
                        return 1;
                }
        }
        return 0;
}

/* A dlsym'ed address: 1 a writable data object, 0 something else (what in *why). */
static int symbol_kind(void *addr, const char **why)
{
        Dl_info di;
        const ElfW(Sym) *sym = NULL;
        if (dladdr1(addr, &di, (void **)&sym, RTLD_DL_SYMENT) == 0 || !sym) {
                *why = "its symbol table entry cannot be read";
                return 0;
        }
        if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT) {
                *why = ELF64_ST_TYPE(sym->st_info) == STT_FUNC ? "a function, not the bindings object" : "not a data object";
                return 0;
        }
        struct seg_query q = { .addr = addr };
        dl_iterate_phdr(seg_cb, &q);
        if (!q.found || !q.writable) {
                *why = "read-only (Aeron writes the bindings' meta_info.source_symbol: declare it without const)";
                return 0;
        }
        return 1;
}

/* One entry of a ','-separated list into buf; advances *p. */
static bool next_item(const char **p, char *buf, size_t size)
{
        while (**p == ',')
                (*p)++;
        if (!**p)
                return false;
        size_t n = strcspn(*p, ",");
        if (n >= size)
                n = size - 1;
        memcpy(buf, *p, n);
        buf[n] = '\0';
        *p += strcspn(*p, ",");
        return true;
}

int lbind_check(const lbind_in *in, verdict_list *vl)
{
        const char *const *envp = in->envp;
        const char *sym_name = envp_get(envp, "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA");
        const char *libs = envp_get(envp, "AERON_DRIVER_DYNAMIC_LIBRARIES");
        char driver[PATH_MAX] = "", lib_found[PATH_MAX] = "", aeron_lib[PATH_MAX] = "", built[32] = "";
        struct handles hs = { .n = 0 };
        _cleanup_free_ uint8_t *image = NULL;
        lelf_info *elf = NULL;
        bool shared_driver = false, elf_ok = false;
        lreport rep;
        int r;

        if (!in->plan)
                return verdict_add(vl, "aeron-bindings", VERDICT_SKIP, NULL, NULL,
                                   "no plan for the driver's environment (see allocation-env)");
        lreport_init(&rep);

        /* the driver: found, and the shared-library build */
        r = lbind_resolve_command(in->command, envp_get(envp, "PATH"), driver, sizeof(driver));
        const char *base = strrchr(in->command, '/') ? strrchr(in->command, '/') + 1 : in->command;
        bool is_aeronmd = strncmp(base, "aeronmd", 7) == 0;
        if (r < 0) {
                lreport_add(&rep, VERDICT_FAIL, "the driver \"%s\" is not an executable file%s", in->command,
                            strchr(in->command, '/') ? "" : " in PATH");
                lreport_remedy(&rep, "Install Aeron's shared-library aeronmd (with libaeron_driver.so and libaeron.so beside it) in the image, or name it after --.");
        } else {
                size_t len = 0;
                elf = calloc(1, sizeof(*elf));
                if (!elf)
                        return -ENOMEM;
                if (read_file(driver, &image, &len) == 0 && lelf_parse(image, len, elf) == 0)
                        elf_ok = true;
                shared_driver = elf_ok && lelf_needs(elf, "libaeron_driver.so");
                if (elf_ok && !shared_driver && is_aeronmd) {
                        lreport_add(&rep, VERDICT_FAIL,
                                    "%s is not the shared-library aeronmd: it does not link libaeron_driver.so (a static aeronmd_s refuses AERON_DRIVER_DYNAMIC_LIBRARIES)",
                                    driver);
                        lreport_remedy(&rep, "Use the aeronmd that Aeron's build links against libaeron_driver.so (not aeronmd_s).");
                } else if (!shared_driver && !(sym_name && strcmp(sym_name, "default") == 0))
                        lreport_add(&rep, VERDICT_WARN,
                                    "the command %s is not Aeron's shared-library aeronmd (no DT_NEEDED libaeron_driver.so): whether it loads the bindings was not checked",
                                    driver);
                if (shared_driver)
                        preload_aeron(driver, elf, envp_get(envp, "LD_LIBRARY_PATH"), &hs, aeron_lib, sizeof(aeron_lib));
        }

        /* the bindings: the pod's choice, or spinlane's */
        bool ours = !sym_name || strcmp(sym_name, LENV_BINDINGS_SYMBOL) == 0;
        if (sym_name && strcmp(sym_name, "default") == 0) {
                lreport_add(&rep, VERDICT_WARN,
                            "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=default: the pod chose Aeron's own bindings, the driver runs on kernel UDP without bypass");
                lreport_remedy(&rep, "Leave AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA unset for the DPDK bypass.");
        } else if (!libs || !*libs) {
                lreport_add(&rep, VERDICT_FAIL, "AERON_DRIVER_DYNAMIC_LIBRARIES is empty: the bindings %s cannot be found",
                            sym_name ? sym_name : LENV_BINDINGS_SYMBOL);
        } else {
                const char *p = libs;
                char item[PATH_MAX];
                void *addr = NULL, *handle = NULL;
                bool load_failed = false;
                while (!addr && next_item(&p, item, sizeof(item)) && hs.n < LBIND_MAX_HANDLES) {
                        struct stat st;
                        if (strchr(item, '/') && stat(item, &st) != 0) {
                                lreport_add(&rep, VERDICT_FAIL, "%s (AERON_DRIVER_DYNAMIC_LIBRARIES) does not exist", item);
                                load_failed = true;
                                continue;
                        }
                        void *h = dlopen(item, RTLD_NOW | RTLD_LOCAL);
                        if (!h) {
                                const char *e = dlerror();
                                lreport_add(&rep, VERDICT_FAIL, "cannot load %s (AERON_DRIVER_DYNAMIC_LIBRARIES): %s", item,
                                            e ? e : "?");
                                load_failed = true;
                                continue;
                        }
                        hs.h[hs.n++] = h;
                        addr = dlsym(h, ours ? LENV_BINDINGS_SYMBOL : sym_name);
                        if (addr) {
                                handle = h;
                                (void)hostfs_fmt(lib_found, sizeof(lib_found), "%s", item);
                        }
                }
                if (load_failed)
                        lreport_remedy(&rep, "Install libspinlane_aeron.so (built against this Aeron) and the DPDK runtime in the image; " LAUNCH_ENV_AERON_LIBRARY " tells spinlane-launch where it is.");
                if (!addr && !load_failed) {
                        lreport_add(&rep, VERDICT_FAIL,
                                    "no library in AERON_DRIVER_DYNAMIC_LIBRARIES=%s exports %s: the stock aeronmd would crash (SIGSEGV) looking it up",
                                    libs, ours ? LENV_BINDINGS_SYMBOL : sym_name);
                        lreport_remedy(&rep, "Name the bindings object exactly (spinlane_udp_channel_transport_bindings) and list libspinlane_aeron.so in AERON_DRIVER_DYNAMIC_LIBRARIES.");
                } else if (addr) {
                        const char *why = NULL;
                        if (symbol_kind(addr, &why) != 1) {
                                lreport_add(&rep, VERDICT_FAIL, "%s in %s is %s", ours ? LENV_BINDINGS_SYMBOL : sym_name,
                                            lib_found, why);
                        } else if (!ours) {
                                lreport_add(&rep, VERDICT_WARN,
                                            "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MEDIA=%s (the pod's) from %s: not spinlane's bindings",
                                            sym_name, lib_found);
                        } else {
                                int (*check)(char *, size_t) = (int (*)(char *, size_t))dlsym(handle,
                                                                                            "spinlane_aeron_version_check");
                                const char *(*against)(void) = (const char *(*)(void))dlsym(handle,
                                                                                           "spinlane_aeron_built_against");
                                char err[512] = "";
                                if (!check || !against)
                                        lreport_add(&rep, VERDICT_FAIL, "%s exports %s but is not libspinlane_aeron.so (no spinlane_aeron_version_check)",
                                                    lib_found, LENV_BINDINGS_SYMBOL);
                                else {
                                        (void)hostfs_fmt(built, sizeof(built), "%s", against());
                                        if (check(err, sizeof(err)) < 0) {
                                                lreport_add(&rep, VERDICT_FAIL, "%s", err);
                                                lreport_remedy(&rep, "Build libspinlane_aeron.so against the Aeron release of the image's aeronmd (-DSPINLANE_AERON_DIR, -DSPINLANE_AERON_BUILD_DIR).");
                                        }
                                }
                        }
                }
        }

        /* the contract, as the driver will parse it */
        char contract[640] = "";
        if (ours && !(sym_name && strcmp(sym_name, "default") == 0)) {
                if (in->plan->bypass_problem[0]) {
                        lreport_add(&rep, VERDICT_FAIL, "%s", in->plan->bypass_problem);
                        lreport_remedy(&rep, "The spinlane agent sets SPINLANE_NIC_<i>_IPV4 (and _GATEWAY) for every NIC it allocates; for a device outside the allocation, or outside Kubernetes, set " BYPASS_ENV_SENDER_IPV4 " and " BYPASS_ENV_RECEIVER_IPV4 " (a.b.c.d/len) in the pod spec.");
                } else {
                        struct spa_config cfg;
                        char err[1024];
                        if (spa_env_parse(envp, &cfg, err, sizeof(err)) < 0) {
                                lreport_add(&rep, VERDICT_FAIL, "the driver would refuse its environment: %s", err);
                                lreport_remedy(&rep, "Fix the variable named (docs/aeron.md lists the contract).");
                        } else if (cfg.shared)
                                (void)hostfs_fmt(contract, sizeof(contract), "sender and receiver on %s %s",
                                                 cfg.sender.device, envp_get(envp, BYPASS_ENV_SENDER_IPV4));
                        else
                                (void)hostfs_fmt(contract, sizeof(contract), "sender on %s %s, receiver on %s %s",
                                                 cfg.sender.device, envp_get(envp, BYPASS_ENV_SENDER_IPV4), cfg.receiver.device,
                                                 envp_get(envp, BYPASS_ENV_RECEIVER_IPV4));
                }
        }

        json_t *ev = json_pack("{s:s,s:b,s:s?,s:s?,s:s?,s:s?}", "driver", driver[0] ? driver : in->command,
                               "shared_library_driver", shared_driver, "aeron_driver_library",
                               aeron_lib[0] ? aeron_lib : NULL, "library", lib_found[0] ? lib_found : libs, "symbol",
                               sym_name ? sym_name : LENV_BINDINGS_SYMBOL, "built_against", built[0] ? built : NULL);
        char pass[1400];
        (void)hostfs_fmt(pass, sizeof(pass), "%s (%s) loads %s: %s resolves, built against Aeron %s like the driver; %s",
                         driver, shared_driver ? "shared-library build" : "?", lib_found, LENV_BINDINGS_SYMBOL, built,
                         contract);
        handles_forget(&hs);
        free(elf);
        return lreport_emit(&rep, vl, "aeron-bindings", ev, pass);
}
