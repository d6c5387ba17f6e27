// places-qps: the native client of the places benchmark (docs/BENCHMARKS.md, "Side by side with Redis"). The
// Python client of redis-compare.py spends most of its core decoding Cairn's JSON replies, so what it reports is the
// client's speed, not the servers'. This one asks the same query centres of Redis and of Cairn from one thread (pinned
// to one core), with every request preformatted before the clock starts, and reads the replies with a light scan:
//
//   Redis: `GEOSEARCH places FROMLONLAT lon lat BYRADIUS r m ASC COUNT k WITHDIST`, B commands per write on one
//          connection; every RESP reply is parsed completely (arrays, bulk strings, integers, errors), must be an
//          array, and its elements are counted.
//   Cairn: `places.nearest {lat, lon, radius, limit}`, B newline-separated requests per masked WebSocket text frame
//          (subprotocol cairn.v1) after `login`; every reply line must carry `"ok":true`, and its places are counted
//          by the occurrences of `"place":` (the id key of each place in the answer).
//
// A window of D batches may be outstanding (D = 1: send a batch, wait for all its replies, as the Python client
// does). Rounds alternate Redis and Cairn so that both see the same machine. For each round: queries per second,
// results received, the client's own CPU (getrusage) and the server's CPU per query (utime + stime of its process
// from /proc/PID/stat, all threads) when its pid is given. The last line is a JSON summary (medians over rounds).
//
// Usage: places-qps --centres FILE [--redis PORT --redis-pid PID] [--cairn PORT --cairn-pid PID]
//                   [--username U --password P] [--batch B] [--depth D] [--radius M] [--limit K] [--rounds N]
//                   [--warmup N] [--cpu C]
// FILE has one "lat lon" per line; both are sent as written. Build: cc -O2 -Wall -o places-qps places-qps.c
// Exit status: 0 when every reply was well formed and ok; 1 on any failure.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/ws_frame.h"

