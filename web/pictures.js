// Pictures (seed 004): the pictures posted near where the user stands, or to an event (a hashtag), newest, most
// liked or nearest first, a page at a time, with new ones arriving live (`pictures.watch`); like, report, delete
// one's own; post one (uploaded through /v1/media, then `picture.post`); find, join and create events. What the list
// holds is what the hub lets this user see: a reported picture leaves it, a private event's pictures need joining.
import { CairnError } from "/cairn.js";
import {
  $, age, attempt, clearError, displayName, distanceText, el, feature, live, once, session, showError, uploadFile,
} from "./shared.js";

const REASONS = [
  ["spam", "Spam"], ["nudity", "Nudity"], ["violence", "Violence"], ["harassment", "Harassment"],
  ["copyright", "Copyright"], ["privacy", "Privacy"], ["other", "Something else"],
];
const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp"];
const WHERE_NEARBY = "Without an event the picture is posted where you stand, for everyone nearby.";
const WHERE_EVENT = "Posted to the event only; tick the box to show it where you stand, nearby, too.";

let client = null;
/** The event whose pictures are listed ({tag, title?, private}), or null for the pictures nearby. */
let shownEvent = null;
/** The next page's cursor, when the hub said there is more. */
let cursor = null;
/** The pictures listed, by id: the picture as the hub sent it and its card. */
const shown = new Map();
/** The placed pictures drawn on the map, by id. */
const markers = new Map();
/** Bumped by every new listing, so that a reply to an older one is dropped. */
let listing = 0;
/** Where the user stood when the nearby list was read (null: not read yet). */
let listedAt = null;

const radius = () => Number($("#picture-radius").value);
const sort = () => $("#picture-sort").value;

// MARK: The list

function hint(text) {
  const note = $(".no-pictures");
  note.textContent = text ?? "";
  note.hidden = !text;
}

function clearList() {
  $(".picture-list").replaceChildren();
  shown.clear();
  for (const marker of markers.values()) marker.remove();
  markers.clear();
  cursor = null;
  $(".more-pictures").hidden = true;
}

function emptyText() {
  if (shownEvent) return `No pictures in #${shownEvent.tag} yet.`;
  return `No pictures within ${distanceText(radius())} of you yet.`;
}

/** Reads the first page (or, with `more`, the next one) of what is shown: pictures nearby or an event's. */
async function load({ more = false } = {}) {
  const made = client;
  if (!made) return;
  const generation = more ? listing : ++listing;
  const fields = shownEvent ? { tag: shownEvent.tag, sort: sort() } : { radius: radius(), sort: sort() };
  if (more) fields.cursor = cursor;
  const button = $(".more-pictures");
  button.disabled = true;
  let reply;
  try {
    reply = await made.request(shownEvent ? "event.pictures" : "picture.nearby", fields);
  } catch (error) {
    if (made !== session.client || generation !== listing) return;
    if (!shownEvent && error instanceof CairnError && /no position/.test(error.message)) {
      clearList();
      hint("Use your location or click the map to place yourself, and the pictures near you show here.");
    } else showError(error);
    return;
  } finally {
    button.disabled = false;
  }
  if (made !== session.client || generation !== listing) return;
  if (!more) clearList();
  if (!shownEvent) listedAt = session.position ? { ...session.position } : listedAt ?? {};
  for (const picture of reply.pictures) add(picture, "end");
  cursor = reply.cursor ?? null;
  button.hidden = !cursor;
  hint(shown.size === 0 ? emptyText() : null);
}

/** Shows a picture's card (at the top for a new one, at the end for a page's), or brings its card up to date. */
function add(picture, where) {
  const known = shown.get(picture.id);
  if (known) {
    known.picture = picture;
    update(known);
    return;
  }
  const entry = { picture, card: card(picture) };
  shown.set(picture.id, entry);
  const list = $(".picture-list");
  if (where === "top") list.prepend(entry.card);
  else list.append(entry.card);
  update(entry);
  draw(picture);
  hint(null);
}

function remove(id) {
  shown.get(id)?.card.remove();
  shown.delete(id);
  markers.get(id)?.remove();
  markers.delete(id);
  if (shown.size === 0) hint(emptyText());
}

