/* SPDX-License-Identifier: Apache-2.0 */
/* Exact inventories of the generated fixture nodes (eks-x86, graviton, aks-mana, broken,
 * big): every JSON field the device plugin and node preparation rely on; which NIC is
 * primary and which the node uses (eks-al2023), big route and mount tables read whole,
 * and no link usage at all. */
#include "fixture.h"
#include "hostfs.h"
#include "devmap-json.h"
#include "inventory.h"

#include <errno.h>

static char dir[512];

static json_t *scan(const char *name, inventory **ret_inv)
{
        char root[1024];
        hostfs h;
        inventory *inv = NULL;

        snprintf(root, sizeof(root), "%s/%s", dir, name);
        CHECK_INT(hostfs_init(&h, root), 0);
        CHECK_INT(inventory_scan(&h, &inv), 0);
        if (!inv)
                exit(1);
        json_t *j = inventory_json_under(inv, NULL, NULL);
        CHECK(j != NULL);
        if (ret_inv)
                *ret_inv = inv;
        else
                inventory_free(inv);
        return j;
}

#define VFIO_DEV(g, host) \
        "{\"host_path\":\"/dev/vfio/vfio\",\"container_path\":\"/dev/vfio/vfio\",\"permissions\":\"rw\"}," \
        "{\"host_path\":\"" host "\",\"container_path\":\"/dev/vfio/" #g "\",\"permissions\":\"rw\"}"

/* The address fields of a NIC the scan alone leaves unresolved (agent/node/addresses.c fills them). */
#define ADDR_UNRESOLVED \
        "\"ipv4\":null,\"gateway\":null,\"address_source\":null,\"address_state\":\"unresolved\",\"address_reason\":null,"

