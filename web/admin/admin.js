// Cairn's admin console (seed 004's admin website): sign in with an account that has the admin role, then the daily
// figures and their charts, the accounts (search, suspend, unsuspend, the audit log), the reported pictures (restore,
// remove, browse), the events (title, private or public, password) and the live settings. Everything goes through
// the client library (/cairn.js) and the hub's admin.* ops, which decide who may do what: the page only shows what
// the hub answers, and shows a refusal as the hub words it. Chart.js (Debian's libjs-chart.js, served by the hub)
// draws the charts.
import { CairnClient, CairnError } from "/cairn.js";
import { $, el } from "/shared.js";

// The admin's token is kept in this tab's session storage: it survives a reload, but no other page of the origin
// (the web app, in another tab) can read it, and it is gone when the tab is closed.
const TOKEN_KEY = "cairn.admin.token";
const PAGE_SIZE = 25;
const PAGES = ["dashboard", "users", "pictures", "events", "settings"];
const COUNTED = ["new_users", "pictures_posted", "likes", "reports_opened", "reports_resolved"];
const REASONS = {
  spam: "Spam", nudity: "Nudity", violence: "Violence", harassment: "Harassment", copyright: "Copyright",
  privacy: "Privacy", other: "Other",
};

const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/**
 * A member's own words (a caption, a report's text, a reason, a title), set apart for display: a bidirectional
 * control inside (U+202E, say) reorders nothing outside it, so the text after it (who reported, when) reads as written.
 */
const own = (text) => `\u2068${text}\u2069`;

let client = null;
let me = null;
let current = null; // the page shown
const loaded = new Set(); // pages loaded since signing in
let stats = { days: 7, rows: [] };
const charts = {};
let users = { q: "", guests: false, cursors: [], next: null, rows: [] };
let audit = { entries: [], before: null };
let reportState = "open";
let settings = { values: {}, definitions: [], reset: new Set() };
let suspending = null; // the row the suspend dialog is about

// MARK: Alerts, notices and the connection indicator

/** Shows an error in the page's alert, as the hub words it (its `message`). */
function showError(error, { sticky = false, where = $("body > .alert") } = {}) {
  let text = error instanceof CairnError ? error.message : String(error?.message ?? error);
  if (error instanceof CairnError && error.retryAfterMs) {
    text += ` (try again in ${Math.ceil(error.retryAfterMs / 1000)} s)`;
  }
  where.textContent = text;
  where.hidden = false;
  clearTimeout(where.timer);
  if (!sticky) where.timer = setTimeout(() => { where.hidden = true; }, 10000);
}

function clearError() {
  for (const alert of $$(".alert")) alert.hidden = true;
}

/** A short confirmation of what was done ("Saved."), gone after a few seconds. */
function notify(text) {
  $("body > .alert").hidden = true;
  const notice = $(".notice");
  notice.textContent = text;
  notice.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => { notice.hidden = true; }, 5000);
}

function setConnection(state) {
  const indicator = $("[data-connection]");
  const value = state === "connected" ? "connected" : state === "connecting" ? "connecting" : "offline";
  indicator.dataset.connection = value;
  indicator.textContent = value;
}

/**
 * Runs a request and shows its refusal instead of swallowing it; resolves to the reply or undefined. An admin op
 * answered `forbidden` may mean the account lost the role (`cairn user revoke-admin`): then the session ends.
 */
async function attempt(op, fields = {}, where = undefined) {
  const asked = client;
  if (!asked) return undefined;
  try {
    return await asked.request(op, fields);
  } catch (error) {
    const refused = error instanceof CairnError && error.code === "forbidden" && op.startsWith("admin.");
    if (refused && !(await stillAdmin(asked))) return undefined;
    showError(error, where ? { where, sticky: true } : {});
    return undefined;
  }
}

/**
 * Whether the account still has the admin role, asked of the hub. Without it the console's session ends at once:
 * its token is revoked and nothing of what it showed stays on the page. A lost connection is not a lost role.
 */
async function stillAdmin(asked = client) {
  if (!asked || asked !== client) return false;
  try {
    await asked.request("admin.settings.get");
    return true;
  } catch (error) {
    if (asked !== client) return false;
    if (!(error instanceof CairnError) || error.code !== "forbidden") return true;
    client = null;
    endSession("This account no longer has the admin role: you were signed out of the console.", asked);
    asked.request("logout", {}, { timeoutMs: 5000 }).catch(() => {}).finally(() => asked.close());
    return false;
  }
}

/** Disables a button while its request runs, so a double click is one action. */
async function busy(button, work) {
  if (button.disabled) return;
  button.disabled = true;
  try {
    await work();
  } finally {
    button.disabled = false;
  }
}

// MARK: Formatting

