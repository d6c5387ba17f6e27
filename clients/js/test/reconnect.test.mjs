// The client's reconnects against a real hub (over Debian's node-ws) that is killed and started again on the same
// port and data: it signs in again with its token, re-sends its watches, sends the latest position kept while
// offline, pauses after 4429, and stays down after a terminal close.

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, test } from "node:test";

import { CairnClient, CairnError, isTerminalCloseCode } from "../cairn.js";
import { loadWs, nextEvent, recordStates, recordingWebSocket, startHub, username } from "./hub.mjs";

const WebSocket = loadWs();
const T = { timeout: 90000 };
let hub;

before(async () => {
    hub = await startHub();
});

after(async () => {
    await hub?.dispose();
});

async function client(t, options = {}) {
    const c = new CairnClient(hub.url, { WebSocket, reconnectDelayMs: 20, maxReconnectDelayMs: 300, ...options });
    t.after(() => c.close());
    await c.connect();
    return c;
}

async function friends(t, aliceOptions = {}) {
    const a = await client(t, aliceOptions);
    const b = await client(t);
    const alice = await a.register({ username: username("alice"), password: "password1" });
    const bob = await b.register({ username: username("bob"), password: "password1" });
    await a.request("friend.request", { user: bob.user.id });
    await b.request("friend.accept", { user: alice.user.id });
    return { a, b, alice, bob };
}

/** Kills the hub (SIGKILL) and waits until every client has seen the connection go. */
async function killHub(...clients) {
    const down = clients.map((c) => nextEvent(c, "state", (s) => s === "disconnected"));
    await hub.kill("SIGKILL");
    await Promise.all(down);
}

/** Starts the hub again on its port and data, and waits until every client is connected again. */
async function restartHub(...clients) {
    const up = clients.map((c) => nextEvent(c, "state", (s) => s === "connected", 30000));
    await hub.start();
    await Promise.all(up);
}

test("close codes: 1009 and 4500-4999 are terminal, the rest are retried", () => {
    for (const code of [1009, 4500, 4503, 4508, 4999]) assert.equal(isTerminalCloseCode(code), true, String(code));
    for (const code of [1000, 1001, 1006, 4001, 4002, 4429]) {
        assert.equal(isTerminalCloseCode(code), false, String(code));
    }
});

test("failed attempts back off exponentially, with jitter, up to the largest delay", T, async (t) => {
    // A port nothing listens on: every attempt is refused.
    const server = createServer();
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address();
    await new Promise((resolve) => server.close(resolve));

    const draws = [0, 1, 0.5, 0, 1, 1];
    const c = new CairnClient(`ws://127.0.0.1:${port}/ws`, {
        WebSocket,
        reconnectDelayMs: 10,
        maxReconnectDelayMs: 100,
        random: () => draws.shift() ?? 0,
    });
    t.after(() => c.close());
    const delays = [];
    const sixth = new Promise((resolve) =>
        c.on("close", (info) => {
            assert.equal(info.reconnect, true);
            delays.push(info.delayMs);
            if (delays.length === 6) resolve();
        }),
    );
    const connecting = c.connect();
    await sixth;
    c.close();
    await assert.rejects(connecting, { code: "closed" });
    // Ceilings 10, 20, 40, 80, 100, 100; each delay is drawn between half the ceiling and all of it.
    assert.deepEqual(delays, [5, 20, 30, 40, 100, 100]);
});

test("a server that closes every connection as soon as it opens is retried ever more slowly", T, async (t) => {
    // A peer that accepts the WebSocket and closes it at once (4001): each connection opens, so only the rule that
    // a connection must last `stableAfterMs` keeps the back-off from starting again every time.
    const server = new WebSocket.Server({ host: "127.0.0.1", port: 0 });
    await new Promise((resolve) => server.on("listening", resolve));
    server.on("connection", (socket) => socket.close(4001, "backlog"));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    const c = new CairnClient(`ws://127.0.0.1:${server.address().port}/ws`, {
        WebSocket,
        reconnectDelayMs: 10,
        maxReconnectDelayMs: 1000,
        random: () => 1,
    });
    t.after(() => c.close());
    const delays = [];
    const fourth = new Promise((resolve) =>
        c.on("close", (info) => {
            delays.push(info.delayMs);
            if (delays.length === 4) resolve();
        }),
    );
    c.connect().catch(() => {});
    await fourth;
    c.close();
    assert.deepEqual(delays, [10, 20, 40, 80]);
});

