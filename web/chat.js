// Chat (seed 003): a conversation per friend, with unread counts (their total on the Chat tab), the history a page
// at a time (older ones with "Earlier"), live messages (`chat.msg`, from the friend and from this user's other
// devices) and read marks (`chat.read` when a conversation is on screen; other devices' marks update the counts).
// A friend's row in the friends panel gets a Chat button; friends without a conversation can be chosen here too.
import { CairnError } from "/cairn.js";
import {
  $, attempt, displayName, el, feature, initial, live, once, paced, session, showError, when,
} from "./shared.js";
import { currentTab, showTab } from "./tabs.js";

let client = null;
/** Conversations by the other user's id: {with, user, last, unread}. */
const conversations = new Map();
/** Their rows in the list, by the other user's id, kept so that an update does not take the focus away. */
const rows = new Map();
/** The conversation on screen: the other user's id, or null for the list. */
let open = null;
/** The shown conversation's messages by id. */
const messages = new Map();
/** Bumped by every conversation opened, so that a late history of another one is dropped. */
let opening = 0;
/** What was written and not sent, by conversation: each keeps its own. */
const drafts = new Map();
/** The newest of the friend's messages already marked read in the shown conversation. */
let readUpto = 0;

const me = () => session.me?.id;

function userOf(id) {
  return conversations.get(id)?.user ?? session.friends.get(id) ?? { id, username: `user ${id}`, name: "" };
}

// MARK: The list of conversations and the unread badge

function setBadge() {
  let total = 0;
  for (const conversation of conversations.values()) total += conversation.unread;
  const badge = $(".badge[data-unread]");
  badge.dataset.unread = String(total);
  badge.textContent = total > 99 ? "99+" : String(total);
  badge.title = `${total} unread`;
  badge.hidden = total === 0;
}

function snippet(message) {
  if (!message) return "";
  const text = message.text.replace(/\s+/g, " ");
  return `${message.from === me() ? "You: " : ""}${text.length > 80 ? `${text.slice(0, 79)}…` : text}`;
}

function conversationRow(id) {
  return el("li", { "data-conversation": id },
    el("button", { type: "button", class: "conversation-open", onclick: () => openConversation(id) },
      el("span", { class: "avatar", "aria-hidden": "true" }),
      el("span", { class: "who" }),
      el("time", { class: "last-time" }),
      el("span", { class: "last-text" }),
      el("span", { class: "badge unread", "aria-hidden": "true" })));
}

function renderList() {
  const list = $(".conversation-list");
  const sorted = [...conversations.values()].sort((a, b) => (b.last?.id ?? 0) - (a.last?.id ?? 0));
  for (const [id, row] of rows) {
    if (conversations.has(id)) continue;
    row.remove();
    rows.delete(id);
  }
  for (const conversation of sorted) {
    const id = conversation.with;
    if (!rows.has(id)) rows.set(id, conversationRow(id));
    const row = rows.get(id);
    const name = displayName(conversation.user);
    $(".avatar", row).textContent = initial(conversation.user);
    $(".who", row).textContent = name;
    const time = $(".last-time", row);
    time.textContent = conversation.last ? when(conversation.last.ts) : "";
    if (conversation.last) time.dateTime = new Date(conversation.last.ts).toISOString();
    $(".last-text", row).textContent = snippet(conversation.last);
    const unread = $(".unread", row);
    unread.textContent = String(conversation.unread);
    unread.hidden = conversation.unread === 0;
    row.classList.toggle("has-unread", conversation.unread > 0);
    $(".conversation-open", row).setAttribute("aria-label",
      `${name}${conversation.unread ? `, ${conversation.unread} unread` : ""}${
        conversation.last ? `, last: ${snippet(conversation.last)}` : ""}`);
  }
  // Reordered only when the order changed; the focused row keeps the focus.
  const wanted = sorted.map((c) => rows.get(c.with));
  if (wanted.some((row, index) => list.children[index] !== row) || list.children.length !== wanted.length) {
    const focused = document.activeElement;
    list.replaceChildren(...wanted);
    if (focused && list.contains(focused)) focused.focus();
  }
  $(".no-conversations").hidden = conversations.size > 0;
  setBadge();
  renderChoices();
}

/** The friends one can start a conversation with: those without one yet. */
function renderChoices() {
  const select = $("#chat-friend");
  const choices = [...session.friends.values()].filter((friend) => !conversations.has(friend.id))
    .sort((a, b) => displayName(a).localeCompare(displayName(b)));
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: "Choose a friend" }),
    ...choices.map((friend) => el("option", { value: friend.id, text: displayName(friend) })));
  if (choices.some((friend) => String(friend.id) === chosen)) select.value = chosen;
  $(".chat-start").hidden = choices.length === 0;
}

