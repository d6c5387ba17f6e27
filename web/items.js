// Buckets, items and trackers (seeds 000 and 002): the user's buckets and their items, ticked off or not; items whose
// tracker reports drawn live on the map (`items.watch`, `item.pos`); finding one (`item.locate`, with directions
// links); pairing a tracker (its key shown once, with the address a phone app reports to); left-behind alerts as
// notifications; and the user's safe zones drawn on the map. Who may see what is the hub's to decide: a viewer is
// sent no position of a hidden item, and the controls an owner has are shown only to owners.
import {
  $, fill, age, attempt, displayName, distanceText, el, feature, live, notice, once, paced, session, showError,
  uploadFile,
} from "./shared.js";

/** Buckets by id: {bucket, items: Map(id → item)}. */
const buckets = new Map();
/** Items' latest positions by item id, with their map markers. */
const positions = new Map();
/** Safe zones by id, with their circles. */
const zones = new Map();
/** Items whose owner was told they were left behind (until reunited). */
const leftBehind = new Set();
let openBucket = null;
let section = null;

// MARK: The panel

function build() {
  section = $(".items");
  const privacy = el("select", { id: "bucket-privacy", name: "privacy" },
    el("option", { value: "private", text: "Members only" }),
    el("option", { value: "friends", text: "Friends can view" }));
  fill(section,
    el("h2", { text: "Buckets" }),
    el("ul", { class: "bucket-list" }),
    el("form", { class: "bucket-form inline-form", novalidate: true, onsubmit: createBucket },
      el("label", { for: "bucket-name", text: "New bucket" }),
      el("input", { id: "bucket-name", name: "name", maxlength: 100, placeholder: "Bike, Keys, Ski trip…" }),
      el("label", { for: "bucket-privacy", class: "visually-hidden", text: "Who can view it" }),
      privacy,
      el("button", { type: "submit", class: "primary", text: "Create" })),
    el("section", { class: "bucket-view", "aria-live": "polite", hidden: true }),
    el("div", { class: "locate-result", "aria-live": "polite", hidden: true }),
    el("h2", { text: "Safe zones" }),
    el("p", { class: "hint", text: "Items in one of your safe zones never count as left behind." }),
    el("ul", { class: "zone-list" }),
    el("form", { class: "zone-form inline-form", novalidate: true, onsubmit: addZone },
      el("label", { for: "zone-name", text: "New safe zone around where you are" }),
      el("input", { id: "zone-name", name: "name", maxlength: 64, placeholder: "Home" }),
      el("label", { for: "zone-radius", class: "visually-hidden", text: "Zone radius (m)" }),
      el("input", { id: "zone-radius", name: "radius", type: "number", min: 10, max: 50000, value: 100,
        title: "radius in metres" }),
      el("button", { type: "submit", text: "Add zone" })),
  );
}

// MARK: Buckets and their items

async function loadBuckets() {
  const reply = await attempt("bucket.list");
  if (!reply) return;
  const listed = new Set(reply.buckets.map((b) => b.id));
  for (const id of [...buckets.keys()]) if (!listed.has(id)) forgetBucket(id);
  await Promise.all(reply.buckets.map((bucket) => loadBucket(bucket.id)));
  renderBuckets();
}

/** Reads one bucket and its items again (after `bucket.changed`, or to open it). */
async function loadBucket(id) {
  const client = session.client;
  if (!client) return;
  try {
    const reply = await client.request("bucket.get", { bucket: id });
    if (client !== session.client) return;
    const before = buckets.get(id);
    buckets.set(id, { bucket: reply.bucket, items: new Map(reply.items.map((item) => [item.id, item])) });
    // An item gone from the bucket, no longer tracked, or hidden from this viewer leaves the map: its last position
    // is not this user's to see any more (the hub sends them no more of it).
    const kept = new Set(reply.items.map((item) => item.id));
    for (const itemId of before?.items.keys() ?? []) if (!kept.has(itemId)) dropPosition(itemId);
    for (const item of reply.items) {
      if (!item.tracker || (item.hidden && reply.bucket.role !== "owner")) dropPosition(item.id);
      else labelMarker(item.id);
    }
  } catch (error) {
    if (client !== session.client) return;
    if (error.code === "not_found") forgetBucket(id);
    else showError(error);
  }
}

