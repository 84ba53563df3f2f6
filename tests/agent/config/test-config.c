/* SPDX-License-Identifier: Apache-2.0 */
/* The config parser: defaults, every key, a table of bad inputs with the exact message,
 * outputs untouched on failure, the JSON round trip, and loading from a file. */
#include "config.h"

#include "cleanup.h"
#include "testutil.h"

#include <errno.h>
#include <unistd.h>

static int parse(const char *text, config *c, char *err)
{
        return config_parse(text, strlen(text), c, err, CONFIG_ERR_LEN);
}

static void test_defaults(void)
{
        config c;
        char err[CONFIG_ERR_LEN];

        memset(&c, 0xaa, sizeof(c));
        CHECK_INT(parse("{}", &c, err), 0);
        CHECK_STR(err, "");
        CHECK_STR(c.resource_prefix, "spinlane.io");
        CHECK(c.nics.kinds[CONFIG_KIND_ENA] && c.nics.kinds[CONFIG_KIND_MANA] && !c.nics.kinds[CONFIG_KIND_OTHER]);
        CHECK_INT(c.nics.n_ids + c.nics.n_pci + c.nics.n_interfaces, 0);
        CHECK_INT(c.nics.max_count, 0);
        CHECK_INT(c.binding.ena, CONFIG_DRIVER_VFIO_PCI);
        CHECK_STR(config_driver_name(c.binding.ena), "vfio-pci");
        CHECK(!c.binding.mana_netdev_down);
        CHECK_INT(c.n_huge, 0);
        CHECK(c.hugetlbfs.mount);
        CHECK(!c.hugetlbfs.pod_mount); /* private hugepages by default */
        CHECK_STR(c.hugetlbfs.mount_point, "/dev/hugepages");
        CHECK_INT(c.hugetlbfs.page_size_kb, 0);
        CHECK(!c.cores.have_cpus);
        CHECK(!c.tuning.interrupt_moderation_off);
        CHECK_INT(c.tuning.irq_core, -1);
        CHECK(c.tuning.reapply_on_reset);
        CHECK(!c.cdi.enabled);
        CHECK(!c.kernel_args.manage);
        CHECK_STR(c.cdi.spec_dir, "/var/run/cdi");
        CHECK_INT(c.addresses.n_sources, 2);
        CHECK_INT(c.addresses.sources[0], CONFIG_ADDR_STATIC);
        CHECK_INT(c.addresses.sources[1], CONFIG_ADDR_METADATA);
        CHECK_INT(c.addresses.n_entries, 0);
}

