/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge from the node inventory to node preparation: the NIC list preparation
 * works on, the scan function the daemon and `run --once` use, and the config's NIC
 * selection for the node checks. Never logs. */
#include "prep-inventory.h"

#include "cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static config_nic_kind kind_of(inv_nic_kind k)
{
        switch (k) {
        case INV_NIC_ENA:
                return CONFIG_KIND_ENA;
        case INV_NIC_MANA:
                return CONFIG_KIND_MANA;
        case INV_NIC_OTHER:
        default:
                return CONFIG_KIND_OTHER;
        }
}

void prep_nic_from_inv(const inv_nic *n, prep_nic *ret)
{
        memset(ret, 0, sizeof(*ret));
        snprintf(ret->pci, sizeof(ret->pci), "%s", n->pci);
        ret->vendor = n->vendor;
        ret->device = n->device;
        ret->kind = kind_of(n->kind);
        snprintf(ret->driver, sizeof(ret->driver), "%s", n->driver);
        snprintf(ret->netdev, sizeof(ret->netdev), "%.15s", n->netdev);
        ret->primary = n->primary;
}

size_t prep_nics_from_inventory(const inventory *inv, prep_nic *ret, size_t max)
{
        size_t n = 0;
        for (size_t i = 0; i < inv->n_nics && n < max; i++)
                prep_nic_from_inv(&inv->nics[i], &ret[n++]);
        return n;
}

int prep_scan_inventory(void *userdata, const hostfs *h, prep_nic *ret, size_t max, size_t *ret_n)
{
        inventory *inv = NULL;
        (void)userdata;
        int r = inventory_scan(h, &inv);
        if (r < 0)
                return r;
        *ret_n = prep_nics_from_inventory(inv, ret, max);
        inventory_free(inv);
        return 0;
}

bool prep_checks_nic_selected(const inv_nic *nic, void *userdata)
{
        const config *c = userdata;
        prep_nic p;
        size_t idx;

        prep_nic_from_inv(nic, &p);
        /* max_count needs the whole list; one NIC at a time it is "taken or not". */
        return prep_select(c, &p, 1, NULL, &idx) == 1;
}

int prep_selection_new(const config *c, const inventory *inv, const bind_state *st, prep_selection *ret)
{
        size_t n = inv->n_nics;
        _cleanup_free_ prep_nic *nics = calloc(n ? n : 1, sizeof(*nics));
        _cleanup_free_ size_t *idx = calloc(n ? n : 1, sizeof(*idx));
        bool *sel = calloc(n ? n : 1, sizeof(*sel));

        if (!nics || !idx || !sel) {
                free(sel);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                prep_nic_from_inv(&inv->nics[i], &nics[i]);
        size_t k = prep_select(c, nics, n, st, idx);
        for (size_t i = 0; i < k; i++)
                sel[idx[i]] = true;
        *ret = (prep_selection){ .inv = inv, .selected = sel };
        return 0;
}

void prep_selection_free(prep_selection *s)
{
        if (!s)
                return;
        free(s->selected);
        *s = (prep_selection){ 0 };
}

bool prep_selection_has(const prep_selection *s, const inv_nic *nic)
{
        if (!s->selected || nic < s->inv->nics || nic >= s->inv->nics + s->inv->n_nics)
                return false;
        return s->selected[nic - s->inv->nics];
}

bool prep_checks_nic_in_selection(const inv_nic *nic, void *userdata)
{
        return prep_selection_has(userdata, nic);
}
