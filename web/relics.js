// Relics (seed 003): messages left at a place that open only within their radius. The hub decides everything —
// where the user trustedly stands, who is close enough, the password, expiry — and this part shows what it says:
// markers of the relics nearby (never their content), opening one (asking for its password when it is locked),
// leaving one (text, an optional photo or video uploaded through /v1/media, radius, lifetime, password), the user's
// own relics, and the live `relic.appear` / `relic.vanish` / `relic.expired` pushes.
import { CairnError } from "/cairn.js";
import {
  $, fill, icon, age, attempt, displayName, distanceText, el, feature, live, metresBetween, notice, session, showError,
  uploadFile, when,
} from "./shared.js";

const NEARBY_RADIUS = 2000;
const HINT = "Relics open only where they were left: walk into one's circle.";
const LIFETIMES = [["3600", "1 hour"], ["86400", "1 day"], ["604800", "1 week"], ["2592000", "30 days"],
  ["", "for good"]];

/** The relics shown, by id: the marker as the hub sent it, its map marker and circle, whether it is in reach. */
const relics = new Map();
/** Where the last `relic.nearby` was asked from, so moves only ask again once the user has gone some way. */
let askedAt = null;
/** Whether the hub listed only the nearest of more relics than it lists at once. */
let truncated = false;
let section = null;

// MARK: The panel

