// What the web app's parts share: the signed-in session (its client, the user, the map), small DOM helpers, the
// visible alert, and the hooks through which each feature (friends, chat, relics, items, pictures, places) learns
// that a session started, that the connection came back, that the user moved, or that the session ended. A
// feature owns its state and its part of the page; this module owns none of it.
import { CairnError } from "/cairn.js";

export const $ = (selector, root = document) => root.querySelector(selector);

/** Makes an element: attributes (`class`, `text`, `on<event>` handlers, the rest as attributes) and children. */
export const el = (tag, attributes = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
};

/** Line icons drawn with SVG (fonts on many systems have no emoji): each a list of shapes in a 24-unit box. */
const ICONS = {
  envelope: [["rect", { x: 3, y: 6, width: 18, height: 13, rx: 2 }], ["path", { d: "M3 8l9 6 9-6" }]],
  lock: [["rect", { x: 5, y: 11, width: 14, height: 10, rx: 2 }], ["path", { d: "M8 11V8a4 4 0 0 1 8 0v3" }]],
};

export function icon(name, size = 16) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [key, value] of Object.entries({ viewBox: "0 0 24 24", width: size, height: size, fill: "none",
    stroke: "currentColor", "stroke-width": 2, "stroke-linecap": "round", "stroke-linejoin": "round",
    "aria-hidden": "true", class: `icon icon-${name}` })) svg.setAttribute(key, String(value));
  for (const [tag, attributes] of ICONS[name]) {
    const shape = document.createElementNS(ns, tag);
    for (const [key, value] of Object.entries(attributes)) shape.setAttribute(key, String(value));
    svg.append(shape);
  }
  return svg;
}

/** Replaces a node's children with the given ones, leaving out the absent (null, undefined, false). */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}

/**
 * The session the page speaks for: `client` (the CairnClient, null when signed out), `me` (the signed-in user),
 * `map` (the Leaflet map, made once), `position` (where the user last placed themselves: {lat, lon, acc?}), and
 * `friends` (id → what the page knows of each friend: {id, username, name, online, pos?}).
 */
export const session = { client: null, me: null, map: null, position: null, friends: new Map() };

// MARK: The alert

export function showError(error, { sticky = false } = {}) {
  const alert = $(".alert");
  let text = error instanceof CairnError ? error.message : String(error?.message ?? error);
  if (error instanceof CairnError && error.retryAfterMs) {
    text += ` (try again in ${Math.ceil(error.retryAfterMs / 1000)} s)`;
  }
  alert.textContent = text;
  alert.hidden = false;
  clearTimeout(showError.timer);
  if (!sticky) showError.timer = setTimeout(() => { alert.hidden = true; }, 8000);
}

/** Says something worth knowing that is not an error (a relic appeared, an item was left behind), for a while. */
export function notice(text) {
  const box = $(".notice");
  const line = el("p", { text });
  box.append(line);
  box.hidden = false;
  while (box.childElementCount > 3) box.firstElementChild.remove();
  setTimeout(() => {
    line.remove();
    if (!box.childElementCount) box.hidden = true;
  }, 8000);
}

export function clearError() {
  $(".alert").hidden = true;
}

/**
 * Runs a request and shows its refusal instead of swallowing it; resolves to the reply or undefined. A reply that
 * arrives after its session ended (signed out, or another account signed in on the page meanwhile) is dropped too:
 * what one account was told is never drawn for the next.
 */
export async function attempt(op, fields = {}) {
  const client = session.client;
  if (!client) return undefined;
  try {
    const reply = await client.request(op, fields);
    return client === session.client ? reply : undefined;
  } catch (error) {
    if (client === session.client) showError(error);
    return undefined;
  }
}

/** What is being done now, by what started it (a form, a list row). */
const running = new WeakSet();

/**
 * Runs `work` unless the same `key` (a form, a row) is running it already: a double click or a second Enter while
 * the first request is on its way does not send it twice. Resolves to what `work` resolves to, or undefined.
 */
