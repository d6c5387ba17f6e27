// The client on Node's own WebSocket (the global one, `node --experimental-websocket` on Node 20), as in a browser:
// no implementation passed in. Signs in, watches a friend, and survives a graceful restart of the hub (1001).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { CairnClient } from "../cairn.js";
import { nextEvent, startHub, username } from "./hub.mjs";

let hub;

before(async () => {
    hub = await startHub();
});

after(async () => {
    await hub?.dispose();
});

test("the global WebSocket exists (run with --experimental-websocket on Node 20)", () => {
    assert.equal(typeof globalThis.WebSocket, "function");
});

const T = { timeout: 90000 };

test("with the global WebSocket: sign in, watch a friend, reconnect after a graceful restart", T, async (t) => {
    const options = { reconnectDelayMs: 20, maxReconnectDelayMs: 300 };
    const a = new CairnClient(hub.url, options);
    const b = new CairnClient(hub.url, options);
    t.after(() => {
        a.close();
        b.close();
    });
    await a.connect();
    await b.connect();
    const alice = await a.register({ username: username("alice"), password: "password1" });
    const bob = await b.login(
        (await b.register({ username: username("bob"), password: "password1" })).user.username,
        "password1",
    );
    await a.request("friend.request", { user: bob.user.id });
    await b.request("friend.accept", { user: alice.user.id });
    await b.watch("friends.watch");

    const first = nextEvent(b, "pos", (ev) => ev.user === alice.user.id);
    a.send("pos", { lat: 35.68, lon: 139.69, ts: Date.now() });
    assert.equal((await first).lat, 35.68);

    const closed = nextEvent(b, "close");
    const up = [a, b].map((c) => nextEvent(c, "state", (s) => s === "connected", 30000));
    await hub.kill("SIGTERM");
    const info = await closed;
    assert.equal(info.code, 1001);
    assert.equal(info.reconnect, true);
    await hub.start();
    await Promise.all(up);

    const next = nextEvent(b, "pos", (ev) => ev.user === alice.user.id && ev.lat === 35.7);
    a.send("pos", { lat: 35.7, lon: 139.7, ts: Date.now() });
    await next;
});