static void test_eks(void)
{
        inventory *inv;
        json_t *j = scan("eks-x86", &inv);

        CHECK_JSON(j, "resources",
                   "{\"spinlane.io/dpdk-nic\":["
                   "{\"id\":\"0000:00:06.0\",\"pci\":\"0000:00:06.0\",\"kind\":\"ena\",\"driver\":\"vfio-pci\","
                   "\"numa_node\":0,\"netdev\":null,\"mac\":null," ADDR_UNRESOLVED "\"devices\":[" VFIO_DEV(0, "/dev/vfio/noiommu-0") "]},"
                   "{\"id\":\"0000:00:07.0\",\"pci\":\"0000:00:07.0\",\"kind\":\"ena\",\"driver\":\"vfio-pci\","
                   "\"numa_node\":0,\"netdev\":null,\"mac\":null," ADDR_UNRESOLVED "\"devices\":[" VFIO_DEV(1, "/dev/vfio/noiommu-1") "]}],"
                   "\"spinlane.io/isolated-core\":["
                   "{\"id\":\"p0c2\",\"cpus\":[2,10],\"numa_node\":0},{\"id\":\"p0c3\",\"cpus\":[3,11],\"numa_node\":0},"
                   "{\"id\":\"p0c4\",\"cpus\":[4,12],\"numa_node\":0},{\"id\":\"p0c5\",\"cpus\":[5,13],\"numa_node\":0},"
                   "{\"id\":\"p0c6\",\"cpus\":[6,14],\"numa_node\":0},{\"id\":\"p0c7\",\"cpus\":[7,15],\"numa_node\":0}]}");
        CHECK_JSON(j, "nics",
                   "[{\"pci\":\"0000:00:05.0\",\"ids\":\"1d0f:ec20\",\"class\":\"0x020000\",\"kind\":\"ena\","
                   "\"driver\":\"ena\",\"iommu_group\":-1,\"noiommu\":false,\"numa_node\":0,\"netdev\":\"eth0\","
                   "\"mac\":\"0a:1b:2c:3d:4e:05\",\"mac_source\":\"netdev\"," ADDR_UNRESOLVED "\"primary\":true,\"has_ipv4\":true,\"in_use\":true,"
                   "\"in_use_reason\":\"eth0 has address 192.168.0.10/24, has route \\\"default via 192.168.0.1 table main "
                   "metric 100\\\" (+1 more)\",\"dpdk_ready\":false,"
                   "\"dpdk_reason\":\"bound to the kernel driver ena as eth0\",\"devices\":[],"
                   "\"write_combining\":\"unknown\"},"
                   "{\"pci\":\"0000:00:06.0\",\"ids\":\"1d0f:ec20\",\"class\":\"0x020000\",\"kind\":\"ena\","
                   "\"driver\":\"vfio-pci\",\"iommu_group\":0,\"noiommu\":true,\"numa_node\":0,\"netdev\":null,"
                   "\"mac\":null,\"mac_source\":null," ADDR_UNRESOLVED "\"primary\":false,\"has_ipv4\":false,\"in_use\":false,\"in_use_reason\":null,"
                   "\"dpdk_ready\":true,"
                   "\"dpdk_reason\":\"bound to vfio-pci, /dev/vfio/noiommu-0 present\",\"devices\":["
                   VFIO_DEV(0, "/dev/vfio/noiommu-0") "],\"write_combining\":true},"
                   "{\"pci\":\"0000:00:07.0\",\"ids\":\"1d0f:ec20\",\"class\":\"0x020000\",\"kind\":\"ena\","
                   "\"driver\":\"vfio-pci\",\"iommu_group\":1,\"noiommu\":true,\"numa_node\":0,\"netdev\":null,"
                   "\"mac\":null,\"mac_source\":null," ADDR_UNRESOLVED "\"primary\":false,\"has_ipv4\":false,\"in_use\":false,\"in_use_reason\":null,"
                   "\"dpdk_ready\":true,"
                   "\"dpdk_reason\":\"bound to vfio-pci, /dev/vfio/noiommu-1 present\",\"devices\":["
                   VFIO_DEV(1, "/dev/vfio/noiommu-1") "],\"write_combining\":true}]");
        json_t *cpus = json_object_get(j, "cpus");
        CHECK_JSON(cpus, "online", "\"0-15\"");
        CHECK_JSON(cpus, "isolated", "\"2-7,10-15\"");
        CHECK_JSON(cpus, "nohz_full", "\"2-7,10-15\"");
        CHECK_JSON(cpus, "pool", "\"2-7,10-15\"");
        CHECK_JSON(cpus, "smt", "true");
        CHECK_INT(json_array_size(json_object_get(cpus, "cpus")), 16);
        json_t *cpu10 = json_array_get(json_object_get(cpus, "cpus"), 10);
        CHECK_JSON(cpu10, "siblings", "\"2,10\"");
        CHECK_JSON(cpu10, "core", "\"p0c2\"");
        CHECK_JSON(cpu10, "package", "0");
        CHECK_INT(json_array_size(json_object_get(j, "cores")), 8);
        CHECK_JSON(json_array_get(json_object_get(j, "cores"), 0), "cpus", "[0,8]");
        CHECK_JSON(json_array_get(json_object_get(j, "cores"), 0), "isolated", "false");
        CHECK_JSON(j, "numa",
                   "[{\"id\":0,\"cpus\":\"0-15\",\"hugepages\":[{\"size_kb\":2048,\"total\":1024,\"free\":1024},"
                   "{\"size_kb\":1048576,\"total\":0,\"free\":0}]}]");
        CHECK_JSON(j, "memory",
                   "{\"hugepages\":[{\"size_kb\":2048,\"total\":1024,\"free\":1024},"
                   "{\"size_kb\":1048576,\"total\":0,\"free\":0}],\"default_hugepage_kb\":2048,"
                   "\"hugetlbfs\":[{\"path\":\"/dev/hugepages\",\"pagesize_kb\":2048}]}");
        CHECK_JSON(j, "kernel",
                   "{\"cmdline\":{\"isolcpus\":\"managed_irq,domain,2-7,10-15\",\"nohz_full\":\"2-7,10-15\","
                   "\"rcu_nocbs\":\"2-7,10-15\",\"hugepagesz\":\"2M\",\"hugepages\":\"1024\"},"
                   "\"vfio_noiommu\":true,\"iommu_present\":false,\"cgroup\":\"v2\",\"x86\":true}");
        CHECK_JSON(j, "problems", "[]");

        /* the C API agrees with the JSON */
        const inv_nic *n = inventory_find_nic(inv, "0000:00:06.0");
        CHECK(n && n->noiommu && n->iommu_group == 0 && n->n_devnodes == 2);
        CHECK(n && n->wc_bar_start == 0xfe900000 && n->wc_bar_end == 0xfe9fffff);
        CHECK(inventory_find_nic(inv, "0000:00:04.0") == NULL); /* NVMe is no NIC */
        const inv_core *c = inventory_find_core(inv, "p0c7");
        CHECK(c && c->isolated && !c->split && cpuset_count(&c->cpus) == 2);
        CHECK_STR(inventory_cmdline(inv, "hugepagesz"), "2M");
        CHECK(inventory_cmdline(inv, "intel_iommu") == NULL);
        CHECK_INT(inventory_huge_free(inv, 0, 2048), 1024);
        CHECK_INT(inventory_huge_free(inv, -1, 2048), 1024);
        CHECK_INT(inventory_huge_free(inv, 3, 2048), 0);
        CHECK_INT(inv->cpu_core[15], inv->cpu_core[7]);

        /* a configured prefix names the resources */
        json_t *j2 = inventory_json_under(inv, NULL, "example.com");
        json_t *res = json_object_get(j2, "resources");
        CHECK(json_object_get(res, "example.com/dpdk-nic") != NULL);
        CHECK(json_object_get(res, "example.com/isolated-core") != NULL);
        CHECK_INT(json_object_size(res), 2);
        json_decref(j2);
        json_decref(j);
        inventory_free(inv);
}

