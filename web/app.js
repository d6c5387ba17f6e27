// Cairn's web app: sign in, then a live map of the friends the hub lets you see, with their presence, and the
// controls over what you share with each of them. Everything it says to the hub goes through the client library
// (/cairn.js); what it draws comes from the hub's replies and pushes, as the hub sent them: the server decides what
// a viewer may see, the page only draws it. Leaflet (Debian's libjs-leaflet, served by the hub) draws the map over an
// offline basemap of the world's countries, or over tiles when the operator configured a tile server.
import { CairnClient, CairnError } from "/cairn.js";
import {
  $, age, attempt, clearError, el, feature, fillAvatar, initial, notify, once, session, showError,
} from "./shared.js";

const TOKEN_KEY = "cairn.token";
/** The token this page signed in with. The browser keeps one for every tab of the origin: a page forgets it only if
 * it is still its own, not one another tab kept since for another account. */
let myToken = null;

function forgetToken(token) {
  if (token && localStorage.getItem(TOKEN_KEY) === token) localStorage.removeItem(TOKEN_KEY);
}
/** What the page knows of each friend: who they are, whether they are online, their last position as sent. */
const friends = session.friends;
let client = null;
let me = null;
let map = null;

function setClient(made) {
  client = made;
  session.client = made;
}
let myMarker = null;
let myAccuracy = null;
let selected = null;
let trail = null;
let following = false;
let geolocationWatch = null;
let pausedUntil = undefined; // undefined: sharing; null: paused until resumed; a number: paused until then (ms)

// MARK: Alerts and the connection indicator

function setConnection(state) {
  const indicator = $("[data-connection]");
  const value = state === "connected" ? "connected" : state === "connecting" ? "connecting" : "offline";
  indicator.dataset.connection = value;
  indicator.textContent = value;
}

// MARK: Signing in

function newClient(token) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const made = new CairnClient(`${scheme}//${location.host}/ws`, token ? { token } : {});
  // Only the page's current client speaks for it: one replaced or signed out is not heard any more.
  const live = (handler) => (event) => { if (made === client) handler(event); };
  made.on("state", live(setConnection));
  made.on("pos", live((ev) => moved(ev)));
  made.on("pos.hidden", live((ev) => hide(ev.user)));
  made.on("presence", live((ev) => presence(ev.user, ev.online)));
  made.on("friend.request", live(() => loadRequests()));
  made.on("friend.accepted", live((ev) => {
    const user = ev.user;
    friends.set(user.id, { ...user, online: user.online ?? false, ...(friends.get(user.id) ?? {}) });
    renderFriends();
    loadRequests();
    loadPhotos();
  }));
  made.on("friend.removed", live((ev) => forget(ev.user.id)));
  // The hub ended the session for good (signed out everywhere, suspended) or refused the token after a reconnect:
  // the page forgets the token and the friends it showed, and says why.
  made.on("close", ({ code, reason, reconnect }) => {
    if (reconnect || made !== client || !me) return;
    const why = {
      4500: "You were signed out (the session was ended elsewhere).",
      4503: "This account is suspended.",
      4508: "The connection was closed before signing in finished.",
    }[code] ?? `The hub closed the connection (${code}${reason ? `: ${reason}` : ""}).`;
    endSession(why);
  });
  made.on("auth", ({ user, error }) => {
    if (user || made !== client || !me) return;
    endSession(error?.message ?? "You were signed out.");
  });
  return made;
}

async function signIn(action, form) {
  clearError();
  const username = form.username.value.trim();
  const password = form.password.value;
  if (action !== "guest" && (!username || !password)) {
    showError(new Error("Enter a username and a password."));
    return;
  }
  // One sign-in at a time: the form waits for this one, and a client replaced meanwhile is left alone.
  form.inert = true;
  client?.close();
  const made = newClient();
  setClient(made);
  try {
    await made.connect();
    let signedIn;
    if (action === "login") signedIn = await made.login(username, password);
    else if (action === "register") {
      const name = form.name.value.trim();
      signedIn = await made.register({ username, password, ...(name ? { name } : {}) });
    } else signedIn = await made.guest();
    if (made !== client) return;
    myToken = signedIn.token;
    localStorage.setItem(TOKEN_KEY, signedIn.token);
    form.password.value = "";
    await start(signedIn.user);
  } catch (error) {
    made.close();
    if (made !== client) return;
    setClient(null);
    setConnection("offline");
    showError(error);
  } finally {
    form.inert = false;
  }
}

