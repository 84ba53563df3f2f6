/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: API server replies: a Node (and the label patch computed over it), a
 * Status, a Retry-After value. */
#include "kube-api.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        kube_node_info n = {0};
        kube_status st;
        char err[256], *body = NULL, ra[16];
        uint32_t secs;
        const kube_label want[] = {{"spinlane.io/ready", "true"}};

        if (kube_node_parse(s, size, KUBE_LABEL_PREFIX, &n, err, sizeof(err)) == 0) {
                int r = kube_label_patch(want, 1, n.own_labels, n.resource_version, KUBE_LABEL_PREFIX, &body, err, sizeof(err));
                if (r < 0 || (r == 1 && !body))
                        abort();
                if (body && !strstr(body, "\"spinlane.io/"))
                        abort();
                free(body);
                kube_node_info_clear(&n);
        }
        kube_status_parse(s, size, 500, &st);
        if (strlen(st.message) >= sizeof(st.message) || strlen(st.reason) >= sizeof(st.reason))
                abort();
        snprintf(ra, sizeof(ra), "%.*s", (int)(size < 15 ? size : 15), s);
        if (kube_retry_after_parse(ra, 3600, &secs) == 0 && secs > 3600)
                abort();
        return 0;
}
