/* SPDX-License-Identifier: Apache-2.0 */
/* The YAML subset kubectl writes for kubeconfig files, read into a jansson value: block
 * mappings and sequences (also "key:" followed by "- item" at the same indent), plain,
 * 'single' and "double" quoted scalars, comments, an opening "---", and the empty flow
 * forms {} and []. Everything else (anchors, aliases, tags, block scalars | and >, other
 * flow collections, several documents, tabs in indentation) is refused with a message
 * naming the line. Scalars become strings (null for ~, null and empty values). Pure: no
 * I/O, no globals, never logs; bounded in size, lines and depth. */
#ifndef SPIN_KUBE_YAML_H
#define SPIN_KUBE_YAML_H

#include <jansson.h>
#include <stddef.h>

#define KUBE_YAML_MAX_TEXT (1024 * 1024)
#define KUBE_YAML_MAX_LINES 65536
#define KUBE_YAML_MAX_DEPTH 32

/* -EINVAL (not in the subset, or not YAML: err says what and where), -E2BIG (beyond a
 * limit), -ENOMEM. On success *ret is a new reference. */
int kube_yaml_parse(const char *text, size_t len, json_t **ret, char *err, size_t err_size);

#endif
