/* SPDX-License-Identifier: Apache-2.0 */
/* The device plugin's request handling, as bytes in and bytes out: decode an untrusted
 * protobuf request from the kubelet, validate it against the device list, build the
 * packed response (or a status naming the offending ID). Hard limits on sizes and
 * counts; no I/O, no globals, never logs. Also encodes the messages the plugin sends. */
#ifndef SPIN_DP_REQUEST_H
#define SPIN_DP_REQUEST_H

#include "dp-devices.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_MAX_REQUEST (1024 * 1024) /* bytes of one request message */
#define DP_MAX_CONTAINERS 64         /* container requests in one request */
#define DP_MAX_IDS_PER_REQUEST 4096  /* device IDs over all containers of one request */

/* gRPC status codes used here (same numbers as grpc_status_code). */
#define DP_STATUS_OK 0
#define DP_STATUS_INVALID_ARGUMENT 3
#define DP_STATUS_RESOURCE_EXHAUSTED 8
#define DP_STATUS_INTERNAL 13

typedef struct dp_status {
        int code;               /* DP_STATUS_* */
        char message[512];
} dp_status;

/* What a container is given besides the per-device facts. */
typedef struct dp_alloc_config {
        char prefix[64];                        /* resource prefix, "spinlane.io" */
        char hugepage_host_dir[DP_PATH_LEN];    /* host's hugetlbfs mount; "" = no mount */
        char hugepage_container_dir[DP_PATH_LEN];
        bool cdi;                               /* answer with cdi_devices instead of DeviceSpecs/Mounts */
        /* Cores only: NUMA nodes (bit n = node n, n < 64) that hold healthy DPDK NICs;
         * GetPreferredAllocation prefers them when otherwise equal. */
        uint64_t numa_with_nics;
} dp_alloc_config;

/* Fill cfg with the defaults (prefix spinlane.io, hugetlbfs /dev/hugepages both sides,
 * CDI off). */
void dp_alloc_config_default(dp_alloc_config *cfg);

/* Allocate: req/len is an AllocateRequest. Returns 0 with a malloc'ed AllocateResponse
 * in *ret_buf, *ret_len; -EINVAL when the request is refused (st filled: which ID, why;
 * nothing is allocated); -ENOMEM. Outputs untouched on failure. */
int dp_handle_allocate(device_kind kind, const dp_alloc_config *cfg, const device_list *devices,
                       const uint8_t *req, size_t len, dp_status *st, uint8_t **ret_buf,
                       size_t *ret_len);

/* GetPreferredAllocation: honours must_include, packs on one NUMA node when it can,
 * whole devices only, deterministic (same list + request = same answer). */
int dp_handle_preferred(device_kind kind, const dp_alloc_config *cfg, const device_list *devices,
                        const uint8_t *req, size_t len, dp_status *st, uint8_t **ret_buf,
                        size_t *ret_len);

/* PreStartContainer (not required by this plugin; answered with an empty response after
 * the request was decoded and checked). */
int dp_handle_prestart(const device_list *devices, const uint8_t *req, size_t len, dp_status *st,
                       uint8_t **ret_buf, size_t *ret_len);

/* The environment Allocate gives a container for the devices idx[0..n) of devices (of
 * kind): the same builder, so a DRA claim's CDI spec carries exactly the device plugin's
 * SPINLANE_* contract. *ret is a malloc'ed array of n_ret malloc'ed "KEY=VALUE" strings
 * (free with dp_env_free). idx is not changed. 0 or -ENOMEM (outputs untouched). */
int dp_alloc_env(device_kind kind, const dp_alloc_config *cfg, const device_list *devices, const size_t *idx,
                 size_t n, char ***ret, size_t *ret_n);
void dp_env_free(char **env, size_t n);

/* Empty (GetDevicePluginOptions, ListAndWatch): any decodable Empty is accepted. */
int dp_check_empty(const uint8_t *req, size_t len, dp_status *st);

/* Encoders for what the plugin sends. */
int dp_encode_list(const device_list *devices, uint8_t **ret_buf, size_t *ret_len);
int dp_encode_options(bool preferred_available, uint8_t **ret_buf, size_t *ret_len);
int dp_encode_register(const char *resource_name, const char *endpoint, bool preferred_available,
                       uint8_t **ret_buf, size_t *ret_len);

/* Render an untrusted ID for a message: printable ASCII kept, others as \xNN, cut at 63
 * input bytes with "...". Always NUL-terminates buf (size >= 8). */
void dp_format_id(const char *id, size_t len, char *buf, size_t size);

#endif
