/* SPDX-License-Identifier: Apache-2.0 */
/* The one reply of spinlane's libmicrohttpd servers (the agent's metrics and probe
 * listener, spinlane-stat): a body with its content type, never cached, and the Allow
 * header on a 405. */
#ifndef SPIN_HTTPD_REPLY_H
#define SPIN_HTTPD_REPLY_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* Queues status with body[0..len) as ctype. owned: body came from malloc and is freed
 * with the response (or here, when the response cannot be made); else it must outlive
 * the connection (a static string). MHD_NO when the response cannot be made or queued. */
enum MHD_Result httpd_reply(struct MHD_Connection *c, unsigned status, const char *ctype, char *body, size_t len,
                            bool owned);

#endif