static void test_graviton(void)
{
        json_t *j = scan("graviton", NULL);

        CHECK_JSON(j, "resources",
                   "{\"spinlane.io/dpdk-nic\":["
                   "{\"id\":\"0000:00:06.0\",\"pci\":\"0000:00:06.0\",\"kind\":\"ena\",\"driver\":\"vfio-pci\","
                   "\"numa_node\":0,\"netdev\":null,\"mac\":null," ADDR_UNRESOLVED "\"devices\":[" VFIO_DEV(5, "/dev/vfio/5") "]}],"
                   "\"spinlane.io/isolated-core\":["
                   "{\"id\":\"p0c2\",\"cpus\":[2],\"numa_node\":0},{\"id\":\"p0c3\",\"cpus\":[3],\"numa_node\":0},"
                   "{\"id\":\"p0c4\",\"cpus\":[4],\"numa_node\":0},{\"id\":\"p0c5\",\"cpus\":[5],\"numa_node\":0},"
                   "{\"id\":\"p0c6\",\"cpus\":[6],\"numa_node\":0},{\"id\":\"p0c7\",\"cpus\":[7],\"numa_node\":0}]}");
        json_t *nic = json_array_get(json_object_get(j, "nics"), 1);
        CHECK_JSON(nic, "noiommu", "false");
        CHECK_JSON(nic, "iommu_group", "5");
        CHECK_JSON(nic, "write_combining", "\"unknown\""); /* arm64: no PAT */
        CHECK_JSON(json_object_get(j, "cpus"), "smt", "false");
        CHECK_JSON(j, "kernel",
                   "{\"cmdline\":{\"isolcpus\":\"2-7\",\"nohz_full\":\"2-7\",\"iommu.passthrough\":\"1\","
                   "\"hugepages\":\"512\"},\"vfio_noiommu\":false,\"iommu_present\":true,\"cgroup\":\"v2\","
                   "\"x86\":false}");
        CHECK_JSON(json_object_get(j, "memory"), "hugepages",
                   "[{\"size_kb\":2048,\"total\":512,\"free\":512},{\"size_kb\":32768,\"total\":0,\"free\":0},"
                   "{\"size_kb\":1048576,\"total\":0,\"free\":0}]");
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
}

static void test_aks(void)
{
        json_t *j = scan("aks-mana", NULL);

        CHECK_JSON(j, "resources",
                   "{\"spinlane.io/dpdk-nic\":["
                   "{\"id\":\"8a3c:00:00.0\",\"pci\":\"8a3c:00:00.0\",\"kind\":\"mana\",\"driver\":\"mana\","
                   "\"numa_node\":0,\"netdev\":\"enP35388s2\",\"mac\":\"00:0d:3a:aa:00:02\"," ADDR_UNRESOLVED "\"devices\":["
                   "{\"host_path\":\"/dev/infiniband/uverbs1\",\"container_path\":\"/dev/infiniband/uverbs1\","
                   "\"permissions\":\"rw\"}]}],"
                   "\"spinlane.io/isolated-core\":["
                   "{\"id\":\"p0c1\",\"cpus\":[2,3],\"numa_node\":0},{\"id\":\"p0c2\",\"cpus\":[4,5],\"numa_node\":0},"
                   "{\"id\":\"p0c3\",\"cpus\":[6,7],\"numa_node\":0}]}");
        json_t *prim = json_array_get(json_object_get(j, "nics"), 0);
        CHECK_JSON(prim, "pci", "\"7870:00:00.0\"");
        CHECK_JSON(prim, "primary", "true"); /* the VF of eth0 (same MAC) */
        CHECK_JSON(prim, "dpdk_ready", "true");
        CHECK_JSON(prim, "dpdk_reason", "\"mana with mana_ib, /dev/infiniband/uverbs0 present\"");
        CHECK_JSON(prim, "kind", "\"mana\"");
        CHECK_JSON(prim, "ids", "\"1414:00ba\"");
        CHECK_JSON(json_object_get(j, "cpus"), "pool", "\"2-7\"");
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
}