async function resume(token) {
  const made = newClient(token);
  setClient(made);
  myToken = token;
  try {
    // A client given a token signs in with it as it connects.
    await made.connect();
    if (made !== client) return;
    await start(made.user ?? (await made.authenticate(token)).user);
  } catch (error) {
    made.close();
    if (made !== client) return;
    setClient(null);
    setConnection("offline");
    if (error instanceof CairnError && (error.code === "unauthorized" || error.code === "suspended")) {
      forgetToken(token);
    }
    $(".boot").hidden = true;
    $(".sign-in").hidden = false;
    showError(error);
  }
}

/** Signs out at once on this page; the token is revoked on the hub in the background (best effort, bounded). */
function signOut() {
  const ending = client;
  setClient(null); // the client's own "auth" and "close" events are this sign-out, not news
  endSession(null, ending);
  if (!ending) return;
  ending.request("logout", {}, { timeoutMs: 5000 }).catch(() => {}).finally(() => ending.close());
}

/** Forgets the session on this page: the token, the friends drawn, the map's markers; shows the sign-in form. */
function endSession(message, keepOpen = null) {
  const closing = client;
  setClient(null);
  me = session.me = null;
  if (closing !== keepOpen) closing?.close();
  $(".search-results").replaceChildren();
  $(".request-list").replaceChildren();
  $(".requests").hidden = true;
  $("#people-search").value = "";
  forgetToken(myToken);
  myToken = null;
  if (geolocationWatch !== null) navigator.geolocation.clearWatch(geolocationWatch);
  geolocationWatch = null;
  for (const id of [...friends.keys()]) forget(id);
  myMarker?.remove();
  myAccuracy?.remove();
  myMarker = myAccuracy = null;
  // The map goes back to the whole world: where this user and their friends were is not shown to whoever signs in
  // next, nor are the notices said to this user.
  map?.closePopup();
  map?.setView([30, 0], 2, { animate: false });
  following = false;
  $(".notice").replaceChildren();
  $(".notice").hidden = true;
  pausedUntil = undefined;
  session.viewTouched = false;
  session.position = null;
  reportedOnThisConnection = false;
  notify("end");
  $(".my-position").textContent = "No position yet.";
  $(".app").hidden = true;
  $(".sign-in").hidden = false;
  $(".whoami").hidden = true;
  $(".sign-out").hidden = true;
  setConnection("offline");
  if (message) showError(new Error(message), { sticky: true });
}

async function start(user) {
  me = session.me = user;
  $(".boot").hidden = true;
  $(".sign-in").hidden = true;
  $(".app").hidden = false;
  $(".whoami").textContent = `Signed in as ${user.name || user.username}`;
  $(".whoami").hidden = false;
  $(".sign-out").hidden = false;
  const made = client;
  // Each wait below may outlast the session (signed out, or another account signed in meanwhile): what comes back
  // then is not this page's any more, and the start goes no further.
  const current = () => made === client && me === user;
  await showMap();
  if (!current()) return;
  const list = await attempt("friend.list");
  if (!current()) return;
  for (const friend of list?.friends ?? []) {
    friends.set(friend.id, { ...friend, ...(friends.get(friend.id) ?? {}), online: friend.online });
  }
  await loadSharing();
  if (!current()) return;
  renderFriends();
  loadRequests();
  loadPhotos();
  // The watch is sent again after every reconnect; each answer lists every position visible now, so a friend
  // missing from it is no longer shown (hidden, or gone while this page was away).
  try {
    await made.watch("friends.watch", {}, (reply) => {
      if (made !== client) return;
      const visible = new Set((reply.positions ?? []).map((p) => p.user));
      for (const friend of [...friends.values()]) if (friend.pos && !visible.has(friend.id)) hide(friend.id);
      for (const position of reply.positions ?? []) moved(position);
    });
  } catch (error) {
    if (!current()) return;
    throw error;
  }
  if (!current()) return;
  made.on("state", (state) => {
    if (state === "connected" && made === client) refreshAfterReconnect();
  });
  notify("start", made);
  if (navigator.geolocation && navigator.permissions) {
    navigator.permissions.query({ name: "geolocation" }).then((status) => {
      if (status.state === "granted" && current()) locate();
    }).catch(() => {});
  }
  fitAll();
}

