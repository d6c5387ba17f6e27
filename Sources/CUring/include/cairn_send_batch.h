/*
 * One io_uring submission for the frames a loop turn writes to many sockets. The transport writes each
 * connection's frame into room the batch reserves (`cairn_send_batch_reserve`, then `cairn_send_batch_commit`; or
 * copies bytes in with `cairn_send_batch_add`), then `cairn_send_batch_submit` hands them all to the
 * kernel with one system call instead of one send() each. Every send is non-blocking (MSG_DONTWAIT): a socket that
 * cannot take all of its bytes reports how many it took, and the transport passes the rest to libwebsockets, which
 * buffers it as it does for any partial send. Keep this file thin: behaviour belongs in Swift, not here.
 */
#ifndef CAIRN_SEND_BATCH_H
#define CAIRN_SEND_BATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct cairn_send_batch cairn_send_batch;

enum {
    /* The result of an entry the kernel never took (the submission itself failed). */
    CAIRN_SEND_NOT_SUBMITTED = INT32_MIN,
    /* The result of an entry the kernel took but whose completion could not be read: its bytes may or may not
     * have gone out, so its stream can no longer be trusted. */
    CAIRN_SEND_UNKNOWN = INT32_MIN + 1,
};

/* A batch of at most `entries` sends holding at most `bytes` bytes in all, or NULL with `*error` set to the errno
 * (ENOSYS or EPERM where the kernel or a seccomp filter refuses io_uring, EINVAL where its rings cannot send, ENOMEM).
 * A ring that cannot carry one test send over a socket pair is refused here rather than failing every frame later. */
cairn_send_batch *cairn_send_batch_create(unsigned entries, size_t bytes, int *error);
void cairn_send_batch_destroy(cairn_send_batch *batch);

/* Copies `length` bytes to send on `fd`; returns the entry's index, or -1 when the batch has no room for them (or is
 * broken by a failed submission). */
int cairn_send_batch_add(cairn_send_batch *batch, int fd, const void *bytes, size_t length);

/* Room for an entry of `length` bytes, written in place: the caller fills it, then commits it. NULL when the batch has
 * no room (or is broken). What is written there is kept only once committed; a commit of at most `length` bytes
 * right after a successful reserve always succeeds. */
uint8_t *cairn_send_batch_reserve(cairn_send_batch *batch, size_t length);

/* Makes the `length` bytes at the room last reserved an entry to send on `fd`; returns its index, or -1 as add does.
 * `length` must not exceed what was reserved. */
int cairn_send_batch_commit(cairn_send_batch *batch, int fd, size_t length);

/* Entries added since the last reset. */
unsigned cairn_send_batch_count(const cairn_send_batch *batch);

/* Submits every entry and waits for each one's result (non-blocking sends complete at once). Returns 0, or a
 * negative errno when the submission failed: entries the kernel did not take then read CAIRN_SEND_NOT_SUBMITTED,
 * entries taken whose result could not be read
 * CAIRN_SEND_UNKNOWN, and the batch refuses all further use (add returns -1, submit -EBADFD). */
int cairn_send_batch_submit(cairn_send_batch *batch);

/* After submit: bytes the send of entry `index` took, or a negative errno (-EAGAIN: none), or
 * CAIRN_SEND_NOT_SUBMITTED. */
int32_t cairn_send_batch_result(const cairn_send_batch *batch, unsigned index);

/* The copy of entry `index`'s bytes (valid until reset), for passing on what a send did not take. */
const uint8_t *cairn_send_batch_bytes(const cairn_send_batch *batch, unsigned index);
size_t cairn_send_batch_length(const cairn_send_batch *batch, unsigned index);

/* The most bytes one batch holds: a larger frame cannot go through a batch at all. */
size_t cairn_send_batch_capacity_bytes(const cairn_send_batch *batch);

/* Forgets every entry, keeping the memory. */
void cairn_send_batch_reset(cairn_send_batch *batch);

#endif