static void test_full(void)
{
        const char *text =
                "{\"resource_prefix\":\"example.com\","
                "\"nics\":{\"kinds\":[\"ena\",\"other\"],\"ids\":[\"1d0f:ec20\",\"1414:00ba\"],"
                "\"pci\":[\"0000:00:06.0\"],\"interfaces\":[\"eth1\",\"ens6\"],\"max\":2},"
                "\"binding\":{\"ena\":\"igb_uio\",\"mana_netdev_down\":true},"
                "\"hugepages\":[{\"page_size\":\"2M\",\"per_node\":{\"0\":512,\"1\":0}},"
                "{\"page_size\":\"1G\",\"per_node\":{\"1\":2}}],"
                "\"hugetlbfs\":{\"mount\":false,\"mount_point\":\"/mnt/huge\",\"page_size\":1048576,\"pod_mount\":true},"
                "\"cores\":{\"cpus\":\"2-7,10-15\"},"
                "\"tuning\":{\"interrupt_moderation_off\":true,\"irq_core\":0,\"reapply_on_reset\":false},"
                "\"cdi\":{\"enabled\":true,\"spec_dir\":\"/etc/cdi\"},\"kernel_args\":{\"manage\":true},"
                "\"addresses\":{\"sources\":[\"metadata\",\"static\"],\"static\":["
                "{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\",\"gateway\":\"10.0.1.1\"},"
                "{\"mac\":\"0A:1b:2c:3d:4e:5f\",\"ipv4\":\"192.168.7.9/32\"},"
                "{\"pci\":\"0000:00:07.0\",\"mac\":\"0a:00:00:00:00:07\",\"ipv4\":\"10.0.2.7/23\",\"gateway\":\"10.0.3.254\"}]}}";
        config c, back;
        char err[CONFIG_ERR_LEN], buf[64];

        CHECK_INT(parse(text, &c, err), 0);
        CHECK_STR(err, "");
        CHECK_STR(c.resource_prefix, "example.com");
        CHECK(c.nics.kinds[CONFIG_KIND_ENA] && !c.nics.kinds[CONFIG_KIND_MANA] && c.nics.kinds[CONFIG_KIND_OTHER]);
        CHECK_INT(c.nics.n_ids, 2);
        CHECK_INT(c.nics.ids[0].vendor, 0x1d0f);
        CHECK_INT(c.nics.ids[0].device, 0xec20);
        CHECK_INT(c.nics.ids[1].vendor, 0x1414);
        CHECK_INT(c.nics.ids[1].device, 0x00ba);
        CHECK_INT(c.nics.n_pci, 1);
        CHECK_STR(c.nics.pci[0], "0000:00:06.0");
        CHECK_INT(c.nics.n_interfaces, 2);
        CHECK_STR(c.nics.interfaces[1], "ens6");
        CHECK_INT(c.nics.max_count, 2);
        CHECK_INT(c.binding.ena, CONFIG_DRIVER_IGB_UIO);
        CHECK(c.binding.mana_netdev_down);
        CHECK_INT(c.n_huge, 2);
        CHECK_INT(c.huge[0].size_kb, 2048);
        CHECK(c.huge[0].want[0] && c.huge[0].want[1] && !c.huge[0].want[2]);
        CHECK_INT(c.huge[0].pages[0], 512);
        CHECK_INT(c.huge[0].pages[1], 0);
        CHECK_INT(c.huge[1].size_kb, 1048576);
        CHECK(!c.huge[1].want[0] && c.huge[1].want[1]);
        CHECK_INT(c.huge[1].pages[1], 2);
        CHECK(!c.hugetlbfs.mount);
        CHECK(c.hugetlbfs.pod_mount);
        CHECK_STR(c.hugetlbfs.mount_point, "/mnt/huge");
        CHECK_INT(c.hugetlbfs.page_size_kb, 1048576);
        CHECK(c.cores.have_cpus);
        cpuset_format(&c.cores.cpus, buf, sizeof(buf));
        CHECK_STR(buf, "2-7,10-15");
        CHECK(c.tuning.interrupt_moderation_off);
        CHECK_INT(c.tuning.irq_core, 0);
        CHECK(!c.tuning.reapply_on_reset);
        CHECK(c.cdi.enabled);
        CHECK(c.kernel_args.manage);
        CHECK_STR(c.cdi.spec_dir, "/etc/cdi");
        CHECK_INT(c.addresses.n_sources, 2);
        CHECK_INT(c.addresses.sources[0], CONFIG_ADDR_METADATA);
        CHECK_INT(c.addresses.sources[1], CONFIG_ADDR_STATIC);
        CHECK_INT(c.addresses.n_entries, 3);
        CHECK_STR(c.addresses.entries[0].pci, "0000:00:06.0");
        CHECK(!c.addresses.entries[0].has_mac);
        CHECK_INT(c.addresses.entries[0].ipv4.addr, 0x0a000114);
        CHECK_INT(c.addresses.entries[0].ipv4.prefix_len, 24);
        CHECK_INT(c.addresses.entries[0].gateway, 0x0a000101);
        CHECK_STR(c.addresses.entries[1].pci, "");
        CHECK(c.addresses.entries[1].has_mac && c.addresses.entries[1].mac[0] == 0x0a && c.addresses.entries[1].mac[5] == 0x5f);
        CHECK_INT(c.addresses.entries[1].ipv4.prefix_len, 32);
        CHECK_INT(c.addresses.entries[1].gateway, 0);
        CHECK(c.addresses.entries[2].has_mac && c.addresses.entries[2].pci[0]);
        CHECK_INT(c.addresses.entries[2].gateway, 0x0a0003fe);

        /* Round trip through the JSON form. */
        json_t *j = config_to_json(&c);
        CHECK(j != NULL);
        char *dump = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        CHECK_INT(parse(dump, &back, err), 0);
        CHECK(config_equal(&c, &back));
        free(dump);
        back.tuning.irq_core = 3;
        CHECK(!config_equal(&c, &back));

        /* A single hugepages object and page size spellings. */
        CHECK_INT(parse("{\"hugepages\":{\"page_size\":\"2048kB\",\"per_node\":{\"3\":8}}}", &c, err), 0);
        CHECK_INT(c.n_huge, 1);
        CHECK_INT(c.huge[0].size_kb, 2048);
        CHECK_INT(c.huge[0].pages[3], 8);
        CHECK_INT(parse("{\"hugepages\":{\"per_node\":{\"0\":1}}}", &c, err), 0);
        CHECK_INT(c.huge[0].size_kb, 2048); /* default page size */
        CHECK_INT(parse("{\"hugepages\":{\"page_size\":\"64K\",\"per_node\":{}}}", &c, err), 0);
        CHECK_INT(c.huge[0].size_kb, 64);
        CHECK_INT(parse("{\"tuning\":{\"irq_core\":null}}", &c, err), 0);
        CHECK_INT(c.tuning.irq_core, -1);
        CHECK_INT(parse("{\"nics\":{\"kinds\":[]}}", &c, err), 0);
        CHECK(!c.nics.kinds[0] && !c.nics.kinds[1] && !c.nics.kinds[2]);
}

