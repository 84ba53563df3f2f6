/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel-args parsers as tables of good and bad inputs: one argument as the state
 * file holds it (kargs_arg_parse), the state file (kargs_state_parse, outputs untouched on
 * failure, format and parse back), and the arguments spinlane owns on a kernel command
 * line (kargs_from_cmdline after the inventory's splitter). */
#include "inventory.h"
#include "kargs.h"
#include "procparse.h"
#include "testutil.h"

#include <errno.h>

static void test_arg_parse(void)
{
        static const struct {
                const char *text;
                const char *name, *value;
                uint64_t page_kb;
        } good[] = {
                {"isolcpus=managed_irq,domain,2-7,10-15", "isolcpus", "managed_irq,domain,2-7,10-15", 0},
                {"nohz_full=2-7", "nohz_full", "2-7", 0},
                {"rcu_nocbs=3", "rcu_nocbs", "3", 0},
                {"irqaffinity=0-1,8-9", "irqaffinity", "0-1,8-9", 0},
                {"hugepagesz=2M hugepages=1024", "hugepages", "1024", 2048},
                {"hugepagesz=1G hugepages=2", "hugepages", "2", 1048576},
        };
        static const char *const bad[] = {
                "", "isolcpus", "iommu=pt", "isolcpus=2-x", "isolcpus=2-7 nohz_full=2-7", "isolcpus=\"2-7\"",
                "nohz_full=2-7;reboot", "irqaffinity=$(x)", "hugepages=1024", "hugepagesz=2M",
                "hugepagesz=2M  hugepages=1", "hugepagesz=2048k hugepages=1", /* not as spinlane writes it */
                "hugepagesz=0 hugepages=1", "hugepagesz=2M hugepages=-1", "hugepagesz=2M hugepages=99999999999",
                "hugepagesz=2M hugepages=1 x",
                ("isolcpus=0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,"
                 "0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1"), /* longer than a value */
        };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                kargs_arg a;
                CHECK_INT(kargs_arg_parse(good[i].text, &a), 0);
                CHECK_STR(a.name, good[i].name);
                CHECK_STR(a.value, good[i].value);
                CHECK_STR(a.text, good[i].text);
                CHECK_INT(a.page_kb, good[i].page_kb);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                kargs_arg a;
                memset(&a, 0x5a, sizeof(a));
                int r = kargs_arg_parse(bad[i], &a);
                if (r != -EINVAL)
                        fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
                CHECK_INT(r, -EINVAL);
                CHECK(a.name[0] == 0x5a && a.text[sizeof(a.text) - 1] == 0x5a); /* untouched */
        }
        CHECK_INT(kargs_arg_parse(NULL, &(kargs_arg){0}), -EINVAL);
}

#define ST(loader, args, sen, done)                                                                                \
        "{\"version\":1,\"loader\":\"" loader "\",\"args\":[" args "],\"sentinel_created\":" sen                 \
        ",\"complete\":" done "}"