async function loadList() {
  const made = client;
  const reply = await attempt("chat.list");
  if (!reply || made !== session.client) return;
  conversations.clear();
  for (const conversation of reply.conversations) conversations.set(conversation.with, conversation);
  // A conversation started on this page and not yet written in stays in the list.
  if (open !== null && !conversations.has(open)) {
    conversations.set(open, { with: open, user: userOf(open), last: null, unread: 0 });
  }
  renderList();
  if (open !== null) markRead();
}

// MARK: A conversation

function messageItem(message) {
  const mine = message.from === me();
  const date = new Date(message.ts);
  return el("li", { "data-message": message.id, class: mine ? "mine" : "theirs" },
    el("span", { class: "visually-hidden", text: mine ? "You: " : `${displayName(userOf(message.from))}: ` }),
    el("span", { class: "text", text: message.text }),
    el("time", { dateTime: date.toISOString(), text: when(message.ts), title: date.toLocaleString() }));
}

/** Adds messages (oldest first) at the end, or at the start for an earlier page; each message once. */
function addMessages(list, where) {
  const box = $(".messages");
  const items = list.filter((message) => !messages.has(message.id)).map((message) => {
    messages.set(message.id, message);
    return messageItem(message);
  });
  if (where === "start") box.prepend(...items);
  else box.append(...items);
  $(".no-messages").hidden = messages.size > 0;
  $(".earlier").disabled = false;
}

function atBottom() {
  const box = $(".messages");
  return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
}

function toBottom() {
  const box = $(".messages");
  box.scrollTop = box.scrollHeight;
}

/** Keeps the text being written in the shown conversation for when it is shown again; shows `next`'s. */
function switchDraft(next) {
  const input = $("#chat-text");
  if (open !== null && input.value) drafts.set(open, input.value);
  else if (open !== null) drafts.delete(open);
  input.value = next === null ? "" : drafts.get(next) ?? "";
}

async function openConversation(id, { focus = true } = {}) {
  if (!client) return;
  const generation = ++opening;
  switchDraft(id);
  open = id;
  readUpto = 0;
  messages.clear();
  $(".messages").replaceChildren();
  $(".no-messages").hidden = true;
  $(".earlier").hidden = true;
  $(".conversation-title").textContent = displayName(userOf(id));
  $(".conversations").hidden = true;
  $(".conversation").hidden = false;
  if (!conversations.has(id)) {
    conversations.set(id, { with: id, user: userOf(id), last: null, unread: 0 });
    renderList();
  }
  if (focus) $("#chat-text").focus();
  const reply = await attempt("chat.history", { with: id, limit: 50 });
  if (!reply || generation !== opening) return;
  addMessages(reply.messages, "end");
  $(".earlier").hidden = !reply.more;
  toBottom();
  $(".chat-form").scrollIntoView({ block: "nearest" });
  markRead();
}

/** Reads the shown conversation's latest page again (after a reconnect): what came meanwhile shows. */
async function reloadConversation() {
  const id = open;
  const generation = opening;
  const reply = await attempt("chat.history", { with: id, limit: 50 });
  if (!reply || generation !== opening || open !== id) return;
  const follow = atBottom();
  addMessages(reply.messages.filter((m) => m.id > Math.max(0, ...messages.keys())), "end");
  if (follow) toBottom();
  markRead();
}

async function earlier() {
  if (open === null || messages.size === 0) return;
  const id = open;
  const generation = opening;
  const button = $(".earlier");
  button.disabled = true;
  const reply = await attempt("chat.history", { with: id, before: Math.min(...messages.keys()), limit: 50 });
  button.disabled = false;
  if (!reply || generation !== opening) return;
  const box = $(".messages");
  const fromBottom = box.scrollHeight - box.scrollTop;
  addMessages(reply.messages, "start");
  box.scrollTop = box.scrollHeight - fromBottom; // the messages read stay where they were
  button.hidden = !reply.more;
  if (button.hidden) $("#chat-text").focus();
}

function closeConversation() {
  const id = open;
  switchDraft(null);
  open = null;
  opening += 1;
  messages.clear();
  $(".messages").replaceChildren();
  $(".conversation").hidden = true;
  $(".conversations").hidden = false;
  // A conversation opened and left without a message is not one.
  const conversation = conversations.get(id);
  if (conversation && !conversation.last) conversations.delete(id);
  renderList();
  const row = rows.get(id);
  if (row) $(".conversation-open", row).focus();
  else $("#chat-friend").focus();
}

/** Marks the shown conversation read, when it is really on screen (its tab shown, the page visible): at once, and
 * then at most once a second however fast messages come (a flood of them is not a flood of read marks). */