static const struct {
        const char *text;
        int r;
        const char *msg;
} bad[] = {
        {"{\"hugepages\":{\"per_node\":{\"0\":\"lots\"}}}", -EINVAL,
         "config: \"hugepages.per_node.0\": expected an integer >= 0, got \"lots\""},
        {"{\"hugepages\":{\"per_node\":{\"0\":-1}}}", -EINVAL,
         "config: \"hugepages.per_node.0\": expected an integer >= 0, got -1"},
        {"{\"hugepages\":{\"per_node\":{\"0\":1.5}}}", -EINVAL,
         "config: \"hugepages.per_node.0\": expected an integer >= 0, got 1.5"},
        {"{\"hugepages\":{\"per_node\":{\"0\":1048577}}}", -E2BIG,
         "config: \"hugepages.per_node.0\": expected an integer from 0 to 1048576, got 1048577"},
        {"{\"hugepages\":{\"per_node\":{\"64\":1}}}", -EINVAL,
         "config: \"hugepages.per_node.64\": expected a NUMA node id from 0 to 63 as the key"},
        {"{\"hugepages\":{\"per_node\":{\"01\":1}}}", -EINVAL,
         "config: \"hugepages.per_node.01\": expected a NUMA node id from 0 to 63 as the key"},
        {"{\"hugepages\":{\"page_size\":\"3M\",\"per_node\":{}}}", -EINVAL,
         "config: \"hugepages.page_size\": expected a page size such as \"2M\", \"1G\" or \"64kB\", got \"3M\""},
        {"{\"hugepages\":{\"page_size\":\"2M\"}}", -EINVAL,
         "config: \"hugepages.per_node\": missing (an object of NUMA node id to page count)"},
        {"{\"hugepages\":[{\"page_size\":\"2M\",\"per_node\":{}},{\"page_size\":\"2048kB\",\"per_node\":{}}]}", -EINVAL,
         "config: \"hugepages[1].page_size\": this page size is already configured, got \"2048kB\""},
        {"{\"hugepages\":[{\"page_size\":\"2M\",\"per_node\":{},\"extra\":1}]}", -EINVAL,
         "config: \"hugepages[0].extra\": unknown key"},
        {"{\"hugepages\":7}", -EINVAL, "config: \"hugepages\": expected an object or an array of objects, got 7"},
        {"{\"prefix\":\"x\"}", -EINVAL, "config: \"prefix\": unknown key"},
        {"{\"nics\":{\"kind\":[\"ena\"]}}", -EINVAL, "config: \"nics.kind\": unknown key"},
        {"{\"nics\":{\"kinds\":\"ena\"}}", -EINVAL, "config: \"nics.kinds\": expected an array, got \"ena\""},
        {"{\"nics\":{\"kinds\":[\"ena\",\"mlx5\"]}}", -EINVAL,
         "config: \"nics.kinds[1]\": expected \"ena\", \"mana\" or \"other\", got \"mlx5\""},
        {"{\"nics\":{\"ids\":[\"1d0f-ec20\"]}}", -EINVAL,
         "config: \"nics.ids[0]\": expected \"vendor:device\" in hex, such as \"1d0f:ec20\", got \"1d0f-ec20\""},
        {"{\"nics\":{\"ids\":[\"0x1d:ec20\"]}}", -EINVAL,
         "config: \"nics.ids[0]\": expected \"vendor:device\" in hex, such as \"1d0f:ec20\", got \"0x1d:ec20\""},
        {"{\"nics\":{\"pci\":[\"00:06.0\"]}}", -EINVAL,
         "config: \"nics.pci[0]\": expected a PCI address such as \"0000:00:06.0\", got \"00:06.0\""},
        {"{\"nics\":{\"interfaces\":[\"a/b\"]}}", -EINVAL,
         "config: \"nics.interfaces[0]\": expected an interface name, got \"a/b\""},
        {"{\"nics\":{\"interfaces\":[\"0123456789abcdef\"]}}", -EINVAL,
         "config: \"nics.interfaces[0]\": expected a string of 1 to 15 characters, got \"0123456789abcdef\""},
        {"{\"nics\":{\"max\":true}}", -EINVAL, "config: \"nics.max\": expected an integer from 0 to 256, got true"},
        {"{\"nics\":{\"max\":257}}", -EINVAL, "config: \"nics.max\": expected an integer from 0 to 256, got 257"},
        {"{\"binding\":{\"ena\":\"uio_pci_generic\"}}", -EINVAL,
         "config: \"binding.ena\": expected \"vfio-pci\" or \"igb_uio\", got \"uio_pci_generic\""},
        {"{\"binding\":{\"mana\":\"vfio-pci\"}}", -EINVAL, "config: \"binding.mana\": unknown key"},
        {"{\"binding\":{\"mana_netdev_down\":\"yes\"}}", -EINVAL,
         "config: \"binding.mana_netdev_down\": expected true or false, got \"yes\""},
        {"{\"hugetlbfs\":{\"pod_mount\":\"no\"}}", -EINVAL,
         "config: \"hugetlbfs.pod_mount\": expected true or false, got \"no\""},
        {"{\"hugetlbfs\":{\"pod_mount\":1}}", -EINVAL,
         "config: \"hugetlbfs.pod_mount\": expected true or false, got 1"},
        {"{\"hugetlbfs\":{\"mount_point\":\"dev/hugepages\"}}", -EINVAL,
         "config: \"hugetlbfs.mount_point\": expected an absolute path other than / without \"..\", got \"dev/hugepages\""},
        {"{\"hugetlbfs\":{\"mount_point\":\"/dev/../etc\"}}", -EINVAL,
         "config: \"hugetlbfs.mount_point\": expected an absolute path other than / without \"..\", got \"/dev/../etc\""},
        {"{\"hugetlbfs\":{\"mount_point\":\"/\"}}", -EINVAL,
         "config: \"hugetlbfs.mount_point\": expected an absolute path other than / without \"..\", got \"/\""},
        {"{\"hugetlbfs\":[]}", -EINVAL, "config: \"hugetlbfs\": expected an object, got []"},
        {"{\"cores\":{\"cpus\":\"3-1\"}}", -EINVAL,
         "config: \"cores.cpus\": expected a CPU list such as \"2-7,10-15\", got \"3-1\""},
        {"{\"cores\":{\"cpus\":[2,3]}}", -EINVAL,
         "config: \"cores.cpus\": expected a CPU list such as \"2-7,10-15\", got [2,3]"},
        {"{\"tuning\":{\"irq_core\":4096}}", -EINVAL,
         "config: \"tuning.irq_core\": expected an integer from 0 to 4095, got 4096"},
        {"{\"tuning\":{\"interrupt_moderation_off\":1}}", -EINVAL,
         "config: \"tuning.interrupt_moderation_off\": expected true or false, got 1"},
        {"{\"cdi\":{\"enabled\":\"on\"}}", -EINVAL, "config: \"cdi.enabled\": expected true or false, got \"on\""},
        {"{\"kernel_args\":{\"manage\":\"yes\"}}", -EINVAL,
         "config: \"kernel_args.manage\": expected true or false, got \"yes\""},
        {"{\"kernel_args\":{\"reboot\":true}}", -EINVAL, "config: \"kernel_args.reboot\": unknown key"},
        {"{\"kernel_args\":true}", -EINVAL, "config: \"kernel_args\": expected an object, got true"},
        {"{\"kernel_args\":{\"manage\":true}}", -EINVAL,
         "config: \"kernel_args.manage\": needs \"cores.cpus\" (the whole cores to isolate at boot; the rest stay "
         "housekeeping)"},
        {"{\"resource_prefix\":\"Spinlane.IO\"}", -EINVAL,
         "config: \"resource_prefix\": expected a DNS subdomain such as \"spinlane.io\", got \"Spinlane.IO\""},
        {"{\"resource_prefix\":\"a..b\"}", -EINVAL,
         "config: \"resource_prefix\": expected a DNS subdomain such as \"spinlane.io\", got \"a..b\""},
        {"{\"resource_prefix\":\"\"}", -EINVAL,
         "config: \"resource_prefix\": expected a string of 1 to 63 characters, got \"\""},
        {"[]", -EINVAL, "config: \"\": expected the config to be a JSON object, got []"},
        {"{\"cdi\":{\"enabled\":true},\"cdi\":{\"enabled\":false}}", -EINVAL, NULL /* duplicate key: jansson's text */},
        {"{\"addresses\":[]}", -EINVAL, "config: \"addresses\": expected an object, got []"},
        {"{\"addresses\":{\"source\":[]}}", -EINVAL, "config: \"addresses.source\": unknown key"},
        {"{\"addresses\":{\"sources\":[]}}", -EINVAL,
         "config: \"addresses.sources\": expected an array of \"static\" and/or \"metadata\", in the order to ask them, got []"},
        {"{\"addresses\":{\"sources\":[\"imds\"]}}", -EINVAL,
         "config: \"addresses.sources[0]\": expected \"static\" or \"metadata\", got \"imds\""},
        {"{\"addresses\":{\"sources\":[\"static\",\"static\"]}}", -EINVAL,
         "config: \"addresses.sources[1]\": listed twice, got \"static\""},
        {"{\"addresses\":{\"static\":{}}}", -EINVAL, "config: \"addresses.static\": expected an array, got {}"},
        {"{\"addresses\":{\"static\":[{\"ipv4\":\"10.0.1.20/24\"}]}}", -EINVAL,
         "config: \"addresses.static[0]\": needs \"pci\" or \"mac\" (or both) to name its NIC"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\"}]}}", -EINVAL,
         "config: \"addresses.static[0].ipv4\": missing (the NIC's address, \"a.b.c.d/len\")"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\",\"netmask\":\"x\"}]}}", -EINVAL,
         "config: \"addresses.static[0].netmask\": unknown key"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"00:06.0\",\"ipv4\":\"10.0.1.20/24\"}]}}", -EINVAL,
         "config: \"addresses.static[0].pci\": expected a PCI address such as \"0000:00:06.0\", got \"00:06.0\""},
        {"{\"addresses\":{\"static\":[{\"mac\":\"0a1b2c3d4e5f\",\"ipv4\":\"10.0.1.20/24\"}]}}", -EINVAL,
         "config: \"addresses.static[0].mac\": expected a MAC address such as \"0a:1b:2c:3d:4e:5f\", got \"0a1b2c3d4e5f\""},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20\"}]}}", -EINVAL,
         "config: \"addresses.static[0].ipv4\": expected \"a.b.c.d/len\" (len 1..32), got \"10.0.1.20\""},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.256/24\"}]}}", -EINVAL,
         "config: \"addresses.static[0].ipv4\": expected \"a.b.c.d/len\" (len 1..32), got \"10.0.1.256/24\""},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.255/24\"}]}}", -EINVAL,
         "config: \"addresses.static[0].ipv4\": \"10.0.1.255/24\" is the network or broadcast address of its subnet"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":24}]}}", -EINVAL,
         "config: \"addresses.static[0].ipv4\": expected \"a.b.c.d/len\", got 24"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\",\"gateway\":\"10.0.2.1\"}]}}", -EINVAL,
         "config: \"addresses.static[0].gateway\": 10.0.2.1 is not another host of the subnet of 10.0.1.20/24"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\",\"gateway\":\"10.0.1.20\"}]}}", -EINVAL,
         "config: \"addresses.static[0].gateway\": 10.0.1.20 is not another host of the subnet of 10.0.1.20/24"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\",\"gateway\":\"10.0.1.1/24\"}]}}", -EINVAL,
         "config: \"addresses.static[0].gateway\": expected \"a.b.c.d\", got \"10.0.1.1/24\""},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\",\"gateway\":null}]}}", -EINVAL,
         "config: \"addresses.static[0].gateway\": expected \"a.b.c.d\", got null"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\"},"
         "{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.21/24\"}]}}", -EINVAL,
         "config: \"addresses.static[1]\": names the same NIC as addresses.static[0]"},
        {"{\"addresses\":{\"static\":[{\"mac\":\"0a:00:00:00:00:07\",\"ipv4\":\"10.0.1.20/24\"},"
         "{\"mac\":\"0A:00:00:00:00:07\",\"ipv4\":\"10.0.1.21/24\"}]}}", -EINVAL,
         "config: \"addresses.static[1]\": names the same NIC as addresses.static[0]"},
        {"{\"addresses\":{\"static\":[{\"pci\":\"0000:00:06.0\",\"ipv4\":\"10.0.1.20/24\"},"
         "{\"pci\":\"0000:00:07.0\",\"ipv4\":\"10.0.1.20/25\"}]}}", -EINVAL,
         "config: \"addresses.static[1].ipv4\": 10.0.1.20 is already the address of addresses.static[0]"},
        {"{\"nics\":", -EINVAL, NULL},
        {"", -EINVAL, NULL},
};

