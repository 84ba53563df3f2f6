/* SPDX-License-Identifier: Apache-2.0 */
/* The one rule for which NICs and cores spinlane takes: from the config's selectors, the
 * inventory and the bind state. Node preparation binds by it, `preflight` checks by it,
 * `inventory --json` lists its resources by it, the daemon advertises by it. Pure: no
 * I/O, never logs (the caller loads the config and the bind state). */
#ifndef SPIN_AGENT_SELECT_H
#define SPIN_AGENT_SELECT_H

#include "bind-state.h"
#include "config.h"
#include "inventory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the NIC rule reads about a NIC (node preparation's NIC list is made of these). */
typedef struct select_nic {
        char pci[16];
        uint16_t vendor, device;
        config_nic_kind kind;
        char driver[32];   /* bound driver, "" none */
        char netdev[16];   /* kernel netdev, "" none */
        bool primary;      /* carries the default route */
} select_nic;

void select_nic_from_inv(const inv_nic *n, select_nic *ret);

/* Why the config takes a NIC or leaves it out: the first selector that leaves it out, in
 * the order the rule applies them. */
typedef enum select_why {
        SELECT_TAKEN,
        SELECT_PRIMARY,   /* it carries the node's default route: never selected */
        SELECT_KIND,      /* nics.kinds leaves its kind out */
        SELECT_ID,        /* nics.ids does not list its vendor:device */
        SELECT_PCI,       /* nics.pci does not list its address */
        SELECT_INTERFACE, /* nics.interfaces does not name its netdev (nor the one recorded) */
        SELECT_MAX,       /* nics.max NICs were taken before it (PCI order) */
} select_why;

/* Which NICs the config selects, as indexes into nics (PCI order), at most nics.max; the
 * primary NIC is never selected. A NIC that st (may be NULL) says spinlane bound stays
 * selected by nics.interfaces although its netdev is gone. ret_idx has room for n;
 * ret_why (NULL: not wanted) too: each NIC's select_why. Returns the count. */
size_t select_nics(const config *c, const select_nic *nics, size_t n, const bind_state *st, size_t *ret_idx,
                   select_why *ret_why);

/* Whether the core is in the pool spinlane takes: isolated (every sibling online and
 * isolated), and, with "cores": {"cpus": ...}, every sibling listed there. */
bool select_core(const config *c, const inv_core *core);

/* The rule over a whole inventory. nics[i] is for inv->nics[i]: selected by the config
 * (select_nics: whether or not it is DPDK-ready yet, which is what preparation binds);
 * cores[i] for inv->cores[i] (select_core). */
typedef struct selection {
        const inventory *inv;   /* borrowed: must outlive the selection */
        const config *cfg;      /* borrowed likewise: the selectors named in the reasons */
        bool *nics;
        select_why *nic_why;    /* nic_why[i]: why nics[i] is (not) selected */
        bool *cores;
} selection;

/* st may be NULL; c and inv must outlive the selection. -ENOMEM leaves *ret untouched. */
int selection_new(const config *c, const inventory *inv, const bind_state *st, selection *ret);
/* Accepts a zeroed selection; leaves it zeroed. */
void selection_free(selection *s);

/* nic/core must be elements of s->inv; anything else is not selected. */
bool selection_has_nic(const selection *s, const inv_nic *nic);
bool selection_has_core(const selection *s, const inv_core *core);
/* Why nic is (not) selected; SELECT_KIND for a nic not of s->inv. */
select_why selection_nic_why(const selection *s, const inv_nic *nic);


#endif
