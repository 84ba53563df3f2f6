/* SPDX-License-Identifier: Apache-2.0 */
/* Demux: exact binds win over wildcard binds, duplicates refused, bounded, removal. */
#include "demux.h"

#include <errno.h>

#include "testutil.h"

int main(void)
{
        static struct tr_demux d;
        int a, b, c;

        CHECK_INT(tr_demux_add(&d, 0, 5000, &a), 0);
        CHECK_INT(tr_demux_add(&d, 0x0100000a, 5000, &b), 0);
        CHECK_INT(tr_demux_add(&d, 0x0100000a, 5000, &c), -EADDRINUSE);
        CHECK_INT(tr_demux_add(&d, 0x0100000a, 0, &c), -EINVAL);
        CHECK(tr_demux_lookup(&d, 0x0100000a, 5000) == &b);
        CHECK(tr_demux_lookup(&d, 0x0200000a, 5000) == &a);
        CHECK(tr_demux_lookup(&d, 0x0100000a, 5001) == NULL);
        CHECK_INT(tr_demux_remove(&d, 0x0100000a, 5000), 0);
        CHECK_INT(tr_demux_remove(&d, 0x0100000a, 5000), -ENOENT);
        CHECK(tr_demux_lookup(&d, 0x0100000a, 5000) == &a);
        for (int i = 1; i < TR_DEMUX_MAX; i++)
                CHECK_INT(tr_demux_add(&d, 0, (uint16_t)(6000 + i), &c), 0);
        CHECK_INT(tr_demux_add(&d, 0, 7999, &c), -ENOSPC);
        CHECK(tr_demux_lookup(&d, 0x0100000a, 6000 + TR_DEMUX_MAX - 1) == &c);
        return test_done();
}
