// The panel's tabs (Friends, Chat, Relics, Items, Pictures, Places): one shows at a time, chosen by click or, as the
// WAI-ARIA tabs pattern has it, by the arrow keys, Home and End. Other parts open a tab with `showTab(name)` (a chat
// from a friend's row) and hear of a tab being shown through the `tab` event on the document.
import { $ } from "./shared.js";

const tabs = [...document.querySelectorAll('[role="tab"][data-tab]')];

/** Shows the named tab's panel and hides the others; `focus` moves the keyboard focus to the tab. */
export function showTab(name, { focus = false } = {}) {
  for (const tab of tabs) {
    const chosen = tab.dataset.tab === name;
    tab.setAttribute("aria-selected", String(chosen));
    tab.tabIndex = chosen ? 0 : -1;
    $(`#${tab.getAttribute("aria-controls")}`).hidden = !chosen;
    if (chosen && focus) tab.focus();
  }
  document.dispatchEvent(new CustomEvent("tab", { detail: name }));
}

export function currentTab() {
  return tabs.find((tab) => tab.getAttribute("aria-selected") === "true")?.dataset.tab;
}

for (const [index, tab] of tabs.entries()) {
  tab.addEventListener("click", () => showTab(tab.dataset.tab));
  tab.addEventListener("keydown", (event) => {
    const to = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    showTab(tabs[(to + tabs.length) % tabs.length].dataset.tab, { focus: true });
  });
}