static void test_bad(void)
{
        char err[CONFIG_ERR_LEN];
        config c, before;

        config_init(&c);
        c.tuning.irq_core = 5; /* marker: must survive every failure */
        before = c;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse(bad[i].text, &c, err);
                if (r != bad[i].r)
                        fprintf(stderr, "case %zu: %s -> %d (%s)\n", i, bad[i].text, r, err);
                CHECK_INT(r, bad[i].r);
                if (bad[i].msg)
                        CHECK_STR(err, bad[i].msg);
                else
                        CHECK(strncmp(err, "config: not valid JSON: ", 24) == 0);
                CHECK(memcmp(&c, &before, sizeof(c)) == 0);
        }

        /* Hard limits: list length and text size. */
        char big[4096] = "{\"nics\":{\"pci\":[";
        for (int i = 0; i <= CONFIG_MAX_LIST; i++)
                strcat(big, i ? ",\"0000:00:06.0\"" : "\"0000:00:06.0\"");
        strcat(big, "]}}");
        CHECK_INT(parse(big, &c, err), -E2BIG);
        CHECK_STR(err, "config: \"nics.pci\": at most 64 entries are allowed, got 65");
        char many[8192] = "{\"addresses\":{\"static\":[";
        for (int i = 0; i <= CONFIG_MAX_ADDRESSES; i++)
                snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s{\"pci\":\"0000:00:%02x.0\",\"ipv4\":\"10.0.%d.9/24\"}",
                         i ? "," : "", i, i);
        strcat(many, "]}}");
        CHECK_INT(parse(many, &c, err), -E2BIG);
        CHECK_STR(err, "config: \"addresses.static\": at most 64 entries are allowed, got 65");
        size_t n = CONFIG_MAX_TEXT + 1;
        char *huge = malloc(n);
        memset(huge, ' ', n);
        huge[0] = '{';
        huge[n - 1] = '}';
        CHECK_INT(config_parse(huge, n, &c, err, sizeof(err)), -E2BIG);
        CHECK_INT(config_parse(huge, n - 1, &c, err, sizeof(err)), -EINVAL); /* no closing brace */
        huge[n - 2] = '}';
        CHECK_INT(config_parse(huge, n - 1, &c, err, sizeof(err)), 0);
        free(huge);
        /* A NUL inside the text is not JSON. */
        CHECK_INT(config_parse("{}\0{}", 5, &c, err, sizeof(err)), -EINVAL);
        /* err may be NULL. */
        CHECK_INT(config_parse("{\"x\":1}", 7, &c, NULL, 0), -EINVAL);
}

