/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's NIC address service: the metadata cache (one entry per cloud and MAC: the
 * last answer, a lookup in flight, when to ask again), the scan-time resolution through
 * addresses_apply(), and the log lines of changes. Owns its HTTP and metadata clients.
 * Runs on the loop thread only. */
#include "run-address.h"

#include "addresses.h"
#include "array.h"
#include "bind-state.h"
#include "cleanup.h"
#include "http.h"
#include "imds.h"
#include "ipv4.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct md_entry {
        run_address *owner;
        nic_addr_source cloud;
        uint8_t mac[6];
        char pci[INV_PCI_LEN];      /* the NIC that asked last (for the log) */
        bool have;                  /* an answer arrived (error or addr) */
        int error;                  /* 0: addr; else the lookup's negative errno, why says it */
        nic_addr addr;
        char why[IMDS_MSG_LEN];
        bool inflight;
        bool again;                 /* reloaded while in flight: ask once more when it ends */
        uint64_t due_ms;            /* ask (again) from then on; UINT64_MAX: not before a reload */
        unsigned failures;          /* in a row: the retry backoff */
        uint64_t seen;              /* the last resolution that asked for it */
        bool logged;                /* what was logged last: */
        int logged_error;
        nic_addr logged_addr;
} md_entry;

struct run_address {
        loop *loop;
        http_client *http;
        imds *imds;                 /* NULL: the metadata URL is unusable (imds_error) */
        char imds_error[256];
        md_entry **e;
        size_t n, cap;
        int retry_fd;               /* fires when the first failed lookup is due again */
        uint64_t gen;
        unsigned lookups;
        void (*changed)(void *userdata);
        void *userdata;
};

static const char *cloud_name(nic_addr_source c) { return addresses_cloud_name(c); }

static char *mac_str(const uint8_t m[6], char buf[18])
{
        snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
        return buf;
}

static uint32_t retry_delay(unsigned failures)
{
        uint64_t d = RUN_ADDRESS_RETRY_MS;
        for (unsigned i = 1; i < failures && d < RUN_ADDRESS_RETRY_MAX_MS; i++)
                d *= 2;
        return (uint32_t)(d < RUN_ADDRESS_RETRY_MAX_MS ? d : RUN_ADDRESS_RETRY_MAX_MS);
}

/* One line when what a NIC's metadata says changes: a new address, or a new kind of
 * failure (the same error again after a retry is not repeated). */
static void log_result(md_entry *x)
{
        char mac[18], cidr[IPV4_CIDR_STR_MAX], gw[IPV4_STR_MAX];

        if (x->error == 0) {
                if (x->logged && x->logged_error == 0 && memcmp(&x->logged_addr, &x->addr, sizeof(x->addr)) == 0)
                        return;
                log_info("NIC %s (%s): address %s, gateway %s, from %s", x->pci, mac_str(x->mac, mac),
                         ipv4_cidr_format((ipv4_cidr){x->addr.ipv4, x->addr.prefix_len}, cidr),
                         x->addr.gateway ? ipv4_format(x->addr.gateway, gw) : "none", cloud_name(x->cloud));
        } else {
                if (x->logged && x->logged_error == x->error)
                        return;
                log_error("NIC %s (%s): no address from %s: %s; retrying in %u s", x->pci, mac_str(x->mac, mac),
                          cloud_name(x->cloud), x->why, retry_delay(x->failures) / 1000);
        }
        x->logged = true;
        x->logged_error = x->error;
        x->logged_addr = x->addr;
}

/* The retry timer at the earliest due time of a failed entry (disarmed when none): when
 * it fires, the caller re-scans, and the scan starts what is due. */
static void arm_retry(run_address *a)
{
        uint64_t first = UINT64_MAX;
        for (size_t i = 0; i < a->n; i++) {
                const md_entry *x = a->e[i];
                if (!x->inflight && x->have && x->error && x->due_ms < first)
                        first = x->due_ms;
        }
        if (a->retry_fd >= 0)
                (void)loop_timer_at(a->loop, a->retry_fd, first);
}

static int on_retry(loop *l, void *userdata)
{
        run_address *a = userdata;
        (void)l;
        if (a->changed)
                a->changed(a->userdata);
        return 0;
}

static void on_lookup(int error, const imds_addr *addr, const char *message, void *userdata)
{
        md_entry *x = userdata;
        run_address *a = x->owner;

        x->inflight = false;
        x->have = true;
        x->error = error;
        if (error == 0) {
                x->addr = (nic_addr){.ipv4 = addr->ipv4, .prefix_len = addr->prefix_len, .gateway = addr->gateway,
                                     .source = x->cloud};
                x->why[0] = '\0';
                x->failures = 0;
                x->due_ms = UINT64_MAX; /* an ENI keeps its address: again only on a reload */
        } else {
                snprintf(x->why, sizeof(x->why), "%s", message && *message ? message : strerror(-error));
                x->failures++;
                x->due_ms = loop_now_ms() + retry_delay(x->failures);
        }
        if (x->again) { /* this answer may predate the reload: the next scan asks again */
                x->again = false;
                x->due_ms = 0;
        }
        log_result(x);
        arm_retry(a);
        if (a->changed)
                a->changed(a->userdata);
}