static void test_state_parse(void)
{
        static const char *const bad[] = {
                "",
                "{",
                "[]",
                "{\"version\":2,\"loader\":\"grubby\",\"args\":[],\"sentinel_created\":false,\"complete\":true}",
                ST("lilo", "", "false", "true"),
                ST("grubby", "\"iommu=pt\"", "false", "true"),
                ST("grubby", "1", "false", "true"),
                ST("grubby", "\"nohz_full=2-3\",\"nohz_full=4\"", "false", "true"), /* repeated */
                ST("grubby", "\"hugepagesz=2M hugepages=1\",\"hugepagesz=2M hugepages=2\"", "false", "true"),
                ST("grubby", "", "0", "true"),
                ST("grubby", "", "false", "null"),
                "{\"version\":1,\"version\":1,\"loader\":\"none\",\"args\":[],\"sentinel_created\":false,"
                "\"complete\":true}", /* duplicate key */
                ST("grubby", "\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\","
                             "\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\","
                             "\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\",\"rcu_nocbs=1\","
                             "\"rcu_nocbs=1\",\"rcu_nocbs=1\"", "false", "true"), /* more than KARGS_MAX */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                kargs_state s;
                char err[256] = "";
                memset(&s, 0x5a, sizeof(s));
                CHECK_INT(kargs_state_parse(bad[i], strlen(bad[i]), &s, err, sizeof(err)), -EBADMSG);
                CHECK(err[0] != '\0');
                CHECK(s.written.n == (size_t)0x5a5a5a5a5a5a5a5aULL); /* untouched */
        }
        /* too big, whatever it holds */
        static char big[KARGS_STATE_MAX_TEXT + 2];
        memset(big, ' ', sizeof(big) - 1);
        kargs_state s;
        char err[256];
        CHECK_INT(kargs_state_parse(big, sizeof(big) - 1, &s, err, sizeof(err)), -EBADMSG);

        const char *good = ST("grub-dropin", "\"isolcpus=managed_irq,domain,2-7\",\"irqaffinity=0-1\","
                                             "\"hugepagesz=1G hugepages=2\"", "true", "false");
        CHECK_INT(kargs_state_parse(good, strlen(good), &s, err, sizeof(err)), 0);
        CHECK_INT(s.loader, KARGS_LOADER_GRUB_DROPIN);
        CHECK_INT(s.written.n, 3);
        CHECK_STR(s.written.a[2].text, "hugepagesz=1G hugepages=2");
        CHECK(s.sentinel_created && !s.complete);
        char *text = kargs_state_format(&s);
        CHECK(text != NULL);
        kargs_state back;
        CHECK_INT(kargs_state_parse(text, strlen(text), &back, err, sizeof(err)), 0);
        CHECK(back.loader == s.loader && back.written.n == s.written.n && back.sentinel_created && !back.complete);
        for (size_t i = 0; i < s.written.n && i < back.written.n; i++)
                CHECK_STR(back.written.a[i].text, s.written.a[i].text);
        free(text);
}

static void test_from_cmdline(void)
{
        static const char *const keys[] = {INV_CMDLINE_KEYS, NULL};
        static inventory inv;
        const char *line = "BOOT_IMAGE=/vmlinuz ro isolcpus=nohz,domain,2-7 nohz_full=2-7 hugepages=9 "
                           "hugepagesz=2M hugepages=512 hugepagesz=1G default_hugepagesz=1G hugepages=4 "
                           "hugepagesz=bogus hugepages=3 irqaffinity=0-1\n";
        kargs_list l;

        CHECK(procparse_cmdline(line, strlen(line), keys, inv.cmdline, INV_MAX_CMDLINE, &inv.n_cmdline) >= 0);
        kargs_from_cmdline(&inv, &l);
        CHECK_INT(l.n, 5);
        CHECK_STR(l.a[0].text, "isolcpus=nohz,domain,2-7");
        CHECK_STR(l.a[1].text, "nohz_full=2-7");
        /* hugepages= without a hugepagesz= before it is the default size's: not spinlane's */
        CHECK_STR(l.a[2].text, "hugepagesz=2M hugepages=512");
        CHECK_STR(l.a[3].text, "hugepagesz=1G hugepages=4");
        CHECK_STR(l.a[4].text, "irqaffinity=0-1");
        /* equal as sets, flags of isolcpus aside */
        kargs_arg a;
        CHECK_INT(kargs_arg_parse("isolcpus=managed_irq,domain,2,3,4-7", &a), 0);
        CHECK(kargs_equal(&a, &l.a[0]));
        CHECK_INT(kargs_find_equal(&l, &a), 0);
        CHECK_INT(kargs_arg_parse("nohz_full=2-6", &a), 0);
        CHECK(kargs_same(&a, &l.a[1]) && !kargs_equal(&a, &l.a[1]));
}

int main(void)
{
        test_arg_parse();
        test_state_parse();
        test_from_cmdline();
        return test_done();
}
