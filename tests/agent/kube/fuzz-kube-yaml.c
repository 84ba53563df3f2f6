/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the kubeconfig YAML loader (libyaml events into jansson); a success must
 * serialise, a failure leave the output untouched. */
#include "kube-yaml.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_t *j = NULL;
        char err[256];

        if (kube_yaml_parse((const char *)data, size, &j, err, sizeof(err)) == 0) {
                char *s = json_dumps(j, JSON_ENCODE_ANY);
                if (!s)
                        abort();
                free(s);
                json_decref(j);
        } else if (j) {
                abort(); /* untouched on failure */
        }
        return 0;
}