function card(picture) {
  const mine = picture.by?.id === session.me?.id;
  const who = displayName(picture.by);
  const image = el("img", {
    src: picture.url, loading: "lazy", alt: picture.caption || `A picture by ${who}`,
    onerror: () => refreshImage(picture.id, image),
  });
  return el("li", { class: "picture-card", "data-picture": picture.id },
    image,
    el("div", { class: "picture-body" },
      el("div", { class: "picture-meta" },
        el("strong", { class: "poster", text: mine ? "You" : who }),
        el("span", { class: "facts" })),
      picture.caption ? el("p", { class: "caption", text: picture.caption }) : null,
      el("div", { class: "picture-actions" },
        el("button", { type: "button", class: "like", onclick: () => like(picture.id) }),
        el("span", { class: "likes" }),
        mine
          ? el("button", { type: "button", class: "delete", text: "Delete", onclick: () => deletePicture(picture.id) })
          : el("button", { type: "button", class: "report", text: "Report", onclick: () => reportForm(picture.id) }),
        el("a", { class: "save", href: picture.download_url, text: "Save", "aria-label": "Save the picture" }))));
}

/** A signed URL lasts minutes: an image that failed to load asks the hub for a fresh one, once. */
async function refreshImage(id, image) {
  if (image.dataset.refreshed || !client) return;
  image.dataset.refreshed = "true";
  try {
    const reply = await client.request("picture.get", { picture: id });
    image.src = reply.picture.url;
  } catch {
    // Gone (deleted, reported away): the card goes at the next listing.
  }
}

/** The card's changing parts: age, distance, event, likes. */
function update(entry) {
  const { picture, card } = entry;
  const facts = [age(picture.created)];
  if (picture.distance !== undefined) facts.push(distanceText(picture.distance));
  if (picture.event && picture.event !== shownEvent?.tag) {
    facts.push(picture.private ? `#${picture.event} (private)` : `#${picture.event}`);
  }
  $(".facts", card).textContent = facts.join(" · ");
  const button = $(".like", card);
  button.textContent = picture.liked ? "Unlike" : "Like";
  button.setAttribute("aria-pressed", String(Boolean(picture.liked)));
  const likes = $(".likes", card);
  likes.dataset.likes = String(picture.likes);
  likes.textContent = picture.likes === 1 ? "1 like" : `${picture.likes} likes`;
}

/** A placed picture as a small marker on the map; it leads to its card. */
function draw(picture) {
  if (!session.map || picture.lat === undefined || picture.lon === undefined) return;
  const icon = L.divIcon({ className: "picture-marker", iconSize: [14, 14], iconAnchor: [7, 7], html: "" });
  // Under the friends' markers: a friend standing where they posted stays visible.
  const marker = L.marker([picture.lat, picture.lon], { icon, keyboard: false, zIndexOffset: -1000 });
  marker.addTo(session.map);
  const element = marker.getElement();
  if (element) {
    element.dataset.pictureMarker = String(picture.id);
    element.title = picture.caption || `A picture by ${displayName(picture.by)}`;
    element.append(el("span", { class: "dot", "aria-hidden": "true" }));
  }
  marker.on("click", () => {
    const card = shown.get(picture.id)?.card;
    if (!card) return;
    card.scrollIntoView({ block: "nearest" });
    $(".like", card).focus({ preventScroll: true });
  });
  markers.set(picture.id, marker);
}

// MARK: Like, report, delete

async function like(id) {
  const entry = shown.get(id);
  if (!entry) return;
  const liked = !entry.picture.liked;
  const reply = await attempt(liked ? "picture.like" : "picture.unlike", { picture: id });
  if (!reply || !shown.has(id)) return;
  entry.picture = { ...entry.picture, liked, likes: reply.likes };
  update(entry);
}

async function deletePicture(id) {
  if (!confirm("Delete this picture?")) return;
  if (await attempt("picture.delete", { picture: id })) remove(id);
}

/** An inline form under the picture: a reason (and words for "something else"), Send or Cancel. */
function reportForm(id) {
  const entry = shown.get(id);
  if (!entry) return;
  const existing = $(".report-form", entry.card);
  if (existing) {
    $("select", existing).focus();
    return;
  }
  const reason = el("select", { id: `report-reason-${id}`, name: "reason" },
    ...REASONS.map(([value, label]) => el("option", { value, text: label })));
  const text = el("input", { id: `report-text-${id}`, name: "text", maxlength: 500, autocomplete: "off" });
  const words = el("span", { class: "report-words" },
    el("label", { for: text.id, text: "What is wrong" }), text);
  words.hidden = true;
  reason.addEventListener("change", () => { words.hidden = reason.value !== "other"; });
  const form = el("form", { class: "report-form", "aria-label": "Report this picture" },
    el("label", { for: reason.id, text: "Reason" }), reason, words,
    el("div", { class: "actions" },
      el("button", { type: "submit", class: "danger", text: "Send report" }),
      el("button", { type: "button", text: "Cancel", onclick: () => form.remove() })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    once(form, () => sendReport(id, reason, text));
  });
  $(".picture-body", entry.card).append(form);
  reason.focus();
}

