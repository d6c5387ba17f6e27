// ingest-latency: the ingest benchmark's latency half. N trackers report through `/v1/ingest/osmand` at a fixed rate
// each (default 1,000 trackers x 1 Hz: one request every millisecond, spread evenly), over a few keep-alive HTTP
// connections, while one watcher, a WebSocket of the trackers' owner after `items.watch`, receives `item.pos`. Each
// push is matched to its report by (item, ts): ts is unique per tracker and the send instant of each report is
// remembered, so the figure is exact wall time from writing the request to reading the push, both in this process.
// When every connection is busy a due report waits for one (the hub is behind): the lag behind the schedule and the
// latency from the scheduled instant are reported too, so that queueing in the tester does not hide a slow hub.
//
// One thread, one epoll loop; a timerfd paces the reports on an absolute schedule, so a slow machine delays sends
// (reported as lag behind the schedule) but never changes what is sent or how it is matched. The run is bounded: it
// sends for --duration seconds, drains for at most --drain seconds, and a hard deadline ends it in any case.
//
// Usage: ingest-latency --port P --devices FILE [--token TOKEN_FILE] [--trackers N] [--rate HZ] [--duration S]
//                       [--warmup S] [--drain S] [--connections C]
// FILE has lines "device key item lat lon" (setup.py writes it; lat lon: the tracker's start); TOKEN_FILE defaults
// to FILE.token.
// Exit status: 0 when every report was answered 200 and every measured one reached the watcher; 1 otherwise;
// 2 on a setup failure (no hub, bad files, refused watch).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <math.h>

#include "../common/ws_frame.h"

#define RING 8
#define MAX_CONNS 256

typedef struct {
    char device[80];
    char key[96];
    long item;
    double lat, lon, heading;
    int64_t last_ts;
    // The last RING reports: their ts, send instant, whether they count, whether their push arrived.
    int64_t ring_ts[RING];
    int64_t ring_sent[RING];
    int64_t ring_due[RING];
    char ring_measured[RING];
    char ring_delivered[RING];
    int ring_next;
} Tracker;

typedef struct {
    int fd;
    int busy;
    int tracker;
    int measured;
    int64_t sent_ns;
    char in[16384];
    size_t inlen;
} HttpConn;

static int port = 0;
static const char *devices_path = NULL;
static const char *token_path = NULL;
static int n_trackers = 0;
static double rate_hz = 1.0;
static double duration_s = 30, warmup_s = 2, drain_s = 3;
static int n_conns = 64;

static Tracker *trackers;
static int tracker_count;
static long *item_index; // item id -> tracker index + 1
static long max_item;
static HttpConn conns[MAX_CONNS];
static int epfd;

// Figures.
static int64_t *push_lat, *push_from_due, *http_lat, *lag;
static size_t push_n, http_n, lag_n, cap_samples;
static long sent, sent_measured, answers_200, answers_other, http_errors, reconnects, queued, unmatched_pushes;
static long delivered_measured, delivered_late_unmeasured, statuses[600];

static _Noreturn void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ingest-latency: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static int64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t wall_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void load_devices(void) {
    FILE *f = fopen(devices_path, "r");
    if (!f) die("cannot open %s", devices_path);
    int cap = 1024;
    trackers = calloc(cap, sizeof(Tracker));
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (tracker_count == cap) {
            cap *= 2;
            trackers = realloc(trackers, cap * sizeof(Tracker));
            memset(trackers + tracker_count, 0, (cap - tracker_count) * sizeof(Tracker));
        }
        Tracker *t = &trackers[tracker_count];
        if (sscanf(line, "%79s %95s %ld %lf %lf", t->device, t->key, &t->item, &t->lat, &t->lon) != 5) continue;
        t->heading = uniform() * 2 * M_PI;
        if (t->item > max_item) max_item = t->item;
        tracker_count++;
    }
    fclose(f);
    if (n_trackers == 0) n_trackers = tracker_count;
    if (n_trackers > tracker_count) die("%s has %d trackers, %d asked", devices_path, tracker_count, n_trackers);
    item_index = calloc(max_item + 1, sizeof(long));
    for (int i = 0; i < n_trackers; i++) item_index[trackers[i].item] = i + 1;
}