static void entry_start(run_address *a, md_entry *x)
{
        int r;

        if (!a->imds) {
                x->have = true;
                x->error = -EINVAL;
                snprintf(x->why, sizeof(x->why), "%s", a->imds_error);
                x->due_ms = UINT64_MAX;
                return;
        }
        r = imds_lookup(a->imds, x->cloud == NIC_ADDR_AWS ? IMDS_AWS : IMDS_AZURE, x->mac, on_lookup, x);
        if (r < 0) {
                x->have = true;
                x->error = r;
                x->failures++;
                snprintf(x->why, sizeof(x->why), "cannot start the %s lookup: %s", cloud_name(x->cloud), strerror(-r));
                x->due_ms = loop_now_ms() + retry_delay(x->failures);
                log_result(x);
                return;
        }
        x->inflight = true;
        a->lookups++;
}

static md_entry *entry_get(run_address *a, nic_addr_source cloud, const uint8_t mac[6])
{
        for (size_t i = 0; i < a->n; i++)
                if (a->e[i]->cloud == cloud && memcmp(a->e[i]->mac, mac, 6) == 0)
                        return a->e[i];
        if (ARRAY_GROW(a->e, a->cap, a->n + 1, 8) < 0)
                return NULL;
        md_entry *x = calloc(1, sizeof(*x));
        if (!x)
                return NULL;
        *x = (md_entry){.owner = a, .cloud = cloud};
        memcpy(x->mac, mac, 6);
        a->e[a->n++] = x;
        return x;
}

/* addresses_md_fn: what the cache knows; a lookup started when none is known or due. */
static void metadata_of(void *userdata, const inv_nic *nic, nic_addr_source cloud, const uint8_t mac[6],
                        addresses_md *ret)
{
        run_address *a = userdata;
        md_entry *x = entry_get(a, cloud, mac);

        if (!x) {
                ret->state = ADDRESSES_MD_FAILED;
                snprintf(ret->why, sizeof(ret->why), "out of memory");
                return;
        }
        x->seen = a->gen;
        snprintf(x->pci, sizeof(x->pci), "%s", nic->pci);
        if (!x->inflight && loop_now_ms() >= x->due_ms)
                entry_start(a, x);
        if (!x->have) {
                ret->state = ADDRESSES_MD_PENDING;
                return;
        }
        if (x->error == 0) {
                ret->state = ADDRESSES_MD_KNOWN;
                ret->addr = x->addr;
                return;
        }
        ret->state = ADDRESSES_MD_FAILED;
        snprintf(ret->why, sizeof(ret->why), "%s", x->why);
}

/* Drop the entries of MACs this resolution did not ask about (a NIC gone or no longer
 * selected), unless a lookup of theirs is in flight (then the next time). */
static void sweep(run_address *a)
{
        size_t k = 0;
        for (size_t i = 0; i < a->n; i++) {
                md_entry *x = a->e[i];
                if (x->seen != a->gen && !x->inflight)
                        free(x);
                else
                        a->e[k++] = x;
        }
        a->n = k;
}

int run_address_resolve(run_address *a, const config *c, const bind_state *st, const selection *sel,
                        inventory *inv)
{
        a->gen++;
        addresses_apply(inv, &(addresses_options){.cfg = c, .state = st, .sel = sel,
                                                  .metadata = metadata_of,
                                                  .md_userdata = a});
        sweep(a);
        arm_retry(a);
        return 0;
}

void run_address_reload(run_address *a)
{
        for (size_t i = 0; a && i < a->n; i++) {
                a->e[i]->due_ms = 0;
                a->e[i]->failures = 0;
                a->e[i]->again = a->e[i]->inflight;
        }
}

unsigned run_address_lookups(const run_address *a) { return a ? a->lookups : 0; }

int run_address_new(loop *l, void (*changed)(void *userdata), void *userdata, run_address **ret)
{
        run_address *a = calloc(1, sizeof(*a));
        int r;

        if (!a)
                return -ENOMEM;
        *a = (run_address){.loop = l, .changed = changed, .userdata = userdata, .retry_fd = -1};
        r = loop_add_timer(l, 0, 0, on_retry, a, &a->retry_fd); /* disarmed */
        if (r < 0) {
                free(a);
                return r;
        }
        r = http_client_new(l, &a->http);
        if (r < 0) {
                loop_remove_timer(l, a->retry_fd);
                free(a);
                return r;
        }
        r = imds_new(l, a->http, NULL, &a->imds);
        if (r == -ENOMEM) {
                http_client_free(a->http);
                loop_remove_timer(l, a->retry_fd);
                free(a);
                return r;
        }
        if (r < 0) {
                snprintf(a->imds_error, sizeof(a->imds_error), "%s=\"%.128s\" is not an http:// URL", IMDS_ENV_URL,
                         imds_base_url());
                log_error("NIC addresses: %s; no metadata lookups", a->imds_error);
        } else if (strcmp(imds_base_url(), IMDS_DEFAULT_BASE_URL) != 0) {
                log_info("NIC addresses: instance metadata at %s (%s)", imds_base_url(), IMDS_ENV_URL);
        }
        *ret = a;
        return 0;
}

void run_address_free(run_address *a)
{
        if (!a)
                return;
        imds_free(a->imds); /* cancels the lookups: their callbacks do not run */
        http_client_free(a->http);
        if (a->retry_fd >= 0)
                loop_remove_timer(a->loop, a->retry_fd);
        for (size_t i = 0; i < a->n; i++)
                free(a->e[i]);
        free(a->e);
        free(a);
}
