// The client against a real hub, over Debian's node-ws: accounts, requests and their errors, state events, a friend's
// position pushed to a watcher, request timeouts and media uploads.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, test } from "node:test";

import { CairnClient, CairnError } from "../cairn.js";
import { loadWs, nextEvent, recordStates, startHub, username } from "./hub.mjs";

const WebSocket = loadWs();
const T = { timeout: 60000 };
let hub;

before(async () => {
    hub = await startHub();
});

after(async () => {
    await hub?.dispose();
});

/** A connected client with fast reconnects, closed when the test ends. */
async function client(t, options = {}) {
    const c = new CairnClient(hub.url, { WebSocket, reconnectDelayMs: 50, maxReconnectDelayMs: 500, ...options });
    t.after(() => c.close());
    await c.connect();
    return c;
}

/** Two signed-in clients who are friends. */
async function friends(t) {
    const a = await client(t);
    const b = await client(t);
    const alice = await a.register({ username: username("alice"), password: "password1" });
    const bob = await b.register({ username: username("bob"), password: "password1" });
    assert.equal((await a.request("friend.request", { user: bob.user.id })).status, "pending");
    assert.equal((await b.request("friend.accept", { user: alice.user.id })).status, "friends");
    return { a, b, alice, bob };
}

test("register, login and authenticate resolve to {user, token}; a wrong password is a CairnError", T, async (t) => {
    const name = username("ann");
    const c = await client(t);
    const registered = await c.register({ username: name, password: "password1", name: "Ann" });
    assert.equal(registered.user.username, name);
    assert.equal(registered.user.name, "Ann");
    assert.match(registered.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(c.token, registered.token);
    assert.deepEqual(c.user, registered.user);

    const other = await client(t);
    const loggedIn = await other.login(name, "password1");
    assert.equal(loggedIn.user.id, registered.user.id);
    assert.notEqual(loggedIn.token, registered.token);

    const third = await client(t);
    const authenticated = await third.authenticate(registered.token);
    assert.deepEqual(authenticated, { user: registered.user, token: registered.token });
    assert.equal((await third.request("whoami")).user.id, registered.user.id);

    const wrong = await client(t);
    await assert.rejects(wrong.login(name, "password2"), (error) => {
        assert.ok(error instanceof CairnError);
        assert.equal(error.code, "invalid_credentials");
        assert.equal(error.message, "Login failed");
        assert.equal(error.op, "login");
        return true;
    });
    assert.equal(wrong.token, null);
    await assert.rejects(wrong.authenticate("A".repeat(43)), { name: "CairnError", code: "unauthorized" });
});

test("a client built with a token signs in when it connects", T, async (t) => {
    const first = await client(t);
    const { user, token } = await first.register({ username: username("tok"), password: "password1" });
    const c = new CairnClient(hub.url, { WebSocket, token });
    t.after(() => c.close());
    assert.deepEqual(await c.connect(), { user });
    assert.equal((await c.request("whoami")).user.id, user.id);

    const refused = new CairnClient(hub.url, { WebSocket, token: "B".repeat(43) });
    t.after(() => refused.close());
    await assert.rejects(refused.connect(), { name: "CairnError", code: "unauthorized" });
    assert.equal(refused.state, "connected");
    assert.equal(refused.token, null);
});

test("request resolves to the reply without id and ok, and rejects with the hub's error codes", T, async (t) => {
    const c = await client(t);
    await assert.rejects(c.request("friend.list"), { code: "unauthorized" });
    const { user } = await c.register({ username: username("req"), password: "password1" });
    const reply = await c.request("whoami");
    assert.deepEqual(Object.keys(reply), ["user"]);
    assert.equal(reply.user.id, user.id);
    await assert.rejects(c.request("friend.request", { user: 999999999 }), { code: "not_found" });
    await assert.rejects(c.request("no.such.op"), (error) => {
        assert.equal(error.code, "bad_request");
        assert.match(error.message, /unknown op/);
        return true;
    });
    await assert.rejects(c.request("pos", { lat: 91, lon: 0 }), { code: "bad_request" });
    // Too large for the hub: refused here, so the hub never closes the connection with 1009.
    await assert.rejects(c.request("user.search", { q: "x".repeat(70000) }), { code: "too_large" });
    assert.equal(c.state, "connected");
});

test("retry_after_ms becomes retryAfterMs", T, async (t) => {
    // Each password check spends one of 10 per connection; the 11th is refused with retry_after_ms.
    const c = await client(t);
    let limited;
    for (let i = 0; i < 12 && !limited; i++) {
        try {
            await c.login(username("nobody"), "password1");
        } catch (error) {
            if (error.code === "rate_limited") limited = error;
            else assert.equal(error.code, "invalid_credentials");
        }
    }
    assert.ok(limited, "no rate_limited within 12 logins");
    assert.equal(typeof limited.retryAfterMs, "number");
    assert.ok(limited.retryAfterMs > 0);
});

test("state goes connecting, connected, then disconnected on close(); close() is final", T, async (t) => {
    const c = new CairnClient(hub.url, { WebSocket });
    const states = recordStates(c);
    assert.equal(c.state, "disconnected");
    await c.connect();
    assert.deepEqual(states, ["connecting", "connected"]);
    c.close();
    assert.deepEqual(states, ["connecting", "connected", "disconnected"]);
    await assert.rejects(c.connect(), { code: "closed" });
    await assert.rejects(c.request("whoami"), { code: "closed" });
    assert.equal(c.send("pos", { lat: 1, lon: 1 }), false);
});

test("a friend's pos reaches a watcher through watch('friends.watch') and on('pos')", T, async (t) => {
    const { a, b, alice } = await friends(t);
    const replies = [];
    const first = await b.watch("friends.watch", {}, (reply) => replies.push(reply));
    assert.ok(Array.isArray(first.positions));
    assert.deepEqual(replies, [first]);

    const seen = nextEvent(b, "pos", (ev) => ev.user === alice.user.id);
    assert.equal(a.send("pos", { lat: 48.8566, lon: 2.3522, acc: 12, ts: Date.now() }), true);
    const ev = await seen;
    assert.equal(ev.ev, "pos");
    assert.equal(ev.lat, 48.8566);
    assert.equal(ev.lon, 2.3522);
    assert.equal(ev.acc, 12);

    // An unsubscribed handler hears nothing more; one still subscribed does.
    let heard = 0;
    const off = b.on("pos", () => heard++);
    off();
    const again = nextEvent(b, "pos", (e) => e.lat === 48.86);
    a.send("pos", { lat: 48.86, lon: 2.35, ts: Date.now() });
    await again;
    assert.equal(heard, 0);

    // After unwatch the hub stops pushing: a request on the same connection proves the next pos was handled.
    assert.deepEqual(await b.unwatch("friends.watch"), {});
    let late = 0;
    b.on("pos", () => late++);
    a.send("pos", { lat: 48.87, lon: 2.35, ts: Date.now() });
    await a.request("whoami");
    await b.request("whoami");
    assert.equal(late, 0);
});

test("a request without a reply in time rejects with a typed timeout", T, async (t) => {
    const c = await client(t, { requestTimeoutMs: 300 });
    await c.register({ username: username("slow"), password: "password1" });
    await hub.pause();
    try {
        await assert.rejects(c.request("whoami"), (error) => {
            assert.ok(error instanceof CairnError);
            assert.equal(error.code, "timeout");
            assert.equal(error.op, "whoami");
            return true;
        });
        await assert.rejects(c.request("whoami", {}, { timeoutMs: 100 }), { code: "timeout" });
    } finally {
        hub.resume();
    }
    // The late replies to the timed-out requests are ignored; the connection still works.
    assert.ok((await c.request("whoami")).user);
});

/** The smallest PNG the hub accepts: its 8-byte signature and a few bytes more. */
function png(seed) {
    return new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, seed & 0xff, 1, 2, 3]);
}