export async function once(key, work) {
  if (running.has(key)) return undefined;
  running.add(key);
  try {
    return await work();
  } finally {
    running.delete(key);
  }
}

/**
 * Makes `work(key)` run at most once every `ms` for each key, one run at a time: calls meanwhile are merged into one
 * run after. A flood of events from the hub (a friend's messages, a bucket's changes) then costs the page a request
 * a while rather than a request each, so another user cannot push the page over the hub's request rate.
 */
export function paced(work, ms) {
  const keys = new Map();
  const run = (key) => {
    const state = keys.get(key) ?? { busy: false, again: false, last: -Infinity, timer: null };
    keys.set(key, state);
    if (state.busy || state.timer) {
      state.again = true;
      return;
    }
    const wait = state.last + ms - Date.now();
    if (wait > 0) {
      state.timer = setTimeout(() => {
        state.timer = null;
        run(key);
      }, wait);
      return;
    }
    state.busy = true;
    state.again = false;
    state.last = Date.now();
    Promise.resolve().then(() => work(key)).catch((error) => showError(error)).finally(() => {
      state.busy = false;
      if (state.again) run(key);
    });
  };
  return run;
}

// MARK: Words for numbers

export function distanceText(metres) {
  if (metres === undefined || metres === null) return "";
  return metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(metres < 10_000 ? 1 : 0)} km`;
}

export function age(ts) {
  const seconds = Math.max(0, Math.round((Date.now() - ts) / 1000));
  if (seconds < 45) return "just now";
  if (seconds < 90) return "a minute ago";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/** A moment as the reader's clock shows it: the time today, the date and time otherwise. */
export function when(ts) {
  const date = new Date(ts);
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** The great-circle distance in metres between two points ({lat, lon}). */
export function metresBetween(a, b) {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function initial(person) {
  const text = (person?.name || person?.username || "?").trim();
  return [...text][0]?.toUpperCase() ?? "?";
}

/** Fills an avatar: the person's photo when they have one (its signed URL as the hub sent it), else their initial.
 * Left as it is when nothing changed, so a move does not reload the picture. */
export function fillAvatar(avatar, person) {
  const photo = person?.photo_url ?? "";
  const text = initial(person);
  if (avatar.dataset.photo === photo && avatar.dataset.initial === text) return;
  avatar.dataset.photo = photo;
  avatar.dataset.initial = text;
  if (!photo) {
    avatar.textContent = text;
    return;
  }
  const image = el("img", { src: photo, alt: "" });
  image.addEventListener("error", () => { avatar.textContent = text; }, { once: true });
  avatar.replaceChildren(image);
}

export function displayName(person) {
  return person?.name || person?.username || "someone";
}

// MARK: Features

const features = [];

/**
 * Registers a part of the app. Each hook is optional: `start(client)` when a session starts (register the client's
 * events there; the client is the session's for as long as `session.client === client`), `reconnected()` after the
 * connection came back (read again what may have changed meanwhile), `moved(position)` when the user placed
 * themselves, `end()` when the session ends (forget everything shown).
 */
export function feature(hooks) {
  features.push(hooks);
}

/** Calls one hook of every feature; a feature that throws is reported and does not stop the others. */
export function notify(hook, ...args) {
  for (const hooks of features) {
    if (!hooks[hook]) continue;
    try {
      const result = hooks[hook](...args);
      if (result instanceof Promise) result.catch((error) => showError(error));
    } catch (error) {
      showError(error);
    }
  }
}

/** Keeps a handler for a client's event only while that client is the session's. */
export function live(client, handler) {
  return (event) => {
    if (client === session.client) handler(event);
  };
}

/** Reads a file the user chose and uploads it through the client (`POST /v1/media`); resolves to the media id. */
export async function uploadFile(file) {
  const client = session.client;
  if (!client) throw new Error("Sign in first.");
  return client.upload(file, file.type || "application/octet-stream");
}