static int connect_loopback(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect 127.0.0.1:%d: %s", port, strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            // Loopback buffers are large and requests small; wait briefly rather than queueing.
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (w <= 0) die("write: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

// MARK: The watcher's WebSocket

static int ws_fd;
static char *ws_buf;
static size_t ws_len, ws_cap;
static char *ws_msg;
static size_t ws_msg_len, ws_msg_cap;
static int watch_ready;

static void ws_send(int opcode, const char *payload, size_t n) {
    char frame[16 + 4096];
    if (n > 4096) die("frame too large");
    size_t h = 0;
    frame[h++] = (char)(0x80 | opcode);
    if (n < 126) {
        frame[h++] = (char)(0x80 | n);
    } else {
        frame[h++] = (char)(0x80 | 126);
        frame[h++] = (char)(n >> 8);
        frame[h++] = (char)(n & 0xff);
    }
    unsigned char mask[4];
    for (int i = 0; i < 4; i++) mask[i] = (unsigned char)(uniform() * 256);
    memcpy(frame + h, mask, 4);
    h += 4;
    for (size_t i = 0; i < n; i++) frame[h + i] = (char)(payload[i] ^ mask[i % 4]);
    write_all(ws_fd, frame, h + n);
}

static long json_long(const char *line, const char *key) {
    const char *p = strstr(line, key);
    if (!p) return -1;
    return strtol(p + strlen(key), NULL, 10);
}

static void on_push_line(const char *line, int64_t now) {
    if (strstr(line, "\"ev\":\"item.pos\"")) {
        long item = json_long(line, "\"item\":");
        long long ts = (long long)json_long(line, "\"ts\":");
        if (item <= 0 || item > max_item || item_index[item] == 0) {
            unmatched_pushes++;
            return;
        }
        Tracker *t = &trackers[item_index[item] - 1];
        for (int i = 0; i < RING; i++) {
            if (t->ring_ts[i] == ts && !t->ring_delivered[i]) {
                t->ring_delivered[i] = 1;
                if (t->ring_measured[i]) {
                    push_from_due[push_n] = now - t->ring_due[i];
                    push_lat[push_n++] = now - t->ring_sent[i];
                    delivered_measured++;
                } else {
                    delivered_late_unmeasured++;
                }
                return;
            }
        }
        unmatched_pushes++;
    } else if (strstr(line, "\"id\":1,") || strstr(line, "\"id\":1}")) {
        if (!strstr(line, "\"ok\":true")) die("items.watch refused: %s", line);
        watch_ready = 1;
    }
}

static void on_text_message(char *msg, size_t n, int64_t now) {
    msg[n] = 0;
    char *save = NULL;
    for (char *line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) on_push_line(line, now);
}

static void ws_append_msg(const char *p, size_t n) {
    if (ws_msg_len + n + 1 > ws_msg_cap) {
        ws_msg_cap = (ws_msg_len + n + 1) * 2;
        ws_msg = realloc(ws_msg, ws_msg_cap);
    }
    memcpy(ws_msg + ws_msg_len, p, n);
    ws_msg_len += n;
}

static void ws_read(int64_t now) {
    for (;;) {
        if (ws_cap - ws_len < 65536) {
            ws_cap = ws_cap * 2 + 65536;
            ws_buf = realloc(ws_buf, ws_cap);
        }
        ssize_t r = read(ws_fd, ws_buf + ws_len, ws_cap - ws_len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) die("the hub closed the watcher's connection");
        ws_len += (size_t)r;
    }
    size_t off = 0;
    for (;;) {
        unsigned char *p = (unsigned char *)ws_buf + off;
        size_t avail = ws_len - off;
        struct ws_frame f;
        if (!ws_frame_header(p, avail, &f)) break;
        int fin = f.fin, opcode = f.opcode, masked = f.masked;
        uint64_t len = f.len;
        size_t h = f.header;
        const unsigned char *mask = f.mask;
        if (avail < h + len) break;
        char *payload = (char *)p + h;
        if (masked)
            for (uint64_t i = 0; i < len; i++) payload[i] ^= mask[i % 4];
        if (opcode == 1 || opcode == 0) {
            ws_append_msg(payload, len);
            if (fin) {
                on_text_message(ws_msg, ws_msg_len, now);
                ws_msg_len = 0;
            }
        } else if (opcode == 9) {
            ws_send(10, payload, len);
        } else if (opcode == 8) {
            die("the hub closed the watcher (close frame)");
        }
        off += h + len;
    }
    memmove(ws_buf, ws_buf + off, ws_len - off);
    ws_len -= off;
}

static void ws_open(void) {
    char token[512];
    FILE *f = fopen(token_path, "r");
    if (!f || !fgets(token, sizeof token, f)) die("cannot read the token from %s", token_path);
    fclose(f);
    token[strcspn(token, "\r\n")] = 0;
    ws_fd = connect_loopback();
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "GET /ws?token=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: ZGlzdGluY3QtYmVuY2gta2V5\r\nSec-WebSocket-Version: 13\r\n"
                     "Sec-WebSocket-Protocol: cairn.v1\r\n\r\n",
                     token, port);
    write_all(ws_fd, req, (size_t)n);
    char head[4096];
    size_t got = 0;
    while (got < sizeof head - 1) {
        ssize_t r = read(ws_fd, head + got, sizeof head - 1 - got);
        if (r <= 0) die("the hub closed the WebSocket upgrade");
        got += (size_t)r;
        head[got] = 0;
        if (strstr(head, "\r\n\r\n")) break;
    }
    if (strncmp(head, "HTTP/1.1 101", 12) != 0) die("WebSocket upgrade refused: %.80s", head);
    char *end = strstr(head, "\r\n\r\n") + 4;
    ws_cap = 65536 + (size_t)(head + got - end);
    ws_buf = malloc(ws_cap);
    ws_len = (size_t)(head + got - end);
    memcpy(ws_buf, end, ws_len);
    set_nonblocking(ws_fd);
    const char *watch = "{\"id\":1,\"op\":\"items.watch\"}";
    ws_send(1, watch, strlen(watch));
}

// MARK: The trackers' HTTP connections

static void conn_open(HttpConn *c) {
    c->fd = connect_loopback();
    set_nonblocking(c->fd);
    c->busy = 0;
    c->inlen = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(c - conns) + 2};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl: %s", strerror(errno));
}

