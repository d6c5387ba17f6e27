// Places (seed 001's ski areas, or whatever an operator imported): the 20 nearest to where the user stands, or found
// by name, as a list with distances and as markers on the map. Read-only: places are written by operators.
import { $, attempt, distanceText, el, feature, session } from "./shared.js";

/** The places shown on the map, by id, so a new list replaces the old markers. */
const placeMarkers = new Map();

/** Lists places (nearest first, or as found) and draws each on the map. */
function showPlaces(places, empty) {
  for (const marker of placeMarkers.values()) marker.remove();
  placeMarkers.clear();
  const list = $(".place-list");
  list.replaceChildren();
  if (places.length === 0) list.append(el("li", {}, el("span", { class: "hint", text: empty })));
  for (const place of places) {
    const icon = L.divIcon({ className: "place-marker", iconSize: [14, 14], iconAnchor: [7, 7], html: "" });
    const marker = L.marker([place.lat, place.lon], { icon, keyboard: true }).addTo(session.map);
    const element = marker.getElement();
    if (element) {
      element.dataset.place = String(place.place);
      element.title = place.name;
      element.setAttribute("aria-label", `${place.name}, ${place.category}`);
      element.setAttribute("role", "button");
      element.append(el("span", { class: "pin", "aria-hidden": "true" }));
    }
    const facts = [place.category.replaceAll("_", " "), distanceText(place.distance)].filter(Boolean).join(" · ");
    const details = el("div", { class: "popup" }, el("strong", { text: place.name }), el("div", { text: facts }));
    marker.bindPopup(details);
    placeMarkers.set(place.place, marker);
    list.append(el("li", { "data-place": place.place },
      el("button", {
        type: "button", class: "place-name", text: place.name,
        onclick: () => {
          session.map.setView([place.lat, place.lon], Math.max(session.map.getZoom(), 14));
          marker.openPopup();
        },
      }),
      el("span", { class: "distance", text: distanceText(place.distance) }),
      el("span", { class: "category", text: place.category.replaceAll("_", " ") })));
  }
  if (places.length > 0) {
    session.viewTouched = true;
    const bounds = L.latLngBounds(places.map((p) => [p.lat, p.lon]));
    session.map.fitBounds(bounds, { padding: [40, 40], maxZoom: 14, animate: false });
  }
}

async function nearestPlaces() {
  const here = session.position;
  const reply = await attempt("places.nearest", here ? { lat: here.lat, lon: here.lon, limit: 20 } : { limit: 20 });
  if (reply) showPlaces(reply.places, "No places near you.");
}

async function findPlaces(q) {
  if (!q.trim()) return;
  const reply = await attempt("places.search", { q: q.trim(), limit: 20 });
  if (reply) showPlaces(reply.places, `No place is called "${q.trim()}".`);
}

function forgetPlaces() {
  $(".place-list").replaceChildren();
  $(".place-search").reset();
  for (const marker of placeMarkers.values()) marker.remove();
  placeMarkers.clear();
}

feature({
  end: forgetPlaces,
});

$(".nearest").addEventListener("click", nearestPlaces);
$(".place-search").addEventListener("submit", (event) => {
  event.preventDefault();
  findPlaces(event.target.q.value);
});
