/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the DRA plugin's parsers. The first byte picks one: the kubelet's claims,
 * the ResourceClaim JSON, the checkpoint, the RegistrationStatus; the rest is the input. */
#include "dra-request.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[DRA_ERR_LEN];
        if (size < 1)
                return 0;
        const uint8_t *p = data + 1;
        size_t n = size - 1;
        switch (data[0] % 4) {
        case 0: {
                dra_claim_ref *refs;
                size_t k;
                if (dra_decode_claims("P", p, n, &refs, &k, err, sizeof(err)) == 0)
                        free(refs);
                break;
        }
        case 1: {
                dra_claim_ref ref = { .ns = "ns", .uid = "u", .name = "c" };
                dra_result *res;
                size_t k;
                if (dra_claim_parse((const char *)p, n, &ref, "node-a", &res, &k, err, sizeof(err)) == 0)
                        free(res);
                break;
        }
        case 2: {
                dra_prepared *out;
                size_t k;
                if (dra_checkpoint_parse((const char *)p, n, &out, &k, err, sizeof(err)) == 0) {
                        char *text = dra_checkpoint_format(out, k);
                        free(text);
                        for (size_t i = 0; i < k; i++)
                                dra_prepared_clear(&out[i]);
                        free(out);
                }
                break;
        }
        default: {
                bool reg;
                (void)dra_decode_registration_status(p, n, &reg, err, sizeof(err));
                break;
        }
        }
        return 0;
}