// MARK: Friends' photos

/** A photo's URL is signed for a while (media.url_lifetime, 10 minutes by default): read again well before. */
const PHOTO_FRESH_MS = 8 * 60 * 1000;

/** Reads the friends' profiles (`user.get`) for their photos, those not read lately; `all` reads every one. */
async function loadPhotos({ all = false } = {}) {
  const made = client;
  const due = [...friends.values()].filter((f) => all || !f.photoAt || Date.now() - f.photoAt > PHOTO_FRESH_MS);
  await Promise.all(due.map(async (friend) => {
    try {
      const reply = await made.request("user.get", { user: friend.id });
      const known = friends.get(friend.id);
      if (made !== client || !known) return;
      known.photo_url = reply.user.photo_url ?? null;
      known.photoAt = Date.now();
      if (known.marker) decorateMarker(known);
      updateRow(known);
    } catch {
      // A friend's photo is a nicety: their initial stands in.
    }
  }));
}

async function refreshAfterReconnect() {
  // A new connection is a new session for the hub: the position is reported (and confirmed) again.
  reportedOnThisConnection = false;
  const here = session.position;
  if (here) report({ lat: here.lat, lon: here.lon, ts: Date.now(), ...(here.acc ? { acc: Math.round(here.acc) } : {}) });
  notify("reconnected");
  const list = await attempt("friend.list");
  if (!list) return;
  const present = new Set(list.friends.map((f) => f.id));
  for (const id of [...friends.keys()]) if (!present.has(id)) forget(id);
  for (const friend of list.friends) presence(friend.id, friend.online, friend);
  await loadSharing();
  renderFriends();
  loadRequests();
  loadPhotos({ all: true });
}

// MARK: The map

async function showMap() {
  if (map) return;
  map = session.map = L.map("map", { maxZoom: 18, minZoom: 1, worldCopyJump: true, zoomControl: true });
  map.setView([30, 0], 2);
  let config = {};
  try {
    config = await (await fetch("/config.json")).json();
  } catch {
    config = {};
  }
  if (config.tiles) {
    L.tileLayer(config.tiles, { maxZoom: 18, attribution: config.attribution ?? "" }).addTo(map);
  } else {
    try {
      const countries = await (await fetch("/basemap/countries.geojson")).json();
      L.geoJSON(countries, {
        style: { color: "#b9b2a0", weight: 1, fillColor: "#f4f1e8", fillOpacity: 1 },
        interactive: false,
      }).addTo(map);
      map.attributionControl.addAttribution("Natural Earth");
      // Capitals for orientation, named once the map is close enough for the names not to crowd.
      const cities = await (await fetch("/basemap/cities.geojson")).json();
      const towns = L.layerGroup(cities.features.map((city) => {
        const [lon, lat] = city.geometry.coordinates;
        const dot = { radius: 3, color: "#7d776a", weight: 1, fillOpacity: 0.8, interactive: false };
        return L.circleMarker([lat, lon], dot)
          .bindTooltip(city.properties.name, { permanent: true, direction: "right", className: "city", opacity: 0.8 });
      }));
      const showTowns = () => (map.getZoom() >= 4 ? towns.addTo(map) : towns.remove());
      map.on("zoomend", showTowns);
      showTowns();
    } catch (error) {
      showError(new Error("The basemap could not be loaded."));
    }
  }
  L.control.scale({ imperial: false }).addTo(map);
  map.on("click", (event) => placeMyself(event.latlng.lat, event.latlng.lng));
  map.on("dragstart", () => {
    following = false;
    session.viewTouched = true;
  });
}