const number = new Intl.NumberFormat("en");
const when = (ms) => (ms ? new Date(ms).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" }) : "–");
const day = (ms) => (ms ? new Date(ms).toLocaleDateString("en-GB", { dateStyle: "medium" }) : "–");

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} days`;
}

function rate(value) {
  if (value === null || value === undefined) return "–";
  return value >= 100 ? number.format(Math.round(value)) : value.toFixed(1);
}

// MARK: Signing in

function newClient(token) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const made = new CairnClient(`${scheme}//${location.host}/ws`, token ? { token } : {});
  const live = (handler) => (event) => { if (made === client) handler(event); };
  made.on("state", live((state) => {
    setConnection(state);
    if (state === "connected" && me) reloadCurrent();
  }));
  made.on("stats", live(showLive));
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

async function signIn(form) {
  clearError();
  const username = form.username.value.trim();
  const password = form.password.value;
  if (!username || !password) {
    showError(new Error("Enter a username and a password."), { sticky: true });
    return;
  }
  form.inert = true;
  client?.close();
  const made = newClient();
  client = made;
  try {
    await made.connect();
    const session = await made.login(username, password);
    if (made !== client) return;
    form.password.value = "";
    if (await admitted(made, session.user)) {
      sessionStorage.setItem(TOKEN_KEY, session.token);
      await start(session.user);
    }
  } catch (error) {
    made.close();
    if (made !== client) return;
    client = null;
    setConnection("offline");
    showError(error, { sticky: true });
  } finally {
    form.inert = false;
  }
}

/**
 * Whether the account has the admin role: the hub answers an admin op `forbidden` to anyone else. An account
 * without it is signed out again (its new token revoked) and told so; nothing of the console is shown.
 */
async function admitted(made, user) {
  try {
    await made.request("admin.settings.get");
    return true;
  } catch (error) {
    if (!(error instanceof CairnError) || error.code !== "forbidden") throw error;
    client = null;
    made.request("logout", {}, { timeoutMs: 5000 }).catch(() => {}).finally(() => made.close());
    sessionStorage.removeItem(TOKEN_KEY);
    setConnection("offline");
    showSignIn();
    showError(new Error(`${user.username} is not an admin: this console is for accounts with the admin role. ` +
      "Use the web app instead, or ask whoever runs this hub."), { sticky: true });
    return false;
  }
}

async function resume(token) {
  const made = newClient(token);
  client = made;
  try {
    await made.connect();
    if (made !== client) return;
    const user = made.user ?? (await made.authenticate(token)).user;
    if (await admitted(made, user)) await start(user);
  } catch (error) {
    made.close();
    if (made !== client) return;
    client = null;
    setConnection("offline");
    if (error instanceof CairnError && (error.code === "unauthorized" || error.code === "suspended")) {
      sessionStorage.removeItem(TOKEN_KEY);
    }
    showSignIn();
    showError(error, { sticky: true });
  }
}

function signOut() {
  const ending = client;
  client = null;
  endSession(null, ending);
  if (!ending) return;
  ending.request("logout", {}, { timeoutMs: 5000 }).catch(() => {}).finally(() => ending.close());
}

/** Forgets the session: the token and everything shown; back to the sign-in form. */
function endSession(message, keepOpen = null) {
  const closing = client;
  client = null;
  me = null;
  if (closing !== keepOpen) closing?.close();
  sessionStorage.removeItem(TOKEN_KEY);
  loaded.clear();
  for (const chart of Object.values(charts)) chart.destroy();
  for (const key of Object.keys(charts)) delete charts[key];
  for (const node of $$("[data-stat], [data-live]")) node.textContent = "–";
  for (const node of $$("[data-today]")) node.textContent = "";
  for (const list of $$(".user-list, .queue, .found-pictures, .event-list, .setting-list, .audit-log tbody")) {
    list.replaceChildren();
  }
  stats = { days: stats.days, rows: [] };
  users = { q: "", guests: false, cursors: [], next: null, rows: [] };
  settings = { values: {}, definitions: [], reset: new Set() };
  $(".suspend-dialog").open && $(".suspend-dialog").close();
  $(".confirm-dialog").open && $(".confirm-dialog").close();
  setConnection("offline");
  showSignIn();
  if (message) showError(new Error(message), { sticky: true });
}

function showSignIn() {
  $(".boot").hidden = true;
  $(".sign-in").hidden = false;
  $(".pages").hidden = true;
  $(".whoami").hidden = true;
  $(".sign-out").hidden = true;
  for (const page of $$("[data-page]")) page.hidden = true;
  current = null;
  $("#username").focus();
}

