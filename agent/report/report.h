/* SPDX-License-Identifier: Apache-2.0 */
/* What the daemon tells the cluster, worked out from what it knows: the agent's Node
 * labels, the Events a change of the node verdicts raises, the pinning mode read from the
 * kubelet's CPU manager checkpoint, the metrics bind address, and the Prometheus text
 * format's label escaping. Pure: no I/O, no globals, never logs; outputs untouched on
 * failure. */
#ifndef SPIN_REPORT_H
#define SPIN_REPORT_H

#include "dp-devices.h"
#include "kube-api.h"
#include "kube-events.h"
#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The agent's own Node labels: the only keys it ever sets or removes. */
#define REPORT_LABEL_READY "spinlane.io/ready"
#define REPORT_LABEL_NIC_KIND "spinlane.io/nic-kind"
#define REPORT_LABEL_NICS "spinlane.io/dpdk-nics"
#define REPORT_LABEL_CORES "spinlane.io/isolated-cores"
#define REPORT_LABEL_PIN_MODE "spinlane.io/pin-mode"
#define REPORT_N_LABELS 5

/* The kubelet CPU manager's checkpoint (under --root). */
#define REPORT_CPU_MANAGER_STATE "/var/lib/kubelet/cpu_manager_state"
#define REPORT_CPU_MANAGER_STATE_MAX (1024 * 1024)

typedef struct report_input {
        const verdict_list *verdicts;       /* NULL before the first scan */
        const device_list *nics, *cores; /* what the device plugins advertise */
        bool nic_registered, core_registered;
        const char *pin_mode;               /* report_pin_mode_parse(), NULL = unknown */
} report_input;

typedef struct report_labels {
        kube_label l[REPORT_N_LABELS]; /* value NULL: the key must be absent */
        char values[REPORT_N_LABELS][64];
        size_t n;
} report_labels;

/* Ready: no node check fails, and both resources are advertised (their plugin is
 * registered with the kubelet and lists at least one Healthy device). Otherwise false
 * and why (one line) in why. */
bool report_node_ready(const report_input *in, char *why, size_t len);

/* Every label of ours, always REPORT_N_LABELS of them:
 *   spinlane.io/ready           "true" | "false" (report_node_ready)
 *   spinlane.io/nic-kind        the kind of the Healthy NICs: "ena", "mana", or "mixed";
 *                               absent when there is none
 *   spinlane.io/dpdk-nics       Healthy NICs advertised
 *   spinlane.io/isolated-cores  Healthy isolated cores advertised
 *   spinlane.io/pin-mode        "kubelet-pinned" (static CPU manager), "spinlane-pinned"
 *                               (CPU manager none), "unknown" (no readable checkpoint);
 *                               "none" without a Healthy isolated core */
void report_node_labels(const report_input *in, report_labels *ret);

/* The node verdicts reduced to what Events need: per check, its level and its line. */
typedef struct report_check {
        char check[KEV_CHECK_MAX];
        verdict_level level;
        char line[KUBE_NOTE_MAX + 1]; /* "FAIL id: message; remedy: ..." cut at 1024 bytes */
} report_check;
typedef struct report_checks {
        report_check *items;
        size_t n;
} report_checks;
#define REPORT_MAX_CHECKS 128

/* The verdict's human line, as verdict_print() writes it (without the newline), cut to
 * len - 1 bytes at a UTF-8 boundary. */
void report_verdict_line(const verdict *v, char *buf, size_t len);
/* -ENOMEM, -E2BIG beyond REPORT_MAX_CHECKS. */
int report_checks_from(const verdict_list *l, report_checks *ret);
void report_checks_free(report_checks *c);

typedef struct report_event {
        char check[KEV_CHECK_MAX];
        const char *type;  /* "Warning" | "Normal" (static strings) */
        char reason[KUBE_REASON_MAX + 1];
        char note[KUBE_NOTE_MAX + 1];
} report_event;
#define REPORT_MAX_EVENTS REPORT_MAX_CHECKS

/* The Events of a change from old (NULL: the first verdicts) to now, in now's order, then
 * the vanished checks:
 *   a check that fails now and did not (or is new)  Warning "<Check>Failed", its line
 *   a check still failing with another line         Warning "<Check>Failed", the new line
 *   a check that failed and does not now            Normal "<Check>Recovered", its line
 *   a check that failed and is gone                 Normal "<Check>Recovered", "<id>: no longer checked"
 *   kernel-args warning now and not before (or with another line): Warning "KernelArgsPending"
 *   (its WARN asks for a reboot), Normal "KernelArgsRecovered" when it stops warning
 * Checks whose id cannot become a reason are left out. ret holds REPORT_MAX_EVENTS. */
size_t report_events(const report_checks *old, const report_checks *now, report_event *ret);

/* The pinning mode from the CPU manager checkpoint ({"policyName": "static" | "none", ...}):
 * "kubelet-pinned" or "spinlane-pinned"; another policy gives "unknown". -EBADMSG for text
 * that is not such a checkpoint, -E2BIG beyond REPORT_CPU_MANAGER_STATE_MAX. */
int report_pin_mode_parse(const char *text, size_t len, const char **ret);

/* --metrics-bind-address: "0" (off), ":PORT" (every address, IPv6 and IPv4), "IPv4:PORT",
 * "[IPv6]:PORT" or "localhost:PORT" (127.0.0.1); PORT 1..65535. -EINVAL with a message. */
typedef struct report_bind {
        bool off;
        bool any;        /* ":PORT" */
        int family;      /* AF_INET or AF_INET6 when !any */
        uint8_t addr[16];
        uint16_t port;
} report_bind;
int report_bind_parse(const char *s, report_bind *ret, char *err, size_t err_size);
/* The same for another option: its name (e.g. "--health-probe-bind-address") starts the
 * message. */
int report_bind_parse_named(const char *name, const char *s, report_bind *ret, char *err, size_t err_size);
/* A loopback address (127.0.0.0/8 or ::1), not ":PORT". */
bool report_bind_is_loopback(const report_bind *b);

/* A Prometheus label value, escaped (\\, \", \n) and cut to fit len (never in the middle
 * of an escape or a UTF-8 sequence). Bytes below 0x20 other than \n become '?'. */
void report_prom_escape(const char *s, char *buf, size_t len);

#endif
