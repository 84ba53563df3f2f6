/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel uevent parsing: bounded, no allocation, no I/O. */
#include "dp-uevent.h"

#include <errno.h>
#include <string.h>

/* Copy [s, s+n) into a fixed field; *cut set when it did not fit. */
static void field_set(char *dst, size_t size, const char *s, size_t n, bool *cut)
{
        if (n >= size) {
                n = size - 1;
                *cut = true;
        }
        memcpy(dst, s, n);
        dst[n] = '\0';
}

static bool field_is(const char *field, const char *s, size_t n)
{
        return strlen(field) == n && memcmp(field, s, n) == 0;
}

int dp_uevent_parse(const void *buf, size_t len, dp_uevent *ret)
{
        const char *p = buf, *end;
        const char *at, *hdr_end;
        dp_uevent ev;
        bool cut = false;

        if (len > DP_UEVENT_MAX)
                return -E2BIG;
        if (!buf || len == 0)
                return -EINVAL;
        end = p + len;
        memset(&ev, 0, sizeof(ev));
        hdr_end = memchr(p, '\0', len);
        if (!hdr_end)
                hdr_end = end;
        at = memchr(p, '@', (size_t)(hdr_end - p));
        /* "libudev\0" (udev's re-broadcast) and anything else without "action@" */
        if (!at || at == p || at + 1 >= hdr_end || at[1] != '/')
                return -EINVAL;
        if ((size_t)(at - p) >= sizeof(ev.action))
                return -EINVAL;
        for (const char *c = p; c < at; c++)
                if (*c < 'a' || *c > 'z')
                        return -EINVAL;
        field_set(ev.action, sizeof(ev.action), p, (size_t)(at - p), &cut);
        field_set(ev.devpath, sizeof(ev.devpath), at + 1, (size_t)(hdr_end - at - 1), &cut);

        for (p = hdr_end < end ? hdr_end + 1 : end; p < end;) {
                const char *z = memchr(p, '\0', (size_t)(end - p));
                const char *fe = z ? z : end;
                const char *eq = memchr(p, '=', (size_t)(fe - p));
                if (eq) {
                        size_t kl = (size_t)(eq - p), vl = (size_t)(fe - eq - 1);
                        const char *v = eq + 1;
                        if (kl == 9 && memcmp(p, "SUBSYSTEM", 9) == 0)
                                field_set(ev.subsystem, sizeof(ev.subsystem), v, vl, &cut);
                        else if (kl == 6 && memcmp(p, "DRIVER", 6) == 0)
                                field_set(ev.driver, sizeof(ev.driver), v, vl, &cut);
                        else if (kl == 6 && memcmp(p, "ACTION", 6) == 0 && !field_is(ev.action, v, vl))
                                return -EINVAL;
                        else if (kl == 7 && memcmp(p, "DEVPATH", 7) == 0 && vl < sizeof(ev.devpath) &&
                                 !field_is(ev.devpath, v, vl))
                                return -EINVAL;
                }
                p = fe + 1;
        }
        ev.truncated = cut;
        *ret = ev;
        return 0;
}

static bool in(const char *s, const char *const *set, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(s, set[i]) == 0)
                        return true;
        return false;
}

bool dp_uevent_relevant(const dp_uevent *ev)
{
        /* device set or binding changes */
        static const char *const presence[] = { "add", "remove", "bind", "unbind", "move" };
        /* where the inventory looks: PCI functions, their drivers, the nodes DPDK opens */
        static const char *const subsystems[] = { "pci", "drivers", "vfio", "uio", "infiniband",
                                                  "infiniband_verbs", "net", "misc" };

        if (strcmp(ev->subsystem, "cpu") == 0) /* online/offline/add/remove (and "change") */
                return true;
        return in(ev->action, presence, sizeof(presence) / sizeof(presence[0])) &&
               in(ev->subsystem, subsystems, sizeof(subsystems) / sizeof(subsystems[0]));
}