function describe(friend) {
  const p = friend.pos;
  const rows = [["Seen", age(p.ts)], ["At", new Date(p.ts).toLocaleTimeString()]];
  if (p.approx) rows.push(["Shown", "approximately (an area of about 2 km)"]);
  if (p.acc !== undefined) rows.push(["Accuracy", `${Math.round(p.acc)} m`]);
  if (p.spd !== undefined) rows.push(["Speed", `${(p.spd * 3.6).toFixed(1)} km/h`]);
  if (p.bat !== undefined) rows.push(["Battery", `${Math.round(p.bat)} %`]);
  if (p.flagged) rows.push(["Note", "this fix looks implausible"]);
  if (p.stale) rows.push(["Note", "last known position"]);
  const list = el("dl");
  for (const [term, detail] of rows) list.append(el("dt", { text: term }), el("dd", { text: detail }));
  return el("div", { class: "popup" }, el("strong", { text: friend.name || friend.username }), list);
}

// MARK: Crowds

/** From this many friends on the map, markers close together are drawn as one cluster (Leaflet.markercluster); below
 * CLUSTER_UNTIL again, each is drawn on its own. A cluster still holds one element per friend, with the same data
 * attributes as a marker, so what the page shows of each friend stays readable by tests and assistive technology. */
const CLUSTER_FROM = 30;
const CLUSTER_UNTIL = 20;
let cluster = null; // the cluster group while clustering, else null (markers sit on the map itself)

function addFriendMarker(marker) {
  if (cluster) cluster.addLayer(marker);
  else marker.addTo(map);
  const drawn = [...friends.values()].filter((f) => f.marker).length;
  if (!cluster && drawn >= CLUSTER_FROM && L.markerClusterGroup) startClustering();
}

function removeFriendMarker(marker) {
  if (cluster) cluster.removeLayer(marker);
  else marker.remove();
  const drawn = [...friends.values()].filter((f) => f.marker).length;
  if (cluster && drawn < CLUSTER_UNTIL) stopClustering();
}

function startClustering() {
  cluster = L.markerClusterGroup({
    maxClusterRadius: 40, showCoverageOnHover: false, spiderfyOnMaxZoom: true, iconCreateFunction: clusterIcon,
  });
  const markers = [...friends.values()].filter((f) => f.marker).map((f) => f.marker);
  for (const marker of markers) marker.remove();
  cluster.addLayers(markers);
  map.addLayer(cluster);
}

function stopClustering() {
  const markers = [...friends.values()].filter((f) => f.marker).map((f) => f.marker);
  const group = cluster;
  cluster = null;
  group.clearLayers();
  group.remove();
  for (const marker of markers) marker.addTo(map);
}

/** A cluster's look: how many friends, with an element per friend carrying what their marker would. */
function clusterIcon(group) {
  const members = group.getAllChildMarkers().map((marker) => friends.get(marker.friendId)).filter(Boolean);
  const online = members.filter((f) => f.online).length;
  const names = members.map((f) => f.name || f.username);
  const bubble = el("div", { class: "cluster-bubble", title: names.join(", ") },
    el("span", { class: "count", "aria-hidden": "true", text: String(members.length) }),
    ...members.map((friend) => {
      const member = el("span", { class: "member visually-hidden" });
      decorate(member, friend);
      return member;
    }));
  const size = members.length < 10 ? 38 : members.length < 100 ? 46 : 54;
  return L.divIcon({
    html: bubble, className: `friend-cluster${online ? "" : " offline"}`, iconSize: [size, size],
  });
}

/** Writes what the page shows of a friend onto an element: their id, where they are drawn, at what level,
 * whether they are online, their name. The page contract: tests and assistive technology read these. */
function decorate(element, friend) {
  const position = friend.pos;
  if (!position) return;
  element.dataset.user = String(friend.id);
  element.dataset.lat = String(position.lat);
  element.dataset.lon = String(position.lon);
  element.dataset.level = position.approx ? "approximate" : "precise";
  element.dataset.online = String(Boolean(friend.online));
  const name = friend.name || friend.username;
  element.title = name;
  element.setAttribute("aria-label", name);
}

/** Brings a friend's marker element up to date (Leaflet makes a new element each time a marker is added to the map,
 * for instance when a cluster opens). In a cluster, the cluster's element for them is redrawn instead. */