test("upload posts bytes or a Blob to /v1/media and resolves to the media id", T, async (t) => {
    const c = await client(t);
    await assert.rejects(c.upload(png(1), "image/png"), { code: "unauthorized" });
    await c.register({ username: username("up"), password: "password1" });
    assert.equal(c.mediaUrl, `${hub.httpUrl}/v1/media`);

    const bytes = png(2);
    const id = await c.upload(bytes, "image/png");
    assert.equal(id, createHash("sha256").update(bytes).digest("hex"));
    const blob = new Blob([png(3)], { type: "image/png" });
    assert.equal(await c.upload(blob), createHash("sha256").update(png(3)).digest("hex"));

    await assert.rejects(c.upload(new TextEncoder().encode("not a picture"), "image/png"), (error) => {
        assert.ok(error instanceof CairnError);
        assert.equal(error.status, 415);
        assert.equal(error.code, "bad_request");
        return true;
    });
    // The uploaded media is usable: a relic may carry it.
    await c.request("pos", { lat: 10, lon: 10, ts: Date.now() - 2000 });
    await c.request("pos", { lat: 10, lon: 10, ts: Date.now() });
    const relic = await c.request("relic.create", { lat: 10, lon: 10, text: "hi", media: id, radius: 100, ttl: 3600 });
    assert.equal(relic.relic.media, id);
});