static void conn_reopen(HttpConn *c) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    reconnects++;
    conn_open(c);
}

// Sends tracker `i`'s next report on connection `c`.
static void send_report(HttpConn *c, int i, int measured, int64_t due) {
    Tracker *t = &trackers[i];
    int64_t ts = wall_ms();
    if (ts <= t->last_ts) ts = t->last_ts + 1;
    if (t->last_ts > 0) {
        double metres = 1.4 * (double)(ts - t->last_ts) / 1000.0;
        t->heading += (uniform() - 0.5) * 0.3;
        t->lat += metres * cos(t->heading) / 111320.0;
        t->lon += metres * sin(t->heading) / (111320.0 * cos(t->lat * M_PI / 180.0));
    }
    t->last_ts = ts;
    char req[768];
    int n = snprintf(req, sizeof req,
                     "GET /v1/ingest/osmand?id=%s&key=%s&lat=%.7f&lon=%.7f&timestamp=%lld&speed=2.7&accuracy=8 "
                     "HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
                     t->device, t->key, t->lat, t->lon, (long long)ts, port);
    int slot = t->ring_next;
    t->ring_next = (slot + 1) % RING;
    t->ring_ts[slot] = ts;
    t->ring_measured[slot] = (char)measured;
    t->ring_delivered[slot] = 0;
    c->busy = 1;
    c->tracker = i;
    c->measured = measured;
    int64_t now = mono_ns();
    t->ring_sent[slot] = now;
    t->ring_due[slot] = due;
    c->sent_ns = now;
    write_all(c->fd, req, (size_t)n);
    sent++;
    if (measured) {
        sent_measured++;
        lag[lag_n++] = now - due;
    }
}

// Reports waiting for a free connection (all busy when they fell due).
typedef struct {
    int tracker;
    int measured;
    int64_t due;
} Pending;
static Pending *pending;
static size_t pending_head, pending_tail;

static HttpConn *free_conn(void) {
    static int next = 0;
    for (int k = 0; k < n_conns; k++) {
        HttpConn *c = &conns[(next + k) % n_conns];
        if (!c->busy) {
            next = (next + k + 1) % n_conns;
            return c;
        }
    }
    return NULL;
}

static void dispatch(int tracker, int measured, int64_t due) {
    HttpConn *c = free_conn();
    if (c) {
        send_report(c, tracker, measured, due);
    } else {
        pending[pending_tail++] = (Pending){tracker, measured, due};
        queued++;
    }
}

