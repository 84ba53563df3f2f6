/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the probe message parser and the responder's answer on any bytes: never
 * reads past the input, an answer only to a request, never larger than the request, and
 * the answer parses as the reply to it (same id and sequence). */
#include "probe_msg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tr_probe p, a;
        uint8_t *in = malloc(size ? size : 1), out[2048];
        if (!in)
                return 0;
        memcpy(in, data, size); /* exactly size bytes: ASan sees any read beyond */
        int pr = tr_probe_parse(in, size, &p);
        int n = tr_probe_answer(in, size, out, sizeof(out));
        if (n >= 0) {
                if (pr < 0 || p.type != TR_PROBE_REQUEST || (size_t)n != size)
                        abort();
                if (tr_probe_parse(out, (size_t)n, &a) < 0 || a.type != TR_PROBE_REPLY || a.id != p.id || a.seq != p.seq)
                        abort();
                if (tr_probe_answer(out, (size_t)n, out, sizeof(out)) != -EBADMSG) /* replies are not answered */
                        abort();
        } else if (pr == 0 && p.type == TR_PROBE_REQUEST && size <= sizeof(out))
                abort();
        free(in);
        return 0;
}
