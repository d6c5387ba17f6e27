// The user's own profile (seeds 000 and 003): the display name friends see, a short bio, and a photo (uploaded through
// /v1/media) that friends see on the map and in their lists instead of an initial. Edited in a dialog from the Me
// section; what the hub refuses (a name too long, an image it does not take) is shown in the alert.
import {
  $, attempt, displayName, el, feature, fill, fillAvatar, notice, session, showError, uploadFile,
} from "./shared.js";

let profile = null;

function dialog() {
  let box = $(".profile-dialog");
  if (!box) {
    box = el("dialog", { class: "profile-dialog", "aria-labelledby": "profile-title" });
    document.body.append(box);
  }
  return box;
}

async function edit() {
  const reply = await attempt("user.get", { user: session.me.id });
  if (!reply) return;
  profile = reply.user;
  const box = dialog();
  const avatar = el("span", { class: "avatar large", "aria-hidden": "true" });
  fillAvatar(avatar, profile);
  const form = el("form", { class: "stacked", novalidate: true },
    el("h2", { id: "profile-title", text: "Your profile" }),
    el("div", { class: "profile-head" }, avatar, el("span", { class: "hint", text: `@${profile.username}` })),
    el("label", { for: "profile-name", text: "Display name" }),
    el("input", { id: "profile-name", name: "name", maxlength: 64, value: profile.name ?? "" }),
    el("label", { for: "profile-bio", text: "Bio" }),
    el("textarea", { id: "profile-bio", name: "bio", rows: 2, maxlength: 500 }),
    el("label", { for: "profile-photo", text: "Photo" }),
    el("input", { id: "profile-photo", name: "photo", type: "file", accept: "image/jpeg,image/png,image/webp" }),
    profile.photo_url ? el("label", { class: "check" }, el("input", { type: "checkbox", name: "removePhoto" }),
      "Remove my photo") : null,
    el("div", { class: "actions" },
      el("button", { type: "submit", class: "primary", text: "Save profile" }),
      el("button", { type: "button", text: "Cancel", onclick: () => box.close() })));
  form.bio.value = profile.bio ?? "";
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    form.inert = true;
    try {
      const fields = {};
      const name = form.name.value.trim();
      if (name !== (profile.name ?? "")) fields.name = name;
      const bio = form.bio.value.trim();
      if (bio !== (profile.bio ?? "")) fields.bio = bio || null;
      const file = form.photo.files[0];
      if (file) fields.photo = await uploadFile(file);
      else if (form.removePhoto?.checked) fields.photo = null;
      if (!Object.keys(fields).length) return box.close();
      const saved = await attempt("profile.set", fields);
      if (!saved) return;
      profile = saved.user;
      Object.assign(session.me, { name: saved.user.name });
      $(".whoami").textContent = `Signed in as ${displayName(saved.user)}`;
      box.close();
      notice("Your profile is saved.");
    } catch (error) {
      showError(error);
    } finally {
      form.inert = false;
    }
  });
  fill(box, form);
  box.showModal();
  form.name.focus();
}

feature({
  end() {
    profile = null;
    const box = $(".profile-dialog");
    if (box?.open) box.close();
  },
});

$(".edit-profile").addEventListener("click", () => {
  if (session.client) edit();
});
