/* SPDX-License-Identifier: Apache-2.0 */
#include "httpd-reply.h"

#include <stdlib.h>

enum MHD_Result httpd_reply(struct MHD_Connection *c, unsigned status, const char *ctype, char *body, size_t len,
                            bool owned)
{
        struct MHD_Response *r = owned ? MHD_create_response_from_buffer_with_free_callback(len, body, free)
                                       : MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
        if (!r) {
                if (owned)
                        free(body);
                return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        enum MHD_Result q = MHD_queue_response(c, status, r);
        MHD_destroy_response(r);
        return q;
}
