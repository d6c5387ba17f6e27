/*
 * One io_uring submission for the frames a loop turn writes to many sockets (see cairn_send_batch.h). The sends
 * carry MSG_DONTWAIT, so the kernel never parks one to wait for room: each completes during the submission, with
 * the bytes the socket took or -EAGAIN, and the wait that follows returns at once.
 */
#include "cairn_send_batch.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct cairn_send_batch {
    struct io_uring ring;
    unsigned capacity;
    unsigned count;
    size_t arena_size;
    size_t used;
    uint8_t *arena;
    size_t *offsets;
    size_t *lengths;
    int32_t *results;
    /* A submission failed: entries may be left in the ring, so the batch refuses all further use. */
    int broken;
};

/* Whether the ring carries a send: one byte over a socket pair. A kernel that sets up rings but lacks the send
 * operation (before 5.6) or refuses it would otherwise fail every frame of every connection. */
static int probe_send(struct io_uring *ring) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) return errno;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    int error = 0;
    if (sqe == NULL) {
        error = EBUSY;
    } else {
        static const uint8_t byte = 0x2A;
        io_uring_prep_send(sqe, pair[0], &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        struct io_uring_cqe *cqe;
        int status = io_uring_submit_and_wait(ring, 1);
        if (status < 0) {
            error = -status;
        } else if ((status = io_uring_wait_cqe(ring, &cqe)) < 0) {
            error = -status;
        } else {
            if (cqe->res != 1) error = cqe->res < 0 ? -cqe->res : EIO;
            io_uring_cqe_seen(ring, cqe);
        }
    }
    close(pair[0]);
    close(pair[1]);
    return error;
}

cairn_send_batch *cairn_send_batch_create(unsigned entries, size_t bytes, int *error) {
    cairn_send_batch *batch = calloc(1, sizeof *batch);
    if (batch == NULL) {
        *error = ENOMEM;
        return NULL;
    }
    batch->arena = malloc(bytes);
    batch->offsets = calloc(entries, sizeof *batch->offsets);
    batch->lengths = calloc(entries, sizeof *batch->lengths);
    batch->results = calloc(entries, sizeof *batch->results);
    if (batch->arena == NULL || batch->offsets == NULL || batch->lengths == NULL || batch->results == NULL) {
        *error = ENOMEM;
        goto fail;
    }
    int status = io_uring_queue_init(entries, &batch->ring, 0);
    if (status < 0) {
        *error = -status;
        goto fail;
    }
    status = probe_send(&batch->ring);
    if (status != 0) {
        io_uring_queue_exit(&batch->ring);
        *error = status;
        goto fail;
    }
    batch->capacity = entries;
    batch->arena_size = bytes;
    return batch;
fail:
    free(batch->arena);
    free(batch->offsets);
    free(batch->lengths);
    free(batch->results);
    free(batch);
    return NULL;
}

void cairn_send_batch_destroy(cairn_send_batch *batch) {
    if (batch == NULL) return;
    io_uring_queue_exit(&batch->ring);
    free(batch->arena);
    free(batch->offsets);
    free(batch->lengths);
    free(batch->results);
    free(batch);
}

uint8_t *cairn_send_batch_reserve(cairn_send_batch *batch, size_t length) {
    if (batch->broken || batch->count == batch->capacity || length > batch->arena_size - batch->used) return NULL;
    /* So that the commit that follows cannot fail for want of a submission slot. */
    if (io_uring_sq_space_left(&batch->ring) == 0) return NULL;
    return batch->arena + batch->used;
}

int cairn_send_batch_commit(cairn_send_batch *batch, int fd, size_t length) {
    if (batch->broken || batch->count == batch->capacity || length > batch->arena_size - batch->used) return -1;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&batch->ring);
    if (sqe == NULL) return -1;
    unsigned index = batch->count++;
    io_uring_prep_send(sqe, fd, batch->arena + batch->used, length, MSG_DONTWAIT | MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, index);
    batch->offsets[index] = batch->used;
    batch->lengths[index] = length;
    batch->results[index] = CAIRN_SEND_NOT_SUBMITTED;
    batch->used += length;
    return (int)index;
}

int cairn_send_batch_add(cairn_send_batch *batch, int fd, const void *bytes, size_t length) {
    uint8_t *room = cairn_send_batch_reserve(batch, length);
    if (room == NULL) return -1;
    memcpy(room, bytes, length);
    return cairn_send_batch_commit(batch, fd, length);
}

unsigned cairn_send_batch_count(const cairn_send_batch *batch) { return batch->count; }

int cairn_send_batch_submit(cairn_send_batch *batch) {
    if (batch->broken) return -EBADFD;
    unsigned submitted = 0;
    int failure = 0;
    while (submitted < batch->count) {
        int taken = io_uring_submit_and_wait(&batch->ring, batch->count - submitted);
        if (taken < 0) {
            if (taken == -EINTR) continue;
            failure = taken;
            break;
        }
        if (taken == 0) {
            failure = -EIO;
            break;
        }
        submitted += (unsigned)taken;
    }
    for (unsigned reaped = 0; reaped < submitted;) {
        struct io_uring_cqe *cqe;
        int status = io_uring_wait_cqe(&batch->ring, &cqe);
        if (status == -EINTR) continue;
        if (status < 0) {
            for (unsigned index = 0; index < batch->count; index++) {
                if (batch->results[index] == CAIRN_SEND_NOT_SUBMITTED && index < submitted) {
                    batch->results[index] = CAIRN_SEND_UNKNOWN;
                }
            }
            batch->broken = 1;
            return status;
        }
        uint64_t index = io_uring_cqe_get_data64(cqe);
        if (index < batch->count) batch->results[index] = cqe->res;
        io_uring_cqe_seen(&batch->ring, cqe);
        reaped++;
    }
    if (failure != 0) batch->broken = 1;
    return failure;
}

int32_t cairn_send_batch_result(const cairn_send_batch *batch, unsigned index) { return batch->results[index]; }

const uint8_t *cairn_send_batch_bytes(const cairn_send_batch *batch, unsigned index) {
    return batch->arena + batch->offsets[index];
}

size_t cairn_send_batch_length(const cairn_send_batch *batch, unsigned index) { return batch->lengths[index]; }

size_t cairn_send_batch_capacity_bytes(const cairn_send_batch *batch) { return batch->arena_size; }

void cairn_send_batch_reset(cairn_send_batch *batch) {
    batch->count = 0;
    batch->used = 0;
}
