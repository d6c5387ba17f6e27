// The floor under fan-out: what one delivery costs when the kernel does nothing else. A hub's fan-out ends in a
// write() of a small frame (~120 bytes, like a position event) to one of thousands of sockets; this program does
// only that, so the figure is the machine's, not a server's. N loopback TCP connections; a writer thread pinned to
// one core writes to each connection in turn (TCP_NODELAY, as Cairn and Mosquitto set it), k messages per write();
// a reader thread pinned to another core drains the receiving ends through epoll. It reports the writer's CPU
// (CLOCK_THREAD_CPUTIME_ID) per write and per message, the reader's CPU per message, the whole process's per
// message (getrusage: io_uring's kernel workers included), and messages per second.
//
// With --uring N (built with -DFLOOR_URING and -luring, Debian's liburing-dev) the writer does not call write():
// it queues N sends (IORING_OP_SEND, one per connection, same bytes) and submits them with one io_uring_enter,
// waiting for their N completions: what a loop turn's frames for N connections would cost in one submission.
//
//   cc -O2 -Wall -pthread -o floor floor.c                      (add -DFLOOR_URING ... -luring for --uring)
//   ./floor --connections 1000 --batch 4 --seconds 3 [--size 120] [--uring 64] [--writer-cpu 0] [--reader-cpu 1]
//           [--json]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef FLOOR_URING
#include <liburing.h>
#endif

static int connections = 1000, batch = 1, msg_size = 120, writer_cpu = 0, reader_cpu = 1, json = 0, uring = 0;
static double seconds = 3;
static int *wfd, *rfd;
static atomic_uint_fast64_t bytes_written, bytes_read;
static atomic_int writer_done;

static double now(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void pin(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
        fprintf(stderr, "floor: cannot pin to %d\n", cpu);
}

// Opens `connections` loopback TCP connections: wfd[i] is the writing (client) end, rfd[i] the accepted end.
static void open_pairs(void) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0) die("socket");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
    if (listen(listener, 4096) < 0) die("listen");
    socklen_t len = sizeof addr;
    getsockname(listener, (struct sockaddr *)&addr, &len);
    wfd = calloc(connections, sizeof(int));
    rfd = calloc(connections, sizeof(int));
    int one = 1;
    for (int i = 0; i < connections; i++) {
        wfd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (wfd[i] < 0) die("socket");
        if (connect(wfd[i], (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        setsockopt(wfd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        rfd[i] = accept(listener, NULL, NULL);
        if (rfd[i] < 0) die("accept");
    }
    close(listener);
}

static double writer_cpu_s, writer_wall_s;
static uint64_t writes_done;

// Round-robin over the connections, one write() of `batch` messages each, until the time is up. Blocking sockets:
// if the reader falls behind, the writer sleeps in the kernel, which costs it no CPU (and shows in messages/s).
static void *writer(void *arg) {
    (void)arg;
    pin(writer_cpu);
    size_t chunk = (size_t)msg_size * batch;
    char *buf = malloc(chunk);
    for (size_t i = 0; i < chunk; i++) buf[i] = (i % msg_size == msg_size - 1) ? '\n' : 'a' + (i % 26);
    double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_THREAD_CPUTIME_ID), deadline = wall0 + seconds;
    uint64_t writes = 0, total = 0;
#ifdef FLOOR_URING
    struct io_uring ring;
    if (uring > 0) {
        int rc = io_uring_queue_init((unsigned)uring, &ring, 0);
        if (rc < 0) {
            errno = -rc;
            die("io_uring_queue_init");
        }
    }
    while (uring > 0 && now(CLOCK_MONOTONIC) < deadline) {
        for (int i = 0; i < connections;) {
            int queued = 0;
            for (; queued < uring && i < connections; queued++, i++) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                if (sqe == NULL) {
                    errno = EBUSY;
                    die("io_uring_get_sqe");
                }
                // MSG_WAITALL: a short send is retried by the kernel, as write() on a blocking socket would block.
                io_uring_prep_send(sqe, wfd[i], buf, chunk, MSG_WAITALL);
            }
            int rc = io_uring_submit_and_wait(&ring, (unsigned)queued);
            if (rc < 0) {
                errno = -rc;
                die("io_uring_submit_and_wait");
            }
            if (rc != queued) {
                errno = EAGAIN;
                die("io_uring_submit_and_wait (not every send was submitted)");
            }
            struct io_uring_cqe *cqe;
            for (int c = 0; c < queued; c++) {
                if (io_uring_wait_cqe(&ring, &cqe) < 0) die("io_uring_wait_cqe");
                if (cqe->res != (int)chunk) {
                    errno = cqe->res < 0 ? -cqe->res : EIO;
                    die("send");
                }
                io_uring_cqe_seen(&ring, cqe);
                total += chunk;
                writes++;
            }
        }
    }
    if (uring > 0) io_uring_queue_exit(&ring);
#endif
    while (uring == 0 && now(CLOCK_MONOTONIC) < deadline) {
        for (int i = 0; i < connections; i++) {
            ssize_t n = write(wfd[i], buf, chunk);
            if (n != (ssize_t)chunk) die("write");
            total += (uint64_t)n;
            writes++;
        }
    }
    writer_cpu_s = now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    writer_wall_s = now(CLOCK_MONOTONIC) - wall0;
    writes_done = writes;
    atomic_store(&bytes_written, total);
    atomic_store(&writer_done, 1);
    free(buf);
    return NULL;
}

static double reader_cpu_s;

// Drains every receiving end through one epoll set until it has read everything the writer wrote.
static void *reader(void *arg) {
    (void)arg;
    pin(reader_cpu);
    int ep = epoll_create1(0);
    for (int i = 0; i < connections; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = rfd[i]};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, rfd[i], &ev) < 0) die("epoll_ctl");
    }
    static char buf[1 << 16];
    struct epoll_event events[1024];
    double cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
    uint64_t total = 0;
    for (;;) {
        if (atomic_load(&writer_done) && total >= atomic_load(&bytes_written)) break;
        int n = epoll_wait(ep, events, 1024, 50);
        for (int e = 0; e < n; e++) {
            ssize_t r = read(events[e].data.fd, buf, sizeof buf);
            if (r > 0) total += (uint64_t)r;
            else if (r == 0 || (errno != EAGAIN && errno != EINTR)) die("read");
        }
    }
    reader_cpu_s = now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    atomic_store(&bytes_read, total);
    close(ep);
    return NULL;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) { json = 1; continue; }
        if (!v) { fprintf(stderr, "floor: %s needs a value\n", a); return 2; }
        if (!strcmp(a, "--connections")) connections = atoi(v);
        else if (!strcmp(a, "--batch")) batch = atoi(v);
        else if (!strcmp(a, "--size")) msg_size = atoi(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--writer-cpu")) writer_cpu = atoi(v);
        else if (!strcmp(a, "--reader-cpu")) reader_cpu = atoi(v);
        else if (!strcmp(a, "--uring")) uring = atoi(v);
        else { fprintf(stderr, "floor: unknown option %s\n", a); return 2; }
        i++;
    }
    if (connections < 1 || batch < 1 || msg_size < 2 || seconds <= 0 || uring < 0 || uring > 4096) {
        fprintf(stderr, "floor: bad arguments\n");
        return 2;
    }
