// Compiled by test/run.sh (tsc --noEmit, never run): code written against cairn.d.ts the way an application uses the
// client. It fails to compile when the declarations lose or change a name of the fixed API.

import { CairnClient, CairnError, isTerminalCloseCode, PROTOCOL } from "../cairn.js";
import type { CairnCloseInfo, CairnPosEvent, CairnSession, CairnState, CairnUser } from "../cairn.js";

export async function example(ws: unknown): Promise<void> {
    const client = new CairnClient("ws://127.0.0.1:7681/ws", {
        WebSocket: ws,
        token: null,
        requestTimeoutMs: 5000,
        reconnectDelayMs: 250,
        maxReconnectDelayMs: 10000,
        rateLimitPauseMs: 30000,
    });
    const protocol: "cairn.v1" = PROTOCOL;
    const terminal: boolean = isTerminalCloseCode(4503);
    const connected: { user: CairnUser | null } = await client.connect();
    const registered: CairnSession = await client.register({ username: "ann", password: "password1", name: "Ann" });
    const loggedIn: CairnSession = await client.login("ann", "password1");
    const resumed: CairnSession = await client.authenticate(registered.token);
    const offState: () => void = client.on("state", (state: CairnState) => state);
    const offPos: () => void = client.on("pos", (event: CairnPosEvent) => event.lat + event.lon + event.ts);
    client.on("close", (info: CairnCloseInfo) => info.reconnect && info.code);
    client.on("chat.msg", (event) => event.ev);
    const sent: boolean = client.send("pos", { lat: 1, lon: 2, acc: 5 });
    const reply = await client.watch("friends.watch", {}, (again) => again);
    try {
        await client.request("friend.list", {}, { timeoutMs: 1000 });
    } catch (error) {
        if (error instanceof CairnError) {
            const code: string = error.code;
            const message: string = error.message;
            const retry: number | undefined = error.retryAfterMs;
            void [code, message, retry];
        }
    }
    const media: string = await client.upload(new Uint8Array([0xff, 0xd8, 0xff]), "image/jpeg");
    await client.unwatch("friends.watch");
    await client.logout({ all: true });
    client.close();
    void [protocol, terminal, connected, loggedIn, resumed, offState, offPos, sent, reply, media];
}