const pacedRead = paced(markReadNow, 1000);

function markRead() {
  pacedRead("read");
}

async function markReadNow() {
  if (open === null || currentTab() !== "chat" || document.visibilityState !== "visible") return;
  const id = open;
  let upto = 0;
  for (const message of messages.values()) if (message.from === id && message.id > upto) upto = message.id;
  const conversation = conversations.get(id);
  if (upto <= readUpto || !conversation?.unread) return;
  readUpto = upto;
  const reply = await attempt("chat.read", { with: id, upto });
  if (!reply) return;
  const current = conversations.get(id);
  if (current) current.unread = reply.unread;
  renderList();
}

async function send(form) {
  const text = form.text.value;
  const to = open;
  const made = client;
  if (!made || to === null || !text.trim()) return;
  let reply;
  try {
    reply = await made.request("chat.send", { to, text });
  } catch (error) {
    if (made !== session.client) return;
    if (error instanceof CairnError && error.code === "not_friends") {
      showError(new Error(`${displayName(userOf(to))} is not your friend any more: your message was not sent.`));
    } else showError(error);
    return;
  }
  if (made !== session.client) return;
  if (open === to && form.text.value === text) form.text.value = "";
  drafts.delete(to);
  received({ message: reply.message });
  form.scrollIntoView({ block: "nearest" });
}

// MARK: Live

/** A message: the friend's, or this user's own (sent here, or from another device). */
function received({ message }) {
  if (!message) return;
  const mine = message.from === me();
  const other = mine ? message.to : message.from;
  const known = conversations.has(other);
  const conversation = conversations.get(other) ?? { with: other, user: userOf(other), last: null, unread: 0 };
  conversations.set(other, conversation);
  if (!conversation.last || message.id > conversation.last.id) conversation.last = message;
  if (!mine && !messages.has(message.id)) conversation.unread += 1;
  if (open === other && !messages.has(message.id)) {
    const follow = atBottom() || mine;
    addMessages([message], "end");
    if (follow) toBottom();
  }
  renderList();
  if (open === other) markRead();
  // Someone the page does not know yet (not a friend any more, or a friend made elsewhere): their name from the hub.
  if (!known && !session.friends.has(other)) loadList();
}

function readElsewhere({ with: other, unread }) {
  const conversation = conversations.get(other);
  if (!conversation) return;
  conversation.unread = unread;
  renderList();
}

function forget() {
  client = null;
  open = null;
  opening += 1;
  readUpto = 0;
  drafts.clear();
  conversations.clear();
  messages.clear();
  $(".messages").replaceChildren();
  $(".conversation").hidden = true;
  $(".conversations").hidden = false;
  $(".chat-form").reset();
  renderList();
}

feature({
  start(made) {
    client = made;
    made.on("chat.msg", live(made, received));
    made.on("chat.read", live(made, readElsewhere));
    loadList();
  },
  reconnected() {
    loadList();
    if (open !== null) reloadConversation();
  },
  end: forget,
});

// MARK: Wiring

/** Each friend's row in the friends panel gets a Chat button (the rows are made by the friends panel). */
function addChatButtons() {
  for (const row of document.querySelectorAll(".friend-list li[data-friend]")) {
    if ($(".chat-with", row)) continue;
    const id = Number(row.dataset.friend);
    const name = displayName(session.friends.get(id));
    const button = el("button", {
      type: "button", class: "chat-with", text: "Chat", "aria-label": `Chat with ${name}`,
      onclick: () => {
        showTab("chat");
        openConversation(id);
      },
    });
    const seen = $(".seen", row);
    if (seen) seen.after(button);
    else row.append(button);
  }
  if (client) renderChoices();
}
new MutationObserver(addChatButtons).observe($(".friend-list"), { childList: true });

$(".chat-start").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = Number(event.target.friend.value);
  if (!id) {
    showError(new Error("Choose a friend to chat with."));
    return;
  }
  openConversation(id);
});
$(".chat-form").addEventListener("submit", (event) => {
  event.preventDefault();
  once(event.target, () => send(event.target));
});
$("#chat-text").addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.altKey || event.ctrlKey || event.isComposing) return;
  event.preventDefault();
  event.target.form.requestSubmit();
});
$(".earlier").addEventListener("click", earlier);
$(".back").addEventListener("click", closeConversation);
$(".conversation").addEventListener("keydown", (event) => {
  if (event.key === "Escape" && event.target.id !== "chat-friend") closeConversation();
});
document.addEventListener("tab", (event) => {
  if (event.detail !== "chat") return;
  if (client) renderChoices();
  markRead();
});
document.addEventListener("visibilitychange", markRead);