/** A bucket read again after `bucket.changed`: at once, then at most once a second however often it changes. */
const reloadBucket = paced(async (id) => {
  await loadBucket(id);
  if (session.client) renderBuckets();
}, 1000);

function forgetBucket(id) {
  const known = buckets.get(id);
  buckets.delete(id);
  for (const itemId of known?.items.keys() ?? []) dropPosition(itemId);
  if (openBucket === id) closeBucket();
}

function itemById(id) {
  for (const { bucket, items } of buckets.values()) if (items.has(id)) return { bucket, item: items.get(id) };
  return null;
}

function renderBuckets() {
  const list = $(".bucket-list");
  if (!list) return;
  if (!buckets.size) {
    fill(list, el("li", { class: "hint", text: "No buckets yet: create one for the things you keep." }));
  } else {
    const sorted = [...buckets.values()].sort((a, b) => a.bucket.created - b.bucket.created);
    fill(list, ...sorted.map(({ bucket, items }) => el("li", { "data-bucket": bucket.id },
      el("div", {},
        el("strong", { text: bucket.name }),
        el("div", { class: "hint", text: [`${items.size} item${items.size === 1 ? "" : "s"}`,
          bucket.role === "owner" ? "yours" : "shared with you", bucket.privacy === "friends" ? "friends can view" : null]
          .filter(Boolean).join(" · ") })),
      el("button", { type: "button", text: openBucket === bucket.id ? "Close" : "Open",
        "aria-label": `${openBucket === bucket.id ? "Close" : "Open"} ${bucket.name}`,
        onclick: () => (openBucket === bucket.id ? closeBucket() : showBucket(bucket.id)) }))));
  }
  if (openBucket !== null) renderBucket();
}

async function createBucket(event) {
  event.preventDefault();
  const form = event.target;
  const name = form.name.value.trim();
  if (!name) return showError(new Error("Name the bucket."));
  const reply = await once(form, () => attempt("bucket.create", { name, privacy: form.privacy.value }));
  if (!reply) return;
  form.name.value = "";
  buckets.set(reply.bucket.id, { bucket: reply.bucket, items: new Map() });
  showBucket(reply.bucket.id);
}

function showBucket(id) {
  openBucket = id;
  renderBuckets();
  $(".bucket-view [name=name]")?.focus();
}

function closeBucket() {
  openBucket = null;
  const view = $(".bucket-view");
  if (view) {
    view.hidden = true;
    view.replaceChildren();
    delete view.dataset.signature;
  }
  $(".locate-result").hidden = true;
  renderBuckets();
}