function decorateMarker(friend) {
  const element = friend.marker?.getElement();
  if (!element) {
    if (cluster && friend.marker) cluster.refreshClusters(friend.marker);
    return;
  }
  decorate(element, friend);
  element.setAttribute("role", "button"); // it opens the friend's details
  element.classList.toggle("stale", Boolean(friend.pos?.stale));
  element.classList.toggle("doubtful", Boolean(friend.pos?.flagged));
  element.classList.toggle("selected", selected === friend.id);
  if (!element.firstChild) element.append(el("span", { class: "avatar", "aria-hidden": "true" }));
  fillAvatar(element.firstChild, friend);
}

/** Draws (or moves) a friend's marker at the position the hub sent. */
function moved(position) {
  const id = position.user;
  const friend = friends.get(id) ?? { id, username: `user ${id}`, name: "", online: true };
  friends.set(id, friend);
  // What the friend shows changed level: nothing drawn at the old level stays (an open popup, the trail).
  const levelChanged = friend.pos !== undefined && Boolean(friend.pos.approx) !== Boolean(position.approx);
  if (levelChanged) {
    friend.marker?.closePopup();
    if (selected === id) trail?.setLatLngs([]);
  }
  friend.pos = position;
  const point = [position.lat, position.lon];
  if (!friend.marker) {
    const icon = L.divIcon({ className: "friend-marker", iconSize: [34, 34], iconAnchor: [17, 17], html: "" });
    friend.marker = L.marker(point, { icon, keyboard: true, riseOnHover: true });
    friend.marker.friendId = id;
    friend.marker.on("add", () => decorateMarker(friends.get(id) ?? friend));
    friend.marker.on("click", () => select(id));
    friend.marker.bindPopup(() => describe(friends.get(id) ?? friend));
    addFriendMarker(friend.marker);
  } else {
    friend.marker.setLatLng(point);
  }
  decorateMarker(friend);
  // An approximate position is an area, not a point; a precise one shows its accuracy.
  const radius = position.approx ? 1000 : position.acc;
  if (radius) {
    const style = position.approx
      ? { color: "#7a5cd6", weight: 1, fillOpacity: 0.15, dashArray: "4 4" }
      : { color: "#2f6fde", weight: 1, fillOpacity: 0.08 };
    if (!friend.circle) friend.circle = L.circle(point, { radius, interactive: false, ...style }).addTo(map);
    else friend.circle.setLatLng(point).setRadius(radius).setStyle(style);
  } else if (friend.circle) {
    friend.circle.remove();
    friend.circle = null;
  }
  if (selected === id) {
    trail.addLatLng(point);
    if (following) map.panTo(point);
  }
  renderFriends();
}

function hide(id) {
  const friend = friends.get(id);
  if (!friend) return;
  const marker = friend.marker;
  friend.marker = null; // no longer among the markers drawn, whatever removing it sets off
  if (marker) removeFriendMarker(marker);
  friend.circle?.remove();
  friend.circle = null;
  friend.pos = undefined;
  if (selected === id) select(null);
  renderFriends();
}

function forget(id) {
  hide(id);
  friends.delete(id);
  renderFriends();
}

function presence(id, online, details) {
  const friend = friends.get(id) ?? { id, username: details?.username ?? `user ${id}`, name: details?.name ?? "" };
  friend.online = online;
  if (details) Object.assign(friend, { username: details.username, name: details.name });
  friends.set(id, friend);
  if (friend.marker) decorateMarker(friend);
  renderFriends();
}

function select(id) {
  for (const friend of friends.values()) friend.marker?.getElement()?.classList.remove("selected");
  trail?.remove();
  trail = null;
  selected = id;
  following = id !== null;
  const friend = id === null ? null : friends.get(id);
  if (!friend) return renderFriends();
  trail = L.polyline(friend.pos ? [[friend.pos.lat, friend.pos.lon]] : [], { color: "#ffb400", weight: 3 }).addTo(map);
  friend.marker?.getElement()?.classList.add("selected");
  if (friend.pos) map.setView([friend.pos.lat, friend.pos.lon], Math.max(map.getZoom(), 13));
  if (cluster && friend.marker) cluster.zoomToShowLayer(friend.marker, () => decorateMarker(friend));
  renderFriends();
}