static void conn_read(HttpConn *c, int64_t now) {
    for (;;) {
        ssize_t r = read(c->fd, c->in + c->inlen, sizeof c->in - 1 - c->inlen);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) {
            if (c->busy) {
                http_errors++;
                c->busy = 0;
            }
            conn_reopen(c);
            return;
        }
        c->inlen += (size_t)r;
        if (c->inlen >= sizeof c->in - 1) die("an HTTP answer larger than %zu bytes", sizeof c->in);
    }
    for (;;) {
        c->in[c->inlen] = 0;
        char *end = strstr(c->in, "\r\n\r\n");
        if (!end) return;
        size_t head = (size_t)(end + 4 - c->in);
        int status = 0;
        if (sscanf(c->in, "HTTP/1.%*d %d", &status) != 1) die("not an HTTP answer: %.60s", c->in);
        long length = 0;
        int close_after = 0;
        for (char *line = strstr(c->in, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2) {
            if (strncasecmp(line, "Content-Length:", 15) == 0) length = strtol(line + 15, NULL, 10);
            if (strncasecmp(line, "Transfer-Encoding:", 18) == 0) die("chunked answers are not expected");
            if (strncasecmp(line, "Connection:", 11) == 0) {
                char *close_word = strcasestr(line, "close");
                close_after = close_word && close_word < strstr(line, "\r\n");
            }
        }
        if (c->inlen < head + (size_t)length) return;
        if (status >= 0 && status < 600) statuses[status]++;
        if (status == 200) {
            answers_200++;
        } else {
            answers_other++;
            if (answers_other <= 5)
                fprintf(stderr, "ingest-latency: answer %d: %.*s\n", status, (int)length, c->in + head);
        }
        if (c->busy && c->measured) http_lat[http_n++] = now - c->sent_ns;
        c->busy = 0;
        memmove(c->in, c->in + head + length, c->inlen - head - (size_t)length);
        c->inlen -= head + (size_t)length;
        if (close_after) {
            conn_reopen(c);
            break;
        }
        if (c->inlen == 0) break;
    }
    if (pending_head < pending_tail && !c->busy) {
        Pending p = pending[pending_head++];
        send_report(c, p.tracker, p.measured, p.due);
    }
}

// MARK: Figures

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pct_ms(int64_t *v, size_t n, double p) {
    if (n == 0) return NAN;
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    return (double)v[rank - 1] / 1e6;
}

static void print_dist(const char *name, int64_t *v, size_t n) {
    qsort(v, n, sizeof *v, cmp64);
    printf("%-34s n=%zu  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f ms\n", name, n, pct_ms(v, n, 50),
           pct_ms(v, n, 90), pct_ms(v, n, 99), pct_ms(v, n, 99.9), n ? (double)v[n - 1] / 1e6 : NAN);
}

static double cpu_seconds(const struct rusage *r) {
    double us = (double)(r->ru_utime.tv_usec + r->ru_stime.tv_usec);
    return (double)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) + us / 1e6;
}

