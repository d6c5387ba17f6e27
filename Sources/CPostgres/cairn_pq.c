/* See include/cairn_pq.h. */
#include "cairn_pq.h"

static void cairn_pq_drop_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

void cairn_pq_silence_notices(PGconn *conn) {
    PQsetNoticeProcessor(conn, cairn_pq_drop_notice, 0);
}
