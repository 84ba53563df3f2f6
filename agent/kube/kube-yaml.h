/* SPDX-License-Identifier: Apache-2.0 */
/* A kubeconfig's YAML, read with libyaml into a jansson value: one document of block or
 * flow mappings and sequences, scalars of every style (plain, quoted, block | and >),
 * comments, directives, anchors. Scalars become strings (null for a plain ~, null or
 * empty value, or !!null); what a kubeconfig never needs is refused with a message naming
 * the line: aliases, several documents, tags other than !!str, !!null, !!map, !!seq, a
 * key that is not a non-empty scalar, duplicate keys, a NUL in a value; and what is not
 * YAML, with libyaml's reason. Pure: no I/O, no globals, never logs; bounded in size,
 * values and depth. */
#ifndef SPIN_KUBE_YAML_H
#define SPIN_KUBE_YAML_H

#include <jansson.h>
#include <stddef.h>

#define KUBE_YAML_MAX_TEXT (1024 * 1024)
#define KUBE_YAML_MAX_NODES 65536 /* scalars and collections */
#define KUBE_YAML_MAX_DEPTH 32

/* -EINVAL (refused, or not YAML: err says what and where), -E2BIG (beyond a limit),
 * -ENOMEM. On success *ret is a new reference; untouched on failure. */
int kube_yaml_parse(const char *text, size_t len, json_t **ret, char *err, size_t err_size);

#endif
