// Types for cairn.js, Cairn's JavaScript client (docs/PROTOCOL.md is the wire protocol it speaks). Hand-written to
// match the module; cairn.js carries the same types as JSDoc.

/** A user as the hub sends it. */
export interface CairnUser {
    id: number;
    username: string;
    name: string;
}

/** What `register`, `login`, `guest` and `authenticate` resolve to. */
export interface CairnSession {
    user: CairnUser;
    token: string;
}

export type CairnState = "connecting" | "connected" | "disconnected";

/** The `close` event: the socket closed with `code`; `reconnect` says whether the client tries again. */
export interface CairnCloseInfo {
    code: number;
    reason: string;
    reconnect: boolean;
    /** The delay before the next attempt, when there is one. */
    delayMs?: number;
}

/** The `auth` event: a sign-in (user and token), or a sign-out or refused token (`user: null`). */
export interface CairnAuthInfo {
    user: CairnUser | null;
    token: string | null;
    /** Why the client's token was refused after a reconnect (`unauthorized`, `suspended`). */
    error?: CairnError;
}

/** A push event from the hub: `{"ev": "<name>", ...fields}`. */
export interface CairnEvent {
    ev: string;
    [field: string]: unknown;
}

/** A friend's position (`pos` event). */
export interface CairnPosEvent extends CairnEvent {
    ev: "pos";
    user: number;
    lat: number;
    lon: number;
    ts: number;
    acc?: number;
    alt?: number;
    spd?: number;
    hdg?: number;
    bat?: number;
    flagged?: boolean;
    stale?: boolean;
}

/** A friend coming online or going offline (`presence` event). */
export interface CairnPresenceEvent extends CairnEvent {
    ev: "presence";
    user: number;
    online: boolean;
}

/** A failed request sent without an id, or a watch the hub refused after a reconnect (`error` event). */
export interface CairnErrorEvent extends CairnEvent {
    ev: "error";
    op?: string;
    error: { code: string; message: string; retry_after_ms?: number; [detail: string]: unknown };
}

/** A position the client reports (`pos`). */
export interface CairnPosition {
    lat: number;
    lon: number;
    acc?: number;
    alt?: number;
    spd?: number;
    hdg?: number;
    bat?: number;
    ts?: number;
}

export interface CairnClientOptions {
    /** A WebSocket class with the browser's API; defaults to the global one (Node: Debian's `ws` module). */
    WebSocket?: unknown;
    /** A token from an earlier session; `connect()` signs in with it. */
    token?: string | null;
    /** How long a request waits for its reply (15000 ms). */
    requestTimeoutMs?: number;
    /** How long an opening handshake may take before it is retried (10000 ms). */
    connectTimeoutMs?: number;
    /** Reconnect by itself after the connection is lost (true). */
    reconnect?: boolean;
    /** The first back-off delay, doubled per failed attempt, with jitter (500 ms). */
    reconnectDelayMs?: number;
    /** The largest back-off delay (30000 ms). */
    maxReconnectDelayMs?: number;
    /** The least pause after a 4429 close (30000 ms). */
    rateLimitPauseMs?: number;
    /** How long a connection must stay up before the back-off starts again from `reconnectDelayMs` (10000 ms). */
    stableAfterMs?: number;
    /** The hub's largest inbound message; a larger request is refused before sending (65536 bytes). */
    maxMessageBytes?: number;
    /** The hub's HTTP base for uploads; derived from the WebSocket URL (`ws://h:p/ws` → `http://h:p`). */
    httpUrl?: string;
    /** The fetch function `upload` uses (the global one). */
    fetch?: typeof fetch;
    /** How long an upload may take (120000 ms). */
    uploadTimeoutMs?: number;
    /** A random number in [0, 1) for the jitter (Math.random). */
    random?: () => number;
}

/** The subprotocol the hub speaks: "cairn.v1". */
export const PROTOCOL: "cairn.v1";

/** True for close codes after which the client does not reconnect: 1009 and 4500-4999. */
export function isTerminalCloseCode(code: number): boolean;

