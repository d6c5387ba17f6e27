// Cairn's JavaScript client: one ES module with no dependencies and no build step, for browsers and Node >= 20.
// It speaks the wire protocol of docs/PROTOCOL.md over one WebSocket (`/ws`, subprotocol `cairn.v1`), so a page or
// a script gets requests with replies, push events, and a connection that survives a restarting hub: it reconnects
// with back-off and jitter as the close codes allow, signs in again with its token, re-sends its watches, and keeps
// the latest position reported while offline. The hub serves this file at `/cairn.js`; `cairn.d.ts` types it.

/**
 * @typedef {{id: number, username: string, name: string}} CairnUser
 * @typedef {{user: CairnUser, token: string}} CairnSession
 * @typedef {"connecting" | "connected" | "disconnected"} CairnState
 * @typedef {{code: number, reason: string, reconnect: boolean, delayMs?: number}} CairnCloseInfo
 * @typedef {{user: CairnUser | null, token: string | null, error?: CairnError}} CairnAuthInfo
 *
 * @typedef {object} CairnClientOptions
 * @property {any} [WebSocket] a WebSocket class (browser API: `new WebSocket(url, protocols)`, `send`, `close`,
 *   `onopen`/`onmessage`/`onclose`/`onerror`); defaults to the global one. Node: Debian's `ws` module works.
 * @property {string | null} [token] a token from an earlier `register`/`login`/`guest`; `connect()` signs in with it.
 * @property {number} [requestTimeoutMs] how long a request waits for its reply (15000).
 * @property {number} [connectTimeoutMs] how long an opening handshake may take before it is retried (10000).
 * @property {boolean} [reconnect] reconnect by itself after the connection is lost (true).
 * @property {number} [reconnectDelayMs] the first back-off delay; it doubles per failed attempt (500).
 * @property {number} [maxReconnectDelayMs] the largest back-off delay (30000).
 * @property {number} [rateLimitPauseMs] the least pause after a 4429 close (30000).
 * @property {number} [stableAfterMs] how long a connection must stay up before the back-off starts again from
 *   `reconnectDelayMs` (10000): a hub that closes every connection right after it opens is not retried ever faster.
 * @property {number} [maxMessageBytes] the hub's largest inbound message; a larger request is refused here (65536).
 * @property {string} [httpUrl] the hub's HTTP base, e.g. `https://hub.example`; derived from the WebSocket URL.
 * @property {typeof fetch} [fetch] the fetch function `upload` uses; defaults to the global one.
 * @property {number} [uploadTimeoutMs] how long an upload may take (120000).
 * @property {() => number} [random] a random number in [0, 1) for the jitter (Math.random).
 */

/** The subprotocol the hub speaks. */
export const PROTOCOL = "cairn.v1";

/** Ops that (re)authenticate a connection; the client reopens a closed connection for them. */
const AUTH_OPS = new Set(["register", "login", "guest", "auth"]);

const OPEN = 1;

/**
 * A close code after which the client does not reconnect (docs/PROTOCOL.md, "Close codes"): 1009 (a message too
 * big: reconnecting would not fix the client) and 4500-4999 (invalid token, suspended, authentication timeout).
 * @param {number} code
 */
export function isTerminalCloseCode(code) {
    return code === 1009 || (code >= 4500 && code <= 4999);
}

/**
 * An error from the hub (`code` is a wire error code such as `invalid_credentials`) or from the client itself:
 * `timeout` (no reply in time), `disconnected` (the connection was lost or is not open), `closed` (`close()` was
 * called), `too_large` (a request over the hub's message limit, refused before sending).
 */
