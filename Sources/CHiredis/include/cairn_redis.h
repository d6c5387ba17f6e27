/*
 * Cairn's window onto hiredis's async API on the hub's own libev loop. hiredis's libev adapter
 * (hiredis/adapters/libev.h) is made of static inline functions, so a C file must compile it: this shim does, and
 * exports attaching a context to a loop, the context's error text (a char array Swift sees as a tuple), and a
 * one-shot/repeating ev_timer whose callback carries an owner pointer. Behaviour belongs in Swift, not here.
 */
#ifndef CAIRN_REDIS_H
#define CAIRN_REDIS_H

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

/* Attaches `ac` to the libev loop `loop` (an opaque `struct ev_loop *`). Returns REDIS_OK or REDIS_ERR. */
int cairn_redis_attach_libev(void *loop, redisAsyncContext *ac);
/* The context's error code (0: none) and its text. */
int cairn_redis_err(const redisAsyncContext *ac);
const char *cairn_redis_errstr(const redisAsyncContext *ac);

/* At shutdown only: writes what the context still has to send, waiting up to `timeout_ms` per stalled write.
 * Returns 0 when everything was written. (Blocks the calling thread; the loop is stopping anyway.) */
int cairn_redis_flush(redisAsyncContext *ac, int timeout_ms);

/* An ev_timer with an owner pointer, allocated by the shim so Swift never imports ev.h. */
typedef void (*cairn_ev_timer_fn)(void *owner);
void *cairn_ev_timer_new(void *owner, cairn_ev_timer_fn fn);
void cairn_ev_timer_set_owner(void *timer, void *owner);
/* (Re)starts the timer: first after `after` seconds, then every `repeat` seconds (0: once). */
void cairn_ev_timer_start(void *loop, void *timer, double after, double repeat);
void cairn_ev_timer_stop(void *loop, void *timer);
/* Stops (if running) and frees the timer. */
void cairn_ev_timer_free(void *loop, void *timer);

#endif