async function start(user) {
  me = user;
  $(".boot").hidden = true;
  $(".sign-in").hidden = true;
  $(".pages").hidden = false;
  $(".whoami").textContent = user.username;
  $(".whoami").title = `Signed in as ${user.name || user.username}`;
  $(".whoami").hidden = false;
  $(".sign-out").hidden = false;
  // Live figures for accounts that also have the ops role; sent again by the client after every reconnect.
  client.watch("stats.watch", {}).then(() => {
    $(".live-note").textContent = "The hub's figures, every second.";
  }).catch((error) => {
    $(".live-figures").hidden = true;
    $(".live-note").textContent = error instanceof CairnError && error.code === "forbidden"
      ? "Live figures (connections, deliveries per second) are for accounts with the ops role too " +
        "(cairn user grant-ops)."
      : `Live figures are not available: ${error.message}`;
  });
  route();
}

// MARK: Pages

function route() {
  if (!me) return;
  const wanted = location.hash.slice(1);
  show(PAGES.includes(wanted) ? wanted : "dashboard");
}

function show(page) {
  if (current !== page) {
    clearError();
    $(".notice").hidden = true;
  }
  current = page;
  for (const section of $$("[data-page]")) section.hidden = section.dataset.page !== page;
  for (const link of $$("[data-nav]")) {
    if (link.dataset.nav === page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = `${page[0].toUpperCase()}${page.slice(1)} · Cairn admin`;
  if (!loaded.has(page)) {
    loaded.add(page);
    load(page);
  } else {
    stillAdmin(); // a page read before is shown again only while the account is an admin
  }
}

function load(page) {
  if (page === "dashboard") return loadStats();
  if (page === "users") return Promise.all([loadUsers(), loadAudit()]);
  if (page === "pictures") return loadReports();
  if (page === "settings") return loadSettings();
  return undefined;
}

/** After a reconnect the page shown is read again (the others when next opened). */
function reloadCurrent() {
  loaded.clear();
  if (current) {
    loaded.add(current);
    load(current);
  }
}

// MARK: Dashboard

async function loadStats() {
  const days = Number($("#period").value);
  const reply = await attempt("admin.stats", { days });
  if (!reply) return;
  stats = { days, rows: reply.rows };
  renderStats();
}

function median(values) {
  const sorted = values.filter((v) => v !== null && v !== undefined).sort((a, b) => a - b);
  if (!sorted.length) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The period's figures: sums of the daily counts; active users the most in one day; the median of the medians. */
function periodFigures(rows) {
  const figures = {};
  for (const column of COUNTED) figures[column] = rows.reduce((sum, row) => sum + (row[column] ?? 0), 0);
  figures.active_users = rows.reduce((most, row) => Math.max(most, row.active_users ?? 0), 0);
  figures.median_resolve_s = median(rows.map((row) => row.median_resolve_s));
  return figures;
}

function renderStats() {
  const { days, rows } = stats;
  const figures = periodFigures(rows);
  const today = rows[rows.length - 1] ?? {};
  for (const node of $$("[data-stat]")) {
    const column = node.dataset.stat;
    node.textContent = column === "median_resolve_s" ? duration(figures[column]) : number.format(figures[column]);
  }
  for (const node of $$("[data-today]")) {
    const column = node.dataset.today;
    if (days === 1) node.textContent = column === "active_users" ? "signed in today" : "today";
    else {
      const value = column === "median_resolve_s" ? duration(today[column]) : number.format(today[column] ?? 0);
      node.textContent = `today ${value}`;
    }
  }
  $(".period-note").textContent = days === 1
    ? `Today, ${rows[0]?.date ?? ""} (UTC).`
    : `${rows[0]?.date} to ${today.date} (UTC days). Counts are totals; active users is the most in one day, ` +
      "the time to resolve the median of the days' medians.";
  drawCharts(rows);
}

function drawCharts(rows) {
  const Chart = window.Chart;
  $(".no-charts").hidden = Boolean(Chart);
  $(".charts").hidden = !Chart;
  if (!Chart) return;
  const labels = rows.map((row) => row.date.slice(5));
  const series = (column) => rows.map((row) => row[column] ?? 0);
  const specs = {
    users: [["New users", "new_users", "#2f6fde"], ["Active users", "active_users", "#1f9d55"]],
    pictures: [["Pictures posted", "pictures_posted", "#7a5cd6"], ["Likes", "likes", "#e0913a"]],
    reports: [["Reports opened", "reports_opened", "#c62828"], ["Reports resolved", "reports_resolved", "#2a9d8f"]],
  };
  for (const [name, lines] of Object.entries(specs)) {
    const datasets = lines.map(([label, column, color]) => ({
      label, data: series(column), backgroundColor: color, borderColor: color, borderRadius: 3, maxBarThickness: 28,
    }));
    if (charts[name]) {
      charts[name].data.labels = labels;
      charts[name].data.datasets = datasets;
      charts[name].update();
      continue;
    }
    charts[name] = new Chart($(`.chart-${name}`), {
      type: "bar",
      data: { labels, datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
        scales: {
          y: { beginAtZero: true, ticks: { precision: 0 } },
          x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkipPadding: 8 } },
        },
      },
    });
  }
}

function showLive(event) {
  $(".live-figures").hidden = false;
  const set = (key, text) => { $(`[data-live="${key}"]`).textContent = text; };
  set("connections", number.format(event.connections?.total ?? 0));
  set("authenticated", number.format(event.connections?.authenticated ?? 0));
  set("deliveries", number.format(event.fanout?.deliveries ?? 0));
  set("messages_in", rate(event.traffic?.messages_in_per_s));
  set("messages_out", rate(event.traffic?.messages_out_per_s));
  set("positions", number.format(event.live?.positions ?? 0));
}

/** The daily figures as CSV, fetched with the admin's token (the endpoint takes it as a Bearer token). */
async function downloadCSV(button) {
  const days = Number($("#period").value);
  try {
    const response = await fetch(`/v1/admin/stats.csv?days=${days}`, {
      headers: { Authorization: `Bearer ${client?.token ?? ""}` }, cache: "no-store",
    });
    if (response.status === 403 && !(await stillAdmin())) return;
    if (!response.ok) {
      const text = (await response.text()).trim();
      throw new Error(`The hub refused the CSV (${response.status}${text ? `: ${text}` : ""}).`);
    }
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const today = stats.rows[stats.rows.length - 1]?.date ?? new Date().toISOString().slice(0, 10);
    const link = el("a", { href: url, download: `cairn-stats-${days}d-${today}.csv`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    notify(`Downloaded the figures of ${days === 1 ? "today" : `the last ${days} days`} as CSV.`);
  } catch (error) {
    showError(error);
  }
  button.blur();
}

// MARK: Users

async function loadUsers(cursor = undefined) {
  const fields = { limit: PAGE_SIZE };
  if (users.q) fields.q = users.q;
  if (users.guests) fields.guests = true;
  if (cursor) fields.cursor = cursor;
  const reply = await attempt("admin.users", fields);
  if (!reply) return;
  users.rows = reply.users;
  users.next = reply.cursor ?? null;
  renderUsers();
}

function renderUsers() {
  const list = $(".user-list");
  list.replaceChildren(...users.rows.map(userRow));
  $(".no-users").hidden = users.rows.length > 0;
  $(".first-page").hidden = users.cursors.length === 0;
  $(".next-page").hidden = !users.next;
  const page = users.cursors.length + 1;
  $(".page-note").textContent = users.rows.length
    ? `Page ${page}${users.next ? "" : page > 1 ? " (last)" : ""} · ${users.rows.length} account` +
      (users.rows.length === 1 ? "" : "s")
    : "";
}

function userRow(row) {
  const suspended = row.suspended;
  const counts = [
    ["Friends", row.friends], ["Buckets", row.buckets], ["Relics", row.relics], ["Pictures", row.pictures],
    ["Likes received", row.likes_received], ["Open reports", row.open_reports],
  ];
  const tags = [
    row.admin ? el("span", { class: "tag admin", text: "admin" }) : null,
    row.guest ? el("span", { class: "tag", text: "guest" }) : null,
    suspended ? el("span", { class: "tag danger", text: "suspended" }) : null,
  ];
  const state = suspended
    ? el("p", { class: "state suspended" },
      `Suspended ${suspended.until ? `until ${when(suspended.until)}` : "until lifted"} (since ${day(suspended.since)})`,
      el("br"), el("span", { class: "why", text: `Reason: ${own(suspended.reason)}` }))
    : el("p", { class: "state", text: `Joined ${day(row.created)} · last seen ${when(row.last_seen)}` });
  const action = suspended
    ? el("button", { type: "button", class: "unsuspend", text: "Unsuspend", onclick: (e) => unsuspend(row, e.target) })
    : el("button", {
      type: "button", class: "danger-outline suspend", text: "Suspend", disabled: row.admin,
      title: row.admin ? "Admins cannot be suspended: revoke the role first (cairn user revoke-admin)" : null,
      onclick: () => openSuspend(row),
    });
  return el("li", { class: suspended ? "user is-suspended" : "user", "data-user": row.id },
    el("div", { class: "who" },
      el("p", { class: "names" }, el("strong", { class: "username", text: row.username }), ...tags),
      el("p", { class: "hint", text: [row.name !== row.username ? row.name : null, row.email].filter(Boolean)
        .map(own).join(" · ") || "\u00a0" }),
      state),
    el("dl", { class: "counts" }, ...counts.flatMap(([label, value]) => [
      el("div", { class: label === "Open reports" && value > 0 ? "count warn" : "count" },
        el("dt", { text: label }), el("dd", { text: number.format(value ?? 0) })),
    ])),
    el("div", { class: "row-actions" }, action));
}

function openSuspend(row) {
  suspending = row;
  const dialog = $(".suspend-dialog");
  $("#suspend-title").textContent = `Suspend ${row.username}?`;
  $(".suspend-text").textContent = `${row.name || row.username} is signed out everywhere at once and cannot sign in ` +
    "until the suspension ends. Their data is kept.";
  $(".alert", dialog).hidden = true;
  $("#suspend-reason").value = "";
  $("#suspend-for").value = "";
  dialog.showModal();
  $("#suspend-reason").focus();
}

async function confirmSuspend(button) {
  const dialog = $(".suspend-dialog");
  const row = suspending;
  if (!row) return;
  const fields = { user: row.id, reason: $("#suspend-reason").value };
  const seconds = $("#suspend-for").value;
  if (seconds) fields.for = Number(seconds);
  await busy(button, async () => {
    const reply = await attempt("admin.user.suspend", fields, $(".alert", dialog));
    if (!reply) return;
    dialog.close();
    suspending = null;
    replaceUser(reply.user);
    notify(`${row.username} is suspended; their connections were closed.`);
    loadAudit();
  });
}

async function unsuspend(row, button) {
  await busy(button, async () => {
    const reply = await attempt("admin.user.unsuspend", { user: row.id });
    if (!reply) return;
    replaceUser({ ...row, suspended: undefined });
    notify(reply.lifted ? `${row.username} may sign in again.` : `${row.username} was not suspended.`);
    loadAudit();
  });
}

function replaceUser(row) {
  const index = users.rows.findIndex((r) => r.id === row.id);
  if (index >= 0) users.rows[index] = row;
  const old = $(`.user-list [data-user="${row.id}"]`);
  if (!old) return;
  const fresh = userRow(row);
  old.replaceWith(fresh);
  $("button", $(".row-actions", fresh))?.focus();
}

async function loadAudit(before = undefined) {
  const reply = await attempt("admin.audit", before ? { before } : {});
  if (!reply) return;
  audit.entries = before ? [...audit.entries, ...reply.entries] : reply.entries;
  audit.before = reply.before ?? null;
  const body = $(".audit-log tbody");
  body.replaceChildren(...audit.entries.map((entry) => {
    const target = entry.target ?? {};
    const name = target.name ?? `${target.kind} ${target.id}`;
    const why = [entry.reason, entry.detail].filter(Boolean).map(own).join(" · ");
    return el("tr", { "data-audit": entry.id },
      el("td", { text: when(entry.ts) }),
      el("td", { text: entry.admin?.username ?? entry.admin?.user?.username ?? "–" }),
      el("td", {}, el("code", { text: entry.action })),
      el("td", { text: `${target.kind === "user" ? "" : `${target.kind} `}${name}` }),
      el("td", { text: why || "–" }));
  }));
  $(".audit-log").hidden = audit.entries.length === 0;
  $(".no-audit").hidden = audit.entries.length > 0;
  $(".older-audit").hidden = !audit.before;
}

// MARK: Pictures

async function loadReports() {
  const reply = await attempt("admin.reports", { state: reportState });
  if (!reply) return;
  const queue = $(".queue");
  queue.replaceChildren(...reply.pictures.map(({ picture, reports }) => reportedPicture(picture, reports)));
  $(".queue-empty").hidden = reply.pictures.length > 0;
  $(".queue-empty").textContent = reportState === "open"
    ? "No reported picture is waiting." : "No report has been resolved yet.";
}

function pictureFacts(picture) {
  return el("p", { class: "facts" },
    el("span", { text: `by ${picture.by?.name ?? "?"} (${picture.by?.username ?? "?"})` }),
    picture.event ? el("span", { text: ` · #${picture.event}${picture.private ? " (private)" : ""}` }) : null,
    el("span", { text: ` · ${when(picture.created)}` }),
    el("span", { text: ` · ${picture.likes} like${picture.likes === 1 ? "" : "s"}` }));
}

/** Resolved: removed (hidden for good) or restored; open: hidden from everyone once past the threshold. */
function outcomeTag(picture, open) {
  if (reportState === "resolved" && !open) {
    return picture.hidden ? el("span", { class: "tag danger", text: "removed" })
      : el("span", { class: "tag good", text: "restored" });
  }
  return picture.hidden ? el("span", { class: "tag danger", text: "hidden from everyone" }) : null;
}

function reportedPicture(picture, reports) {
  const open = reports.filter((r) => !r.resolved).length;
  const note = el("input", { id: `why-${picture.id}`, name: "reason", autocomplete: "off",
    placeholder: "Kept in the audit log" });
  const actions = reportState === "open"
    ? el("div", { class: "decide" },
      el("label", { for: `why-${picture.id}`, text: "Note (optional)" }), note,
      el("div", { class: "actions" },
        el("button", { type: "button", class: "primary", text: "Restore",
          onclick: (e) => decide(picture, "restore", note.value, e.target) }),
        el("button", { type: "button", class: "danger", text: "Remove",
          onclick: (e) => decide(picture, "remove", note.value, e.target) })))
    : null;
  return el("li", { class: "reported", "data-picture": picture.id },
    el("a", { class: "thumb", href: picture.url, target: "_blank", rel: "noopener",
      "aria-label": `Open picture ${picture.id} in full` },
    el("img", { src: picture.url, alt: picture.caption ? `Picture: ${picture.caption}` : "Reported picture",
      loading: "lazy" })),
    el("div", { class: "details" },
      el("p", { class: "names" }, el("strong", { text: picture.caption ? own(picture.caption) : "(no caption)" }),
        outcomeTag(picture, open),
        open ? el("span", { class: "tag warn", text: `${open} open report${open === 1 ? "" : "s"}` }) : null),
      pictureFacts(picture),
      el("ul", { class: "reports" }, ...reports.map((report) => el("li", { class: "report" },
        el("span", { class: `reason reason-${report.reason}`, text: REASONS[report.reason] ?? report.reason }),
        report.text ? el("q", { text: own(report.text) }) : null,
        el("span", { class: "hint",
          text: ` by ${report.reporter?.username ?? "?"}, ${when(report.created)}` +
            (report.resolved ? " · resolved" : "") })))),
      actions));
}

async function decide(picture, action, reason, button) {
  if (action === "remove") {
    const what = picture.caption ? `“${own(picture.caption)}”` : `picture ${picture.id}`;
    const sure = await confirmDialog(`Remove ${what}?`,
      "It is hidden from everyone for good, its poster included, and its open reports are resolved.", "Remove");
    if (!sure) return;
  }
  await busy(button, async () => {
    const fields = { picture: picture.id };
    if (reason.trim()) fields.reason = reason.trim();
    const reply = await attempt(`admin.picture.${action}`, fields);
    if (!reply) return;
    const name = picture.caption ? `“${own(picture.caption)}”` : `Picture ${picture.id}`;
    notify(action === "restore" ? `${name} is restored and visible again; its reports are resolved.`
      : `${name} is removed: nobody sees it any more.`);
    await loadReports();
    $(".queue [data-picture] .primary")?.focus();
  });
}

async function searchPictures(q) {
  const text = q.trim();
  const note = $(".found-note");
  if (!text) {
    $(".found-pictures").replaceChildren();
    note.hidden = true;
    return;
  }
  const reply = await attempt("picture.search", { q: text });
  if (!reply) return;
  $(".found-pictures").replaceChildren(...reply.pictures.map((picture) => el("li", { "data-found": picture.id },
    el("a", { class: "thumb", href: picture.url, target: "_blank", rel: "noopener",
      "aria-label": `Open picture ${picture.id} in full` },
    el("img", { src: picture.url, alt: picture.caption || "Picture", loading: "lazy" })),
    el("p", { class: "caption", text: picture.caption ? own(picture.caption) : "(no caption)" }),
    pictureFacts(picture))));
  note.hidden = false;
  note.textContent = reply.pictures.length
    ? `${reply.pictures.length} picture${reply.pictures.length === 1 ? "" : "s"}, newest first (what this account ` +
      "may see: hidden pictures are in the report queue)."
    : "No picture matches.";
}

// MARK: Events

async function searchEvents(q) {
  if (!q.trim()) {
    $(".events-note").hidden = false;
    $(".events-note").textContent = "Type part of a tag or a title to find events.";
    return;
  }
  const reply = await attempt("event.search", { q: q.trim() });
  if (!reply) return;
  $(".event-list").replaceChildren(...reply.events.map(eventRow));
  $(".events-note").textContent = reply.events.length ? "" : "No event matches.";
  $(".events-note").hidden = reply.events.length > 0;
}

function eventRow(event) {
  const id = `event-${event.id}`;
  const form = el("form", { class: "event-form", novalidate: true },
    el("label", { for: `${id}-title`, text: "Title" }),
    el("input", { id: `${id}-title`, name: "title", value: event.title ?? "", maxlength: 200, autocomplete: "off" }),
    el("label", { for: `${id}-visibility`, text: "Visibility" }),
    el("select", { id: `${id}-visibility`, name: "visibility" },
      el("option", { value: "public", text: "Public", selected: !event.private }),
      el("option", { value: "private", text: "Private (password)", selected: event.private })),
    el("label", { for: `${id}-password`, text: event.private ? "New password" : "Password" }),
    el("input", { id: `${id}-password`, name: "password", type: "password", autocomplete: "new-password",
      placeholder: event.private ? "Leave empty to keep it" : "Needed to make it private" }),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", text: "Update" }),
      el("button", { type: "button", class: "danger", text: "Delete", "aria-label": `Delete #${event.tag}`,
        onclick: (e) => deleteEvent(event, e.currentTarget) })));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    updateEvent(event, form, e.submitter ?? $("button", form));
  });
  return el("li", { class: "event", "data-event": event.tag },
    el("div", { class: "who" },
      el("p", { class: "names" }, el("strong", { text: `#${event.tag}` }),
        el("span", { class: event.private ? "tag warn" : "tag", text: event.private ? "private" : "public" })),
      el("p", { class: "title", text: event.title ? own(event.title) : "(no title)" }),
      el("p", { class: "hint", text: `by ${event.owner?.username ?? "?"} · created ${day(event.created)} · ` +
        `${event.pictures} picture${event.pictures === 1 ? "" : "s"}` })),
    form);
}