function fitAll() {
  const points = [...friends.values()].filter((f) => f.pos).map((f) => [f.pos.lat, f.pos.lon]);
  if (myMarker) points.push(myMarker.getLatLng());
  following = false;
  if (points.length === 1) map.setView(points[0], 13);
  else if (points.length > 1) map.fitBounds(L.latLngBounds(points), { padding: [40, 40], maxZoom: 15 });
}

// MARK: My position

/** Whether this connection has reported a position yet: the hub trusts a session's first fix for relics only once a
 * second report confirms it, so the first is reported twice (two reports of one place confirm each other). */
let reportedOnThisConnection = false;

function report(fields) {
  if (!client) return;
  client.send("pos", fields);
  if (!reportedOnThisConnection && client.state === "connected") client.send("pos", { ...fields, ts: fields.ts + 1 });
  reportedOnThisConnection = client.state === "connected";
}

function placeMyself(lat, lon, acc) {
  const fields = { lat, lon, ts: Date.now(), ...(acc !== undefined ? { acc: Math.round(acc) } : {}) };
  report(fields);
  session.position = { lat, lon, ...(acc !== undefined ? { acc } : {}) };
  notify("moved", session.position);
  const point = [lat, lon];
  if (!myMarker) {
    const icon = L.divIcon({ className: "me-marker", iconSize: [28, 28], iconAnchor: [14, 14], html: "" });
    myMarker = L.marker(point, { icon, title: "You", keyboard: false }).addTo(map);
    myMarker.getElement()?.append(el("span", { class: "avatar", "aria-hidden": "true", text: "Me" }));
    if (!session.viewTouched) fitAll();
  } else myMarker.setLatLng(point);
  if (acc) {
    if (!myAccuracy) myAccuracy = L.circle(point, { radius: acc, color: "#1d2733", weight: 1, fillOpacity: 0.05 });
    myAccuracy.setLatLng(point).setRadius(acc).addTo(map);
  }
  $(".my-position").textContent =
    `You are at ${lat.toFixed(5)}, ${lon.toFixed(5)}${acc ? ` (±${Math.round(acc)} m)` : ""}.`;
}

function locate() {
  if (!navigator.geolocation) {
    showError(new Error("This browser cannot tell where you are: click the map to place yourself."));
    return;
  }
  if (geolocationWatch !== null) return;
  geolocationWatch = navigator.geolocation.watchPosition(
    (where) => placeMyself(where.coords.latitude, where.coords.longitude, where.coords.accuracy),
    (error) => {
      geolocationWatch = null;
      showError(new Error(`Your location is not available (${error.message}): click the map to place yourself.`));
    },
    { enableHighAccuracy: true, maximumAge: 10_000 },
  );
}

// MARK: Sharing

/** Reads what this user shares now (the hub keeps it; another device may have changed it). */
async function loadSharing() {
  const reply = await attempt("share.list");
  if (!reply) return;
  pausedUntil = reply.paused ? (reply.until ?? null) : undefined;
  const levels = new Map(reply.levels.map((l) => [l.user, l]));
  for (const friend of friends.values()) {
    const rule = levels.get(friend.id);
    friend.sharing = rule ? { level: rule.level, until: rule.until } : { level: "precise" };
  }
  renderPause();
}

async function pause(seconds) {
  const reply = await attempt("share.pause", seconds > 0 ? { for: seconds } : {});
  if (!reply) return;
  pausedUntil = reply.until ?? null;
  renderPause();
}

async function unpause() {
  if (!(await attempt("share.resume"))) return;
  pausedUntil = undefined;
  renderPause();
}

function renderPause() {
  const paused = pausedUntil !== undefined && (pausedUntil === null || pausedUntil > Date.now());
  $(".pause-state").textContent = !paused
    ? "Sharing with your friends."
    : pausedUntil === null
      ? "Paused: your friends see you as offline until you resume."
      : `Paused until ${new Date(pausedUntil).toLocaleTimeString()}: your friends see you as offline.`;
  $(".resume").hidden = !paused;
}