export class CairnError extends Error {
    /**
     * @param {string} code
     * @param {string} message
     * @param {{retryAfterMs?: number, op?: string, status?: number, closeCode?: number,
     *          details?: Record<string, unknown>}} [extra]
     */
    constructor(code, message, extra = {}) {
        super(message);
        this.name = "CairnError";
        /** @type {string} */
        this.code = code;
        /** @type {number | undefined} milliseconds to wait before trying again, when the hub says */
        this.retryAfterMs = extra.retryAfterMs;
        /** @type {string | undefined} the op that failed */
        this.op = extra.op;
        /** @type {number | undefined} the HTTP status of a failed upload */
        this.status = extra.status;
        /** @type {number | undefined} the close code that ended the connection */
        this.closeCode = extra.closeCode;
        /** @type {Record<string, unknown>} the whole error object from the hub (`distance`, `radius`, `until`, …) */
        this.details = extra.details ?? {};
    }

    /**
     * The error of a reply or `error` event: `{code, message, retry_after_ms?, …}`.
     * @param {any} error
     * @param {string} [op]
     */
    static fromWire(error, op) {
        const e = error && typeof error === "object" ? error : {};
        const retry = typeof e.retry_after_ms === "number" ? e.retry_after_ms : undefined;
        return new CairnError(String(e.code ?? "internal"), String(e.message ?? "error"), {
            retryAfterMs: retry,
            op,
            details: e,
        });
    }
}

/** @param {number} status */
function codeForStatus(status) {
    switch (status) {
        case 400:
        case 411:
        case 415:
            return "bad_request";
        case 401:
            return "unauthorized";
        case 403:
            return "forbidden";
        case 404:
            return "not_found";
        case 408:
            return "timeout";
        case 413:
            return "too_large";
        case 429:
        case 503:
            return "rate_limited";
        default:
            return "internal";
    }
}

/** @param {string} text */
function utf8Length(text) {
    let bytes = 0;
    for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c < 0x80) bytes += 1;
        else if (c < 0x800) bytes += 2;
        else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
            bytes += 4;
            i++;
        } else bytes += 3;
    }
    return bytes;
}

/** The same origin's `/ws` when the page has one. */
function defaultUrl() {
    const loc = /** @type {any} */ (globalThis).location;
    if (!loc || !loc.host) throw new TypeError("CairnClient needs a URL such as ws://127.0.0.1:7681/ws");
    return `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}/ws`;
}

/**
 * The hub's HTTP base for a WebSocket URL: `ws://h:p/ws` → `http://h:p`, `wss://h/x/ws` → `https://h/x`.
 * @param {string} wsUrl
 */
export function httpBaseOf(wsUrl) {
    const u = new URL(wsUrl, /** @type {any} */ (globalThis).location?.href);
    u.protocol = u.protocol === "wss:" || u.protocol === "https:" ? "https:" : "http:";
    u.pathname = u.pathname.replace(/\/ws\/?$/, "").replace(/\/$/, "");
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
}

/**
 * @typedef {object} PendingRequest
 * @property {string} op
 * @property {Record<string, unknown>} fields
 * @property {(reply: any) => void} resolve
 * @property {(error: CairnError) => void} reject
 * @property {ReturnType<typeof setTimeout> | null} timer
 * @property {number} id
 * @property {any} ws the socket it was written to, null while it waits for a connection
 */

/** A connection to a Cairn hub that outlives the socket under it. */
export class CairnClient {
    /** @type {string} */ #url;
    /** @type {any} */ #WebSocket;
    /** @type {Required<Omit<CairnClientOptions, "WebSocket" | "token" | "httpUrl" | "fetch">>} */ #opts;
    /** @type {string} */ #httpUrl;
    /** @type {typeof fetch | undefined} */ #fetch;
    /** @type {any} */ #ws = null;
    /** @type {CairnState} */ #state = "disconnected";
    /** @type {string | null} */ #token;
    /** @type {CairnUser | null} */ #user = null;
    #nextId = 1;
    /** @type {Map<number, PendingRequest>} */ #inFlight = new Map();
    /** @type {PendingRequest[]} */ #waiting = [];
    /** @type {string[]} */ #outbox = [];
    #flushScheduled = false;
    /** @type {Record<string, unknown> | null} */ #heldPos = null;
    /** @type {Map<string, {fields: Record<string, unknown>, onReply?: (reply: any) => void}>} */ #watches = new Map();
    /** @type {Map<string, Set<(value: any) => void>>} */ #handlers = new Map();
    #attempt = 0;
    /** When the connection in use became "connected" (ms), 0 when none is. */
    #connectedAt = 0;
    /** @type {ReturnType<typeof setTimeout> | null} */ #reconnectTimer = null;
    /** @type {ReturnType<typeof setTimeout> | null} */ #openTimer = null;
    #wanted = false;
    #closedForGood = false;
    /** @type {{resolve: (v: {user: CairnUser | null}) => void, reject: (e: CairnError) => void}[]} */
    #connectWaiters = [];