async function updateEvent(event, form, button) {
  const fields = { tag: event.tag };
  const title = form.title.value.trim();
  if (title !== (event.title ?? "")) fields.title = title || null;
  const wantPrivate = form.visibility.value === "private";
  const password = form.password.value;
  if (password) fields.password = password;
  if (wantPrivate !== event.private) fields.private = wantPrivate;
  if (password && !wantPrivate) delete fields.password; // going public: a password would contradict it
  if (Object.keys(fields).length === 1) {
    notify("Nothing to change.");
    return;
  }
  await busy(button, async () => {
    const reply = await attempt("admin.event.update", fields);
    if (!reply) return;
    const row = eventRow(reply.event);
    form.closest("[data-event]").replaceWith(row);
    $("button", row).focus();
    notify(`#${reply.event.tag} is updated.`);
  });
}

/** Deletes an event with its pictures (seed 004's "delete event"), after a confirmation: Ok deletes, Cancel keeps. */
async function deleteEvent(event, button) {
  const count = `${event.pictures} picture${event.pictures === 1 ? "" : "s"}`;
  const sure = await confirmDialog(`Delete #${event.tag}?`,
    `The event goes for good with its ${count}, their likes and their reports (open ones too).`, "Delete");
  if (!sure) return;
  await busy(button, async () => {
    const reply = await attempt("admin.event.delete", { tag: event.tag });
    if (!reply) return;
    button.closest("[data-event]")?.remove();
    notify(`#${reply.tag} is deleted with its ${count}.`);
  });
}

