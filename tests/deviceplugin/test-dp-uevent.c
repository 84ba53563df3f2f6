/* SPDX-License-Identifier: Apache-2.0 */
/* dp-uevent: kernel uevent datagrams parsed within their length, udev's messages and
 * malformed headers refused, and which events make the device plugins re-scan. */
#include "dp-uevent.h"
#include "testutil.h"

#include <errno.h>

#define MSG(s) (s), sizeof(s) - 1 /* a literal with its inner NULs, without the final one */

static void test_parse(void)
{
        dp_uevent ev;

        CHECK_INT(dp_uevent_parse(MSG("change@/devices/system/cpu/cpu0\0ACTION=change\0"
                                      "DEVPATH=/devices/system/cpu/cpu0\0SUBSYSTEM=cpu\0SYNTH_UUID=0\0SEQNUM=2485\0"),
                                  &ev),
                  0);
        CHECK_STR(ev.action, "change");
        CHECK_STR(ev.devpath, "/devices/system/cpu/cpu0");
        CHECK_STR(ev.subsystem, "cpu");
        CHECK_STR(ev.driver, "");
        CHECK(!ev.truncated);
        CHECK(dp_uevent_relevant(&ev));

        /* the last field without its NUL: read within len */
        CHECK_INT(dp_uevent_parse(MSG("unbind@/devices/pci0000:00/0000:00:06.0\0ACTION=unbind\0SUBSYSTEM=pci\0"
                                      "DRIVER=vfio-pci"),
                                  &ev),
                  0);
        CHECK_STR(ev.action, "unbind");
        CHECK_STR(ev.subsystem, "pci");
        CHECK_STR(ev.driver, "vfio-pci");
        CHECK(dp_uevent_relevant(&ev));

        CHECK_INT(dp_uevent_parse(MSG("offline@/devices/system/cpu/cpu3\0SUBSYSTEM=cpu"), &ev), 0);
        CHECK(dp_uevent_relevant(&ev));
        CHECK_INT(dp_uevent_parse(MSG("add@/devices/virtual/net/lo\0ACTION=add\0SUBSYSTEM=net\0"), &ev), 0);
        CHECK(dp_uevent_relevant(&ev));
        CHECK_INT(dp_uevent_parse(MSG("add@/devices/virtual/vfio/7\0SUBSYSTEM=vfio\0DEVNAME=vfio/7\0"), &ev), 0);
        CHECK(dp_uevent_relevant(&ev));
        /* header only */
        CHECK_INT(dp_uevent_parse(MSG("remove@/devices/pci0000:00/0000:00:07.0"), &ev), 0);
        CHECK_STR(ev.subsystem, "");
        CHECK(!dp_uevent_relevant(&ev));

        /* not relevant: attribute changes outside cpu, other subsystems */
        CHECK_INT(dp_uevent_parse(MSG("change@/devices/virtual/net/lo\0SUBSYSTEM=net\0"), &ev), 0);
        CHECK(!dp_uevent_relevant(&ev));
        CHECK_INT(dp_uevent_parse(MSG("add@/devices/virtual/block/loop0\0SUBSYSTEM=block\0"), &ev), 0);
        CHECK(!dp_uevent_relevant(&ev));
        CHECK_INT(dp_uevent_parse(MSG("add@/devices/virtual/mem/kmsg\0SUBSYSTEM=memx\0"), &ev), 0);
        CHECK(!dp_uevent_relevant(&ev));

        /* refused: udev's re-broadcast, no header, bad action, contradictions, size */
        CHECK_INT(dp_uevent_parse(MSG("libudev\0\xfe\xed\xca\xfe"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("@/devices/x\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("add@\0SUBSYSTEM=pci\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("add@devices\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("Add@/devices/x\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("averyveryverylongaction@/devices/x\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("add@/devices/x\0ACTION=remove\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse(MSG("add@/devices/x\0DEVPATH=/devices/y\0"), &ev), -EINVAL);
        CHECK_INT(dp_uevent_parse("", 0, &ev), -EINVAL);
        static char big[DP_UEVENT_MAX + 1];
        memcpy(big, "add@/x", 6);
        CHECK_INT(dp_uevent_parse(big, sizeof(big), &ev), -E2BIG);

        /* values longer than their fields are cut and flagged, never overrun */
        char msg[1024];
        size_t n = (size_t)snprintf(msg, sizeof(msg), "add@/devices/");
        memset(msg + n, 'd', 400);
        n += 400;
        msg[n++] = '\0';
        n += (size_t)snprintf(msg + n, sizeof(msg) - n, "SUBSYSTEM=pci_but_far_too_long_for_the_field_xx");
        CHECK_INT(dp_uevent_parse(msg, n, &ev), 0);
        CHECK(ev.truncated);
        CHECK_INT(strlen(ev.devpath), sizeof(ev.devpath) - 1);
        CHECK_INT(strlen(ev.subsystem), sizeof(ev.subsystem) - 1);
        CHECK(!dp_uevent_relevant(&ev));
}

int main(void)
{
        test_parse();
        return test_done();
}
