/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target of the procfs/netlink parsers of node preparation: /proc/interrupts,
 * /proc/mounts (hugetlbfs) and rtnetlink link messages, all fed the same bytes. */
#include "hugepages.h"
#include "tune.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1);
        int irqs[16];
        uint64_t ps;
        tune_link_event ev[8];

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        int n = tune_parse_interrupts(text, "eth0", "0000:00:05.0", irqs, 16);
        if (n > 16)
                abort();
        (void)huge_find_mount(text, "/dev/hugepages", &ps);
        n = tune_netlink_parse(data, size, ev, 8);
        if (n > 8)
                abort();
        free(text);
        return 0;
}