// MARK: Settings

async function loadSettings() {
  const reply = await attempt("admin.settings.get");
  if (reply) renderSettings(reply);
}

function bounds(definition) {
  if (definition.type === "boolean") return "yes or no";
  if (definition.min !== undefined && definition.max !== undefined) {
    return `${number.format(definition.min)}–${number.format(definition.max)}`;
  }
  return definition.type;
}

const shown = (definition, value) => (definition.type === "boolean" ? (value ? "yes" : "no") : number.format(value));

function renderSettings(reply) {
  settings = { values: reply.settings, definitions: reply.definitions, reset: new Set() };
  $(".setting-list").replaceChildren(...reply.definitions.map((definition) => {
    const { key } = definition;
    const value = reply.settings[key];
    const id = `setting-${key}`;
    const input = definition.type === "boolean"
      ? el("input", { id, name: key, type: "checkbox", checked: Boolean(value) })
      : el("input", { id, name: key, type: "number", inputmode: "numeric", step: 1, value,
        min: definition.min, max: definition.max, "aria-describedby": `${id}-help` });
    input.addEventListener("input", () => {
      settings.reset.delete(key);
      markSetting(key);
    });
    return el("div", { class: "setting", "data-setting": key },
      el("label", { for: id }, el("code", { text: key })),
      el("div", { class: "control" }, input,
        key.endsWith("_bytes") ? el("span", { class: "size", "aria-hidden": "true" }) : null,
        el("button", { type: "button", class: "reset", text: "Reset to default",
          "aria-label": `Reset ${key} to its default`, onclick: () => resetSetting(definition) })),
      el("p", { class: "hint", id: `${id}-help` },
        el("span", { text: definition.help }), el("br"),
        el("span", { class: "bounds", text: `Allowed: ${bounds(definition)} · default ${shown(definition,
          definition.default)}` }),
        el("span", { class: "changed" })));
  }));
  for (const { key } of reply.definitions) markSetting(key);
}