static void test_load(void)
{
        char dir[] = "/tmp/sl-np-config-XXXXXX", path[256], err[CONFIG_ERR_LEN];
        config c;
        bool from_file = true;
        FILE *f;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/missing.json", dir);
        CHECK_INT(config_load(path, &c, &from_file, err, sizeof(err)), -ENOENT);
        CHECK(strstr(err, "cannot open") != NULL);
        snprintf(path, sizeof(path), "%s/config.json", dir);
        f = fopen(path, "w");
        fputs("{\"resource_prefix\":\"acme.example\",\"tuning\":{\"irq_core\":1}}\n", f);
        fclose(f);
        CHECK_INT(config_load(path, &c, &from_file, err, sizeof(err)), 0);
        CHECK(from_file);
        CHECK_STR(c.resource_prefix, "acme.example");
        CHECK_INT(c.tuning.irq_core, 1);
        f = fopen(path, "w");
        fputs("{\"tuning\":{\"irq_core\":\"one\"}}", f);
        fclose(f);
        CHECK_INT(config_load(path, &c, &from_file, err, sizeof(err)), -EINVAL);
        CHECK_STR(err, "config: \"tuning.irq_core\": expected an integer from 0 to 4095, got \"one\"");
        CHECK_INT(c.tuning.irq_core, 1);
        f = fopen(path, "w");
        for (int i = 0; i < CONFIG_MAX_TEXT + 10; i++)
                fputc(' ', f);
        fclose(f);
        CHECK_INT(config_load(path, &c, &from_file, err, sizeof(err)), -E2BIG);
        CHECK_INT(config_load(dir, &c, &from_file, err, sizeof(err)), -EINVAL);
        unlink(path);
        rmdir(dir);

        /* The default path named explicitly (as the DaemonSet does) must exist too; only no
         * path at all may fall back to the defaults, and only when that file is absent. */
        if (access(CONFIG_PATH_DEFAULT, F_OK) != 0) {
                config d;
                config_init(&d);
                CHECK_INT(config_load(CONFIG_PATH_DEFAULT, &c, &from_file, err, sizeof(err)), -ENOENT);
                CHECK_STR(err, "config: cannot open \"" CONFIG_PATH_DEFAULT "\": No such file or directory");
                from_file = true;
                CHECK_INT(config_load(NULL, &c, &from_file, err, sizeof(err)), 0);
                CHECK(!from_file);
                CHECK(config_equal(&c, &d));
        } else
                printf("not checked: %s exists on this machine\n", CONFIG_PATH_DEFAULT);
}

int main(void)
{
        test_defaults();
        test_full();
        test_bad();
        test_load();
        return test_done();
}