    /**
     * @param {string} [url] the hub's WebSocket endpoint, e.g. `ws://127.0.0.1:7681/ws`; in a page, defaults to
     *   the page's own host.
     * @param {CairnClientOptions} [options]
     */
    constructor(url, options = {}) {
        this.#url = url ?? defaultUrl();
        this.#WebSocket = options.WebSocket ?? /** @type {any} */ (globalThis).WebSocket;
        if (typeof this.#WebSocket !== "function") {
            throw new TypeError("no WebSocket implementation: pass options.WebSocket (e.g. the 'ws' module)");
        }
        this.#token = options.token ?? null;
        this.#opts = {
            requestTimeoutMs: options.requestTimeoutMs ?? 15000,
            connectTimeoutMs: options.connectTimeoutMs ?? 10000,
            reconnect: options.reconnect ?? true,
            reconnectDelayMs: options.reconnectDelayMs ?? 500,
            maxReconnectDelayMs: options.maxReconnectDelayMs ?? 30000,
            rateLimitPauseMs: options.rateLimitPauseMs ?? 30000,
            stableAfterMs: options.stableAfterMs ?? 10000,
            maxMessageBytes: options.maxMessageBytes ?? 65536,
            uploadTimeoutMs: options.uploadTimeoutMs ?? 120000,
            random: options.random ?? Math.random,
        };
        this.#httpUrl = (options.httpUrl ?? httpBaseOf(this.#url)).replace(/\/$/, "");
        this.#fetch = options.fetch;
    }

    /** @returns {CairnState} */
    get state() {
        return this.#state;
    }

    /** The signed-in user, or null. */
    get user() {
        return this.#user;
    }

    /** The token the client signs in with after a reconnect, or null. Keep it to stay signed in across reloads. */
    get token() {
        return this.#token;
    }

    /** The URL `upload` posts to. */
    get mediaUrl() {
        return `${this.#httpUrl}/v1/media`;
    }

    /**
     * Opens the connection (and signs in with the token, if the client has one). Resolves once connected, to the
     * signed-in user or `{user: null}`. Failed attempts are retried with back-off; it rejects on a terminal close,
     * on `close()`, or when the hub refuses the token (the connection then stays open, signed out).
     * @returns {Promise<{user: CairnUser | null}>}
     */
    connect() {
        if (this.#closedForGood) return Promise.reject(new CairnError("closed", "the client was closed"));
        this.#wanted = true;
        if (this.#state === "connected") return Promise.resolve({ user: this.#user });
        const done = new Promise((resolve, reject) => this.#connectWaiters.push({ resolve, reject }));
        if (!this.#ws && !this.#reconnectTimer) this.#open();
        return /** @type {Promise<{user: CairnUser | null}>} */ (done);
    }

    /**
     * Creates an account and signs in as it.
     * @param {{username: string, password: string, name?: string, email?: string}} fields
     * @returns {Promise<CairnSession>}
     */
    async register(fields) {
        return this.#adopt(await this.request("register", { ...fields }));
    }

    /**
     * @param {string} username a username or an email
     * @param {string} password
     * @returns {Promise<CairnSession>}
     */
    async login(username, password) {
        return this.#adopt(await this.request("login", { username, password }));
    }

    /**
     * Signs in as a new guest account.
     * @returns {Promise<CairnSession>}
     */
    async guest() {
        return this.#adopt(await this.request("guest", {}));
    }

    /**
     * Signs in with a token from an earlier session.
     * @param {string} token
     * @returns {Promise<CairnSession>}
     */
    async authenticate(token) {
        const reply = await this.request("auth", { token });
        return this.#adopt({ user: reply.user, token });
    }

    /**
     * Signs out: revokes this token (`all: true`: every token of the account) and forgets the token and watches.
     * The session is forgotten whatever the answer: a logout that fails (offline, timed out) still leaves this client
     * signed out, so no reconnect signs it back in; the token may then stay valid on the hub until it expires.
     * @param {{all?: boolean}} [options]
     * @returns {Promise<{}>}
     */
    async logout(options = {}) {
        try {
            return await this.request("logout", options.all ? { all: true } : {});
        } finally {
            this.#forgetSession();
            this.#emit("auth", /** @type {CairnAuthInfo} */ ({ user: null, token: null }));
        }
    }

    /**
     * Sends a request and resolves to its reply without `id` and `ok`, or rejects with a `CairnError`. While the
     * connection is being (re)established, the request waits for it, within its timeout.
     * @param {string} op
     * @param {Record<string, unknown>} [fields]
     * @param {{timeoutMs?: number}} [options]
     * @returns {Promise<any>}
     */
    request(op, fields = {}, options = {}) {
        return new Promise((resolve, reject) => {
            /** @type {PendingRequest} */
            const entry = { op, fields, resolve, reject, timer: null, id: 0, ws: null };
            if (this.#closedForGood) {
                reject(new CairnError("closed", "the client was closed", { op }));
                return;
            }
            const idle = !this.#ws && !this.#reconnectTimer;
            if (idle && !AUTH_OPS.has(op)) {
                reject(new CairnError("disconnected", "not connected: call connect() first", { op }));
                return;
            }
            const timeoutMs = options.timeoutMs ?? this.#opts.requestTimeoutMs;
            entry.timer = setTimeout(() => {
                this.#forget(entry);
                reject(new CairnError("timeout", `no reply to '${op}' within ${timeoutMs} ms`, { op }));
            }, timeoutMs);
            if (this.#state === "connected") this.#transmit(entry, this.#ws);
            else this.#waiting.push(entry);
            // Signing in reopens a connection the hub ended (e.g. 4508 while a sign-in form was open).
            if (idle) this.connect().catch(() => {});
        });
    }

    /**
     * Sends an op without an id and without waiting (positions). Returns true if it went out now. While not
     * connected, a `pos` is kept and sent after the reconnect (only the latest one); anything else is dropped.
     * @param {string} op
     * @param {Record<string, unknown>} [fields]
     */
    send(op, fields = {}) {
        if (this.#state === "connected" && this.#ws) {
            this.#write(JSON.stringify({ ...fields, op }));
            return true;
        }
        if (op === "pos" && !this.#closedForGood) this.#heldPos = { ...fields };
        return false;
    }

    /**
     * Sends a watch (`friends.watch`, `items.watch`, `pictures.watch`, `stats.watch`) and resolves to its reply.
     * The client sends it again after every reconnect; `onReply` receives every reply, this first one included
     * (after a reconnect, `friends.watch` answers with the positions as they are now). A watch the hub refuses is
     * not sent again. Watching the same op again replaces its fields.
     * @param {string} op
     * @param {Record<string, unknown>} [fields]
     * @param {(reply: any) => void} [onReply]
     * @returns {Promise<any>}
     */
    async watch(op, fields = {}, onReply) {
        const watch = { fields: { ...fields }, onReply };
        this.#watches.set(op, watch);
        try {
            const reply = await this.request(op, watch.fields);
            onReply?.(reply);
            return reply;
        } catch (error) {
            const local = error instanceof CairnError && ["timeout", "disconnected", "closed"].includes(error.code);
            if (!local && this.#watches.get(op) === watch) this.#watches.delete(op);
            throw error;
        }
    }

    /**
     * Stops a watch: sends its `.unwatch` op (when connected) and no longer re-sends it.
     * @param {string} op the watch op, e.g. `friends.watch`
     * @returns {Promise<any>}
     */
    async unwatch(op) {
        this.#watches.delete(op);
        if (this.#state !== "connected") return {};
        return this.request(op.replace(/\.watch$/, ".unwatch"), {});
    }

    /**
     * Listens to `name`: a wire event (`pos`, `presence`, `chat.msg`, `error`, …; the handler gets the event object),
     * `"state"` (`"connecting" | "connected" | "disconnected"`), `"close"` (`{code, reason, reconnect, delayMs?}`),
     * `"auth"` (`{user, token, error?}` on every sign-in and sign-out), or `"*"` (every wire event).
     * @param {string} name
     * @param {(value: any) => void} handler
     * @returns {() => void} unsubscribes
     */
    on(name, handler) {
        const set = this.#handlers.get(name) ?? new Set();
        this.#handlers.set(name, set);
        set.add(handler);
        return () => {
            set.delete(handler);
        };
    }

    /**
     * Uploads a picture or video to `/v1/media` with the client's token; resolves to the media id that
     * `relic.create {media}` and pictures take.
     * @param {Blob | ArrayBuffer | ArrayBufferView} data
     * @param {string} [contentType] `image/jpeg`, `image/png`, `image/webp` or `video/mp4`; a Blob's own type
     *   by default
     * @returns {Promise<string>}
     */
    async upload(data, contentType) {
        if (!this.#token) throw new CairnError("unauthorized", "sign in before uploading", { op: "upload" });
        const type = contentType ?? /** @type {any} */ (data).type;
        if (!type) throw new CairnError("bad_request", "upload needs a content type", { op: "upload" });
        const doFetch = this.#fetch ?? globalThis.fetch;
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), this.#opts.uploadTimeoutMs);
        try {
            /** @type {Response} */
            let response;
            try {
                response = await doFetch(this.mediaUrl, {
                    method: "POST",
                    headers: { Authorization: `Bearer ${this.#token}`, "Content-Type": type },
                    body: /** @type {any} */ (data),
                    signal: controller.signal,
                });
            } catch (error) {
                if (controller.signal.aborted) {
                    throw new CairnError("timeout", `upload took over ${this.#opts.uploadTimeoutMs} ms`, {
                        op: "upload",
                    });
                }
                throw new CairnError("disconnected", `upload failed: ${/** @type {any} */ (error)?.message}`, {
                    op: "upload",
                });
            }
            /** @type {any} */
            let body = {};
            try {
                body = await response.json();
            } catch {
                body = {};
            }
            if (response.ok && typeof body.media === "string") return body.media;
            const retryAfter = Number(response.headers.get("Retry-After"));
            throw new CairnError(codeForStatus(response.status), String(body.error ?? `HTTP ${response.status}`), {
                op: "upload",
                status: response.status,
                retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
                details: body,
            });
        } finally {
            clearTimeout(timer);
        }
    }

    /** Closes the connection for good: no reconnect; waiting requests reject with `closed`. */
    close() {
        if (this.#closedForGood) return;
        this.#closedForGood = true;
        this.#wanted = false;
        if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
        this.#reconnectTimer = null;
        const ws = this.#ws;
        this.#dropSocket();
        if (ws) {
            try {
                ws.close(1000);
            } catch {
                // already closing
            }
        }
        this.#failAll(new CairnError("closed", "the client was closed"));
        this.#heldPos = null;
        this.#setState("disconnected");
    }

    // --- connection -------------------------------------------------------------------------------------------

    #open() {
        this.#setState("connecting");
        /** @type {any} */
        let ws;
        try {
            ws = new this.#WebSocket(this.#url, PROTOCOL);
        } catch (error) {
            this.#failConnect(new CairnError("disconnected", `cannot open ${this.#url}: ${error}`));
            return;
        }
        this.#ws = ws;
        const openTimeout = this.#opts.connectTimeoutMs;
        this.#openTimer = setTimeout(() => this.#abandon(ws, "opening handshake timed out"), openTimeout);
        ws.onopen = () => {
            if (this.#ws !== ws) return;
            if (this.#openTimer) clearTimeout(this.#openTimer);
            this.#openTimer = null;
            this.#handshake(ws);
        };
        ws.onmessage = (/** @type {any} */ event) => {
            if (this.#ws === ws) this.#receive(event.data);
        };
        ws.onclose = (/** @type {any} */ event) => {
            if (this.#ws === ws) this.#lost(ws, event.code ?? 1006, event.reason ?? "");
        };
        ws.onerror = () => {
            // Usually a close event follows and decides what happens next. Some implementations (Node 20's
            // WebSocket) never send it when the connection could not be made, so a failed opening ends here.
            if (this.#ws === ws && ws.readyState !== OPEN && this.#openTimer) this.#abandon(ws, "connection failed");
        };
    }

    /**
     * After the socket opens: sign in with the token, re-send the watches and wait for their replies, send the held
     * position, then report "connected" and let the waiting requests go.
     * @param {any} ws
     */
    async #handshake(ws) {
        /** @type {CairnError | null} */
        let refused = null;
        if (this.#token) {
            const token = this.#token;
            try {
                const reply = await this.#call(ws, "auth", { token });
                if (this.#ws !== ws) return;
                this.#user = reply.user;
                this.#emit("auth", /** @type {CairnAuthInfo} */ ({ user: reply.user, token }));
            } catch (error) {
                if (this.#ws !== ws) return;
                const e = /** @type {CairnError} */ (error);
                if (e.code !== "unauthorized" && e.code !== "suspended") {
                    // No answer (a timeout): try again on a new connection.
                    this.#abandon(ws, `authentication failed: ${e.message}`);
                    return;
                }
                refused = e;
                this.#forgetSession();
                this.#emit("auth", /** @type {CairnAuthInfo} */ ({ user: null, token: null, error: e }));
            }
        }
        if (this.#user) {
            const rewatches = [...this.#watches].map(([op, watch]) =>
                this.#call(ws, op, watch.fields).then(
                    (reply) => this.#callHandler(watch.onReply, reply),
                    (/** @type {CairnError} */ error) => {
                        if (["timeout", "disconnected", "closed"].includes(error.code)) return;
                        if (this.#watches.get(op) === watch) this.#watches.delete(op);
                        const event = { ev: "error", op, error: error.details };
                        this.#emit("error", event);
                        this.#emit("*", event);
                    },
                ),
            );
            // "connected" means the watches are in place again: whatever moves from now on is pushed.
            await Promise.all(rewatches);
            if (this.#ws !== ws) return;
            if (this.#heldPos) this.#write(JSON.stringify({ ...this.#heldPos, op: "pos" }));
        }
        this.#heldPos = null;
        this.#connectedAt = Date.now();
        this.#setState("connected");
        const waiting = this.#waiting;
        this.#waiting = [];
        for (const entry of waiting) this.#transmit(entry, ws);
        const waiters = this.#connectWaiters;
        this.#connectWaiters = [];
        for (const w of waiters) {
            if (refused) w.reject(refused);
            else w.resolve({ user: this.#user });
        }
    }

    /**
     * The socket closed (or was given up on): fail what was in flight on it, then reconnect unless the close was
     * terminal.
     * @param {any} ws
     * @param {number} code
     * @param {string} reason
     */
    #lost(ws, code, reason) {
        if (this.#ws !== ws) return;
        this.#dropSocket();
        for (const [id, entry] of this.#inFlight) {
            if (entry.ws !== ws) continue;
            this.#inFlight.delete(id);
            if (entry.timer) clearTimeout(entry.timer);
            entry.reject(new CairnError("disconnected", `connection lost before the reply (${code})`, {
                op: entry.op,
                closeCode: code,
            }));
        }
        const terminal = isTerminalCloseCode(code);
        const reconnect = this.#wanted && this.#opts.reconnect && !terminal;
        /** @type {CairnCloseInfo} */
        const info = { code, reason, reconnect };
        // Only a connection that stayed up a while earns a fresh back-off.
        if (this.#connectedAt && Date.now() - this.#connectedAt >= this.#opts.stableAfterMs) this.#attempt = 0;
        this.#connectedAt = 0;
        if (reconnect) {
            const ceiling = Math.min(this.#opts.maxReconnectDelayMs, this.#opts.reconnectDelayMs * 2 ** this.#attempt);
            let delay = ceiling / 2 + (this.#opts.random() * ceiling) / 2;
            if (code === 4429) delay = Math.max(delay, this.#opts.rateLimitPauseMs);
            this.#attempt = Math.min(this.#attempt + 1, 30);
            info.delayMs = Math.round(delay);
            this.#reconnectTimer = setTimeout(() => {
                this.#reconnectTimer = null;
                if (this.#wanted && !this.#ws) this.#open();
            }, delay);
        } else {
            this.#wanted = false;
            if (code === 4500 || code === 4503) this.#forgetSession();
            const error = new CairnError("disconnected", `closed by the hub: ${code} ${reason}`.trim(), {
                closeCode: code,
            });
            this.#failAll(error);
            this.#heldPos = null;
        }
        this.#emit("close", info);
        this.#setState("disconnected");
    }

    /**
     * Gives up on a socket that does not answer: handled as a lost connection, then closed.
     * @param {any} ws
     * @param {string} reason
     */
    #abandon(ws, reason) {
        if (this.#ws !== ws) return;
        this.#lost(ws, 1006, reason);
        try {
            ws.close(4000);
        } catch {
            // already closing
        }
    }

    #dropSocket() {
        const ws = this.#ws;
        this.#ws = null;
        if (this.#openTimer) clearTimeout(this.#openTimer);
        this.#openTimer = null;
        this.#outbox = [];
        if (ws) {
            ws.onopen = ws.onmessage = ws.onclose = null;
            // Some implementations throw an error event nobody listens to; keep a listener.
            ws.onerror = () => {};
        }
    }

    /** @param {CairnError} error */
    #failConnect(error) {
        const waiters = this.#connectWaiters;
        this.#connectWaiters = [];
        for (const w of waiters) w.reject(error);
    }

    /** @param {CairnError} error */
    #failAll(error) {
        for (const entry of [...this.#inFlight.values(), ...this.#waiting]) {
            if (entry.timer) clearTimeout(entry.timer);
            entry.reject(new CairnError(error.code, error.message, { op: entry.op, closeCode: error.closeCode }));
        }
        this.#inFlight.clear();
        this.#waiting = [];
        this.#failConnect(error);
    }

    #forgetSession() {
        this.#token = null;
        this.#user = null;
        this.#watches.clear();
        this.#heldPos = null;
    }

    /** @param {any} reply */
    #adopt(reply) {
        this.#token = reply.token;
        this.#user = reply.user;
        this.#emit("auth", /** @type {CairnAuthInfo} */ ({ user: reply.user, token: reply.token }));
        return /** @type {CairnSession} */ ({ user: reply.user, token: reply.token });
    }

    // --- requests and frames ----------------------------------------------------------------------------------

    /**
     * A request on a given socket, bypassing the wait for "connected" (the handshake's own requests).
     * @param {any} ws
     * @param {string} op
     * @param {Record<string, unknown>} fields
     * @returns {Promise<any>}
     */
    #call(ws, op, fields) {
        return new Promise((resolve, reject) => {
            /** @type {PendingRequest} */
            const entry = { op, fields, resolve, reject, timer: null, id: 0, ws: null };
            const timeoutMs = this.#opts.requestTimeoutMs;
            entry.timer = setTimeout(() => {
                this.#forget(entry);
                reject(new CairnError("timeout", `no reply to '${op}' within ${timeoutMs} ms`, { op }));
            }, timeoutMs);
            this.#transmit(entry, ws);
        });
    }

    /**
     * @param {PendingRequest} entry
     * @param {any} ws
     */
    #transmit(entry, ws) {
        const id = this.#nextId++;
        const line = JSON.stringify({ ...entry.fields, id, op: entry.op });
        if (utf8Length(line) > this.#opts.maxMessageBytes) {
            if (entry.timer) clearTimeout(entry.timer);
            entry.reject(new CairnError("too_large", `request over ${this.#opts.maxMessageBytes} bytes`, {
                op: entry.op,
            }));
            return;
        }
        entry.id = id;
        entry.ws = ws;
        this.#inFlight.set(id, entry);
        this.#write(line);
    }

    /** @param {PendingRequest} entry */
    #forget(entry) {
        if (entry.id) this.#inFlight.delete(entry.id);
        const i = this.#waiting.indexOf(entry);
        if (i >= 0) this.#waiting.splice(i, 1);
    }

    /**
     * Queues a line; the lines written in one turn of the event loop go out together, several per frame.
     * @param {string} line
     */
    #write(line) {
        this.#outbox.push(line);
        if (this.#flushScheduled) return;
        this.#flushScheduled = true;
        queueMicrotask(() => this.#flush());
    }

    #flush() {
        this.#flushScheduled = false;
        const ws = this.#ws;
        const lines = this.#outbox;
        this.#outbox = [];
        if (!ws || ws.readyState !== OPEN || lines.length === 0) return;
        const limit = this.#opts.maxMessageBytes;
        let frame = "";
        let size = 0;
        for (const line of lines) {
            const bytes = utf8Length(line);
            if (frame && size + 1 + bytes > limit) {
                ws.send(frame);
                frame = "";
                size = 0;
            }
            frame = frame ? `${frame}\n${line}` : line;
            size += (size ? 1 : 0) + bytes;
        }
        if (frame) ws.send(frame);
    }

    /** @param {unknown} data */
    #receive(data) {
        let text;
        if (typeof data === "string") text = data;
        else {
            // Text frames arrive as strings; a Buffer or ArrayBuffer only from unusual WebSocket implementations.
            text = new TextDecoder().decode(/** @type {any} */ (data));
        }
        for (const line of text.split("\n")) {
            if (!line.trim()) continue;
            let message;
            try {
                message = JSON.parse(line);
            } catch {
                continue;
            }
            if (!message || typeof message !== "object") continue;
            if (typeof message.ev === "string") {
                this.#emit(message.ev, message);
                this.#emit("*", message);
                continue;
            }
            const entry = typeof message.id === "number" ? this.#inFlight.get(message.id) : undefined;
            if (!entry) continue;
            this.#inFlight.delete(message.id);
            if (entry.timer) clearTimeout(entry.timer);
            if (message.ok) {
                const { id: _id, ok: _ok, ...reply } = message;
                entry.resolve(reply);
            } else {
                entry.reject(CairnError.fromWire(message.error, entry.op));
            }
        }
    }

    /** @param {CairnState} state */
    #setState(state) {
        if (this.#state === state) return;
        this.#state = state;
        this.#emit("state", state);
    }

    /**
     * @param {string} name
     * @param {unknown} value
     */
    #emit(name, value) {
        const set = this.#handlers.get(name);
        if (!set) return;
        for (const handler of [...set]) this.#callHandler(handler, value);
    }

    /**
     * Calls an application's handler. One that throws must not break the client; its error is reported the way
     * an event listener's is (thrown again outside the client).
     * @param {((value: any) => void) | undefined} handler
     * @param {unknown} value
     */
    #callHandler(handler, value) {
        if (!handler) return;
        try {
            handler(value);
        } catch (error) {
            queueMicrotask(() => {
                throw error;
            });
        }
    }
}
