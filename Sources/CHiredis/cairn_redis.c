/* Implementation of include/cairn_redis.h: compiles hiredis's inline libev adapter and wraps ev_timer. */
#include "cairn_redis.h"
#include <ev.h>
#include <hiredis/adapters/libev.h>
#include <poll.h>
#include <stdlib.h>

int cairn_redis_attach_libev(void *loop, redisAsyncContext *ac) {
    return redisLibevAttach((struct ev_loop *)loop, ac);
}

int cairn_redis_err(const redisAsyncContext *ac) { return ac->err; }
const char *cairn_redis_errstr(const redisAsyncContext *ac) { return ac->errstr ? ac->errstr : ""; }

int cairn_redis_flush(redisAsyncContext *ac, int timeout_ms) {
    redisContext *c = &ac->c;
    int done = 0;
    for (int i = 0; i < 64 && !done; i++) {
        if (redisBufferWrite(c, &done) == REDIS_ERR) return -1;
        if (!done) {
            struct pollfd p = {c->fd, POLLOUT, 0};
            if (poll(&p, 1, timeout_ms) <= 0) return -1;
        }
    }
    return done ? 0 : -1;
}

typedef struct cairn_ev_timer {
    ev_timer watcher; /* first: the callback casts back */
    void *owner;
    cairn_ev_timer_fn fn;
} cairn_ev_timer;

static void cairn_ev_timer_fired(struct ev_loop *loop, ev_timer *w, int revents) {
    (void)loop;
    (void)revents;
    cairn_ev_timer *t = (cairn_ev_timer *)w;
    t->fn(t->owner);
}

void *cairn_ev_timer_new(void *owner, cairn_ev_timer_fn fn) {
    cairn_ev_timer *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->owner = owner;
    t->fn = fn;
    ev_timer_init(&t->watcher, cairn_ev_timer_fired, 0., 0.);
    return t;
}

void cairn_ev_timer_set_owner(void *timer, void *owner) { ((cairn_ev_timer *)timer)->owner = owner; }

void cairn_ev_timer_start(void *loop, void *timer, double after, double repeat) {
    cairn_ev_timer *t = (cairn_ev_timer *)timer;
    ev_timer_stop((struct ev_loop *)loop, &t->watcher);
    ev_timer_set(&t->watcher, after, repeat);
    ev_timer_start((struct ev_loop *)loop, &t->watcher);
}

void cairn_ev_timer_stop(void *loop, void *timer) {
    ev_timer_stop((struct ev_loop *)loop, &((cairn_ev_timer *)timer)->watcher);
}

void cairn_ev_timer_free(void *loop, void *timer) {
    if (!timer) return;
    cairn_ev_timer_stop(loop, timer);
    free(timer);
}
