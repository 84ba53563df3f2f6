/* SPDX-License-Identifier: Apache-2.0 */
/* The DRA kubelet plugin (driver spinlane.io): the pluginregistration service on the
 * registration socket in the kubelet's plugins_registry, and the DRAPlugin service, v1
 * and v1beta1, on the plugin's socket. Prepare reads each ResourceClaim through the
 * agent's API client (asynchronously: the loop never waits), maps its allocation results
 * of this driver and pool (the node) to the healthy devices last given, writes the claim's
 * CDI spec and the checkpoint of prepared claims; unprepare removes both. Served on
 * common/grpc's engine (one completion queue, its pump thread handing every completion to
 * the agent's loop): everything below runs on the loop thread. Never logs: messages go to
 * log_fn. */
#ifndef SPIN_DRA_PLUGIN_H
#define SPIN_DRA_PLUGIN_H

#include "dp-devices.h"
#include "dp-request.h"
#include "hostfs.h"
#include "kube-client.h"
#include "loop.h"

#include <stdbool.h>

#define DRA_REGISTRY_SOCKET "/var/lib/kubelet/plugins_registry/spinlane.io-reg.sock"
#define DRA_PLUGIN_SOCKET "/var/lib/kubelet/plugins/spinlane.io/dra.sock"
#define DRA_CHECKPOINT_DIR "/var/lib/spinlane/dra"
#define DRA_CHECKPOINT DRA_CHECKPOINT_DIR "/claims.json"
#define DRA_STOP_TIMEOUT_MS 3000
/* ResourceClaim reads in flight to the API server at once, across every prepare call; the
 * rest wait in a FIFO (at most DRA_MAX_QUEUED_READS: beyond, the claim fails at once,
 * saying so, and the kubelet asks again). A burst of prepares costs this many
 * connections, not one per claim. */
#define DRA_MAX_READS 8
#define DRA_MAX_QUEUED_READS 4096
/* Lines for refused calls and claims not prepared: at most this many per window, the
 * rest counted in one line. */
#define DRA_REFUSAL_LINES 20
#define DRA_REFUSAL_WINDOW_MS 10000u

typedef struct dra_plugin dra_plugin;

/* level: 0 info, 1 warning, 2 error. */
typedef void (*dra_log_fn)(int level, const char *msg, void *userdata);

typedef struct dra_plugin_options {
        loop *l;
        const hostfs *h;          /* copied */
        const char *node;         /* the pool; NULL or "": every prepare fails, saying so */
        kube_client *kube;        /* not owned; NULL: every prepare fails, saying so */
        const char *cdi_dir;      /* host path of the CDI specs ("/var/run/cdi") */
        bool nic, core;           /* the resources served through DRA */
        dra_log_fn log;
        void (*registration_changed)(void *userdata); /* optional: after dra_plugin_registered() changed */
        void *userdata;
} dra_plugin_options;

/* Loads the checkpoint (a corrupt one is logged: prepare fails for every claim then, and
 * the file is left for a person to look at), serves both sockets. */
int dra_plugin_new(const dra_plugin_options *o, dra_plugin **ret);
/* Stops serving (the sockets removed), cancels the calls, waits for them at most
 * DRA_STOP_TIMEOUT_MS. Accepts NULL. */
void dra_plugin_free(dra_plugin *p);

/* The kubelet's last NotifyRegistrationStatus said it registered the plugin. Accepts NULL. */
bool dra_plugin_registered(const dra_plugin *p);

/* The devices (copied) and the Allocate config whose environment the claims get. */
int dra_plugin_set_devices(dra_plugin *p, const device_list *nics, const device_list *cores,
                           const dp_alloc_config *cfg);

#endif