static _Noreturn void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "places-qps: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double own_cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// utime + stime of a process (all its threads), in seconds; -1 without a pid.
static double process_cpu_s(long pid) {
    if (pid <= 0) return -1;
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) die("cannot parse %s", path);
    // After ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15)
    unsigned long long utime = 0, stime = 0;
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        die("cannot parse %s", path);
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static int connect_loopback(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect 127.0.0.1:%d: %s", port, strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

// A growable byte buffer.
typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static void buf_reserve(Buf *b, size_t more) {
    if (b->len + more <= b->cap) return;
    b->cap = (b->len + more) * 2 + 65536;
    b->p = realloc(b->p, b->cap);
    if (!b->p) die("out of memory");
}

static void buf_add(Buf *b, const void *p, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

// Reads what the socket has (blocking until at least one byte) onto the end of `b`.
static void read_some(int fd, Buf *b, const char *who) {
    buf_reserve(b, 1 << 20);
    for (;;) {
        ssize_t r = read(fd, b->p + b->len, b->cap - b->len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("%s closed the connection (%s)", who, r < 0 ? strerror(errno) : "end of stream");
        b->len += (size_t)r;
        return;
    }
}

// MARK: Options and centres

static const char *centres_path;
static int redis_port, cairn_port;
static long redis_pid, cairn_pid;
static const char *username = "bench", *password = "password1";
static int batch = 100, depth = 1, limit = 20, rounds = 3, warmup = 2000, cpu = -1;
static const char *radius = "100000";

static char (*lats)[32], (*lons)[32];
static int n_centres;

static void load_centres(void) {
    FILE *f = fopen(centres_path, "r");
    if (!f) die("cannot open %s", centres_path);
    int cap = 65536;
    lats = malloc((size_t)cap * 32);
    lons = malloc((size_t)cap * 32);
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (n_centres == cap) {
            cap *= 2;
            lats = realloc(lats, (size_t)cap * 32);
            lons = realloc(lons, (size_t)cap * 32);
        }
        if (sscanf(line, "%31s %31s", lats[n_centres], lons[n_centres]) == 2) n_centres++;
    }
    fclose(f);
    if (n_centres == 0) die("no centres in %s", centres_path);
}

// A run's requests, preformatted: batch i is bytes [offsets[i], offsets[i + 1]) of data, holding counts[i] requests.
typedef struct {
    Buf data;
    size_t *offsets;
    int *counts;
    int n_batches;
} Batches;

static void batches_init(Batches *b, int n) {
    memset(b, 0, sizeof *b);
    int max = (n + batch - 1) / batch;
    b->offsets = calloc((size_t)max + 1, sizeof(size_t));
    b->counts = calloc((size_t)max, sizeof(int));
}

static void batches_close(Batches *b, int count) {
    b->counts[b->n_batches] = count;
    b->offsets[++b->n_batches] = b->data.len;
}

// MARK: Redis

static void resp_arg(Buf *b, const char *s) {
    char head[32];
    size_t n = strlen(s);
    int h = snprintf(head, sizeof head, "$%zu\r\n", n);
    buf_add(b, head, (size_t)h);
    buf_add(b, s, n);
    buf_add(b, "\r\n", 2);
}

static void redis_batches(Batches *out, int first, int n) {
    batches_init(out, n);
    char count[16];
    snprintf(count, sizeof count, "%d", limit);
    for (int i = 0; i < n; i += batch) {
        int k = n - i < batch ? n - i : batch;
        for (int j = 0; j < k; j++) {
            int c = (first + i + j) % n_centres;
            const char *args[] = {"GEOSEARCH", "places", "FROMLONLAT", lons[c], lats[c], "BYRADIUS", radius,
                                  "m",         "ASC",    "COUNT",      count,   "WITHDIST"};
            buf_add(&out->data, "*12\r\n", 5);
            for (int a = 0; a < 12; a++) resp_arg(&out->data, args[a]);
        }
        batches_close(out, k);
    }
}

// Reads a decimal integer ending in CRLF at p; returns the position after the CRLF, or NULL when incomplete.
static const char *resp_line_int(const char *p, const char *end, long *value) {
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr || cr + 1 >= end) return NULL;
    if (cr[1] != '\n') die("malformed RESP line");
    char *e;
    *value = strtol(p, &e, 10);
    if (e != cr) die("malformed RESP integer: %.20s", p);
    return cr + 2;
}

// Parses one complete RESP value at p: returns the position after it, or NULL when the buffer ends inside it.
// An error reply is fatal. For arrays, `elements` (when given) receives the element count.
static const char *resp_value(const char *p, const char *end, long *elements) {
    if (p >= end) return NULL;
    char type = *p++;
    long n;
    switch (type) {
    case '+':
    case '-': {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return NULL;
        if (type == '-') die("Redis error: %.*s", (int)(nl - p), p);
        return nl + 1;
    }
    case ':':
        return resp_line_int(p, end, &n);
    case '$':
        p = resp_line_int(p, end, &n);
        if (!p) return NULL;
        if (n < 0) return p;
        if (end - p < n + 2) return NULL;
        if (p[n] != '\r' || p[n + 1] != '\n') die("malformed RESP bulk string");
        return p + n + 2;
    case '*':
        p = resp_line_int(p, end, &n);
        if (!p) return NULL;
        if (elements) *elements = n;
        for (long i = 0; i < n; i++) {
            p = resp_value(p, end, NULL);
            if (!p) return NULL;
        }
        return p;
    default:
        die("unexpected RESP type byte 0x%02x", (unsigned char)type);
    }
}

// Consumes the complete replies at the start of b: returns how many, adding their elements to *results.
static int redis_replies(Buf *b, long *results) {
    const char *p = b->p, *end = b->p + b->len;
    int got = 0;
    for (;;) {
        if (p < end && *p != '*' && *p != '-') die("a GEOSEARCH reply is not an array: %.40s", p);
        long elements = 0;
        const char *next = resp_value(p, end, &elements);
        if (!next) break;
        *results += elements;
        got++;
        p = next;
    }
    size_t used = (size_t)(p - b->p);
    memmove(b->p, p, b->len - used);
    b->len -= used;
    return got;
}

// MARK: Cairn (WebSocket)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t random32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

// Appends one masked text frame carrying payload.
static void ws_frame(Buf *b, const char *payload, size_t n) {
    unsigned char h[14];
    size_t k = 0;
    h[k++] = 0x81;
    if (n < 126) {
        h[k++] = (unsigned char)(0x80 | n);
    } else if (n < 65536) {
        h[k++] = 0x80 | 126;
        h[k++] = (unsigned char)(n >> 8);
        h[k++] = (unsigned char)n;
    } else {
        h[k++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--) h[k++] = (unsigned char)((uint64_t)n >> (8 * i));
    }
    uint32_t m = random32();
    unsigned char mask[4] = {(unsigned char)m, (unsigned char)(m >> 8), (unsigned char)(m >> 16),
                             (unsigned char)(m >> 24)};
    memcpy(h + k, mask, 4);
    k += 4;
    buf_add(b, h, k);
    buf_reserve(b, n);
    char *dst = b->p + b->len;
    for (size_t i = 0; i < n; i++) dst[i] = (char)(payload[i] ^ mask[i & 3]);
    b->len += n;
}

static long next_id = 100;

static void cairn_batches(Batches *out, int first, int n) {
    batches_init(out, n);
    Buf text = {0};
    for (int i = 0; i < n; i += batch) {
        int k = n - i < batch ? n - i : batch;
        text.len = 0;
        for (int j = 0; j < k; j++) {
            int c = (first + i + j) % n_centres;
            char line[256];
            int len = snprintf(line, sizeof line,
                               "%s{\"id\":%ld,\"op\":\"places.nearest\",\"lat\":%s,\"lon\":%s,\"radius\":%s,"
                               "\"limit\":%d}",
                               j ? "\n" : "", next_id++, lats[c], lons[c], radius, limit);
            buf_add(&text, line, (size_t)len);
        }
        ws_frame(&out->data, text.p, text.len);
        batches_close(out, k);
    }
    free(text.p);
}

// Buffers of the Cairn connection: raw bytes from the socket, and the text message being reassembled.
static Buf ws_in, ws_msg;
static long cairn_events;
static int login_pending;

// Scans one text message (one or more reply lines): returns the replies, adding their places to *results.
static int cairn_message(const char *p, size_t n, long *results) {
    const char *end = p + n;
    int got = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t len = (size_t)(line_end - p);
        if (len > 0) {
            if (len > 6 && memcmp(p, "{\"ev\":", 6) == 0) {
                cairn_events++;
            } else if (login_pending) {
                if (!memmem(p, len, "\"ok\":true", 9)) die("login refused: %.*s", (int)(len < 300 ? len : 300), p);
                login_pending = 0;
            } else {
                if (!memmem(p, len, "\"ok\":true", 9)) die("a reply is not ok: %.*s", (int)(len < 300 ? len : 300), p);
                got++;
                for (const char *q = p; (q = memmem(q, (size_t)(line_end - q), "\"place\":", 8)); q += 8) (*results)++;
            }
        }
        p = line_end + (nl ? 1 : 0);
    }
    return got;
}

