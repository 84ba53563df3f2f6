/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for the verdict list and both printed forms. */
#include "verdict.h"
#include "testutil.h"

int main(void)
{
        verdict_list l = {0}, m = {0};
        char *out = NULL;
        size_t outlen = 0;

        CHECK_INT(verdict_add(&l, "cpu-quota", VERDICT_FAIL, json_pack("{s:s}", "cpu.max", "200000 100000"),
                              "remove the quota", "container has a CFS quota of %.1f CPUs", 2.0), 0);
        CHECK_INT(verdict_add(&l, "hugepages", VERDICT_PASS, NULL, NULL, "512 free"), 0);
        CHECK_INT(verdict_add(&l, "iommu", VERDICT_WARN, NULL, "use a metal instance", "no-IOMMU mode"), 0);
        CHECK_INT(verdict_exit_code(&l), 1);
        CHECK(verdict_find(&l, "iommu") != NULL);
        CHECK(verdict_find(&l, "nope") == NULL);

        FILE *f = open_memstream(&out, &outlen);
        verdict_print(&l, f, false);
        fclose(f);
        CHECK_STR(out, "FAIL cpu-quota: container has a CFS quota of 2.0 CPUs; remedy: remove the quota\n"
                       "PASS hugepages: 512 free\n"
                       "WARN iommu: no-IOMMU mode; remedy: use a metal instance\n"
                       "summary: 1 pass, 1 warn, 1 fail, 0 skip\n");
        free(out);

        f = open_memstream(&out, &outlen);
        verdict_print(&l, f, true);
        fclose(f);
        /* every line is a JSON object; the first is the cpu-quota verdict */
        char *line = strtok(out, "\n");
        json_error_t err;
        json_t *o = json_loads(line, 0, &err);
        CHECK(o != NULL);
        CHECK_STR(json_string_value(json_object_get(o, "check")), "cpu-quota");
        CHECK_STR(json_string_value(json_object_get(o, "verdict")), "fail");
        CHECK_STR(json_string_value(json_object_get(json_object_get(o, "evidence"), "cpu.max")), "200000 100000");
        json_decref(o);
        int lines = 1;
        while ((line = strtok(NULL, "\n"))) {
                lines++;
                o = json_loads(line, 0, &err);
                CHECK(o != NULL);
                if (lines == 4)
                        CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "summary"), "fail")), 1);
                json_decref(o);
        }
        CHECK_INT(lines, 4);
        free(out);

        CHECK(!verdict_list_equal(&l, &m));
        CHECK_INT(verdict_add(&m, "cpu-quota", VERDICT_FAIL, NULL, "remove the quota", "container has a CFS quota of 2.0 CPUs"), 0);
        CHECK_INT(verdict_add(&m, "hugepages", VERDICT_PASS, NULL, NULL, "512 free"), 0);
        CHECK_INT(verdict_add(&m, "iommu", VERDICT_WARN, NULL, "use a metal instance", "no-IOMMU mode"), 0);
        CHECK(verdict_list_equal(&l, &m));
        verdict_list_free(&l);
        verdict_list_free(&m);
        verdict_list_free(NULL);
        return test_done();
}
