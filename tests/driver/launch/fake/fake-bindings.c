/* SPDX-License-Identifier: Apache-2.0 */
/* Stand-ins for libspinlane_aeron.so in the launcher's aeron-bindings tests, one per way
 * a bindings library can be wrong (FAKE_* selects it): right, built against another
 * Aeron, the object missing, read-only, a function; plus a custom bindings name. They
 * export what the check looks up and nothing else. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

#if defined(FAKE_CONST)
EXPORT const unsigned char spinlane_udp_channel_transport_bindings[128] = { 1 };
#elif defined(FAKE_FUNC)
EXPORT void spinlane_udp_channel_transport_bindings(void);
EXPORT void spinlane_udp_channel_transport_bindings(void)
{
}
#elif !defined(FAKE_NOSYM)
EXPORT void *spinlane_udp_channel_transport_bindings[16];
#endif

#if defined(FAKE_CUSTOM)
EXPORT void *my_udp_bindings[16];
#endif

EXPORT int spinlane_aeron_version_check(char *err, size_t len);
EXPORT int spinlane_aeron_version_check(char *err, size_t len)
{
#if defined(FAKE_OLD)
        snprintf(err, len, "spinlane bindings were built against Aeron 1.52.2 but the driver runs Aeron 1.47.3 (fake)");
        return -EPROTO;
#else
        (void)err;
        (void)len;
        return 0;
#endif
}

EXPORT const char *spinlane_aeron_built_against(void);
EXPORT const char *spinlane_aeron_built_against(void)
{
        return "1.52.2";
}