function inputOf(key) {
  return $(`#setting-${key}`);
}

/** What an input holds as the hub would take it; text the browser could not read as a number is sent as it is. */
function valueOf(definition) {
  const input = inputOf(definition.key);
  if (definition.type === "boolean") return input.checked;
  if (input.value === "") return input.validity.badInput ? "not a number" : "";
  const value = Number(input.value);
  return Number.isFinite(value) ? value : input.value;
}

function markSetting(key) {
  const definition = settings.definitions.find((d) => d.key === key);
  const row = $(`[data-setting="${key}"]`);
  if (!definition || !row) return;
  const pending = settings.reset.has(key) || valueOf(definition) !== settings.values[key];
  const value = settings.values[key];
  row.classList.toggle("pending", pending);
  $(".reset", row).disabled = !pending && value === definition.default;
  const size = $(".size", row);
  if (size) size.textContent = bytes(valueOf(definition));
  $(".changed", row).textContent = settings.reset.has(key) ? " · back to the default when saved"
    : pending ? ` · in force now: ${shown(definition, value)} (not saved)`
      : value === definition.default ? " · the default" : " · changed from the default";
}

/** A byte count as people read it: 20971520 → "20 MiB". */
function bytes(value) {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1024) return "";
  const units = ["KiB", "MiB", "GiB"];
  let size = value / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `= ${Number.isInteger(size) ? size : size.toFixed(1)} ${units[unit]}`;
}