// Consumes the complete frames at the start of ws_in: returns the replies they complete.
static int cairn_replies(int fd, long *results) {
    size_t off = 0;
    int got = 0;
    for (;;) {
        unsigned char *p = (unsigned char *)ws_in.p + off;
        size_t avail = ws_in.len - off;
        struct ws_frame f;
        if (!ws_frame_header(p, avail, &f)) break;
        if (f.masked) die("the server sent a masked frame");
        int fin = f.fin, opcode = f.opcode;
        uint64_t len = f.len;
        size_t h = f.header;
        if (avail < h + len) break;
        const char *payload = (const char *)p + h;
        if (opcode == 1 || opcode == 0) {
            if (fin && ws_msg.len == 0) {
                got += cairn_message(payload, len, results);
            } else {
                buf_add(&ws_msg, payload, len);
                if (fin) {
                    got += cairn_message(ws_msg.p, ws_msg.len, results);
                    ws_msg.len = 0;
                }
            }
        } else if (opcode == 9) {
            Buf pong = {0};
            ws_frame(&pong, payload, len);
            pong.p[0] = (char)0x8A;
            write_all(fd, pong.p, pong.len);
            free(pong.p);
        } else if (opcode == 8) {
            int code = len >= 2 ? (p[h] << 8 | p[h + 1]) : 0;
            die("Cairn closed the WebSocket: %d %.*s", code, (int)(len > 2 ? len - 2 : 0), payload + 2);
        }
        off += h + len;
    }
    memmove(ws_in.p, ws_in.p + off, ws_in.len - off);
    ws_in.len -= off;
    return got;
}

