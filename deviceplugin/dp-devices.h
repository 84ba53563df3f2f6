/* SPDX-License-Identifier: Apache-2.0 */
/* What a device plugin serves: the one device value and its list (common/device.h), as
 * agent/node/device-map.c builds them from the inventory; nothing in deviceplugin/ reads
 * sysfs. Pure values, no I/O, never logs. */
#ifndef SPIN_DP_DEVICES_H
#define SPIN_DP_DEVICES_H

#include "device.h"

#define DP_PATH_LEN 256 /* host paths handed to a container (hugetlbfs, the CDI spec dir) */

#endif
