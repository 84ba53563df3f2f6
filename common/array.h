/* SPDX-License-Identifier: Apache-2.0 */
/* The one growable-array helper (systemd's GREEDY_REALLOC shape): grow a malloc'ed array to
 * hold at least n items, the capacity doubling, the size overflow-checked. Owns nothing;
 * no I/O, never logs. */
#ifndef SPIN_ARRAY_H
#define SPIN_ARRAY_H

#include <stddef.h>

/* *pp points to an array (or NULL) with room for *cap items of item_size bytes. Makes room
 * for at least need items: nothing to do when *cap >= need, else the capacity goes from
 * max(*cap, min_cap, 1) doubling until it holds need, and *pp is realloc'ed to it.
 * -ENOMEM when that size does not fit a size_t or realloc fails: *pp and *cap untouched
 * then (the old array stays valid and owned by the caller). pp is a pointer to the array
 * pointer, of any object type (read and written through memcpy). */
int array_grow(void *pp, size_t *cap, size_t need, size_t item_size, size_t min_cap);

/* ARRAY_GROW(items, cap, need, min_cap): array_grow() for an array "T *items" and its
 * "size_t cap" (lvalues, each evaluated once). */
#define ARRAY_GROW(items, cap, need, min_cap) array_grow(&(items), &(cap), (need), sizeof(*(items)), (min_cap))

#endif