function resetSetting(definition) {
  const input = inputOf(definition.key);
  if (definition.type === "boolean") input.checked = Boolean(definition.default);
  else input.value = definition.default;
  settings.reset.add(definition.key);
  markSetting(definition.key);
}

async function saveSettings(button) {
  const changes = {};
  for (const definition of settings.definitions) {
    const { key } = definition;
    if (settings.reset.has(key)) changes[key] = null;
    else if (valueOf(definition) !== settings.values[key]) changes[key] = valueOf(definition);
  }
  if (!Object.keys(changes).length) {
    notify("Nothing to save: no setting was changed.");
    return;
  }
  await busy(button, async () => {
    const reply = await attempt("admin.settings.set", { settings: changes });
    if (!reply) return;
    clearError();
    renderSettings(reply);
    notify(`Saved: ${Object.keys(changes).join(", ")}. In force now.`);
    if (loaded.has("users")) loadAudit();
  });
}

// MARK: Dialogs

/** Asks for confirmation in a modal dialog; resolves to true for Confirm, false for Cancel or Escape. */
function confirmDialog(title, text, confirmLabel = "Confirm") {
  const dialog = $(".confirm-dialog");
  $("#confirm-title").textContent = title;
  $(".confirm-text").textContent = text;
  $(".confirm", dialog).textContent = confirmLabel;
  dialog.returnValue = "";
  dialog.showModal();
  $(".cancel", dialog).focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
  });
}

