/* SPDX-License-Identifier: Apache-2.0 */
/* EAL argument splitting: the launcher's SPINLANE_EAL_ARGS form, limits, bad bytes, and
 * the output left untouched on failure. */
#include "eal_args.h"

#include <errno.h>
#include <string.h>

#include "testutil.h"

static void test_good(void)
{
        static struct tr_eal_args a;
        const char *s = "-a 0000:00:06.0  --file-prefix spinlane-pod1\t--huge-dir /dev/hugepages ";
        CHECK_INT(tr_eal_args_split(s, strlen(s), "spinlane", &a), 0);
        CHECK_INT(a.argc, 7);
        CHECK_STR(a.argv[0], "spinlane");
        CHECK_STR(a.argv[1], "-a");
        CHECK_STR(a.argv[2], "0000:00:06.0");
        CHECK_STR(a.argv[4], "spinlane-pod1");
        CHECK_STR(a.argv[6], "/dev/hugepages");
        CHECK(a.argv[7] == NULL);
        CHECK_INT(tr_eal_args_split("", 0, "x", &a), 0);
        CHECK_INT(a.argc, 1);
        CHECK(a.argv[1] == NULL);
        /* what spinlane-launch puts in SPINLANE_EAL_ARGS (docs/launch.md) */
        const char *l = "-l 1-3,5-7 --main-lcore 1 --file-prefix spinlane-aeron-md-0 --huge-dir /dev/hugepages "
                        "--socket-mem 256 -a 0000:00:06.0";
        CHECK_INT(tr_eal_args_split(l, strlen(l), "aeronmd", &a), 0);
        CHECK_INT(a.argc, 13);
        CHECK_STR(a.argv[2], "1-3,5-7");
        CHECK_STR(a.argv[12], "0000:00:06.0");
        /* length given explicitly: no NUL needed, bytes after len ignored */
        CHECK_INT(tr_eal_args_split("--in-memory garbage", 11, "x", &a), 0);
        CHECK_INT(a.argc, 2);
        CHECK_STR(a.argv[1], "--in-memory");
}

static void test_bad(void)
{
        static struct tr_eal_args a;
        static char big[TR_EAL_ARGS_MAX_LEN + 2];

        a.argc = 42;
        CHECK_INT(tr_eal_args_split("-a\n1", 4, "x", &a), -EINVAL);
        CHECK_INT(tr_eal_args_split("-a\0001", 4, "x", &a), -EINVAL);
        CHECK_INT(tr_eal_args_split("-a \xc3\xa9", 5, "x", &a), -EINVAL);
        memset(big, 'a', sizeof(big) - 1);
        CHECK_INT(tr_eal_args_split(big, sizeof(big) - 1, "x", &a), -ENAMETOOLONG);
        /* 65 one-letter words */
        for (int i = 0; i < 65; i++) {
                big[2 * i] = 'w';
                big[2 * i + 1] = ' ';
        }
        CHECK_INT(tr_eal_args_split(big, 130, "x", &a), -E2BIG);
        CHECK_INT(tr_eal_args_split(big, 128, "x", &a), 0); /* exactly 64 fit */
        CHECK_INT(a.argc, 65);
        a.argc = 42;
        CHECK_INT(tr_eal_args_split(big, 130, "x", &a), -E2BIG);
        CHECK_INT(a.argc, 42); /* untouched */
        /* the longest string, all one word, fits the buffer */
        memset(big, 'b', TR_EAL_ARGS_MAX_LEN);
        CHECK_INT(tr_eal_args_split(big, TR_EAL_ARGS_MAX_LEN, "x", &a), 0);
        CHECK_INT(strlen(a.argv[1]), TR_EAL_ARGS_MAX_LEN);
}

int main(void)
{
        test_good();
        test_bad();
        return test_done();
}