/** The open bucket: its items with their controls, adding one, and sharing the bucket. */
function renderBucket() {
  const view = $(".bucket-view");
  const known = buckets.get(openBucket);
  if (!view || !known) return;
  const { bucket, items } = known;
  // Drawn again only when something it shows changed: a redraw takes what is typed into its forms and the element
  // under the user's pointer away.
  const signature = JSON.stringify([bucket, [...items.values()], [...leftBehind], [...session.friends.keys()],
    [...items.keys()].map((id) => [positions.get(id)?.ts, positions.get(id)?.bat])]);
  if (!view.hidden && view.dataset.signature === signature) return;
  view.dataset.signature = signature;
  const owner = bucket.role === "owner";
  const rows = [...items.values()].map((item) => itemRow(bucket, item));
  view.hidden = false;
  fill(view,
    el("h3", { text: bucket.name }),
    el("ul", { class: "bucket-items" }, ...rows),
    items.size ? null : el("p", { class: "hint", text: owner ? "No items yet: add the first." : "No items yet." }),
    owner ? el("form", { class: "item-form stacked", novalidate: true, onsubmit: (e) => addItem(e, bucket.id) },
      el("label", { for: "item-name", text: "Item name" }),
      el("input", { id: "item-name", name: "name", maxlength: 100 }),
      el("label", { for: "item-note", text: "Note (optional)" }),
      el("input", { id: "item-note", name: "note", maxlength: 2000 }),
      el("label", { for: "item-photo", text: "Photo (optional)" }),
      el("input", { id: "item-photo", name: "photo", type: "file", accept: "image/jpeg,image/png,image/webp" }),
      el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Add item" })))
      : el("p", { class: "hint", text: "You can view this bucket and tick its items off; its owners change it." }),
    owner ? shareForm(bucket) : null,
    el("div", { class: "actions" },
      owner ? el("button", { type: "button", class: "danger", text: "Delete bucket",
        onclick: async () => {
          if (!confirm(`Delete ${bucket.name} and its items?`)) return;
          if (await attempt("bucket.delete", { bucket: bucket.id })) {
            forgetBucket(bucket.id);
            renderBuckets();
          }
        } })
        : el("button", { type: "button", text: "Leave bucket",
          onclick: async () => {
            if (!confirm(`Leave ${bucket.name}?`)) return;
            if (await attempt("bucket.unshare", { bucket: bucket.id, user: session.me.id })) {
              forgetBucket(bucket.id);
              renderBuckets();
            }
          } })),
  );
}

function itemRow(bucket, item) {
  const owner = bucket.role === "owner";
  const where = positions.get(item.id);
  const facts = [
    item.tracker ? (where ? `seen ${age(where.ts)}` : "tracker paired, no report yet") : null,
    where?.bat !== undefined ? `battery ${Math.round(where.bat)} %` : null,
    item.hidden ? "hidden from viewers" : null,
    leftBehind.has(item.id) ? "left behind" : null,
  ].filter(Boolean).join(" · ");
  const done = el("input", { type: "checkbox", id: `item-done-${item.id}`, checked: item.done,
    "aria-label": `${item.name} done`,
    onchange: async (event) => {
      const reply = await attempt("item.update", { item: item.id, done: event.target.checked });
      if (!reply) event.target.checked = !event.target.checked;
    } });
  const controls = el("div", { class: "controls" },
    item.tracker ? el("button", { type: "button", text: "Locate", "aria-label": `Locate ${item.name}`,
      onclick: () => locate(item) }) : null,
    owner ? el("label", { class: "check" },
      el("input", { type: "checkbox", checked: item.alert, onchange: async (event) => {
        const reply = await attempt("item.update", { item: item.id, alert: event.target.checked });
        if (!reply) event.target.checked = !event.target.checked;
        else if (reply.item.alert) {
          notice(`You will be told if you leave ${item.name} behind.`);
          // Asked here, on the user's own click: browsers ask for permission only on a gesture.
          if ("Notification" in window && Notification.permission === "default") Notification.requestPermission();
        }
      } }), "Alert if left behind") : null,
    owner ? trackerButton(item) : null,
    owner ? el("button", { type: "button", class: "danger", text: "Delete", "aria-label": `Delete ${item.name}`,
      onclick: async () => {
        if (confirm(`Delete ${item.name}?`) && await attempt("item.delete", { item: item.id })) {
          await loadBucket(bucket.id);
          renderBuckets();
        }
      } }) : null);
  return el("li", { "data-item": item.id, class: leftBehind.has(item.id) ? "left-behind" : "" },
    done,
    el("div", {},
      el("label", { for: `item-done-${item.id}`, class: item.done ? "done name" : "name", text: item.name }),
      item.note ? el("div", { class: "note", text: item.note }) : null,
      facts ? el("div", { class: "hint", text: facts }) : null),
    el("img", { class: "thumb", alt: "", src: item.photo_url ?? item.placeholder_url ?? "" }),
    controls);
}

async function addItem(event, bucket) {
  event.preventDefault();
  const form = event.target;
  const name = form.name.value.trim();
  if (!name) return showError(new Error("Name the item."));
  form.inert = true;
  try {
    const file = form.photo.files[0];
    const photo = file ? await uploadFile(file) : undefined;
    const note = form.note.value.trim();
    const reply = await attempt("item.create", { bucket, name, ...(note ? { note } : {}), ...(photo ? { photo } : {}) });
    if (!reply) return;
    await loadBucket(bucket);
    renderBuckets();
    $(".bucket-view [name=name]")?.focus();
  } catch (error) {
    showError(error);
  } finally {
    form.inert = false;
  }
}

function shareForm(bucket) {
  const friendsList = [...session.friends.values()].filter((f) => f.id !== session.me?.id);
  if (!friendsList.length) return el("p", { class: "hint", text: "Add friends to share this bucket with them." });
  const who = el("select", { id: "share-bucket-with", name: "user" },
    ...friendsList.map((f) => el("option", { value: f.id, text: displayName(f) })));
  const role = el("select", { id: "share-bucket-role", name: "role" },
    el("option", { value: "viewer", text: "can view" }), el("option", { value: "owner", text: "co-owns" }));
  const members = [...bucket.owners.map((id) => [id, "owner"]), ...bucket.viewers.map((id) => [id, "viewer"])]
    .filter(([id]) => id !== session.me?.id)
    .map(([id, r]) => `${displayName(session.friends.get(id)) === "someone" ? `user ${id}` : displayName(session.friends.get(id))}`
      + ` (${r})`);
  return el("form", { class: "share-form inline-form", novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      const reply = await attempt("bucket.share", { bucket: bucket.id, user: Number(who.value), role: role.value });
      if (reply) {
        await loadBucket(bucket.id);
        renderBuckets();
        notice(`${bucket.name} is shared.`);
      }
    } },
  el("label", { for: "share-bucket-with", text: "Share with" }), who,
  el("label", { for: "share-bucket-role", class: "visually-hidden", text: "Role" }), role,
  el("button", { type: "submit", text: "Share" }),
  members.length ? el("p", { class: "hint members", text: `Shared with ${members.join(", ")}.` }) : null);
}

