/*
 * Cairn's window onto libwebsockets. Swift imports most of libwebsockets.h directly; what it cannot import
 * (LWS_PRE, the 64-bit option macros, the variadic lwsl_* loggers) is re-exported here as plain functions.
 * Keep this file thin: behaviour belongs in Swift, not here.
 */
#ifndef CAIRN_LWS_H
#define CAIRN_LWS_H

#include <libwebsockets.h>
#include <stdint.h>

/* Headroom lws needs in front of every payload passed to lws_write(). */
int cairn_lws_pre(void);

/* Context/vhost option bits (lws_context_creation_info.options). */
uint64_t cairn_lws_opt_validate_utf8(void);
uint64_t cairn_lws_opt_do_ssl_global_init(void);
uint64_t cairn_lws_opt_disable_ipv6(void);
uint64_t cairn_lws_opt_libuv(void);

/* Log levels as a mask (LLL_ERR | LLL_WARN | ...), and a sink that receives every line lws emits. */
int cairn_lws_log_mask(int verbosity);
typedef void (*cairn_lws_log_sink)(int level, const char *line);
void cairn_lws_set_logging(int mask, cairn_lws_log_sink sink);

/* Accessors for fields of lws_protocols and the upgrade headers that are awkward from Swift. */
int cairn_lws_header_length(struct lws *wsi, int token);
int cairn_lws_token_get_uri(void);
int cairn_lws_token_authorization(void);
int cairn_lws_token_protocol(void);

#endif