static void test_broken(void)
{
        json_t *j = scan("broken", NULL);

        CHECK_JSON(j, "resources",
                   "{\"spinlane.io/dpdk-nic\":[],"
                   "\"spinlane.io/isolated-core\":[{\"id\":\"p0c2\",\"cpus\":[2,6],\"numa_node\":0}]}");
        CHECK_JSON(j, "cores",
                   "[{\"id\":\"p0c0\",\"cpus\":[0,4],\"numa_node\":0,\"isolated\":false,\"split\":false},"
                   "{\"id\":\"p0c1\",\"cpus\":[1,5],\"numa_node\":0,\"isolated\":false,\"split\":false},"
                   "{\"id\":\"p0c2\",\"cpus\":[2,6],\"numa_node\":0,\"isolated\":true,\"split\":false},"
                   "{\"id\":\"p0c3\",\"cpus\":[3,7],\"numa_node\":0,\"isolated\":false,\"split\":true}]");
        json_t *sec = json_array_get(json_object_get(j, "nics"), 1);
        CHECK_JSON(sec, "driver", "\"ena\"");
        CHECK_JSON(sec, "netdev", "\"eth1\"");
        CHECK_JSON(sec, "has_ipv4", "true");
        CHECK_JSON(sec, "primary", "false");
        CHECK_JSON(sec, "dpdk_ready", "false");
        CHECK_JSON(sec, "devices", "[]");
        CHECK_JSON(j, "memory",
                   "{\"hugepages\":[{\"size_kb\":2048,\"total\":0,\"free\":0}],\"default_hugepage_kb\":2048,"
                   "\"hugetlbfs\":[]}");
        CHECK_JSON(j, "kernel",
                   "{\"cmdline\":{},\"vfio_noiommu\":null,\"iommu_present\":false,\"cgroup\":\"v1\",\"x86\":true}");
        CHECK_JSON(json_object_get(j, "cpus"), "nohz_full", "\"\"");
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
}

static void test_big(void)
{
        inventory *inv;
        json_t *j = scan("big", &inv);
        json_t *res = json_object_get(j, "resources");

        CHECK_INT(json_array_size(json_object_get(res, "spinlane.io/dpdk-nic")), 15);
        CHECK_INT(json_array_size(json_object_get(res, "spinlane.io/isolated-core")), 88);
        CHECK_INT(inv->n_nics, 16);
        CHECK_INT(inv->n_cores, 96);
        CHECK_INT(inv->n_numa, 2);
        const inv_core *c = inventory_find_core(inv, "p1c4");
        CHECK(c && c->numa_node == 1 && cpuset_has(&c->cpus, 52) && cpuset_has(&c->cpus, 148) && c->isolated);
        CHECK_INT(inventory_huge_free(inv, 1, 2048), 4000);
        CHECK_INT(inventory_huge_free(inv, 1, 1048576), 4);
        CHECK_INT(inv->n_mounts, 2);
        CHECK_INT(inv->mounts[1].pagesize_kb, 1048576);
        CHECK_INT(inventory_find_nic(inv, "0000:11:00.0")->numa_node, 1);
        CHECK_JSON(json_object_get(j, "kernel"), "cmdline",
                   "{\"isolcpus\":\"managed_irq,domain,4-47,52-95,100-143,148-191\","
                   "\"nohz_full\":\"4-47,52-95,100-143,148-191\",\"hugepagesz\":[\"2M\",\"1G\"],"
                   "\"hugepages\":[\"8192\",\"8\"],\"default_hugepagesz\":\"2M\"}");
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
        inventory_free(inv);
}