static int cairn_open(void) {
    int fd = connect_loopback(cairn_port);
    char req[512];
    int n = snprintf(req, sizeof req,
                     "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: cGxhY2VzLXFwcy1iZW5jaA==\r\nSec-WebSocket-Version: 13\r\n"
                     "Sec-WebSocket-Protocol: cairn.v1\r\n\r\n",
                     cairn_port);
    write_all(fd, req, (size_t)n);
    Buf head = {0};
    char *end;
    for (;;) {
        read_some(fd, &head, "Cairn");
        buf_reserve(&head, 1);
        head.p[head.len] = 0;
        if ((end = strstr(head.p, "\r\n\r\n"))) break;
    }
    if (strncmp(head.p, "HTTP/1.1 101", 12) != 0) die("WebSocket upgrade refused: %.80s", head.p);
    end += 4;
    buf_add(&ws_in, end, (size_t)(head.p + head.len - end));
    free(head.p);
    // Log in; the reply is the first line with id 1.
    char login[256];
    n = snprintf(login, sizeof login, "{\"id\":1,\"op\":\"login\",\"username\":\"%s\",\"password\":\"%s\"}", username,
                 password);
    login_pending = 1;
    Buf frame = {0};
    ws_frame(&frame, login, (size_t)n);
    write_all(fd, frame.p, frame.len);
    free(frame.p);
    while (login_pending) {
        read_some(fd, &ws_in, "Cairn");
        long ignored = 0;
        cairn_replies(fd, &ignored);
    }
    return fd;
}

// MARK: Rounds

typedef struct {
    double qps, client_cpu, server_cpu_per_query, seconds;
    long results;
} Round;

