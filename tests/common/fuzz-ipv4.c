/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the IPv4 and CIDR parsers; whatever parses prints back to the same text. */
#include "ipv4.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        char buf[IPV4_CIDR_STR_MAX];
        uint32_t a;
        ipv4_cidr c;

        if (ipv4_parse(s, size, &a) == 0 && (strlen(ipv4_format(a, buf)) != size || memcmp(buf, s, size) != 0))
                abort();
        if (ipv4_cidr_parse(s, size, &c) == 0) {
                if (c.prefix_len > 32 || strlen(ipv4_cidr_format(c, buf)) != size || memcmp(buf, s, size) != 0)
                        abort();
                uint32_t gw;
                if (ipv4_gateway_of(c, &gw) == 0 && !ipv4_in_subnet(gw, c))
                        abort();
        }
        return 0;
}