function build() {
  section = $(".relics");
  const lifetime = el("select", { id: "relic-ttl", name: "ttl" });
  for (const [value, label] of LIFETIMES) lifetime.append(el("option", { value, text: label }));
  lifetime.value = "86400";
  fill(section,
    el("h2", { text: "Relics nearby" }),
    el("p", { class: "hint relic-hint", text: HINT }),
    el("div", { class: "actions" }, el("button", { type: "button", class: "relic-look", text: "Look around",
      onclick: () => nearby({ force: true }) })),
    el("ul", { class: "relic-list", "aria-live": "polite" }),
    el("h2", { text: "Leave a relic" }),
    el("form", { class: "relic-form stacked", novalidate: true, onsubmit: leave },
      el("label", { for: "relic-text", text: "Message" }),
      el("textarea", { id: "relic-text", name: "text", rows: 3, maxlength: 2000 }),
      el("label", { for: "relic-media", text: "Photo or video (optional)" }),
      el("input", { id: "relic-media", name: "media", type: "file", accept: "image/jpeg,image/png,image/webp,video/mp4" }),
      el("div", { class: "row" },
        el("div", {}, el("label", { for: "relic-radius", text: "Opens within (m)" }),
          el("input", { id: "relic-radius", name: "radius", type: "number", min: 10, max: 5000, step: 1, value: 50 })),
        el("div", {}, el("label", { for: "relic-ttl", text: "Lasts" }), lifetime)),
      el("label", { for: "relic-password", text: "Password (optional)" }),
      el("input", { id: "relic-password", name: "password", type: "password", autocomplete: "new-password" }),
      el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Leave relic" }))),
    el("h2", { text: "My relics" }),
    el("ul", { class: "my-relics" }),
    el("dialog", { class: "relic-view", "aria-labelledby": "relic-view-title" }),
  );
}

// MARK: Nearby relics and the map

/** Asks the hub for the relics around where it trusts the user stands; `force` asks even without a new move. */
async function nearby({ force = false } = {}) {
  const client = session.client;
  if (!client) return;
  const here = session.position;
  if (!force && askedAt && here && metresBetween(askedAt, here) < 100) return;
  try {
    const reply = await client.request("relic.nearby", { radius: NEARBY_RADIUS });
    if (client !== session.client) return;
    askedAt = here;
    const listed = new Set(reply.relics.map((r) => r.id));
    for (const id of [...relics.keys()]) if (!listed.has(id)) drop(id);
    for (const relic of reply.relics) show(relic);
    truncated = Boolean(reply.truncated);
    render();
  } catch (error) {
    if (client !== session.client) return;
    // No confirmed position yet is the usual state before the user placed themselves: said in the hint, not alerted.
    if (error instanceof CairnError && error.code === "bad_request") $(".relic-hint").textContent = error.message;
    else showError(error);
  }
}

function distanceTo(relic) {
  return session.position ? metresBetween(session.position, relic) : relic.distance;
}

/** Draws a relic's marker and circle (or updates them), keeping what the page knew of it. */
function show(marker, { appeared = false } = {}) {
  const known = relics.get(marker.id) ?? {};
  const relic = { ...known, ...marker, inside: appeared || known.inside || false };
  relics.set(marker.id, relic);
  const point = [marker.lat, marker.lon];
  if (!relic.pin && session.map) {
    const icon = L.divIcon({ className: "relic-marker", iconSize: [26, 26], iconAnchor: [13, 13], html: "" });
    relic.pin = L.marker(point, { icon, keyboard: true }).addTo(session.map);
    relic.pin.on("click", () => open(marker.id));
    relic.ring = L.circle(point, {
      radius: marker.radius, color: "#b45309", weight: 1, dashArray: "3 5", fillOpacity: 0.06, interactive: false,
    }).addTo(session.map);
  } else if (relic.pin) {
    relic.pin.setLatLng(point);
    relic.ring.setLatLng(point).setRadius(marker.radius);
  }
  const element = relic.pin?.getElement();
  if (element) {
    element.dataset.relic = String(marker.id);
    element.dataset.locked = String(Boolean(marker.locked));
    element.title = relic.locked ? "A locked relic" : "A relic";
    element.setAttribute("aria-label", `${relic.locked ? "Locked relic" : "Relic"}: open it`);
    element.setAttribute("role", "button");
    if (!element.firstChild) element.append(el("span", { class: "glyph", "aria-hidden": "true" }));
    fill(element.firstChild, icon(marker.locked ? "lock" : "envelope"));
    element.classList.toggle("inside", Boolean(relic.inside));
  }
  return relic;
}

function drop(id) {
  const relic = relics.get(id);
  if (!relic) return;
  relic.pin?.remove();
  relic.ring?.remove();
  relics.delete(id);
}

function render() {
  const list = $(".relic-list");
  if (!list) return;
  const sorted = [...relics.values()].sort((a, b) => (distanceTo(a) ?? 0) - (distanceTo(b) ?? 0));
  if (askedAt || sorted.length) {
    $(".relic-hint").textContent = sorted.length
      ? `${sorted.length}${truncated ? "+" : ""} near you; one opens when you stand in its circle.`
      : `No relic within ${distanceText(NEARBY_RADIUS)} of you. Leave the first one.`;
  }
  fill(list, ...sorted.map((relic) => {
    const distance = distanceTo(relic);
    const reach = distance !== undefined && distance <= relic.radius ? "in reach" : `opens within ${relic.radius} m`;
    const by = relic.creator === session.me?.id ? "yours" : null;
    const facts = [distanceText(distance), reach, relic.expires ? `ends ${when(relic.expires)}` : null, by]
      .filter(Boolean).join(" · ");
    return el("li", { "data-relic": relic.id, class: relic.inside ? "inside" : "" },
      el("span", { class: "glyph", "aria-hidden": "true" }, icon(relic.locked ? "lock" : "envelope", 20)),
      el("div", {},
        el("strong", { text: relic.locked ? "Locked relic" : "Relic" }),
        el("div", { class: "hint", text: `${facts}` })),
      el("button", { type: "button", text: "Open", "aria-label": `Open the relic ${distanceText(distance)} away`,
        onclick: () => open(relic.id) }));
  }));
}

// MARK: Opening

/** Opens a relic: without a password first; a locked one asks for it in the dialog. */
async function open(id, password) {
  const client = session.client;
  if (!client) return;
  const relic = relics.get(id);
  if (relic?.locked && password === undefined && relic.creator !== session.me?.id) {
    return view({ ask: id });
  }
  try {
    const reply = await client.request("relic.open", { relic: id, ...(password ? { password } : {}) });
    if (client === session.client) view({ relic: reply.relic });
  } catch (error) {
    if (client !== session.client) return;
    if (error instanceof CairnError && error.code === "too_far") {
      const far = error.details ?? {};
      const distance = far.distance !== undefined ? `${far.distance} m away` : "too far";
      showError(new Error(`You are ${distance}; this relic opens within ${far.radius ?? relic?.radius} m.`));
    } else if (error instanceof CairnError && error.code === "wrong_password") {
      view({ ask: id, wrong: password !== undefined });
    } else if (error instanceof CairnError && (error.code === "expired" || error.code === "not_found")) {
      drop(id);
      render();
      showError(error);
    } else showError(error);
  }
}

/** The dialog: either asks for a locked relic's password, or shows an opened relic. */
function view({ relic, ask, wrong = false }) {
  const dialog = $(".relic-view");
  const close = el("button", { type: "button", text: "Close", onclick: () => dialog.close() });
  if (ask !== undefined) {
    const form = el("form", { class: "stacked", method: "dialog", novalidate: true },
      el("h2", { id: "relic-view-title", text: "This relic is locked" }),
      wrong ? el("p", { class: "error", text: "Wrong password." }) : null,
      el("label", { for: "relic-open-password", text: "Relic password" }),
      el("input", { id: "relic-open-password", type: "password", autocomplete: "off", required: true }),
      el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Unlock" }), close));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const password = $("#relic-open-password", form).value;
      if (!password) return;
      dialog.close();
      open(ask, password);
    });
    fill(dialog, form);
  } else {
    const by = relic.creator_user ? displayName(relic.creator_user) : relic.creator === session.me?.id ? "you" : null;
    const media = relic.media_url ? mediaElement(relic.media_url) : null;
    fill(dialog,
      el("h2", { id: "relic-view-title", text: by ? `A relic from ${by}` : "A relic" }),
      el("p", { class: "hint", text: [`left ${age(relic.created)}`, relic.expires ? `ends ${when(relic.expires)}` : "lasts for good"]
        .join(" · ") }),
      relic.text ? el("p", { class: "relic-text", text: relic.text }) : null,
      media,
      el("div", { class: "actions" }, close));
  }
  if (!dialog.open) dialog.showModal();
  $("input, button", dialog)?.focus();
}

