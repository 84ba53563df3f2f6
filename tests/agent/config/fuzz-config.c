/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target of the config parser: any bytes in, a config or an error out; a parsed
 * config must survive config_to_json -> config_parse unchanged. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static config c, back;
        char err[CONFIG_ERR_LEN];

        if (config_parse((const char *)data, size, &c, err, sizeof(err)) < 0) {
                if (!err[0] || strlen(err) >= sizeof(err))
                        abort();
                return 0;
        }
        json_t *j = config_to_json(&c);
        if (!j)
                return 0;
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (!text)
                return 0;
        if (config_parse(text, strlen(text), &back, err, sizeof(err)) < 0 || !config_equal(&c, &back))
                abort();
        free(text);
        return 0;
}