// MARK: Wiring

function wire() {
  $(".account").addEventListener("submit", (e) => {
    e.preventDefault();
    if (!e.target.inert) signIn(e.target);
  });
  $(".sign-out").addEventListener("click", signOut);
  window.addEventListener("hashchange", route);

  $("#period").addEventListener("change", loadStats);
  $(".refresh-stats").addEventListener("click", (e) => busy(e.target, loadStats));
  $(".download-csv").addEventListener("click", (e) => busy(e.target, () => downloadCSV(e.target)));

  $(".user-search").addEventListener("submit", (e) => {
    e.preventDefault();
    users = { q: e.target.q.value.trim(), guests: e.target.guests.checked, cursors: [], next: null, rows: [] };
    loadUsers();
  });
  $(".next-page").addEventListener("click", () => {
    users.cursors.push(users.next);
    loadUsers(users.next);
  });
  $(".first-page").addEventListener("click", () => {
    users.cursors = [];
    loadUsers();
  });
  $(".refresh-audit").addEventListener("click", (e) => busy(e.target, () => loadAudit()));
  $(".older-audit").addEventListener("click", (e) => busy(e.target, () => loadAudit(audit.before)));

  const suspendDialog = $(".suspend-dialog");
  $(".suspend-form").addEventListener("submit", (e) => {
    e.preventDefault(); // the dialog closes only once the hub has agreed
    confirmSuspend($(".confirm", suspendDialog));
  });
  $(".cancel", suspendDialog).addEventListener("click", () => suspendDialog.close());
  suspendDialog.addEventListener("close", () => {
    const row = suspending;
    suspending = null;
    if (row) $(`.user-list [data-user="${row.id}"] .suspend`)?.focus();
  });
  const confirm = $(".confirm-dialog");
  $(".cancel", confirm).addEventListener("click", () => confirm.close(""));

  for (const button of $$("[data-reports]")) {
    button.addEventListener("click", () => {
      reportState = button.dataset.reports;
      for (const other of $$("[data-reports]")) other.setAttribute("aria-pressed", String(other === button));
      loadReports();
    });
  }
  $(".refresh-reports").addEventListener("click", (e) => busy(e.target, loadReports));
  $(".picture-search").addEventListener("submit", (e) => {
    e.preventDefault();
    searchPictures(e.target.q.value);
  });

  $(".event-search").addEventListener("submit", (e) => {
    e.preventDefault();
    searchEvents(e.target.q.value);
  });

  $(".settings-form").addEventListener("submit", (e) => {
    e.preventDefault();
    saveSettings($(".settings-form [type=submit]"));
  });
  $(".undo-settings").addEventListener("click", () => renderSettings({
    settings: settings.values, definitions: settings.definitions,
  }));
}

wire();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) resume(saved);
else showSignIn();
