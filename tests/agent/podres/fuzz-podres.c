/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the kubelet PodResources List reply (protobuf bytes from the kubelet's
 * socket): a table within its bounds, sorted, one holder per device, or an error. */
#include "podres-parse.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        podres_table t = {0};
        char err[128];

        if (podres_parse_list(data, size, "spinlane.io", &t, err, sizeof(err)) == 0) {
                if (t.n > PODRES_MAX_ASSIGN)
                        abort();
                for (size_t i = 0; i < t.n; i++) {
                        const podres_assignment *a = &t.items[i];
                        if (strncmp(a->resource, "spinlane.io/", 12) != 0 || !*a->device || !*a->pod || !*a->ns ||
                            !*a->container)
                                abort();
                        if (i && strcmp(t.items[i - 1].resource, a->resource) == 0 &&
                            strcmp(t.items[i - 1].device, a->device) >= 0)
                                abort();
                        if (podres_find(&t, a->resource, a->device) != a)
                                abort();
                }
                podres_table_free(&t);
        } else if (t.n || t.items) {
                abort(); /* untouched on failure */
        }
        return 0;
}
