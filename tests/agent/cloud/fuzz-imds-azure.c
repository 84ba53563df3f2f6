/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the Azure IMDS network document parser, for the MAC of the sample document
 * and for one taken from the input's first bytes. A success must be a host of its subnet. */
#include "imds-parse.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *body, size_t len, const uint8_t mac[6])
{
        imds_addr a;
        char err[IMDS_ERR_LEN];
        if (imds_azure_parse(body, len, mac, &a, err, sizeof(err)) == 0) {
                ipv4_cidr s = {a.ipv4, a.prefix_len};
                if (ipv4_check_host(a.ipv4, s) < 0 || a.gateway != ipv4_network(s) + 1 || a.gateway == a.ipv4)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint8_t sample[6] = {0x00, 0x0d, 0x3a, 0xf8, 0x06, 0xec};
        check((const char *)data, size, sample);
        if (size >= 6)
                check((const char *)data + 6, size - 6, data);
        return 0;
}
