/* SPDX-License-Identifier: Apache-2.0 */
/* Where the Kubernetes API server is and how to prove who we are: in-cluster (the
 * KUBERNETES_SERVICE_HOST/PORT values and the service-account directory) or a kubeconfig
 * (its current context: server, certificate-authority or -data, token or tokenFile).
 * kube_config_parse() and kube_config_in_cluster() are pure (text and strings in, value or
 * message out); kube_config_load() and kube_token_read() are the only file reads
 * (kube-config-load.c: in spinkube, not spinkube_pure). TLS is
 * always verified: a config without a CA is refused. Never logs; a token never appears in
 * a message. */
#ifndef SPIN_KUBE_CONFIG_H
#define SPIN_KUBE_CONFIG_H

#include <stddef.h>

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_TOKEN_MAX (16 * 1024) /* bytes of a bearer token (bound tokens are ~1 KiB) */
#define KUBE_ERR_LEN 512

typedef struct kube_config {
        char *server;     /* "https://host:port" (no trailing slash) */
        char *ca_file;    /* PEM file, or NULL when ca_pem is set */
        char *ca_pem;     /* PEM bytes (certificate-authority-data), or NULL */
        size_t ca_pem_len;
        char *token;      /* an inline token, or NULL */
        char *token_file; /* re-read by the client (tokens rotate), or NULL */
} kube_config;

/* Free what c holds and zero it (the inline token is wiped). Accepts NULL. */
void kube_config_clear(kube_config *c);
/* A deep copy. -ENOMEM. */
int kube_config_copy(const kube_config *c, kube_config *ret);

/* A kubeconfig (YAML, read by kube-yaml with libyaml, or JSON) of len bytes. Relative file paths in
 * it are taken relative to base_dir (the kubeconfig's directory, as kubectl does).
 * -EINVAL with a message naming the field: no current-context, a missing context, cluster
 * or user, a server that is not https://, no CA, no token or tokenFile, and what is not
 * supported: exec and auth-provider plugins, client certificates, username/password,
 * insecure-skip-tls-verify, tls-server-name, proxy-url. */
int kube_config_parse(const char *text, size_t len, const char *base_dir, kube_config *ret, char *err,
                      size_t err_size);

/* In-cluster: host and port are KUBERNETES_SERVICE_HOST and _PORT (an IPv6 host is
 * bracketed), sa_dir the service-account directory (NULL = KUBE_SA_DIR): its token and
 * ca.crt. -EINVAL when host or port is missing or malformed. */
int kube_config_in_cluster(const char *host, const char *port, const char *sa_dir, kube_config *ret,
                           char *err, size_t err_size);

/* Read and parse the kubeconfig at path (at most 1 MiB). */
int kube_config_load(const char *path, kube_config *ret, char *err, size_t err_size);

/* A token as it may be sent: trailing whitespace dropped; then 1..KUBE_TOKEN_MAX-1
 * printable ASCII bytes without spaces. -EBADMSG / -E2BIG otherwise. ret is new. */
int kube_token_check(const char *s, size_t len, char **ret);
/* Read the token file at path (e.g. the projected service-account token, whose ..data
 * symlink the kubelet swaps) and check it. -errno of the read, or as kube_token_check. */
int kube_token_read(const char *path, char **ret);

#endif