#ifndef FLOOR_URING
    if (uring > 0) {
        fprintf(stderr, "floor: --uring needs a build with -DFLOOR_URING -luring (liburing-dev)\n");
        return 2;
    }
#endif
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)connections * 2 + 16 > rl.rlim_cur) {
        fprintf(stderr, "floor: %d connections need %d descriptors, the limit is %lu\n", connections,
                connections * 2 + 16, (unsigned long)rl.rlim_cur);
        return 2;
    }
    open_pairs();
    struct rusage usage0, usage1;
    getrusage(RUSAGE_SELF, &usage0);
    pthread_t w, r;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    getrusage(RUSAGE_SELF, &usage1);
    double process_cpu_s = (usage1.ru_utime.tv_sec - usage0.ru_utime.tv_sec + usage1.ru_stime.tv_sec -
                            usage0.ru_stime.tv_sec) + (usage1.ru_utime.tv_usec - usage0.ru_utime.tv_usec +
                                                       usage1.ru_stime.tv_usec - usage0.ru_stime.tv_usec) / 1e6;
    uint64_t messages = writes_done * (uint64_t)batch;
    double us_per_write = writer_cpu_s * 1e6 / writes_done, us_per_msg = writer_cpu_s * 1e6 / messages;
    double reader_us = reader_cpu_s * 1e6 / messages, rate = messages / writer_wall_s;
    double process_us = process_cpu_s * 1e6 / messages;
    if (atomic_load(&bytes_read) != atomic_load(&bytes_written)) {
        fprintf(stderr, "floor: read %llu of %llu bytes\n", (unsigned long long)atomic_load(&bytes_read),
                (unsigned long long)atomic_load(&bytes_written));
        return 1;
    }
    if (json)
        printf("{\"connections\":%d,\"batch\":%d,\"size\":%d,\"uring\":%d,\"writes\":%llu,\"messages\":%llu,"
               "\"writer_us_per_write\":%.3f,\"writer_us_per_message\":%.3f,\"reader_us_per_message\":%.3f,"
               "\"process_us_per_message\":%.3f,\"messages_per_second\":%.0f}\n",
               connections, batch, msg_size, uring, (unsigned long long)writes_done, (unsigned long long)messages,
               us_per_write, us_per_msg, reader_us, process_us, rate);
    else
        printf("connections %6d  k %2d  uring %4d  writes %9llu  writer %6.2f us/write %6.2f us/msg  reader %6.2f "
               "us/msg  process %6.2f us/msg  %9.0f msg/s\n",
               connections, batch, uring, (unsigned long long)writes_done, us_per_write, us_per_msg, reader_us,
               process_us, rate);
    return 0;
}
