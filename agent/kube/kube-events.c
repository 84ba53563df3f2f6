/* SPDX-License-Identifier: Apache-2.0 */
/* Event aggregation into series and a token bucket over the API calls. Pure; never logs. */
#include "kube-events.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_WINDOW_MS (6 * 60 * 1000ull) /* client-go's events: a series ends after 6 min */
#define DEFAULT_BURST 25                     /* client-go's spam filter: 25, then 1 per 5 min */
#define DEFAULT_REFILL_MS (5 * 60 * 1000ull)

void kev_init(kev *k, const kev_params *params, const char *node, uint64_t now_ms)
{
        memset(k, 0, sizeof(*k));
        if (params)
                k->p = *params;
        if (!k->p.series_window_ms)
                k->p.series_window_ms = DEFAULT_WINDOW_MS;
        if (!k->p.burst)
                k->p.burst = DEFAULT_BURST;
        if (!k->p.refill_ms)
                k->p.refill_ms = DEFAULT_REFILL_MS;
        snprintf(k->node, sizeof(k->node), "%s", node ? node : "");
        k->tokens = k->p.burst;
        k->refilled_ms = now_ms;
}

static void refill(kev *k, uint64_t now_ms)
{
        if (now_ms <= k->refilled_ms)
                return;
        uint64_t n = (now_ms - k->refilled_ms) / k->p.refill_ms;
        if (n == 0)
                return;
        k->tokens += (double)n;
        if (k->tokens > k->p.burst)
                k->tokens = k->p.burst;
        k->refilled_ms += n * k->p.refill_ms;
}

static void action_of(kev_entry *e, kev_action *ret)
{
        e->in_flight = e->created ? KEV_PATCH : KEV_CREATE;
        e->created = true; /* until kev_result says otherwise */
        e->pending = false;
        *ret = (kev_action){.kind = e->in_flight, .name = e->name, .check = e->check, .type = e->type,
                            .reason = e->reason, .note = e->note, .first_us = e->first_us, .last_us = e->last_us,
                            .count = e->count};
}

static bool take_token(kev *k, uint64_t now_ms)
{
        refill(k, now_ms);
        if (k->tokens < 1)
                return false;
        k->tokens -= 1;
        return true;
}

int kev_observe(kev *k, uint64_t now_ms, int64_t wall_us, const char *check, const char *type,
                const char *reason, const char *note, kev_action *ret)
{
        kev_entry *e = NULL, *victim = NULL;

        if (!check || !*check || strlen(check) >= KEV_CHECK_MAX || !reason || !*reason ||
            strlen(reason) > KUBE_REASON_MAX || !type || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0))
                return -EINVAL;
        note = note ? note : "";
        for (size_t i = 0; i < KEV_MAX_ENTRIES; i++) {
                kev_entry *x = &k->e[i];
                if (!x->used) {
                        if (!victim || victim->used)
                                victim = x;
                        continue;
                }
                if (!e && now_ms - x->last_ms < k->p.series_window_ms && strcmp(x->check, check) == 0 &&
                    strcmp(x->type, type) == 0 && strcmp(x->reason, reason) == 0 && strncmp(x->note, note, KUBE_NOTE_MAX) == 0)
                        e = x;
                if (!victim || (victim->used && x->last_ms < victim->last_ms))
                        victim = x; /* a free slot, else the least recently seen */
        }
        if (e) {
                if (e->count < INT32_MAX)
                        e->count++;
                e->last_us = wall_us;
                e->last_ms = now_ms;
                e->pending = true;
        } else {
                e = victim;
                memset(e, 0, sizeof(*e));
                e->used = true;
                if (kube_event_name(k->node, wall_us, k->seq++, e->name, sizeof(e->name)) < 0)
                        snprintf(e->name, sizeof(e->name), "spinlane.%x", k->seq);
                snprintf(e->check, sizeof(e->check), "%s", check);
                snprintf(e->type, sizeof(e->type), "%s", type);
                snprintf(e->reason, sizeof(e->reason), "%s", reason);
                snprintf(e->note, sizeof(e->note), "%s", note);
                e->first_us = e->last_us = wall_us;
                e->count = 1;
                e->last_ms = now_ms;
                e->pending = true;
        }
        if (!take_token(k, now_ms)) {
                k->suppressed++;
                return 0;
        }
        action_of(e, ret);
        return 1;
}

int kev_next(kev *k, uint64_t now_ms, kev_action *ret)
{
        kev_entry *oldest = NULL;

        for (size_t i = 0; i < KEV_MAX_ENTRIES; i++)
                if (k->e[i].used && k->e[i].pending && (!oldest || k->e[i].last_ms < oldest->last_ms))
                        oldest = &k->e[i];
        if (!oldest || !take_token(k, now_ms))
                return 0;
        action_of(oldest, ret);
        return 1;
}

uint64_t kev_wakeup_ms(const kev *k, uint64_t now_ms)
{
        bool any = false;
        for (size_t i = 0; i < KEV_MAX_ENTRIES && !any; i++)
                any = k->e[i].used && k->e[i].pending;
        if (!any)
                return UINT64_MAX;
        if (k->tokens >= 1)
                return now_ms;
        return k->refilled_ms + k->p.refill_ms;
}

void kev_result(kev *k, const char *name, int result)
{
        for (size_t i = 0; i < KEV_MAX_ENTRIES; i++) {
                kev_entry *e = &k->e[i];
                if (!e->used || strcmp(e->name, name) != 0)
                        continue;
                kev_kind was = e->in_flight;
                e->in_flight = KEV_NONE;
                if (result == 0)
                        return;
                if (result == -ENOENT && was == KEV_PATCH)
                        e->created = false;
                else if (result == -EEXIST && was == KEV_CREATE)
                        e->created = true;
                else if (was == KEV_CREATE)
                        e->created = false;
                e->pending = true;
                return;
        }
}

void kev_defer(kev *k, const char *name)
{
        for (size_t i = 0; i < KEV_MAX_ENTRIES; i++) {
                kev_entry *e = &k->e[i];
                if (!e->used || e->in_flight == KEV_NONE || strcmp(e->name, name) != 0)
                        continue;
                if (e->in_flight == KEV_CREATE)
                        e->created = false;
                e->in_flight = KEV_NONE;
                e->pending = true;
                k->tokens += 1;
                if (k->tokens > k->p.burst)
                        k->tokens = k->p.burst;
                return;
        }
}