/** Sends a report from a picture's form (a reason, and words for "something else"). */
async function sendReport(id, reason, text) {
  const fields = { picture: id, reason: reason.value };
  if (reason.value === "other") {
    if (!text.value.trim()) {
      showError(new Error("Say what is wrong with the picture."));
      text.focus();
      return;
    }
    fields.text = text.value.trim();
  }
  if (await attempt("picture.report", fields)) {
    // Reported pictures are hidden from their reporter at once.
    remove(id);
    $(".pictures-title").focus();
  }
}

// MARK: Posting

function resetPostForm() {
  const form = $(".picture-post");
  form.reset();
  form.place.disabled = true;
  $(".post-where").textContent = WHERE_NEARBY;
  const preview = $(".picture-preview");
  if (preview.src) URL.revokeObjectURL(preview.src);
  preview.removeAttribute("src");
  preview.hidden = true;
}

async function post(form) {
  const file = form.file.files[0];
  if (!file) {
    showError(new Error("Choose a picture to post."));
    return;
  }
  if (!IMAGE_TYPES.includes(file.type)) {
    showError(new Error("Only JPEG, PNG and WebP pictures can be posted."));
    return;
  }
  const tag = form.event.value.trim().replace(/^#/, "");
  const fields = {};
  const caption = form.caption.value.trim();
  if (caption) fields.caption = caption;
  if (tag) {
    fields.event = tag;
    if (form.place.checked) fields.place = true;
  }
  const made = client;
  const button = $("button[type=submit]", form);
  button.disabled = true;
  button.textContent = "Posting…";
  try {
    try {
      fields.media = await uploadFile(file);
    } catch (error) {
      if (made === session.client) showError(error);
      return;
    }
    const reply = await attempt("picture.post", fields);
    if (!reply || made !== session.client) return;
    resetPostForm();
    const picture = reply.picture;
    if (picture.event) openEvent({ tag: picture.event, private: Boolean(picture.private) });
    else if (!shownEvent) add(picture, "top");
  } finally {
    button.disabled = false;
    button.textContent = "Post";
  }
}

// MARK: Events

function eventRow(event) {
  const count = event.pictures === 1 ? "1 picture" : `${event.pictures} pictures`;
  const facts = [event.private ? "private" : "public", count];
  if (event.owner) facts.push(`by ${displayName(event.owner)}`);
  const row = el("li", { "data-event": event.tag },
    el("div", { class: "event-name" },
      el("strong", { text: `#${event.tag}` }), event.title ? el("span", { text: ` ${event.title}` }) : null),
    el("span", { class: "hint", text: facts.join(" · ") }));
  const controls = el("div", { class: "actions" });
  if (event.member) {
    controls.append(el("button", {
      type: "button", text: "Show pictures", "aria-label": `Show the pictures of #${event.tag}`,
      onclick: () => openEvent(event),
    }));
  } else {
    controls.append(el("button", {
      type: "button", class: "primary", text: "Join", "aria-label": `Join #${event.tag}`,
      onclick: () => (event.private ? passwordForm(event, row) : join(event)),
    }));
  }
  row.append(controls);
  return row;
}

function passwordForm(event, row) {
  const existing = $(".join-form", row);
  if (existing) {
    $("input", existing).focus();
    return;
  }
  const input = el("input", { id: `join-password-${event.tag}`, type: "password", autocomplete: "off" });
  const form = el("form", { class: "join-form" },
    el("label", { for: input.id, text: `Password for #${event.tag}` }), input,
    el("button", { type: "submit", class: "primary", text: "Join event" }));
  form.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    if (!input.value) {
      showError(new Error(`#${event.tag} is private: enter its password.`));
      return;
    }
    join(event, input.value, input);
  });
  row.append(form);
  input.focus();
}

async function join(event, password, input) {
  const made = client;
  if (!made) return;
  try {
    const reply = await made.request("event.join", { tag: event.tag, ...(password ? { password } : {}) });
    if (made !== session.client) return;
    clearError();
    openEvent(reply.event);
    searchEvents($("#event-search").value);
  } catch (error) {
    if (made !== session.client) return;
    if (error instanceof CairnError && error.code === "wrong_password") {
      showError(new Error(`Wrong password for #${event.tag}.`));
      if (input) {
        input.value = "";
        input.focus();
      }
    } else showError(error);
  }
}

async function searchEvents(q) {
  const list = $(".event-list");
  if (!q.trim()) {
    list.replaceChildren();
    return;
  }
  const reply = await attempt("event.search", { q: q.trim() });
  if (!reply) return;
  list.replaceChildren(...reply.events.map(eventRow));
  if (reply.events.length === 0) list.append(el("li", {}, el("span", { class: "hint", text: "No event found." })));
}

