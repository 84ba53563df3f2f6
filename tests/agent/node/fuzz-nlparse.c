/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: a recorded rtnetlink answer (the six dumps, as netlink.c reads a fake
 * tree's file) fed to the link usage parser in two piece sizes, then queried. Both
 * feedings must agree. The same bytes walked as one datagram with the exported walker
 * (what prep/tune.c reads link events with), every attribute and nest inside its
 * message. */
#include "nlparse.h"

#include <errno.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed data in pieces of at most step bytes; the result of nlparse_finish or the error. */
static int run(const uint8_t *data, size_t size, size_t step, nlparse_usage **ret)
{
        nlparse_usage *u = NULL;
        size_t off = 0, have = 0;
        int d = 0, r = 0;

        if (nlparse_usage_new(&u) < 0)
                abort();
        *ret = u;
        uint8_t *win = malloc(size ? size : 1);
        if (!win)
                abort();
        while (d < _NLPARSE_DUMP_MAX) {
                size_t used = 0;
                r = nlparse_feed(u, (nlparse_dump)d, (uint32_t)d + 1, win, have, &used);
                if (used > have)
                        abort();
                if (r < 0 && d == NLPARSE_DUMP_NEXTHOP && used == 0 && (r == -EOPNOTSUPP || r == -EINVAL) &&
                    have >= sizeof(struct nlmsghdr)) {
                        struct nlmsghdr nh;
                        memcpy(&nh, win, sizeof(nh));
                        used = NLMSG_ALIGN(nh.nlmsg_len) < have ? NLMSG_ALIGN(nh.nlmsg_len) : have;
                        r = nlparse_refused(u, (nlparse_dump)d) == 0 ? 1 : -EINVAL;
                }
                if (r < 0)
                        break;
                memmove(win, win + used, have - used);
                have -= used;
                if (r == 1) {
                        d++;
                        continue;
                }
                size_t k = step < size - off ? step : size - off;
                if (!k) {
                        r = -ENODATA;
                        break;
                }
                memcpy(win + have, data + off, k);
                have += k;
                off += k;
        }
        free(win);
        if (r >= 0)
                r = nlparse_finish(u, NULL, 0);
        return r;
}

/* Every attribute of [p + off, p + end), nests to depth 2: each must lie inside. */
static void walk_attrs(const uint8_t *p, size_t off, size_t end, int depth)
{
        nlparse_attr a;
        int r;
        while ((r = nlparse_attr_next(p, end, &off, &a)) > 0) {
                if (a.data < p + 4 || a.data + a.len > p + end)
                        abort();
                uint32_t v;
                char name[NLPARSE_NAME_LEN];
                if ((nlparse_attr_u32(&a, &v) == 0) != (a.len >= 4))
                        abort();
                if (nlparse_attr_name(&a, name) == 0 && (strlen(name) == 0 || strlen(name) >= a.len))
                        abort();
                if (depth < 2)
                        walk_attrs(a.data, 0, a.len, depth + 1);
        }
        if (r == 0 && off < end)
                abort();
}

static void walk(const uint8_t *data, size_t size)
{
        size_t off = 0, last = 0;
        nlparse_msg m;
        while (nlparse_msg_next(data, size, &off, &m) > 0) {
                if (off <= last || off > size || m.data != data + last || m.len != off - last || m.len % 4)
                        abort();
                walk_attrs(m.data, NLMSG_HDRLEN, m.len, 0);
                last = off;
        }
        if (off != last)
                abort(); /* 0 or an error consume nothing */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        walk(data, size);
        nlparse_usage *a = NULL, *b = NULL;
        int ra = run(data, size, size ? size : 1, &a);
        int rb = run(data, size, 7, &b);
        /* Pieces only change where a stream stops, never what it means. */
        if ((ra == 0) != (rb == 0))
                abort();
        if (ra == 0) {
                if (a->n_links != b->n_links)
                        abort();
                for (size_t i = 0; i < a->n_links; i++) {
                        char w1[NLPARSE_WHY_LEN], w2[NLPARSE_WHY_LEN];
                        const char *name = a->links[i].name;
                        int x = nlparse_in_use(a, name, w1, sizeof(w1));
                        int y = nlparse_in_use(b, name, w2, sizeof(w2));
                        if (x != y || (x == 1 && strcmp(w1, w2) != 0))
                                abort();
                        (void)nlparse_find_index(a, a->links[i].ifindex);
                }
        }
        nlparse_usage_free(a);
        nlparse_usage_free(b);
        return 0;
}