test("killed and restarted under it, the client signs in again, re-watches and gets the next pos", T, async (t) => {
    const { a, b, alice, bob } = await friends(t);
    const replies = [];
    await b.watch("friends.watch", {}, (reply) => replies.push(reply));
    const states = recordStates(b);
    let repliesWhenConnected = -1;
    b.on("state", (s) => {
        if (s === "connected") repliesWhenConnected = replies.length;
    });
    const closes = [];
    b.on("close", (info) => closes.push(info));
    const auths = [];
    b.on("auth", (info) => auths.push(info));

    // A request the hub never answers fails as disconnected when the connection goes.
    await hub.pause();
    const pending = assert.rejects(b.request("whoami"), (error) => {
        assert.ok(error instanceof CairnError);
        assert.equal(error.code, "disconnected");
        return true;
    });
    await killHub(a, b);
    await pending;
    assert.equal(closes[0].code, 1006);
    assert.equal(closes[0].reconnect, true);
    assert.equal(typeof closes[0].delayMs, "number");

    await restartHub(a, b);
    assert.deepEqual(states.slice(0, 2), ["disconnected", "connecting"]);
    assert.equal(states.at(-1), "connected");
    assert.equal(auths.at(-1).user.id, bob.user.id, "signed in again with its token");
    assert.equal((await b.request("whoami")).user.id, bob.user.id);
    assert.equal(repliesWhenConnected, 2, "connected once the watch was sent again and its reply delivered");

    const seen = nextEvent(b, "pos", (ev) => ev.user === alice.user.id && ev.lat === 51.5);
    a.send("pos", { lat: 51.5, lon: -0.12, ts: Date.now() });
    await seen;
});

test("a pos sent while offline is kept, latest wins, and sent once after the reconnect", T, async (t) => {
    const recording = recordingWebSocket(WebSocket);
    const { a, b, alice } = await friends(t, { WebSocket: recording.WebSocket });
    await killHub(a, b);

    assert.equal(a.send("pos", { lat: 40.1, lon: -3.1, ts: Date.now() }), false);
    assert.equal(a.send("pos", { lat: 40.2, lon: -3.2, ts: Date.now() }), false);
    assert.equal(a.send("friend.list"), false, "other ops are not kept");
    const queued = a.request("whoami");
    const before = recording.sent.length;

    await restartHub(a, b);
    assert.equal((await queued).user.id, alice.user.id, "a request made offline goes out after the reconnect");
    const after = recording.sent.slice(before);
    assert.equal(after[0].op, "auth");
    const positions = after.filter((line) => line.op === "pos");
    assert.equal(positions.length, 1);
    assert.equal(positions[0].lat, 40.2);
    assert.equal(positions[0].lon, -3.2);
    assert.equal(positions[0].id, undefined);
    assert.equal(after.filter((line) => line.op === "friend.list").length, 0);

    // The hub took it: alice's whoami was answered after it, and bob now sees her there.
    const { positions: seen } = await b.request("friends.watch");
    const hers = seen.find((p) => p.user === alice.user.id);
    assert.equal(hers?.lat, 40.2);
});

test("a logout that fails still signs the client out: the reconnect does not sign it back in", T, async (t) => {
    const c = await client(t, { requestTimeoutMs: 300 });
    await c.register({ username: username("leaving"), password: "password1" });
    await killHub(c);
    await assert.rejects(c.logout(), { code: "timeout" });
    assert.equal(c.token, null);
    assert.equal(c.user, null);
    await restartHub(c);
    await assert.rejects(c.request("whoami"), { code: "unauthorized" });
});

test("a terminal close (4500 after logout everywhere) is not retried", T, async (t) => {
    const reconnectDelayMs = 20;
    const c = await client(t, { reconnectDelayMs });
    const { user } = await c.register({ username: username("gone"), password: "password1" });
    const other = await client(t);
    await other.login(user.username, "password1");
    c.send("pos", { lat: 1, lon: 1 });
    const states = recordStates(c);
    const closed = nextEvent(c, "close");

    await other.logout({ all: true });
    const info = await closed;
    assert.equal(info.code, 4500);
    assert.equal(info.reconnect, false);
    assert.equal(c.state, "disconnected");
    assert.equal(c.token, null);
    assert.equal(c.user, null);
    await assert.rejects(c.request("whoami"), { code: "disconnected" });
    assert.equal(other.state, "connected");
    assert.equal(other.token, null);

    // No attempt follows: 25 times the first back-off delay passes without one.
    await new Promise((resolve) => setTimeout(resolve, reconnectDelayMs * 25));
    assert.deepEqual(states, ["disconnected"]);

    // Signing in again reopens the connection.
    const again = await c.login(user.username, "password1");
    assert.equal(again.user.id, user.id);
    assert.equal(c.state, "connected");
});

test("after 4429 the client pauses at least rateLimitPauseMs before reconnecting", T, async (t) => {
    const c = await client(t, { rateLimitPauseMs: 1500 });
    await c.register({ username: username("flood"), password: "password1" });
    const closed = nextEvent(c, "close");
    const reconnected = nextEvent(c, "state", (s) => s === "connected", 30000);
    for (let i = 0; i < 600; i++) c.send("whoami");
    const info = await closed;
    const closedAt = Date.now();
    assert.equal(info.code, 4429);
    assert.equal(info.reconnect, true);
    assert.ok(info.delayMs >= 1500, `delay ${info.delayMs}`);
    await reconnected;
    assert.ok(Date.now() - closedAt >= 1400);
    assert.equal((await c.request("whoami")).user.username, c.user.username);
});