// MARK: Trackers

function trackerButton(item) {
  if (!item.tracker) {
    return el("button", { type: "button", text: "Pair tracker", "aria-label": `Pair a tracker with ${item.name}`,
      onclick: () => pair(item) });
  }
  return el("button", { type: "button", text: "Tracker", "aria-label": `The tracker of ${item.name}`,
    onclick: () => trackerDetails(item) });
}

async function pair(item) {
  const device = prompt(`The device id of ${item.name}'s tracker (OsmAnd's or Traccar Client's "id"):`);
  if (!device) return;
  const paired = await attempt("tracker.pair", { item: item.id, device: device.trim() });
  if (!paired) return;
  const active = await attempt("tracker.activate", { tracker: paired.tracker.id });
  const base = `${location.origin}/v1/ingest/osmand`;
  showResult(el("div", {},
    el("h3", { text: `Tracker paired with ${item.name}` }),
    el("p", { text: "Set the tracking app to report to this address. The key is shown only now: copy it." }),
    el("dl", { class: "facts" },
      el("dt", { text: "Device id" }), el("dd", { text: paired.tracker.device }),
      el("dt", { text: "Key" }), el("dd", {}, el("code", { class: "tracker-key", text: paired.tracker.key })),
      el("dt", { text: "OsmAnd / Traccar" }), el("dd", {}, el("code", { text: `${base}?id=${paired.tracker.device}&key=${paired.tracker.key}` })),
      el("dt", { text: "State" }), el("dd", { text: active?.tracker.active ? "active" : "paired, not active" }))));
  await loadBucket(itemById(item.id)?.bucket.id ?? openBucket);
  renderBuckets();
}

async function trackerDetails(item) {
  const bucket = itemById(item.id)?.bucket;
  if (!bucket) return;
  const reply = await attempt("tracker.list", { bucket: bucket.id });
  const tracker = reply?.trackers.find((t) => t.item === item.id);
  if (!tracker) return;
  const toggle = tracker.active ? "tracker.deactivate" : "tracker.activate";
  showResult(el("div", {},
    el("h3", { text: `The tracker of ${item.name}` }),
    el("dl", { class: "facts" },
      el("dt", { text: "Device id" }), el("dd", { text: tracker.device }),
      el("dt", { text: "State" }), el("dd", { text: tracker.pairer_left ? "refused: whoever paired it left"
        : tracker.active ? "active" : "not active" })),
    el("div", { class: "actions" },
      el("button", { type: "button", text: tracker.active ? "Deactivate" : "Activate",
        onclick: async () => { if (await attempt(toggle, { tracker: tracker.id })) trackerDetails(item); } }),
      el("button", { type: "button", class: "danger", text: "Unpair",
        onclick: async () => {
          if (!confirm(`Unpair the tracker of ${item.name}? Its device would need a new key.`)) return;
          if (await attempt("tracker.unpair", { tracker: tracker.id })) {
            $(".locate-result").hidden = true;
            await loadBucket(bucket.id);
            renderBuckets();
          }
        } }))));
}

