/* Implementation of the shim declared in include/cairn_lws.h: one line per export, no logic. */
#include "cairn_lws.h"
#include <ev.h>
#include <openssl/ssl.h>

int cairn_lws_pre(void) { return LWS_PRE; }

uint64_t cairn_lws_opt_validate_utf8(void) { return LWS_SERVER_OPTION_VALIDATE_UTF8; }
uint64_t cairn_lws_opt_do_ssl_global_init(void) { return LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT; }
uint64_t cairn_lws_opt_disable_ipv6(void) { return LWS_SERVER_OPTION_DISABLE_IPV6; }
uint64_t cairn_lws_opt_libuv(void) { return LWS_SERVER_OPTION_LIBUV; }

long cairn_lws_tls_refuse_older_than(int tls13_only) {
    long refused = (long)(SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1);
    return tls13_only ? refused | (long)SSL_OP_NO_TLSv1_2 : refused;
}

void *cairn_ev_loop_new(void) {
    /* epoll where the kernel has it; otherwise libev's own choice for the platform. */
    struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL);
    return loop ? loop : ev_loop_new(0);
}

const char *cairn_ev_backend_name(void *loop) {
    switch (ev_backend((struct ev_loop *)loop)) {
    case EVBACKEND_EPOLL: return "epoll";
    case EVBACKEND_POLL: return "poll";
    case EVBACKEND_SELECT: return "select";
    case EVBACKEND_KQUEUE: return "kqueue";
    default: return "other";
    }
}

void cairn_lws_info_use_libev(struct lws_context_creation_info *info, void **slot, void *loop) {
    *slot = loop;
    info->options |= LWS_SERVER_OPTION_LIBEV;
    info->foreign_loops = slot;
}

int cairn_ev_run_once(void *loop) { return ev_run((struct ev_loop *)loop, EVRUN_ONCE); }

void cairn_ev_loop_destroy(void *loop) {
    int budget = 1000;
    while (budget-- && ev_run((struct ev_loop *)loop, EVRUN_NOWAIT))
        ;
    ev_loop_destroy((struct ev_loop *)loop);
}

int cairn_lws_log_mask(int verbosity) {
    /* 0: errors only, 1: + warnings, 2: + notices, 3: + info. */
    int mask = LLL_ERR;
    if (verbosity >= 1) mask |= LLL_WARN;
    if (verbosity >= 2) mask |= LLL_NOTICE;
    if (verbosity >= 3) mask |= LLL_INFO;
    return mask;
}

void cairn_lws_set_logging(int mask, cairn_lws_log_sink sink) { lws_set_log_level(mask, sink); }

int cairn_lws_header_length(struct lws *wsi, int token) {
    return lws_hdr_total_length(wsi, (enum lws_token_indexes)token);
}
int cairn_lws_token_get_uri(void) { return WSI_TOKEN_GET_URI; }
int cairn_lws_token_authorization(void) { return WSI_TOKEN_HTTP_AUTHORIZATION; }
int cairn_lws_token_protocol(void) { return WSI_TOKEN_PROTOCOL; }