/* Two ENIs with a default route each (amazon-ec2-net-utils: metric 512 + device index), a
 * pod ENI whose routes live only in table 2 (VPC CNI), an untouched ENI: one primary (the
 * lowest metric), three in use with the reason, one free. */
static void test_al2023(void)
{
        inventory *inv;
        json_t *j = scan("eks-al2023", &inv);

        const inv_nic *n5 = inventory_find_nic(inv, "0000:00:05.0"), *n6 = inventory_find_nic(inv, "0000:00:06.0"),
                      *n7 = inventory_find_nic(inv, "0000:00:07.0"), *n8 = inventory_find_nic(inv, "0000:00:08.0");
        CHECK(n5 && n6 && n7 && n8);
        if (n5 && n6 && n7 && n8) {
                CHECK(n5->primary && n5->in_use == 1 && n5->has_default && n5->default_metric == 512);
                CHECK(!n6->primary);
                CHECK_INT(n6->in_use, 1);
                CHECK(n6->has_default && n6->default_metric == 513);
                CHECK_STR(n6->in_use_reason, "ens6 has address 10.0.2.11/24, has route \"default via 10.0.2.1 table main "
                                             "metric 513\" (+1 more)");
                CHECK(!n7->primary && !n7->has_default);
                CHECK_INT(n7->in_use, 1);
                CHECK_STR(n7->in_use_reason, "ens7 has route \"default via 10.0.3.1 table 2 metric 0\" (+1 more)");
                CHECK(!n8->primary);
                CHECK_INT(n8->in_use, 0);
                CHECK_STR(n8->in_use_reason, "");
        }
        CHECK(inv->have_link_usage);
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
        inventory_free(inv);
}

/* 2 100 routes (a /proc/net/route of 269 KB, past the 128 KiB the inventory once read
 * whole) and 2 500 mounts (the host's table under --root, 400 KB): read whole, the
 * primary still known, the host's hugetlbfs found in the host's table. */
static void test_big_tables(void)
{
        inventory *inv;
        json_t *j = scan("eks-x86-routes", &inv);
        const inv_nic *prim = inventory_find_nic(inv, "0000:00:05.0");
        CHECK(prim && prim->primary && prim->in_use == 1);
        CHECK(inv->have_link_usage);
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
        inventory_free(inv);

        j = scan("eks-x86-mounts", &inv);
        CHECK_INT(inv->n_mounts, 1);
        CHECK_STR(inv->mounts[0].path, "/dev/hugepages");
        CHECK_INT(inv->mounts[0].pagesize_kb, 2048);
        CHECK_INT(inv->cgroup, INV_CGROUP_V2);
        CHECK_JSON(j, "problems", "[]");
        json_decref(j);
        inventory_free(inv);
}

/* No recorded link usage in the fake tree: nothing is primary or free, and it says why. */
static void test_no_link_usage(void)
{
        char p[1024];
        inventory *inv;
        snprintf(p, sizeof(p), "%s/eks-al2023/spinlane-fixture/rtnetlink.dump", dir);
        CHECK_INT(unlink(p), 0);
        json_t *j = scan("eks-al2023", &inv);
        CHECK(!inv->have_link_usage);
        CHECK_STR(inv->link_usage_error, "/spinlane-fixture/rtnetlink.dump: No such file or directory");
        for (size_t i = 0; i < inv->n_nics; i++) {
                CHECK(!inv->nics[i].primary);
                CHECK_INT(inv->nics[i].in_use, -1);
        }
        CHECK_STR(inv->nics[3].in_use_reason,
                  "cannot tell whether the node uses ens8: /spinlane-fixture/rtnetlink.dump: No such file or directory");
        CHECK_INT(inv->n_problems, 1);
        CHECK_STR(inv->problems[0].path, "/spinlane-fixture/rtnetlink.dump");
        CHECK_INT(inv->problems[0].err, -ENOENT);
        json_decref(j);
        inventory_free(inv);
}

int main(void)
{
        inventory *inv = (inventory *)0x1;
        CHECK_INT(inventory_scan(NULL, &inv), -EINVAL);
        CHECK(inv == (inventory *)0x1); /* untouched on failure */
        inventory_free(NULL);

        fixture_make(dir, sizeof(dir), NULL);
        test_eks();
        test_graviton();
        test_aks();
        test_broken();
        test_big();
        test_al2023();
        test_big_tables();
        test_no_link_usage();
        fixture_remove(dir);
        return test_done();
}
