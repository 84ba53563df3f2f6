/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: what the report reads from outside: the kubelet's CPU manager checkpoint
 * (a host file), --metrics-bind-address, and Prometheus escaping of a label value (pod and
 * container names come from the kubelet). */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *mode = NULL;
        char s[128], err[256], esc[64];
        report_bind b;

        if (report_pin_mode_parse((const char *)data, size, &mode) == 0 && strcmp(mode, "kubelet-pinned") != 0 &&
            strcmp(mode, "spinlane-pinned") != 0 && strcmp(mode, "unknown") != 0)
                abort();
        snprintf(s, sizeof(s), "%.*s", (int)(size < 100 ? size : 100), (const char *)data);
        if (report_bind_parse(s, &b, err, sizeof(err)) == 0 && !b.off && b.port == 0)
                abort();
        report_prom_escape(s, esc, sizeof(esc));
        size_t n = strlen(esc);
        if (n >= sizeof(esc))
                abort();
        for (size_t i = 0; i < n; i++) {
                if (esc[i] == '\n' || (esc[i] == '"' && (i == 0 || esc[i - 1] != '\\')))
                        abort();
        }
        return 0;
}
