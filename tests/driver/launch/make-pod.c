/* SPDX-License-Identifier: Apache-2.0 */
/* `make-pod DIR`: build the launcher's pod-view fixture trees under DIR for the memcheck
 * tests (a ctest fixture setup): DIR/v2, a pod that passes every check (the one
 * test-launch-run uses), DIR/v1-quota, a cgroup v1 pod with a CPU quota (fails), and
 * DIR/v2-kubelet, a pod whose static CPU manager chose cores 1-2 (CPUs 1-2,5-6) while
 * the grant of the memcheck environment is cores 1-3: too few cores (fails cpuset). */
#include "fixture.h"

int main(int argc, char **argv)
{
        char d[1024];

        if (argc != 2) {
                fprintf(stderr, "usage: make-pod DIR\n");
                return 2;
        }
        fx_remove(argv[1]);
        fx_mkdirs((snprintf(d, sizeof(d), "%s/v2", argv[1]), d));
        fx_pod v2 = { .cg = FX_V2, .cgroup_path = "/", .free_hugepages = 512, .cpus_allowed = "1-3,5-7" };
        fx_build(d, &v2);
        fx_mkdirs((snprintf(d, sizeof(d), "%s/v1-quota", argv[1]), d));
        fx_pod v1 = { .cg = FX_V1, .cgroup_path = "/kubepods/pod1/c1", .quota = "50000 100000",
                      .free_hugepages = 512, .cpus_allowed = "1-3,5-7" };
        fx_build(d, &v1);
        fx_mkdirs((snprintf(d, sizeof(d), "%s/v2-kubelet", argv[1]), d));
        fx_pod kub = { .cg = FX_V2, .cgroup_path = "/", .free_hugepages = 512, .cpus_allowed = "1-2,5-6" };
        fx_build(d, &kub);
        return 0;
}
