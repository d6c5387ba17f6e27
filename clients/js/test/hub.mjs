// Test support: a real `cairn serve` on loopback with a temporary data directory, which a test can kill, pause and
// start again on the same port and data, plus small bounded waits on a client's events. The binary is $CAIRN_BIN,
// or the debug build of this checkout (`swift build` makes it; test/run.sh builds and sets it).

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");

export const CAIRN_BIN = process.env.CAIRN_BIN ?? path.join(repo, ".build/debug/cairn");

/** Debian's `node-ws` (apt-get install node-ws), the WebSocket implementation for Node without the global one. */
export function loadWs() {
    const require = createRequire(import.meta.url);
    return require(process.env.CAIRN_WS_MODULE ?? "/usr/share/nodejs/ws");
}

/** How long a hub may take to start listening. */
const START_TIMEOUT_MS = 30000;

/**
 * A running hub. `start()` waits for its "listening on" line and for `/healthz`.
 */
export class Hub {
    /** @param {{data?: string, port?: number, args?: string[]}} [options] */
    constructor(options = {}) {
        if (!existsSync(CAIRN_BIN)) throw new Error(`no hub binary at ${CAIRN_BIN}: run 'swift build' first`);
        this.ownsData = !options.data;
        this.data = options.data ?? mkdtempSync(path.join(tmpdir(), "cairn-js-"));
        this.port = options.port ?? 0;
        this.args = options.args ?? [];
        this.proc = null;
        this.output = "";
    }

    get url() {
        return `ws://127.0.0.1:${this.port}/ws`;
    }

    get httpUrl() {
        return `http://127.0.0.1:${this.port}`;
    }

    /** Starts `cairn serve` (on the port it had before, once it has one). */
    async start() {
        const args = [
            "serve", "--host", "127.0.0.1", "--port", String(this.port), "--data", this.data,
            "--scrypt-cost", "10", "--signups-per-address", "0", ...this.args,
        ];
        const proc = spawn(CAIRN_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
        this.proc = proc;
        this.exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
        const listening = new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`hub did not start:\n${this.output}`)), START_TIMEOUT_MS);
            const look = (chunk) => {
                this.output += chunk;
                const m = /listening on [^\s:]+:(\d+)/.exec(this.output);
                if (m) {
                    clearTimeout(timer);
                    resolve(Number(m[1]));
                }
            };
            proc.stdout.setEncoding("utf8").on("data", look);
            proc.stderr.setEncoding("utf8").on("data", look);
            this.exited.then(({ code, signal }) => {
                clearTimeout(timer);
                reject(new Error(`hub exited (${code ?? signal}) before listening:\n${this.output}`));
            });
        });
        this.port = await listening;
        await this.#healthy();
        return this;
    }

    async #healthy() {
        const deadline = Date.now() + START_TIMEOUT_MS;
        for (;;) {
            try {
                const response = await fetch(`${this.httpUrl}/healthz`);
                if (response.status === 200) return;
            } catch {
                // not answering yet
            }
            if (Date.now() > deadline) throw new Error("hub never answered /healthz");
            await new Promise((r) => setTimeout(r, 50));
        }
    }

    /** `/healthz` as JSON. */
    async health() {
        return (await fetch(`${this.httpUrl}/healthz`)).json();
    }

    /** Sends `signal` (SIGKILL by default) and waits for the process to end. */
    async kill(signal = "SIGKILL") {
        if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
        this.proc.kill(signal);
        await this.exited;
        this.output = "";
    }

    /**
     * Freezes the process (SIGSTOP) and waits until every thread of it is stopped: sockets stay open, nothing is
     * answered. `resume()` thaws it.
     */
    async pause() {
        this.proc.kill("SIGSTOP");
        const tasks = `/proc/${this.proc.pid}/task`;
        const deadline = Date.now() + 10000;
        const stopped = () =>
            readdirSync(tasks).every((task) => {
                const stat = readFileSync(`${tasks}/${task}/stat`, "utf8");
                return /^[TtX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
            });
        while (!stopped()) {
            if (Date.now() > deadline) throw new Error("the hub did not stop");
            await new Promise((r) => setTimeout(r, 5));
        }
    }

    resume() {
        this.proc.kill("SIGCONT");
    }

    /** Stops the hub and removes the data directory it made. */
    async dispose() {
        if (this.proc) {
            try {
                this.proc.kill("SIGCONT");
            } catch {
                // gone
            }
        }
        await this.kill("SIGKILL");
        if (this.ownsData) rmSync(this.data, { recursive: true, force: true });
    }
}

/** Starts a hub on a free port. */
export async function startHub(options) {
    return new Hub(options).start();
}

/**
 * The next value of `client`'s `name` event that satisfies `match`, or a rejection after `timeoutMs`.
 * @param {import("../cairn.js").CairnClient} client
 * @param {string} name
 * @param {(value: any) => boolean} [match]
 * @param {number} [timeoutMs]
 */
export function nextEvent(client, name, match = () => true, timeoutMs = 15000) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            off();
            reject(new Error(`no '${name}' event within ${timeoutMs} ms`));
        }, timeoutMs);
        const off = client.on(name, (value) => {
            if (!match(value)) return;
            clearTimeout(timer);
            off();
            resolve(value);
        });
    });
}

/** Records every `state` event of a client, in order. */
export function recordStates(client) {
    const states = [];
    client.on("state", (s) => states.push(s));
    return states;
}

/** A unique username for a test (3-32 of a-z, 0-9, _, .). */
let counter = 0;
export function username(prefix) {
    counter += 1;
    return `${prefix}_${process.pid % 100000}_${counter}`;
}

/**
 * A WebSocket class that records every line its instances send (the frames split on newlines), in `sent`.
 * @param {any} Base
 */
export function recordingWebSocket(Base) {
    const sent = [];
    class Recording extends Base {
        send(data) {
            for (const line of String(data).split("\n")) if (line) sent.push(JSON.parse(line));
            return super.send(data);
        }
    }
    return { WebSocket: Recording, sent };
}
