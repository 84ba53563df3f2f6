/* SPDX-License-Identifier: Apache-2.0 */
/* The ELF dynamic-section reader on real binaries the build made (a shared-library
 * aeronmd stand-in with RUNPATH, a static-like one, a shared library with its SONAME),
 * on non-ELF input, and on images spoiled one field at a time (every one refused or
 * parsed, never read out of bounds; the output untouched on failure). */
#include "launch-elf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static uint8_t *slurp(const char *path, size_t *ret_len)
{
        int fd = open(path, O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                fprintf(stderr, "%s: cannot read\n", path);
                exit(1);
        }
        uint8_t *b = malloc((size_t)st.st_size);
        if (!b || read(fd, b, (size_t)st.st_size) != st.st_size)
                exit(1);
        close(fd);
        *ret_len = (size_t)st.st_size;
        return b;
}

static void test_fakes(const char *dir)
{
        char path[1024];
        size_t len;
        uint8_t *img;
        static lelf_info e;

        snprintf(path, sizeof(path), "%s/fake-aeron/bin/aeronmd", dir);
        img = slurp(path, &len);
        CHECK_INT(lelf_parse(img, len, &e), 0);
        CHECK(e.dynamic);
        CHECK(e.interp);
        CHECK(lelf_needs(&e, "libaeron_driver.so"));
        CHECK(lelf_needs(&e, "libaeron.so"));
        CHECK(lelf_needs(&e, "libc.so.6"));
        CHECK(!lelf_needs(&e, "libaeron"));
        CHECK(strstr(e.runpath, "fake-aeron/lib") != NULL || strstr(e.rpath, "fake-aeron/lib") != NULL);
        free(img);

        snprintf(path, sizeof(path), "%s/fake-static/bin/aeronmd", dir);
        img = slurp(path, &len);
        CHECK_INT(lelf_parse(img, len, &e), 0);
        CHECK(!lelf_needs(&e, "libaeron_driver.so"));
        free(img);

        snprintf(path, sizeof(path), "%s/fake-aeron/lib/libaeron_driver.so", dir);
        img = slurp(path, &len);
        CHECK_INT(lelf_parse(img, len, &e), 0);
        CHECK_STR(e.soname, "libaeron_driver.so");
        CHECK_INT(e.type, 3);
        CHECK(!e.interp);

        /* spoil bytes of the header and the program headers one at a time: the parser
         * must never crash (ASan watches) and must leave its output alone on refusal */
        uint8_t *copy = malloc(len);
        unsigned refused = 0;
        for (size_t i = 0; i < 64 + 56 * 12 && i < len; i++)
                for (unsigned v = 0; v < 3; v++) {
                        memcpy(copy, img, len);
                        copy[i] = v == 0 ? 0xff : v == 1 ? 0x00 : (uint8_t)(copy[i] ^ 0x80);
                        e.n_needed = 12345;
                        int r = lelf_parse(copy, len, &e);
                        if (r < 0) {
                                refused++;
                                CHECK_INT(e.n_needed, 12345);
                        }
                }
        CHECK(refused > 0);
        /* every truncation */
        for (size_t n = 0; n < len; n += 97) {
                int r = lelf_parse(img, n, &e);
                CHECK(r == 0 || r == -ENOEXEC || r == -EBADMSG);
        }
        free(copy);
        free(img);
}

static void test_not_elf(void)
{
        static lelf_info e;
        const char script[] = "#!/bin/sh\nexec true\n";
        uint8_t elf32[64] = { 0x7f, 'E', 'L', 'F', 1, 1 };
        uint8_t be[64] = { 0x7f, 'E', 'L', 'F', 2, 2 };

        CHECK_INT(lelf_parse((const uint8_t *)script, sizeof(script), &e), -ENOEXEC);
        CHECK_INT(lelf_parse(elf32, sizeof(elf32), &e), -ENOEXEC);
        CHECK_INT(lelf_parse(be, sizeof(be), &e), -ENOEXEC);
        CHECK_INT(lelf_parse(NULL, 0, &e), -ENOEXEC);
        /* a bare 64-bit header with no program headers: a (useless) static file */
        uint8_t bare[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
        bare[16] = 2;
        CHECK_INT(lelf_parse(bare, sizeof(bare), &e), 0);
        CHECK(!e.dynamic);
        CHECK_INT(e.n_needed, 0);
        /* 200 program headers: over the limit */
        bare[56] = 200;
        bare[54] = 56;
        CHECK_INT(lelf_parse(bare, sizeof(bare), &e), -EBADMSG);
}

int main(int argc, char **argv)
{
        if (argc < 2)
                TEST_SKIP("usage: test-launch-elf FAKES-DIR");
        test_fakes(argv[1]);
        test_not_elf();
        return test_done();
}