// Runs the preformatted batches over fd with a window of `depth` batches, returning when every reply is in.
static Round run(int fd, Batches *b, int n, int is_redis, long server_pid) {
    Buf *in = is_redis ? &(Buf){0} : &ws_in;
    Round r = {0};
    double server0 = process_cpu_s(server_pid), cpu0 = own_cpu_s(), t0 = now_s();
    int sent_batches = 0, received = 0, sent = 0;
    while (received < n) {
        while (sent_batches < b->n_batches && sent_batches - (received / batch) < depth) {
            size_t from = b->offsets[sent_batches], to = b->offsets[sent_batches + 1];
            write_all(fd, b->data.p + from, to - from);
            sent += b->counts[sent_batches++];
        }
        read_some(fd, in, is_redis ? "Redis" : "Cairn");
        received += is_redis ? redis_replies(in, &r.results) : cairn_replies(fd, &r.results);
        if (received > sent) die("more replies than requests");
    }
    double t1 = now_s(), cpu1 = own_cpu_s(), server1 = process_cpu_s(server_pid);
    if (is_redis) free(in->p);
    r.seconds = t1 - t0;
    r.qps = n / r.seconds;
    r.client_cpu = (cpu1 - cpu0) / r.seconds;
    r.server_cpu_per_query = server_pid > 0 ? (server1 - server0) / n : -1;
    return r;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(Round *rs, int n, size_t field) {
    double v[64];
    for (int i = 0; i < n; i++) v[i] = *(double *)((char *)&rs[i] + field);
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void) {
    fprintf(stderr, "usage: places-qps --centres FILE [--redis PORT --redis-pid PID] [--cairn PORT --cairn-pid PID]\n"
                    "       [--username U --password P] [--batch B] [--depth D] [--radius M] [--limit K]\n"
                    "       [--rounds N] [--warmup N] [--cpu C]\n");
    exit(1);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        i++;
        if (!strcmp(a, "--centres")) centres_path = v;
        else if (!strcmp(a, "--redis")) redis_port = atoi(v);
        else if (!strcmp(a, "--redis-pid")) redis_pid = atol(v);
        else if (!strcmp(a, "--cairn")) cairn_port = atoi(v);
        else if (!strcmp(a, "--cairn-pid")) cairn_pid = atol(v);
        else if (!strcmp(a, "--username")) username = v;
        else if (!strcmp(a, "--password")) password = v;
        else if (!strcmp(a, "--batch")) batch = atoi(v);
        else if (!strcmp(a, "--depth")) depth = atoi(v);
        else if (!strcmp(a, "--radius")) radius = v;
        else if (!strcmp(a, "--limit")) limit = atoi(v);
        else if (!strcmp(a, "--rounds")) rounds = atoi(v);
        else if (!strcmp(a, "--warmup")) warmup = atoi(v);
        else if (!strcmp(a, "--cpu")) cpu = atoi(v);
        else usage();
    }
    if (!centres_path || (!redis_port && !cairn_port) || batch < 1 || depth < 1 || rounds < 1 || rounds > 64)
        usage();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity %d: %s", cpu, strerror(errno));
    }
    load_centres();
    int n = n_centres;
    int redis_fd = redis_port ? connect_loopback(redis_port) : -1;
    int cairn_fd = cairn_port ? cairn_open() : -1;
    Batches rb, cb;
    if (redis_port) redis_batches(&rb, 0, n);
    Round red[64], cai[64];
    // Warm-up: the end of the centres list, not timed.
    if (warmup > 0) {
        int w = warmup < n ? warmup : n;
        Batches wb;
        if (redis_port) {
            redis_batches(&wb, n - w, w);
            run(redis_fd, &wb, w, 1, 0);
            free(wb.data.p);
        }
        if (cairn_port) {
            cairn_batches(&wb, n - w, w);
            run(cairn_fd, &wb, w, 0, 0);
            free(wb.data.p);
        }
    }
    printf("places-qps: %d queries per round, batch %d, depth %d, radius %s m, limit %d, client on cpu %d\n", n, batch,
           depth, radius, limit, cpu >= 0 ? cpu : sched_getcpu());
    for (int round = 0; round < rounds; round++) {
        if (redis_port) {
            red[round] = run(redis_fd, &rb, n, 1, redis_pid);
            Round *r = &red[round];
            printf("round %d redis %10.0f q/s  %8ld results  client CPU %3.0f%%  server CPU %7.2f µs/query\n",
                   round + 1, r->qps, r->results, r->client_cpu * 100, r->server_cpu_per_query * 1e6);
        }
        if (cairn_port) {
            cairn_batches(&cb, 0, n);  // fresh ids each round
            cai[round] = run(cairn_fd, &cb, n, 0, cairn_pid);
            free(cb.data.p);
            Round *r = &cai[round];
            printf("round %d cairn %10.0f q/s  %8ld results  client CPU %3.0f%%  server CPU %7.2f µs/query\n",
                   round + 1, r->qps, r->results, r->client_cpu * 100, r->server_cpu_per_query * 1e6);
        }
        fflush(stdout);
    }
    printf("{\"queries\":%d,\"batch\":%d,\"depth\":%d,\"rounds\":%d", n, batch, depth, rounds);
    const char *names[] = {"redis", "cairn"};
    Round *sets[] = {red, cai};
    int on[] = {redis_port != 0, cairn_port != 0};
    for (int s = 0; s < 2; s++) {
        if (!on[s]) continue;
        printf(",\"%s\":{\"qps\":%.1f,\"client_cpu\":%.3f,\"server_cpu_per_query\":%.9f,\"results\":%ld,"
               "\"rounds_qps\":[",
               names[s], median(sets[s], rounds, offsetof(Round, qps)),
               median(sets[s], rounds, offsetof(Round, client_cpu)),
               median(sets[s], rounds, offsetof(Round, server_cpu_per_query)), sets[s][0].results);
        for (int i = 0; i < rounds; i++) printf("%s%.1f", i ? "," : "", sets[s][i].qps);
        printf("]}");
    }
    printf("}\n");
    return 0;
}