async function share(id, level, seconds) {
  const reply = await attempt("share.set", { user: id, level, ...(seconds ? { for: seconds } : {}) });
  const friend = friends.get(id);
  if (reply && friend) friend.sharing = { level: reply.level, until: reply.until };
  if (friend) updateRow(friend);
}

// MARK: Friends, requests and search

/** A friend's state in words: online or not, how long ago they were seen, and what they see of you. */
function seenText(friend) {
  const seen = !friend.online ? "offline" : friend.pos ? `online · seen ${age(friend.pos.ts)}` : "online";
  const rule = friend.sharing?.level && friend.sharing.level !== "precise" ? friend.sharing : null;
  if (!rule) return seen;
  const until = rule.until
    ? ` until ${new Date(rule.until).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`
    : "";
  return `${seen} · sees you ${rule.level === "hidden" ? "not at all" : "approximately"}${until}`;
}

/** The friends panel's rows, kept across updates so that a move or a presence change never takes focus, an open
 * list or a chosen duration away from whoever is using the controls. */
const rows = new Map();

function renderFriends() {
  const list = $(".friend-list");
  if (!list) return;
  let changed = false;
  for (const [id, row] of rows) {
    if (friends.has(id)) continue;
    row.remove();
    rows.delete(id);
    changed = true;
  }
  for (const friend of friends.values()) {
    if (!rows.has(friend.id)) {
      rows.set(friend.id, friendRow(friend));
      changed = true;
    }
    updateRow(friend);
  }
  // Reordered only when someone joined or left the list: moving a row would take the focus out of it.
  if (changed) {
    const sorted = [...friends.values()].sort(
      (a, b) => Number(b.online) - Number(a.online)
        || (a.name || a.username).localeCompare(b.name || b.username, undefined, { numeric: true }));
    list.replaceChildren(...sorted.map((friend) => rows.get(friend.id)));
  }
  $(".no-friends").hidden = friends.size > 0;
}

/** A friend's row: avatar, name (selects them on the map), state, and the sharing controls. */
function friendRow(friend) {
  const name = friend.name || friend.username;
  const level = el("select", { "aria-label": `Share with ${name}`, class: "level" });
  for (const [value, label] of [["precise", "Precise"], ["approximate", "Approximate"], ["hidden", "Hidden"]]) {
    level.append(el("option", { value, text: label }));
  }
  const duration = el("select", { "aria-label": `How long, for ${name}` });
  for (const [value, label] of [["0", "until changed"], ["3600", "for 1 h"], ["28800", "for 8 h"]]) {
    duration.append(el("option", { value, text: label }));
  }
  level.addEventListener("change", () => share(friend.id, level.value, Number(duration.value)));
  duration.addEventListener("change", () => {
    if (level.value !== "precise") share(friend.id, level.value, Number(duration.value));
  });
  return el(
    "li",
    { "data-friend": friend.id },
    el("span", { class: "avatar", "aria-hidden": "true", text: initial(friend) }),
    el("button", {
      type: "button", class: "name", text: name,
      onclick: () => {
        const current = friends.get(friend.id);
        if (current?.pos) select(friend.id);
        else showError(new Error(`${name} has no position to show.`));
      },
    }),
    el("span", { class: "seen" }),
    el("div", { class: "controls" }, level, duration,
      el("button", {
        type: "button", class: "remove", text: "Remove", "aria-label": `Remove ${name} from your friends`,
        onclick: () => removeFriend(friends.get(friend.id) ?? friend),
      })),
  );
}

/** Brings a row up to date in place. */
function updateRow(friend) {
  const row = rows.get(friend.id);
  if (!row) return;
  const name = friend.name || friend.username;
  const seen = seenText(friend);
  row.classList.toggle("selected", selected === friend.id);
  $(".avatar", row).classList.toggle("offline", !friend.online);
  fillAvatar($(".avatar", row), friend);
  $(".name", row).setAttribute("aria-label", `${name}, ${seen}${friend.pos ? "" : ", no position"}`);
  $(".seen", row).textContent = seen;
  const level = $(".level", row);
  const wanted = friend.sharing?.level ?? "precise";
  if (level.value !== wanted && document.activeElement !== level) level.value = wanted;
}

async function removeFriend(friend) {
  const name = friend.name || friend.username;
  if (!confirm(`Remove ${name} from your friends?`)) return;
  if (await attempt("friend.remove", { user: friend.id })) forget(friend.id);
}