function showResult(content) {
  const box = $(".locate-result");
  fill(box, content, el("div", { class: "actions" },
    el("button", { type: "button", text: "Dismiss", onclick: () => { box.hidden = true; } })));
  box.hidden = false;
  box.scrollIntoView({ block: "nearest" });
}

// MARK: Positions on the map

function drawPosition(fix) {
  const id = fix.item;
  const known = positions.get(id) ?? {};
  const where = { ...known, ...fix };
  positions.set(id, where);
  const point = [fix.lat, fix.lon];
  if (!where.pin && session.map) {
    const icon = L.divIcon({ className: "item-marker", iconSize: [26, 26], iconAnchor: [13, 13], html: "" });
    where.pin = L.marker(point, { icon, keyboard: true }).addTo(session.map);
    where.pin.bindPopup(() => popup(id));
  } else where.pin?.setLatLng(point);
  const element = where.pin?.getElement();
  if (element) {
    element.dataset.item = String(id);
    element.dataset.lat = String(fix.lat);
    element.dataset.lon = String(fix.lon);
    element.setAttribute("role", "button");
    if (!element.firstChild) element.append(el("span", { class: "glyph", "aria-hidden": "true" }));
  }
  labelMarker(id);
}

/** Names an item's marker once its bucket is known. */
function labelMarker(id) {
  const where = positions.get(id);
  const element = where?.pin?.getElement();
  if (!element) return;
  const name = itemById(id)?.item.name ?? `Item ${id}`;
  element.title = name;
  element.setAttribute("aria-label", `${name}, seen ${age(where.ts)}`);
  element.firstChild.textContent = [...name][0]?.toUpperCase() ?? "•";
  element.classList.toggle("left-behind", leftBehind.has(id));
}

function popup(id) {
  const where = positions.get(id);
  const name = itemById(id)?.item.name ?? `Item ${id}`;
  const rows = [["Seen", age(where.ts)], ["At", new Date(where.ts).toLocaleTimeString()]];
  if (where.acc !== undefined) rows.push(["Accuracy", `${Math.round(where.acc)} m`]);
  if (where.bat !== undefined) rows.push(["Battery", `${Math.round(where.bat)} %`]);
  const list = el("dl");
  for (const [term, detail] of rows) list.append(el("dt", { text: term }), el("dd", { text: detail }));
  return el("div", { class: "popup" }, el("strong", { text: name }), list);
}

function dropPosition(id) {
  positions.get(id)?.pin?.remove();
  positions.delete(id);
}

async function locate(item) {
  const reply = await attempt("item.locate", { item: item.id });
  if (!reply) return;
  if (!reply.position) {
    showResult(el("p", { text: `${item.name} has no position to show yet.` }));
    return;
  }
  drawPosition({ item: item.id, ...reply.position });
  session.map?.setView([reply.position.lat, reply.position.lon], Math.max(session.map.getZoom(), 16));
  session.viewTouched = true;
  const go = reply.navigate;
  const mode = go?.mode === "walking" ? "on foot" : "by public transport";
  showResult(el("div", { class: "located" },
    el("h3", { text: `${item.name}` }),
    el("p", { text: [reply.distance !== undefined ? `${distanceText(reply.distance)} from you` : "Where you are is not known",
      `seen ${age(reply.position.ts)}`, reply.position.bat !== undefined ? `battery ${reply.position.bat} %` : null]
      .filter(Boolean).join(" · ") }),
    go ? el("p", {}, `Directions ${mode}: `,
      el("a", { href: go.google, target: "_blank", rel: "noopener noreferrer", text: "Google Maps" }), " · ",
      el("a", { href: go.apple, target: "_blank", rel: "noopener noreferrer", text: "Apple Maps" }), " · ",
      el("a", { href: go.geo, text: "a maps app" })) : null));
}

// MARK: Safe zones

async function loadZones() {
  const reply = await attempt("safe_zone.list");
  if (!reply) return;
  for (const zone of zones.values()) zone.circle?.remove();
  zones.clear();
  for (const zone of reply.zones) drawZone(zone);
  renderZones();
}

