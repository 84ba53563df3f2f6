/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the AWS IMDSv2 reply parsers (token, local-ipv4s, subnet-ipv4-cidr-block)
 * and the address they make. The first byte picks the parser, the rest is the body. */
#include "imds-parse.h"
#include "nic-address.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char tok[IMDS_TOKEN_MAX], err[IMDS_ERR_LEN];
        const char *body = (const char *)data + 1;
        uint32_t a;
        ipv4_cidr c;
        imds_addr r;

        if (size == 0)
                return 0;
        size--;
        switch (data[0] % 3) {
        case 0:
                if (imds_aws_token_parse(body, size, tok, sizeof(tok)) == 0 && strlen(tok) >= IMDS_TOKEN_MAX)
                        abort();
                break;
        case 1:
                if (imds_aws_ipv4s_parse(body, size, &a, err, sizeof(err)) == 0 &&
                    imds_addr_make(a, (ipv4_cidr){a & 0xffffff00u, 24}, &r, err, sizeof(err)) == 0 &&
                    (r.gateway != (a & 0xffffff00u) + 1 || r.ipv4 != a || !ipv4_is_unicast(a) || ipv4_is_link_local(a)))
                        abort();
                break;
        default:
                if (imds_aws_subnet_parse(body, size, &c, err, sizeof(err)) == 0 &&
                    (c.prefix_len < NIC_ADDR_META_PREFIX_MIN || c.prefix_len > NIC_ADDR_META_PREFIX_MAX ||
                     ipv4_network(c) != c.addr))
                        abort();
        }
        return 0;
}
