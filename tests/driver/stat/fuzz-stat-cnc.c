/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the CnC parser and the Prometheus text over any bytes. Whatever they hold,
 * the header parse either fails or gives buffers within the input, the walk stays in
 * bounds, and the render succeeds with a text whose every line is a comment or a sample. */
#include "stat-cnc.h"
#include "stat-prom.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int visit(const stat_counter *c, void *ud)
{
        (void)ud;
        if (c->label_length > STAT_CNC_LABEL_MAX || c->label[c->label_length] != '\0')
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        stat_cnc_header h;
        stat_prom_self self = { .version = "fuzz" };
        char *text = NULL;
        size_t len = 0;

        /* a copy of exactly size bytes: ASan sees any read past the end */
        uint8_t *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        if (stat_cnc_header_parse(copy, size, &h) == 0) {
                if (h.values_offset + (size_t)h.max_counters * STAT_CNC_VALUE_RECORD > size)
                        abort();
                if (stat_cnc_foreach(copy, size, &h, visit, NULL) < 0)
                        abort();
        }
        if (stat_prom_render(copy, size, &self, &text, &len) == 0) {
                if (strlen(text) != len || len == 0 || text[len - 1] != '\n')
                        abort();
                for (char *line = text; *line;) {
                        char *nl = strchr(line, '\n');
                        if (!nl || nl == line)
                                abort();
                        if (*line != '#' && !memchr(line, ' ', (size_t)(nl - line)))
                                abort();
                        line = nl + 1;
                }
                free(text);
        }
        free(copy);
        return 0;
}