static void usage(void) {
    fprintf(stderr, "usage: ingest-latency --port P --devices FILE [--token FILE] [--trackers N] [--rate HZ]\n"
                    "       [--duration S] [--warmup S] [--drain S] [--connections C]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--devices")) devices_path = v;
        else if (!strcmp(a, "--token")) token_path = v;
        else if (!strcmp(a, "--trackers")) n_trackers = atoi(v);
        else if (!strcmp(a, "--rate")) rate_hz = atof(v);
        else if (!strcmp(a, "--duration")) duration_s = atof(v);
        else if (!strcmp(a, "--warmup")) warmup_s = atof(v);
        else if (!strcmp(a, "--drain")) drain_s = atof(v);
        else if (!strcmp(a, "--connections")) n_conns = atoi(v);
        else usage();
    }
    if (port <= 0 || !devices_path || rate_hz <= 0 || duration_s <= 0 || n_conns < 1 || n_conns > MAX_CONNS) usage();
    static char default_token[1024];
    if (!token_path) {
        snprintf(default_token, sizeof default_token, "%s.token", devices_path);
        token_path = default_token;
    }
    load_devices();

    int64_t slot_ns = (int64_t)(1e9 / rate_hz / n_trackers);
    long slots = (long)(duration_s * rate_hz * n_trackers);
    long warm_slots = (long)(warmup_s * rate_hz * n_trackers);
    cap_samples = (size_t)slots + 16;
    push_lat = malloc(cap_samples * sizeof(int64_t));
    push_from_due = malloc(cap_samples * sizeof(int64_t));
    http_lat = malloc(cap_samples * sizeof(int64_t));
    lag = malloc(cap_samples * sizeof(int64_t));
    pending = malloc(cap_samples * sizeof(Pending));

    epfd = epoll_create1(EPOLL_CLOEXEC);
    ws_open();
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
    epoll_ctl(epfd, EPOLL_CTL_ADD, ws_fd, &ev);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    ev.data.u64 = 1;
    epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);
    for (int i = 0; i < n_conns; i++) conn_open(&conns[i]);

    // Wait for the watch to be confirmed (its reply carries every item's latest position).
    int64_t give_up = mono_ns() + 10 * 1000000000ll;
    struct epoll_event evs[64];
    while (!watch_ready) {
        if (mono_ns() > give_up) die("no answer to items.watch within 10 s");
        int n = epoll_wait(epfd, evs, 64, 100);
        for (int k = 0; k < n; k++)
            if (evs[k].data.u64 == 0) ws_read(mono_ns());
    }

    struct rusage ru0;
    getrusage(RUSAGE_SELF, &ru0);
    // Start on a clean schedule shortly after the watch is in place.
    int64_t t0 = mono_ns() + 200 * 1000000ll;
    int64_t send_end = t0 + slots * slot_ns;
    int64_t drain_end = send_end + (int64_t)(drain_s * 1e9);
    int64_t hard_end = drain_end + 5 * 1000000000ll;
    long next_slot = 0;
    for (;;) {
        int64_t now = mono_ns();
        while (next_slot < slots && t0 + next_slot * slot_ns <= now) {
            int64_t due = t0 + next_slot * slot_ns;
            dispatch((int)(next_slot % n_trackers), next_slot >= warm_slots, due);
            next_slot++;
        }
        int all_sent = next_slot == slots && pending_head == pending_tail;
        if (all_sent) {
            int busy = 0;
            for (int i = 0; i < n_conns; i++) busy |= conns[i].busy;
            if ((!busy && delivered_measured == sent_measured) || now >= drain_end) break;
        }
        if (now > hard_end) break;
        int64_t wake = next_slot < slots ? t0 + next_slot * slot_ns : now + 10 * 1000000ll;
        struct itimerspec its = {{0, 0}, {wake / 1000000000, wake % 1000000000}};
        timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
        int n = epoll_wait(epfd, evs, 64, 1000);
        int64_t at = mono_ns();
        for (int k = 0; k < n; k++) {
            uint64_t id = evs[k].data.u64;
            if (id == 0) {
                ws_read(at);
            } else if (id == 1) {
                uint64_t expirations;
                (void)!read(tfd, &expirations, sizeof expirations);
            } else {
                conn_read(&conns[id - 2], at);
            }
        }
    }
    int64_t t_end = mono_ns();
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    double cpu = cpu_seconds(&ru1) - cpu_seconds(&ru0);

    printf("trackers %d x %.2f Hz for %.0f s (first %.0f s not measured), %d keep-alive connections, 1 watcher\n",
           n_trackers, rate_hz, duration_s, warmup_s, n_conns);
    printf("reports sent %ld (measured %ld); answers 200: %ld, other: %ld, connection errors: %ld, reconnects: %ld\n",
           sent, sent_measured, answers_200, answers_other, http_errors, reconnects);
    printf("item.pos delivered %ld of %ld measured (%.2f%%); unmatched pushes %ld\n", delivered_measured,
           sent_measured, sent_measured ? 100.0 * (double)delivered_measured / (double)sent_measured : 0.0,
           unmatched_pushes);
    print_dist("ingest -> watcher item.pos:", push_lat, push_n);
    print_dist("ingest -> HTTP 200:", http_lat, http_n);
    print_dist("send lag behind schedule:", lag, lag_n);
    print_dist("schedule -> watcher item.pos:", push_from_due, push_n);
    printf("reports that waited for a free connection: %ld\n", queued);
    printf("tester CPU during the run: %.2f s (%.1f%% of one core)\n", cpu, 100.0 * cpu / ((double)(t_end - t0) / 1e9));
    return (answers_other == 0 && http_errors == 0 && delivered_measured == sent_measured &&
            answers_200 == sent) ? 0 : 1;
}
