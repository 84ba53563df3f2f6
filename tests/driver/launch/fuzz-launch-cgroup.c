/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the cgroup and mount parsers. The first byte picks the parser; for
 * resolution the rest is /proc/self/cgroup and mountinfo separated by a '|' line. A
 * resolved dir must lie under the mount point returned with it. */
#include "launch-cgroup.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static lcg_self self;
        static lcg_mounts mounts;
        char *text;
        uint64_t a, b;

        if (size < 1)
                return 0;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        const char *s = text;
        size_t len = size - 1;

        switch (data[0] % 9) {
        case 0: {
                char *sep = memchr(text, '|', len);
                size_t l1 = sep ? (size_t)(sep - text) : len;
                if (lcg_parse_self(text, l1, &self) == 0 && sep &&
                    lcg_parse_mountinfo(sep + 1, len - l1 - 1, &mounts) == 0) {
                        static const char *const ctl[] = { "cpu", "cpuset", "hugetlb" };
                        for (unsigned i = 0; i < 3; i++) {
                                char dir[LCG_PATH_MAX], mp[LCG_PATH_MAX];
                                bool v2;
                                if (lcg_resolve(&self, &mounts, ctl[i], dir, sizeof(dir), mp, sizeof(mp), &v2) == 0 &&
                                    strncmp(dir, mp, strlen(mp)) != 0)
                                        abort();
                        }
                }
                break;
        }
        case 1: lcg_parse_mountinfo(s, len, &mounts); break;
        case 2: lcg_parse_cpu_max(s, &a, &b); break;
        case 3: lcg_parse_v1_quota(s, &a); break;
        case 4: {
                lcg_cpu_stat st;
                lcg_parse_cpu_stat(s, strlen(s), &st);
                break;
        }
        case 5: lcg_parse_limit(s, &a); break;
        case 6: lcg_hugetlbfs_pagesize_kb(s, &a); break;
        case 7: lcg_parse_memlock(s, strlen(s), &a); break;
        case 8: lcg_parse_capeff(s, strlen(s), &a); break;
        }
        free(text);
        return 0;
}