function drawZone(zone) {
  const circle = session.map ? L.circle([zone.lat, zone.lon], {
    radius: zone.radius, color: "#15803d", weight: 1.5, fillOpacity: 0.08, interactive: false,
  }).addTo(session.map) : null;
  zones.set(zone.id, { ...zone, circle });
}

function renderZones() {
  const list = $(".zone-list");
  if (!list) return;
  if (!zones.size) fill(list, el("li", { class: "hint", text: "No safe zone yet." }));
  else fill(list, ...[...zones.values()].map((zone) => el("li", { "data-zone": zone.id },
    el("div", {}, el("strong", { text: zone.name }), el("div", { class: "hint", text: `${distanceText(zone.radius)} around` })),
    el("div", { class: "controls" },
      el("button", { type: "button", text: "Show", onclick: () => session.map?.fitBounds(zone.circle.getBounds()) }),
      el("button", { type: "button", class: "danger", text: "Remove", "aria-label": `Remove the safe zone ${zone.name}`,
        onclick: async () => {
          if (await attempt("safe_zone.remove", { zone: zone.id })) {
            zone.circle?.remove();
            zones.delete(zone.id);
            renderZones();
          }
        } })))));
}

async function addZone(event) {
  event.preventDefault();
  const form = event.target;
  const name = form.name.value.trim();
  const here = session.position ?? (session.map ? { lat: session.map.getCenter().lat, lon: session.map.getCenter().lng }
    : null);
  if (!name) return showError(new Error("Name the safe zone."));
  if (!here) return showError(new Error("Place yourself on the map first."));
  const reply = await once(form,
    () => attempt("safe_zone.add", { name, lat: here.lat, lon: here.lon, radius: Number(form.radius.value) }));
  if (!reply) return;
  form.name.value = "";
  drawZone(reply.zone);
  renderZones();
}

// MARK: Left behind

function alertLeftBehind(event) {
  leftBehind.add(event.item);
  const name = itemById(event.item)?.item.name ?? `Item ${event.item}`;
  const text = `You left ${name} behind: it is ${distanceText(event.distance)} away.`;
  notice(text);
  if ("Notification" in window && Notification.permission === "granted") new Notification("Cairn", { body: text });
  if (event.lat !== undefined) {
    drawPosition({ item: event.item, lat: event.lat, lon: event.lon, ts: positions.get(event.item)?.ts ?? Date.now() });
  }
  labelMarker(event.item);
  renderBuckets();
}

function reunited(event) {
  leftBehind.delete(event.item);
  const name = itemById(event.item)?.item.name ?? `Item ${event.item}`;
  notice(`${name} is with you again.`);
  labelMarker(event.item);
  renderBuckets();
}

// MARK: The feature

function forget() {
  for (const id of [...positions.keys()]) dropPosition(id);
  for (const zone of zones.values()) zone.circle?.remove();
  zones.clear();
  buckets.clear();
  leftBehind.clear();
  openBucket = null;
  if (section) build();
}

feature({
  async start(client) {
    if (!section) build();
    client.on("item.pos", live(client, (event) => {
      drawPosition(event);
      // Only that item's row is drawn again (its age and battery), not the forms around it.
      const known = openBucket !== null ? buckets.get(openBucket) : null;
      const row = known?.items.has(event.item) ? $(`.bucket-view li[data-item="${event.item}"]`) : null;
      if (row) row.replaceWith(itemRow(known.bucket, known.items.get(event.item)));
    }));
    client.on("item.left_behind", live(client, alertLeftBehind));
    client.on("item.reunited", live(client, reunited));
    client.on("bucket.changed", live(client, (event) => reloadBucket(event.bucket)));
    client.on("bucket.removed", live(client, (event) => {
      forgetBucket(event.bucket);
      renderBuckets();
    }));
    await loadBuckets();
    // The watch is sent again after every reconnect; each answer holds the latest position of every item visible now.
    await client.watch("items.watch", {}, (reply) => {
      if (client !== session.client) return;
      const visible = new Set((reply.positions ?? []).map((p) => p.item));
      for (const id of [...positions.keys()]) if (!visible.has(id)) dropPosition(id);
      for (const fix of reply.positions ?? []) drawPosition(fix);
      renderBuckets();
    });
    loadZones();
  },
  async reconnected() {
    await loadBuckets();
    loadZones();
  },
  end: forget,
});
