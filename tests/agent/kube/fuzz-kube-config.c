/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: kubeconfig to configuration (YAML subset or JSON). A success has an https
 * server, a CA and a token source. */
#include "kube-config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kube_config c = {0};
        char err[KUBE_ERR_LEN];

        if (kube_config_parse((const char *)data, size, "/base", &c, err, sizeof(err)) == 0) {
                if (!c.server || strncmp(c.server, "https://", 8) != 0 || (!c.ca_file && !c.ca_pem) ||
                    (!c.token && !c.token_file))
                        abort();
                kube_config_clear(&c);
        } else if (c.server) {
                abort();
        }
        return 0;
}
