/*
 * Cairn's window onto libpq, PostgreSQL's C client (Debian's libpq-dev), for the shared store of several nodes.
 * Swift imports libpq-fe.h through this header; the shim adds only a notice processor that keeps libpq from
 * printing the server's NOTICE lines on stderr. Behaviour belongs in Swift, not here.
 */
#ifndef CAIRN_PQ_H
#define CAIRN_PQ_H

#include <postgresql/libpq-fe.h>

/* Drops the server's notices (e.g. "relation already exists, skipping") instead of printing them. */
void cairn_pq_silence_notices(PGconn *conn);

#endif