/** An image, or — when the bytes turn out to be a video — a video player. */
function mediaElement(url) {
  const image = el("img", { src: url, alt: "The relic's photo", class: "relic-media" });
  image.addEventListener("error", () => image.replaceWith(el("video", { src: url, controls: true, class: "relic-media" })),
    { once: true });
  return image;
}

// MARK: Leaving one, and the user's own

async function leave(event) {
  event.preventDefault();
  const form = event.target;
  const text = form.text.value.trim();
  const file = form.media.files[0];
  const radius = Number(form.radius.value);
  if (!text && !file) return showError(new Error("Write a message or add a photo."));
  if (!Number.isInteger(radius) || radius < 10 || radius > 5000) {
    return showError(new Error("The radius is a whole number of metres from 10 to 5000."));
  }
  form.inert = true;
  try {
    const media = file ? await uploadFile(file) : undefined;
    const fields = { text, radius, ...(form.ttl.value ? { ttl: Number(form.ttl.value) } : {}),
      ...(form.password.value ? { password: form.password.value } : {}), ...(media ? { media } : {}) };
    const reply = await attempt("relic.create", fields);
    if (!reply) return;
    form.reset();
    form.radius.value = 50;
    form.ttl.value = "86400";
    show(reply.relic);
    render();
    mine();
    notice("Your relic is left here.");
  } catch (error) {
    showError(error);
  } finally {
    form.inert = false;
  }
}

async function mine() {
  const reply = await attempt("relic.mine", { limit: 20 });
  const list = $(".my-relics");
  if (!reply || !list) return;
  if (!reply.relics.length) {
    fill(list, el("li", { class: "hint", text: "You have not left a relic yet." }));
    return;
  }
  fill(list, ...reply.relics.map((relic) => el("li", { "data-my-relic": relic.id },
    el("div", {},
      el("strong", { text: relic.text || (relic.media ? "(a photo)" : "(empty)") }),
      el("div", { class: "hint", text: [relic.state === "expired" ? "expired" : "live", `left ${age(relic.created)}`,
        relic.locked ? "locked" : null, `opens within ${relic.radius} m`].filter(Boolean).join(" · ") })),
    el("div", { class: "controls" },
      el("button", { type: "button", text: "Show", onclick: () => {
        session.map?.setView([relic.lat, relic.lon], Math.max(session.map.getZoom(), 15));
      } }),
      el("button", { type: "button", class: "danger", text: "Delete", "aria-label": "Delete this relic",
        onclick: async () => {
          if (!confirm("Delete this relic? Nobody can open it any more.")) return;
          if (await attempt("relic.delete", { relic: relic.id })) {
            drop(relic.id);
            render();
            mine();
          }
        } })))));
}

// MARK: The feature

function forget() {
  for (const id of [...relics.keys()]) drop(id);
  askedAt = null;
  truncated = false;
  $(".relic-list")?.replaceChildren();
  $(".my-relics")?.replaceChildren();
  if ($(".relic-view")?.open) $(".relic-view").close();
  // What this user was writing (a message, a relic's password) is not left for whoever signs in next.
  const form = $(".relic-form");
  if (form) {
    form.reset();
    form.ttl.value = "86400";
  }
  const hint = $(".relic-hint");
  if (hint) hint.textContent = HINT;
}

feature({
  start(client) {
    if (!section) build();
    client.on("relic.appear", live(client, (event) => {
      show(event.relic, { appeared: true });
      render();
      notice(event.relic.locked ? "A locked relic is here: open it in Relics." : "A relic is here: open it in Relics.");
    }));
    client.on("relic.vanish", live(client, (event) => {
      if (event.reason === "deleted") drop(event.id);
      const relic = relics.get(event.id);
      if (relic) {
        relic.inside = false;
        relic.pin?.getElement()?.classList.remove("inside");
      }
      render();
    }));
    client.on("relic.expired", live(client, (event) => {
      drop(event.id);
      render();
    }));
    nearby({ force: true });
    mine();
  },
  reconnected() {
    nearby({ force: true });
    mine();
  },
  moved() {
    nearby();
  },
  end: forget,
});

document.addEventListener("tab", (event) => {
  if (event.detail === "relics" && session.client) render();
});
