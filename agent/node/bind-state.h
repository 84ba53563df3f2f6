/* SPDX-License-Identifier: Apache-2.0 */
/* The bind state file, /var/lib/spinlane/bind-state.json: one entry per NIC spinlane
 * bound (original driver, target, netdev, MAC), so `restore` can give it back and the
 * selection and addresses know it. Parser pure and fuzzed; load/save through hostfs. */
#ifndef SPIN_BIND_STATE_H
#define SPIN_BIND_STATE_H

#include "hostfs.h"

#include <stdbool.h>
#include <stddef.h>

#define BIND_STATE_DIR "/var/lib/spinlane"
#define BIND_STATE_PATH "/var/lib/spinlane/bind-state.json"
#define BIND_STATE_MAX 256        /* NICs tracked */
#define BIND_STATE_MAX_TEXT (128 * 1024)
#define BIND_DRIVER_LEN 32
#define BIND_PCI_LEN 16

typedef struct bind_state_entry {
        char pci[BIND_PCI_LEN];
        char original[BIND_DRIVER_LEN]; /* driver before spinlane touched it; "" = none */
        char target[BIND_DRIVER_LEN];   /* driver spinlane bound it to */
        char netdev[16];                /* its kernel netdev before binding ("" none) */
        /* Its MAC, read from that netdev before the unbind took it away ("" unknown: no
         * netdev then, or a file written before spinlane recorded MACs). The NIC's address
         * is looked up by it later (docs/addresses.md). No IPv4 address is recorded: a NIC
         * whose netdev had one is never bound (bind_netdev_in_use). */
        char mac[18];
} bind_state_entry;

typedef struct bind_state {
        bind_state_entry e[BIND_STATE_MAX];
        size_t n;
} bind_state;

/* Pure: parse the state file's text. A truncated or garbled file is -EBADMSG with a
 * message in err naming what is wrong; *ret untouched on failure. */
/* The opening every state file under /var/lib/spinlane shares (the bind state, the
 * kernel-args record): at most max_len bytes of one JSON object with "version": 1, no
 * duplicate keys. 0 and the object in *ret (the caller's reference), or -EBADMSG with why
 * in err; pure. */
struct json_t;
int state_json_open(const char *text, size_t len, size_t max_len, struct json_t **ret, char *err, size_t err_size);
/* In a state file's parser: why into err, the opened object released, -EBADMSG returned. */
#define STATE_JSON_BAD(root, err, err_size, ...)                                           \
        do {                                                                               \
                if ((err) && (err_size))                                                   \
                        snprintf((err), (err_size), __VA_ARGS__);                          \
                json_decref(root);                                                         \
                return -EBADMSG;                                                           \
        } while (0)

int bind_state_parse(const char *text, size_t len, bind_state *ret, char *err, size_t err_size);
/* Its text (malloc'ed, NUL-terminated) or NULL on -ENOMEM. */
char *bind_state_format(const bind_state *s);
/* Load <root>/var/lib/spinlane/bind-state.json. Returns 1 when the file existed, 0 when it
 * did not (empty state), negative on error (-EBADMSG: truncated/garbled, message in err). */
int bind_state_load(const hostfs *h, bind_state *ret, char *err, size_t err_size);
/* Write atomically (temp file in the same dir, fsync, rename); an empty state removes
 * the file. Creates the directory when needed. */
int bind_state_save(const hostfs *h, const bind_state *s);
const bind_state_entry *bind_state_find(const bind_state *s, const char *pci);

/* A driver name the state and sysfs may hold: 1-31 of [A-Za-z0-9_.-], not "." or "..". */
bool bind_driver_name_valid(const char *s);

#endif
