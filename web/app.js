// The placeholder web app: loads the client library the hub serves at /cairn.js, connects to the hub's WebSocket
// on the same origin and shows the connection state in the element marked data-connection. The map comes later.
import { CairnClient } from "/cairn.js";

const indicator = document.querySelector("[data-connection]");

function show(state) {
  const value = state === "connected" || state === "connecting" ? state : "offline";
  indicator.dataset.connection = value;
  indicator.textContent = value;
}

const scheme = location.protocol === "https:" ? "wss:" : "ws:";
const client = new CairnClient(`${scheme}//${location.host}/ws`);
client.on("state", show);
show("connecting");
client.connect().catch(() => show("offline"));
