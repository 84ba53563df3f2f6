/* SPDX-License-Identifier: Apache-2.0 */
/* Stand-in for libFuzzer when the compiler is gcc: replays every file of the corpus
 * directories given, then a fixed number of deterministic random mutations of them
 * (bit flips, truncations, splices), so a fuzz target still runs under the sanitizers. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS 256
#define MAX_LEN 4096

static uint8_t *seeds[MAX_SEEDS];
static size_t seed_len[MAX_SEEDS];
static size_t nseeds;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static void load(const char *path)
{
        FILE *f = fopen(path, "rb");
        if (!f || nseeds >= MAX_SEEDS) {
                if (f)
                        fclose(f);
                return;
        }
        uint8_t *buf = malloc(MAX_LEN);
        size_t n = buf ? fread(buf, 1, MAX_LEN, f) : 0;
        fclose(f);
        if (!buf)
                return;
        seeds[nseeds] = buf;
        seed_len[nseeds++] = n;
}

int main(int argc, char **argv)
{
        const char *iters_env = getenv("SPINLANE_FUZZ_ITERATIONS");
        long iters = iters_env ? atol(iters_env) : 200000;
        uint8_t buf[MAX_LEN];

        for (int i = 1; i < argc; i++) {
                DIR *d = opendir(argv[i]);
                if (!d) {
                        load(argv[i]);
                        continue;
                }
                struct dirent *de;
                while ((de = readdir(d))) {
                        char p[4096];
                        if (de->d_name[0] == '.')
                                continue;
                        snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
                        load(p);
                }
                closedir(d);
        }
        for (size_t i = 0; i < nseeds; i++)
                LLVMFuzzerTestOneInput(seeds[i], seed_len[i]);
        for (long it = 0; it < iters; it++) {
                size_t len = 0;
                if (nseeds) {
                        size_t s = next_rand() % nseeds;
                        len = seed_len[s];
                        memcpy(buf, seeds[s], len);
                }
                unsigned nmut = 1 + next_rand() % 8;
                for (unsigned m = 0; m < nmut; m++) {
                        switch (next_rand() % 5) {
                        case 0: /* flip a bit */
                                if (len)
                                        buf[next_rand() % len] ^= (uint8_t)(1u << (next_rand() % 8));
                                break;
                        case 1: /* random byte */
                                if (len)
                                        buf[next_rand() % len] = (uint8_t)next_rand();
                                break;
                        case 2: /* truncate */
                                if (len)
                                        len = next_rand() % len;
                                break;
                        case 3: /* append */
                                if (len < MAX_LEN)
                                        buf[len++] = (uint8_t)"0123456789-,\n:x. "[next_rand() % 17];
                                break;
                        case 4: { /* splice another seed */
                                if (!nseeds)
                                        break;
                                size_t s = next_rand() % nseeds, at = len ? next_rand() % len : 0;
                                size_t take = seed_len[s] ? next_rand() % seed_len[s] : 0;
                                if (at + take > MAX_LEN)
                                        take = MAX_LEN - at;
                                memcpy(buf + at, seeds[s], take);
                                if (at + take > len)
                                        len = at + take;
                                break;
                        }
                        }
                }
                /* hand the target an exact-size heap copy so ASan sees overreads */
                uint8_t *copy = malloc(len ? len : 1);
                memcpy(copy, buf, len);
                LLVMFuzzerTestOneInput(copy, len);
                free(copy);
        }
        for (size_t i = 0; i < nseeds; i++)
                free(seeds[i]);
        printf("fuzz: %zu seeds, %ld mutations, no crash\n", nseeds, iters);
        return 0;
}
