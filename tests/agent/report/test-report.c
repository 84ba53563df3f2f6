/* SPDX-License-Identifier: Apache-2.0 */
/* agent/report, table-driven: the Node labels and readiness from verdicts, device lists
 * and registration; the Events of verdict changes (Warning on failing, Normal on recovery
 * or when a failing check is gone, a new Warning when a failing line changes, nothing
 * otherwise); the pin mode from CPU manager checkpoints; --metrics-bind-address; Prometheus
 * escaping; outputs untouched on failure. */
#include "report.h"

#include "cleanup.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>

static device_entry dev(const char *id, const char *kind, bool healthy)
{
        device_entry d;
        memset(&d, 0, sizeof(d));
        snprintf(d.id, sizeof(d.id), "%s", id);
        snprintf(d.nic_kind, sizeof(d.nic_kind), "%s", kind);
        d.state = healthy ? DEVICE_HEALTHY : DEVICE_UNHEALTHY;
        return d;
}

static const char *label(const report_labels *l, const char *key)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->l[i].key, key) == 0)
                        return l->l[i].value ? l->l[i].value : "(absent)";
        return "(not named)";
}

static void test_labels(void)
{
        device_list nics = {0}, cores = {0}, none = {0};
        verdict_list vl = {0};
        report_labels l;
        char why[256];

        device_entry n1 = dev("0000:00:06.0", "ena", true), n2 = dev("0000:00:07.0", "ena", false),
                  n3 = dev("7870:00:00.0", "mana", true), c1 = dev("p0c1", "", true), c2 = dev("p0c2", "", true);
        CHECK_INT(device_list_add(&nics, &n1), 0);
        CHECK_INT(device_list_add(&nics, &n2), 0);
        CHECK_INT(device_list_add(&cores, &c1), 0);
        CHECK_INT(device_list_add(&cores, &c2), 0);
        CHECK_INT(verdict_add(&vl, "hugepages", VERDICT_PASS, NULL, NULL, "ok"), 0);
        CHECK_INT(verdict_add(&vl, "iommu", VERDICT_WARN, NULL, "r", "noiommu"), 0);

        report_input in = {.verdicts = &vl, .nics = &nics, .cores = &cores, .nic_registered = true,
                           .core_registered = true, .pin_mode = "kubelet-pinned"};
        CHECK(report_node_ready(&in, why, sizeof(why)));
        report_node_labels(&in, &l);
        CHECK_INT(l.n, REPORT_N_LABELS);
        CHECK_STR(label(&l, "spinlane.io/ready"), "true");
        CHECK_STR(label(&l, "spinlane.io/nic-kind"), "ena");
        CHECK_STR(label(&l, "spinlane.io/dpdk-nics"), "1"); /* the Unhealthy one does not count */
        CHECK_STR(label(&l, "spinlane.io/isolated-cores"), "2");
        CHECK_STR(label(&l, "spinlane.io/pin-mode"), "kubelet-pinned");
        for (size_t i = 0; i < l.n; i++) /* every value lives in l itself */
                CHECK(!l.l[i].value || (l.l[i].value >= (const char *)l.values && l.l[i].value < (const char *)(l.values + REPORT_N_LABELS)));

        CHECK_INT(device_list_add(&nics, &n3), 0);
        in.pin_mode = NULL;
        report_node_labels(&in, &l);
        CHECK_STR(label(&l, "spinlane.io/nic-kind"), "mixed");
        CHECK_STR(label(&l, "spinlane.io/pin-mode"), "unknown");

        /* not registered / nothing healthy / a failing check / not checked yet */
        in.core_registered = false;
        CHECK(!report_node_ready(&in, why, sizeof(why)));
        CHECK(strstr(why, "core device plugin is not registered") != NULL);
        in.core_registered = true;
        in.nics = &none;
        CHECK(!report_node_ready(&in, why, sizeof(why)));
        CHECK(strstr(why, "no Healthy DPDK NIC") != NULL);
        report_node_labels(&in, &l);
        CHECK_STR(label(&l, "spinlane.io/nic-kind"), "(absent)");
        CHECK_STR(label(&l, "spinlane.io/dpdk-nics"), "0");
        CHECK_STR(label(&l, "spinlane.io/ready"), "false");
        in.nics = &nics;
        in.cores = &none;
        report_node_labels(&in, &l);
        CHECK_STR(label(&l, "spinlane.io/pin-mode"), "none");
        in.cores = &cores;
        CHECK_INT(verdict_add(&vl, "nic-address", VERDICT_FAIL, NULL, "fix", "no address"), 0);
        CHECK(!report_node_ready(&in, why, sizeof(why)));
        CHECK_STR(why, "1 node check fails (nic-address)");
        in.verdicts = NULL;
        CHECK(!report_node_ready(&in, why, sizeof(why)));
        device_list_free(&nics);
        device_list_free(&cores);
        verdict_list_free(&vl);
}

