/* The header of one WebSocket frame (RFC 6455, section 5.2), for the loadtest's plain-C clients
 * (ingest/ingest-latency.c, places/places-qps.c): both read server frames from a buffer and need the same
 * decoding of FIN, opcode, the 7/16/64-bit payload length and the optional mask, so it lives here once. */
#ifndef CAIRN_LOADTEST_WS_FRAME_H
#define CAIRN_LOADTEST_WS_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ws_frame {
    int fin;                 /* non-zero on the last fragment of a message */
    int opcode;              /* 0 continuation, 1 text, 8 close, 9 ping, 10 pong */
    int masked;              /* non-zero when a mask key follows the length */
    unsigned char mask[4];   /* the mask key (zero when not masked) */
    uint64_t len;            /* payload length */
    size_t header;           /* bytes before the payload */
};

/* Decodes the header at `p` (`avail` bytes there). Returns 1 when the header is complete (the payload may still
 * be short: check `avail < f->header + f->len`), 0 when more bytes are needed. */
static inline int ws_frame_header(const unsigned char *p, size_t avail, struct ws_frame *f) {
    if (avail < 2) return 0;
    f->fin = p[0] & 0x80;
    f->opcode = p[0] & 0x0f;
    f->masked = p[1] & 0x80;
    f->len = p[1] & 0x7f;
    f->header = 2;
    if (f->len == 126) {
        if (avail < 4) return 0;
        f->len = ((uint64_t)p[2] << 8) | p[3];
        f->header = 4;
    } else if (f->len == 127) {
        if (avail < 10) return 0;
        f->len = 0;
        for (int i = 0; i < 8; i++) f->len = (f->len << 8) | p[2 + i];
        f->header = 10;
    }
    memset(f->mask, 0, sizeof f->mask);
    if (f->masked) {
        if (avail < f->header + 4) return 0;
        memcpy(f->mask, p + f->header, 4);
        f->header += 4;
    }
    return 1;
}

#endif