async function loadRequests() {
  const reply = await attempt("friend.requests");
  if (!reply) return;
  const list = $(".request-list");
  list.replaceChildren();
  for (const user of reply.incoming) {
    const name = user.name || user.username;
    // One answer per request: a second click while the first is on its way does nothing.
    const row = el("li", {},
      el("span", { class: "avatar", "aria-hidden": "true", text: initial(user) }),
      el("span", { text: `${name} (@${user.username}) asks to be friends` }),
      el("div", { class: "controls" },
        el("button", { type: "button", class: "primary", text: "Accept", "aria-label": `Accept ${name}`,
          onclick: () => once(row, async () => {
            const accepted = await attempt("friend.accept", { user: user.id });
            if (accepted) {
              friends.set(user.id, { ...accepted.friend, ...(friends.get(user.id) ?? {}) });
              renderFriends();
              await loadRequests();
            }
          }) }),
        el("button", { type: "button", text: "Decline", "aria-label": `Decline ${name}`,
          onclick: () => once(row, async () => {
            if (await attempt("friend.decline", { user: user.id })) await loadRequests();
          }) })));
    list.append(row);
  }
  for (const user of reply.outgoing) {
    const name = user.name || user.username;
    list.append(el("li", {},
      el("span", { class: "avatar offline", "aria-hidden": "true", text: initial(user) }),
      el("span", { text: `Asked ${name} (@${user.username})` }),
      el("div", { class: "controls" },
        el("button", { type: "button", text: "Withdraw", "aria-label": `Withdraw the request to ${name}`,
          onclick: async () => { if (await attempt("friend.remove", { user: user.id })) loadRequests(); } }))));
  }
  $(".requests").hidden = reply.incoming.length + reply.outgoing.length === 0;
}

async function search(q) {
  const results = $(".search-results");
  results.replaceChildren();
  if (!q.trim()) return;
  const reply = await attempt("user.search", { q: q.trim() });
  if (!reply) return;
  if (reply.users.length === 0) results.append(el("li", {}, el("span"), el("span", { text: "Nobody found." })));
  for (const user of reply.users) {
    const name = user.name || user.username;
    const known = friends.has(user.id);
    results.append(el("li", {},
      el("span", { class: "avatar", "aria-hidden": "true", text: initial(user) }),
      el("span", { text: `${name} (@${user.username})` }),
      el("div", { class: "controls" },
        known ? el("span", { class: "hint", text: "a friend" }) : el("button", {
          type: "button", text: "Add friend", "aria-label": `Ask ${name} to be friends`,
          onclick: async (event) => {
            const reply = await attempt("friend.request", { user: user.id });
            if (!reply) return;
            const status = reply.status === "friends" ? "friends" : "asked";
            event.target.replaceWith(el("span", { class: "hint", text: status }));
            if (reply.status === "friends") refreshAfterReconnect();
            else loadRequests();
          } }))));
  }
}

// MARK: Wiring

function wire() {
  const form = $(".account");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    signIn(event.submitter?.value ?? "login", form);
  });
  $(".guest").addEventListener("click", () => signIn("guest", form));
  $(".sign-out").addEventListener("click", signOut);
  $(".locate").addEventListener("click", locate);
  $(".fit").addEventListener("click", fitAll);
  for (const button of document.querySelectorAll("[data-pause]")) {
    button.addEventListener("click", () => pause(Number(button.dataset.pause)));
  }
  $(".resume").addEventListener("click", unpause);
  $(".search").addEventListener("submit", (event) => {
    event.preventDefault();
    search(event.target.q.value);
  });
  // Ages keep counting.
  setInterval(() => {
    if (!friends.size) return;
    for (const friend of friends.values()) updateRow(friend);
    renderPause();
    if (client?.state === "connected") loadPhotos();
  }, 15_000);
  // The page is alive: the loading note goes, and the form shows unless a kept token signs in by itself.
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) {
    $(".boot").textContent = "Signing in…";
    resume(token);
  } else {
    $(".boot").hidden = true;
    $(".sign-in").hidden = false;
  }
}

wire();