async function createEvent(form) {
  const tag = form.tag.value.trim();
  if (!tag) {
    showError(new Error("Give the event a tag, such as #party."));
    return;
  }
  const fields = { tag };
  if (form.elements.title.value.trim()) fields.title = form.elements.title.value.trim();
  if (form.password.value) fields.password = form.password.value;
  const reply = await once(form, () => attempt("event.create", fields));
  if (!reply) return;
  form.reset();
  form.closest("details").open = false;
  $(".event-list").replaceChildren(eventRow(reply.event));
  openEvent(reply.event);
}

// MARK: What is shown

/** Lists an event's pictures, and watches it for new ones. */
function openEvent(event) {
  shownEvent = { tag: event.tag, title: event.title, private: event.private };
  $(".pictures-title").textContent = `#${event.tag}`;
  $(".picture-source .event-name").textContent = [event.title, event.private ? "private event" : "event"]
    .filter(Boolean).join(" · ");
  $(".picture-source").hidden = false;
  $(".radius-choice").hidden = true;
  clearList();
  watch();
  load();
  $(".pictures-title").scrollIntoView?.({ block: "nearest" });
}

function openNearby() {
  shownEvent = null;
  $(".pictures-title").textContent = "Pictures nearby";
  $(".picture-source").hidden = true;
  $(".radius-choice").hidden = false;
  clearList();
  watch();
  load();
}

/** One watch per connection: the area around the user or the event shown; the client re-sends it after reconnects. */
async function watch() {
  const made = client;
  if (!made) return;
  try {
    await made.watch("pictures.watch", shownEvent ? { event: shownEvent.tag } : { radius: radius() });
  } catch (error) {
    if (made === session.client) showError(error);
  }
}

function pictureNew({ picture }) {
  if (!picture) return;
  if (shownEvent ? picture.event !== shownEvent.tag : picture.lat === undefined) return;
  add(picture, "top");
}

function forget() {
  client = null;
  listing += 1;
  shownEvent = null;
  listedAt = null;
  clearList();
  hint(null);
  $(".pictures-title").textContent = "Pictures nearby";
  $(".picture-source").hidden = true;
  $(".radius-choice").hidden = false;
  $(".event-list").replaceChildren();
  $(".event-search").reset();
  $(".event-create").reset();
  resetPostForm();
  $(".picture-post-box").open = false;
  $(".event-create-box").open = false;
}

feature({
  start(made) {
    client = made;
    made.on("picture.new", live(made, pictureNew));
    watch();
    load();
  },
  reconnected() {
    load();
  },
  moved(position) {
    if (!client || shownEvent) return;
    // The first position, or a move far enough to change what is near: read the list again.
    const far = listedAt?.lat === undefined ||
      L.latLng(listedAt.lat, listedAt.lon).distanceTo([position.lat, position.lon]) > radius() / 4;
    if (far) load();
  },
  end: forget,
});

// MARK: Wiring

$("#picture-radius").addEventListener("change", () => {
  watch();
  load();
});
$("#picture-sort").addEventListener("change", () => load());
$(".more-pictures").addEventListener("click", () => load({ more: true }));
$(".nearby-again").addEventListener("click", openNearby);
$(".picture-post").addEventListener("submit", (event) => {
  event.preventDefault();
  post(event.target);
});
$(".picture-post").event.addEventListener("input", (event) => {
  const place = event.target.form.place;
  place.disabled = !event.target.value.trim();
  if (place.disabled) place.checked = false;
  $(".post-where").textContent = place.disabled ? WHERE_NEARBY : WHERE_EVENT;
});
$("#picture-file").addEventListener("change", (event) => {
  const file = event.target.files[0];
  const preview = $(".picture-preview");
  if (preview.src) URL.revokeObjectURL(preview.src);
  if (file && IMAGE_TYPES.includes(file.type)) {
    preview.src = URL.createObjectURL(file);
    preview.hidden = false;
  } else {
    preview.removeAttribute("src");
    preview.hidden = true;
    if (file) showError(new Error("Only JPEG, PNG and WebP pictures can be posted."));
  }
});
$(".event-search").addEventListener("submit", (event) => {
  event.preventDefault();
  searchEvents(event.target.q.value);
});
$(".event-create").addEventListener("submit", (event) => {
  event.preventDefault();
  createEvent(event.target);
});
// Ages keep counting.
setInterval(() => {
  for (const entry of shown.values()) update(entry);
}, 30_000);
