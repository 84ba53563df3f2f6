/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's NIC address service: one HTTP client and one metadata client (agent/http,
 * agent/cloud) on the daemon's loop, a cache of what the metadata said per MAC, and the
 * resolution of every scan's NIC addresses from it (agent/node/addresses.h). Lookups never
 * block the loop: a scan uses what is known, starts what is missing, and a finished
 * lookup asks for the next scan through the changed callback. Logs (daemon code): one
 * line when a NIC's address becomes known or changes, one when its lookup fails with a
 * new kind of error. Linked only into spinlane-agent-run (libcurl). */
#ifndef SPIN_RUN_ADDRESS_H
#define SPIN_RUN_ADDRESS_H

#include "config.h"
#include "hostfs.h"
#include "inventory.h"
#include "loop.h"
#include "select.h"

#include <stdint.h>

#define RUN_ADDRESS_RETRY_MS 30000u       /* a failed lookup is tried again after this (a timer
                                             asks for the scan that starts it), */
#define RUN_ADDRESS_RETRY_MAX_MS 600000u  /* doubling up to this */

typedef struct run_address run_address;

/* The service on loop l. changed(userdata) runs from the loop when a lookup finished
 * (the caller re-scans). The metadata base URL is imds_base_url() (SPINLANE_IMDS_URL); a
 * bad one is logged and makes every lookup fail with that reason. -ENOMEM. */
int run_address_new(loop *l, void (*changed)(void *userdata), void *userdata, run_address **ret);
/* Cancels every lookup. Accepts NULL. */
void run_address_free(run_address *a);

/* Resolve the address of every NIC of inv that sel selects (agent/node/select.h, over inv):
 * the config's static entries, the MACs recorded in st (may be NULL), and the metadata as far as it is known; a lookup
 * that is missing (or due again) is started now. Entries of MACs no scan asks about any
 * more are dropped. -ENOMEM (inv then holds what could be resolved). */
int run_address_resolve(run_address *a, const config *c, const bind_state *st, const selection *sel,
                        inventory *inv);

/* SIGHUP: ask the metadata again for every MAC at the next scan. What it said before stays
 * in force until the new answer arrives. */
void run_address_reload(run_address *a);

/* Lookups started so far (tests, debug). */
unsigned run_address_lookups(const run_address *a);

#endif
