/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge from the node inventory to node preparation: the NIC list preparation
 * works on and the scan function the daemon and `run --once` use. Never logs. */
#include "prep-inventory.h"

#include "select.h"

size_t prep_nics_from_inventory(const inventory *inv, prep_nic *ret, size_t max)
{
        size_t n = 0;
        for (size_t i = 0; i < inv->n_nics && n < max; i++)
                select_nic_from_inv(&inv->nics[i], &ret[n++]);
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