static void checks_of(report_checks *ret, const char *spec)
{
        /* "id=level:message;..." */
        verdict_list vl = {0};
        char buf[512], *save = NULL;
        snprintf(buf, sizeof(buf), "%s", spec);
        for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
                char *eq = strchr(t, '='), *colon = strchr(t, ':');
                *eq = '\0';
                *colon = '\0';
                verdict_level lv = eq[1] == 'p' ? VERDICT_PASS : eq[1] == 'w' ? VERDICT_WARN : eq[1] == 'f' ? VERDICT_FAIL : VERDICT_SKIP;
                CHECK_INT(verdict_add(&vl, t, lv, NULL, lv == VERDICT_FAIL ? "do this" : NULL, "%s", colon + 1), 0);
        }
        CHECK_INT(report_checks_from(&vl, ret), 0);
        verdict_list_free(&vl);
}

static void test_events(void)
{
        static const struct {
                const char *old, *now;
                const char *want; /* "type reason|..." */
        } cases[] = {
                {NULL, "hugepages=p:ok;nic-address=f:none", "Warning NicAddressFailed"},
                {NULL, "hugepages=p:ok", ""},
                {"hugepages=p:ok", "hugepages=w:low", ""},
                {"hugepages=p:ok", "hugepages=f:none", "Warning HugepagesFailed"},
                {"hugepages=f:none", "hugepages=f:none", ""},
                {"hugepages=f:none", "hugepages=f:still none", "Warning HugepagesFailed"},
                {"hugepages=f:none", "hugepages=w:low", "Normal HugepagesRecovered"},
                {"hugepages=f:none;iommu=w:x", "iommu=w:x", "Normal HugepagesRecovered"},
                {"a-b=f:x;c=f:y", "c=p:ok;a-b=f:x;d=f:z", "Normal CRecovered|Warning DFailed"},
                /* kernel-args: its WARN asks for a reboot, so it raises a Warning of its own */
                {NULL, "kernel-args=s:manage is off", ""},
                {NULL, "kernel-args=w:reboot pending", "Warning KernelArgsPending"},
                {"kernel-args=s:off", "kernel-args=w:not written yet", "Warning KernelArgsPending"},
                {"kernel-args=w:not written yet", "kernel-args=w:reboot pending", "Warning KernelArgsPending"},
                {"kernel-args=w:reboot pending", "kernel-args=w:reboot pending", ""},
                {"kernel-args=w:reboot pending", "kernel-args=p:running", "Normal KernelArgsRecovered"},
                {"kernel-args=w:reboot pending", "kernel-args=f:conflict", "Warning KernelArgsFailed"},
                {"kernel-args=f:conflict", "kernel-args=w:reboot pending", "Warning KernelArgsPending"},
                {"iommu=p:ok", "iommu=w:x", ""}, /* other checks' warnings raise nothing */
        };
        report_event *ev = calloc(REPORT_MAX_EVENTS, sizeof(*ev));
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                report_checks o = {0}, n = {0};
                char got[512] = "";
                if (cases[i].old)
                        checks_of(&o, cases[i].old);
                checks_of(&n, cases[i].now);
                size_t k = report_events(cases[i].old ? &o : NULL, &n, ev);
                for (size_t j = 0; j < k; j++)
                        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s %s", j ? "|" : "", ev[j].type,
                                 ev[j].reason);
                if (strcmp(got, cases[i].want) != 0)
                        fprintf(stderr, "case %zu: got \"%s\"\n", i, got);
                CHECK_STR(got, cases[i].want);
                report_checks_free(&o);
                report_checks_free(&n);
        }
        /* the note is the verdict line; a vanished failing check says so */
        report_checks o = {0}, n = {0};
        checks_of(&o, "hugepages=f:none");
        checks_of(&n, "iommu=p:ok");
        CHECK_STR(o.items[0].line, "FAIL hugepages: none; remedy: do this");
        CHECK_INT(report_events(&o, &n, ev), 1);
        CHECK_STR(ev[0].note, "hugepages: no longer checked");
        CHECK_INT(report_events(&n, &o, ev), 1);
        CHECK_STR(ev[0].note, "FAIL hugepages: none; remedy: do this");
        report_checks_free(&o);
        report_checks_free(&n);
        free(ev);

        /* a long line is cut at 1024 bytes on a UTF-8 boundary */
        verdict v = {.check = "x", .level = VERDICT_FAIL, .remedy = NULL};
        char msg[3000];
        memset(msg, 0, sizeof(msg));
        for (size_t i = 0; i + 2 < 2400; i += 2)
                memcpy(msg + i, "\xc3\xa9", 2);
        v.message = msg;
        char line[KUBE_NOTE_MAX + 1];
        report_verdict_line(&v, line, sizeof(line));
        CHECK(strlen(line) <= KUBE_NOTE_MAX);
        CHECK(strlen(line) >= KUBE_NOTE_MAX - 1);
        CHECK(((unsigned char)line[strlen(line) - 1] & 0xC0) != 0xC0); /* no dangling lead byte */
}