/** The hub's HTTP base for a WebSocket URL. */
export function httpBaseOf(wsUrl: string): string;

/**
 * An error from the hub (`code` is a wire error code such as `invalid_credentials`, `not_found`, `rate_limited`)
 * or from the client: `timeout`, `disconnected`, `closed`, `too_large`.
 */
export class CairnError extends Error {
    constructor(
        code: string,
        message: string,
        extra?: {
            retryAfterMs?: number;
            op?: string;
            status?: number;
            closeCode?: number;
            details?: Record<string, unknown>;
        },
    );
    readonly name: "CairnError";
    code: string;
    /** How long to wait before trying again, when the hub says (`retry_after_ms`, or an upload's Retry-After). */
    retryAfterMs?: number;
    /** The op that failed (`upload` for uploads). */
    op?: string;
    /** The HTTP status of a failed upload. */
    status?: number;
    /** The close code that ended the connection, for `disconnected`. */
    closeCode?: number;
    /** The hub's whole error object (`distance`, `radius`, `until`, …). */
    details: Record<string, unknown>;
    static fromWire(error: unknown, op?: string): CairnError;
}

export class CairnClient {
    /** `url` is the hub's WebSocket endpoint (`ws://127.0.0.1:7681/ws`); in a page it defaults to the page's host. */
    constructor(url?: string, options?: CairnClientOptions);

    readonly state: CairnState;
    readonly user: CairnUser | null;
    readonly token: string | null;
    /** Where `upload` posts: the hub's `/v1/media`. */
    readonly mediaUrl: string;

    /**
     * Opens the connection and signs in with the token, if any. Resolves once connected (retrying with back-off
     * meanwhile); rejects on a terminal close, on `close()`, or when the hub refuses the token.
     */
    connect(): Promise<{ user: CairnUser | null }>;
    register(fields: { username: string; password: string; name?: string; email?: string }): Promise<CairnSession>;
    login(username: string, password: string): Promise<CairnSession>;
    guest(): Promise<CairnSession>;
    authenticate(token: string): Promise<CairnSession>;
    /** Revokes this token (`all`: every token of the account) and forgets the token and the watches. */
    logout(options?: { all?: boolean }): Promise<{}>;
    /** Ends the connection for good: no reconnect; pending requests reject with `closed`. */
    close(): void;

    /** Resolves to the reply without `id` and `ok`, or rejects with a CairnError (a `timeout` one included). */
    request<T = any>(op: string, fields?: Record<string, unknown>, options?: { timeoutMs?: number }): Promise<T>;
    /** Sends without waiting; true if it went out now. Offline, only the latest `pos` is kept and sent later. */
    send(op: "pos", fields: CairnPosition): boolean;
    send(op: string, fields?: Record<string, unknown>): boolean;
    /**
     * Sends a watch and resolves to its reply; it is sent again after every reconnect, and `onReply` receives every
     * reply (this first one included).
     */
    watch<T = any>(op: string, fields?: Record<string, unknown>, onReply?: (reply: T) => void): Promise<T>;
    /** Stops a watch: sends its `.unwatch` op when connected, and no longer re-sends it. */
    unwatch(op: string): Promise<{}>;

    on(name: "state", handler: (state: CairnState) => void): () => void;
    on(name: "close", handler: (info: CairnCloseInfo) => void): () => void;
    on(name: "auth", handler: (info: CairnAuthInfo) => void): () => void;
    on(name: "pos", handler: (event: CairnPosEvent) => void): () => void;
    on(name: "presence", handler: (event: CairnPresenceEvent) => void): () => void;
    on(name: "error", handler: (event: CairnErrorEvent) => void): () => void;
    /** Any wire event by its `ev` name, or "*" for every wire event. */
    on(name: string, handler: (event: CairnEvent) => void): () => void;

    /** Uploads to `/v1/media` with the client's token; resolves to the media id. */
    upload(data: Blob | ArrayBuffer | ArrayBufferView, contentType?: string): Promise<string>;
}
