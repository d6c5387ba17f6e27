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

/* OpenSSL option bits (SSL_OP_NO_*) for lws_context_creation_info.ssl_options_set that refuse every protocol older
 * than TLS 1.2, or older than TLS 1.3 when `tls13_only` is nonzero. */
long cairn_lws_tls_refuse_older_than(int tls13_only);

/*
 * The libev event loop the server runs lws on (epoll on Linux) instead of lws' built-in poll(). The loop is
 * ours ("foreign" to lws): we create it, hand it to lws at context creation, turn it once per service-loop turn,
 * and destroy it after lws_context_destroy. `struct ev_loop` stays opaque so Swift never imports ev.h.
 */
void *cairn_ev_loop_new(void);
/* Name of the loop's kernel backend ("epoll", "poll", ...), for the log. */
const char *cairn_ev_backend_name(void *loop);
/* Asks lws to run on `loop`: sets LWS_SERVER_OPTION_LIBEV and info->foreign_loops to `slot` (which must stay
 * valid until lws_create_context returns) holding the loop. */
void cairn_lws_info_use_libev(struct lws_context_creation_info *info, void **slot, void *loop);
/* One turn: waits for at least one event (socket, timer, lws_cancel_service) and dispatches what is ready.
 * Returns nonzero while the loop still has active watchers. */
int cairn_ev_run_once(void *loop);
/* Lets lws finish what its last close calls left on the loop (bounded), then frees the loop. */
void cairn_ev_loop_destroy(void *loop);

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