static void test_pin_mode(void)
{
        static const struct {
                const char *text;
                int r;
                const char *mode;
        } cases[] = {
                {"{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1\",\"checksum\":1}", 0, "kubelet-pinned"},
                {"{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":2}", 0, "spinlane-pinned"},
                {"{\"policyName\":\"future\"}", 0, "unknown"},
                {"{\"policyName\":1}", -EBADMSG, NULL},
                {"[]", -EBADMSG, NULL},
                {"{\"policyName\":\"static\",\"policyName\":\"none\"}", -EBADMSG, NULL},
                {"", -EBADMSG, NULL},
                {"{\"policyName\":\"stat", -EBADMSG, NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *m = "untouched";
                CHECK_INT(report_pin_mode_parse(cases[i].text, strlen(cases[i].text), &m), cases[i].r);
                CHECK_STR(m, cases[i].mode ? cases[i].mode : "untouched");
        }
        const char *m = "untouched";
        CHECK_INT(report_pin_mode_parse("{}", REPORT_CPU_MANAGER_STATE_MAX + 1, &m), -E2BIG);
}

static void test_bind(void)
{
        static const struct {
                const char *s;
                int r, family;
                bool off, any;
                const char *addr;
                unsigned port;
        } cases[] = {
                {"0", 0, 0, true, false, NULL, 0},
                {":9470", 0, 0, false, true, NULL, 9470},
                {"127.0.0.1:80", 0, AF_INET, false, false, "127.0.0.1", 80},
                {"localhost:1", 0, AF_INET, false, false, "127.0.0.1", 1},
                {"[::1]:65535", 0, AF_INET6, false, false, "::1", 65535},
                {"[fe80::1%eth0]:1", -EINVAL, 0, false, false, NULL, 0},
                {":0", -EINVAL, 0, false, false, NULL, 0},
                {":65536", -EINVAL, 0, false, false, NULL, 0},
                {":+80", -EINVAL, 0, false, false, NULL, 0},
                {"9470", -EINVAL, 0, false, false, NULL, 0},
                {"::1:80", -EINVAL, 0, false, false, NULL, 0},
                {"example.com:80", -EINVAL, 0, false, false, NULL, 0},
                {"1.2.3.4:", -EINVAL, 0, false, false, NULL, 0},
                {"[::1]80", -EINVAL, 0, false, false, NULL, 0},
                {"", -EINVAL, 0, false, false, NULL, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                report_bind b = {.port = 4242};
                char err[256] = "";
                CHECK_INT(report_bind_parse(cases[i].s, &b, err, sizeof(err)), cases[i].r);
                if (cases[i].r < 0) {
                        CHECK_INT(b.port, 4242);
                        CHECK(strstr(err, "--metrics-bind-address") != NULL);
                        continue;
                }
                CHECK_INT(b.off, cases[i].off);
                CHECK_INT(b.any, cases[i].any);
                CHECK_INT(b.port, cases[i].port);
                if (cases[i].addr) {
                        char a[64];
                        CHECK_INT(b.family, cases[i].family);
                        CHECK_STR(inet_ntop(b.family, b.addr, a, sizeof(a)), cases[i].addr);
                }
        }
}

static void test_escape(void)
{
        char buf[16];
        report_prom_escape("a\"b\\c\nd", buf, sizeof(buf));
        CHECK_STR(buf, "a\\\"b\\\\c\\nd");
        report_prom_escape("x\ty", buf, sizeof(buf));
        CHECK_STR(buf, "x?y");
        report_prom_escape("0123456789abcdefghij", buf, sizeof(buf));
        CHECK_STR(buf, "0123456789abcde");
        report_prom_escape("0123456789abcd\"", buf, sizeof(buf)); /* never half an escape */
        CHECK_STR(buf, "0123456789abcd");
        report_prom_escape("0123456789abc\xc3\xa9", buf, sizeof(buf)); /* é fits */
        CHECK_STR(buf, "0123456789abc\xc3\xa9");
        report_prom_escape("0123456789abcd\xc3\xa9", buf, sizeof(buf)); /* é would not: cut before it */
        CHECK_STR(buf, "0123456789abcd");
        report_prom_escape(NULL, buf, sizeof(buf));
        CHECK_STR(buf, "");
}

int main(void)
{
        test_labels();
        test_events();
        test_pin_mode();
        test_bind();
        test_escape();
        return test_done();
}
