/* SPDX-License-Identifier: Apache-2.0 */
/* The one rule for which NICs and cores spinlane takes (config selectors, nics.max, the
 * interface names the bind state remembers, the core pool). Pure: no I/O, never logs. */
#include "select.h"

#include "cleanup.h"

#include <errno.h>
#include <stdio.h>
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

void select_nic_from_inv(const inv_nic *n, select_nic *ret)
{
        memset(ret, 0, sizeof(*ret));
        snprintf(ret->pci, sizeof(ret->pci), "%.15s", n->pci);
        ret->vendor = n->vendor;
        ret->device = n->device;
        ret->kind = kind_of(n->kind);
        snprintf(ret->driver, sizeof(ret->driver), "%.31s", n->driver);
        snprintf(ret->netdev, sizeof(ret->netdev), "%.15s", n->netdev);
        ret->primary = n->primary;
}

static bool id_listed(const config *c, const select_nic *nic)
{
        for (size_t i = 0; i < c->nics.n_ids; i++)
                if (c->nics.ids[i].vendor == nic->vendor && c->nics.ids[i].device == nic->device)
                        return true;
        return false;
}

static bool pci_listed(const config *c, const select_nic *nic)
{
        for (size_t i = 0; i < c->nics.n_pci; i++)
                if (strcmp(c->nics.pci[i], nic->pci) == 0)
                        return true;
        return false;
}

static bool if_listed(const config *c, const char *netdev)
{
        for (size_t i = 0; i < c->nics.n_interfaces; i++)
                if (*netdev && strcmp(c->nics.interfaces[i], netdev) == 0)
                        return true;
        return false;
}

/* A NIC spinlane bound earlier, whose netdev (gone now) the interface list names. */
static bool was_listed(const config *c, const select_nic *nic, const bind_state *st)
{
        const bind_state_entry *e = st && !*nic->netdev ? bind_state_find(st, nic->pci) : NULL;
        return e && inv_driver_userspace(nic->driver) && if_listed(c, e->netdev);
}

static select_why nic_why(const config *c, const select_nic *nic, const bind_state *st)
{
        if (nic->primary)
                return SELECT_PRIMARY;
        if (nic->kind < 0 || nic->kind >= _CONFIG_KIND_MAX || !c->nics.kinds[nic->kind])
                return SELECT_KIND;
        if (c->nics.n_ids && !id_listed(c, nic))
                return SELECT_ID;
        if (c->nics.n_pci && !pci_listed(c, nic))
                return SELECT_PCI;
        /* A NIC spinlane already bound has no netdev any more: it stays selected by the
         * netdev name the bind state remembers. */
        if (c->nics.n_interfaces && !if_listed(c, nic->netdev) && !was_listed(c, nic, st))
                return SELECT_INTERFACE;
        return SELECT_TAKEN;
}

size_t select_nics(const config *c, const select_nic *nics, size_t n, const bind_state *st, size_t *ret_idx,
                   select_why *ret_why)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                select_why w = nic_why(c, &nics[i], st);
                if (w == SELECT_TAKEN && c->nics.max_count && k >= c->nics.max_count)
                        w = SELECT_MAX;
                if (ret_why)
                        ret_why[i] = w;
                if (w == SELECT_TAKEN)
                        ret_idx[k++] = i;
        }
        return k;
}

bool select_core(const config *c, const inv_core *core)
{
        return core->isolated && (!c->cores.have_cpus || cpuset_subset(&core->cpus, &c->cores.cpus));
}

int selection_new(const config *c, const inventory *inv, const bind_state *st, selection *ret)
{
        size_t n = inv->n_nics;
        _cleanup_free_ select_nic *nics = calloc(n ? n : 1, sizeof(*nics));
        _cleanup_free_ size_t *idx = calloc(n ? n : 1, sizeof(*idx));
        _cleanup_free_ bool *sel = calloc(n ? n : 1, sizeof(*sel));
        _cleanup_free_ select_why *why = calloc(n ? n : 1, sizeof(*why));
        _cleanup_free_ bool *cores = calloc(inv->n_cores ? inv->n_cores : 1, sizeof(*cores));

        if (!nics || !idx || !sel || !why || !cores)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                select_nic_from_inv(&inv->nics[i], &nics[i]);
        size_t k = select_nics(c, nics, n, st, idx, why);
        for (size_t i = 0; i < k; i++)
                sel[idx[i]] = true;
        for (size_t i = 0; i < inv->n_cores; i++)
                cores[i] = select_core(c, &inv->cores[i]);
        *ret = (selection){ .inv = inv, .cfg = c, .nics = TAKE_PTR(sel), .nic_why = TAKE_PTR(why),
                            .cores = TAKE_PTR(cores) };
        return 0;
}

void selection_free(selection *s)
{
        if (!s)
                return;
        free(s->nics);
        free(s->nic_why);
        free(s->cores);
        *s = (selection){ 0 };
}

bool selection_has_nic(const selection *s, const inv_nic *nic)
{
        if (!s->inv || !s->nics || nic < s->inv->nics || nic >= s->inv->nics + s->inv->n_nics)
                return false;
        return s->nics[nic - s->inv->nics];
}

bool selection_has_core(const selection *s, const inv_core *core)
{
        if (!s->inv || !s->cores || core < s->inv->cores || core >= s->inv->cores + s->inv->n_cores)
                return false;
        return s->cores[core - s->inv->cores];
}

select_why selection_nic_why(const selection *s, const inv_nic *nic)
{
        if (!s->inv || !s->nic_why || nic < s->inv->nics || nic >= s->inv->nics + s->inv->n_nics)
                return SELECT_KIND;
        return s->nic_why[nic - s->inv->nics];
}
