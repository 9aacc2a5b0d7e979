// The page's own confirmation dialog (every action goes through it) and its notices.

import { h, fill } from "./dom.js";

let pending = null;

/**
 * Asks before an action: shows the dialog with a title, what will happen, and optional details
 * (a node or text), and answers true when the user confirms. Escape, the backdrop's close and
 * "Back" answer false.
 */
export function confirmAction({ title, message, details, confirm = "Confirm", danger = false }) {
  const dialog = document.getElementById("confirm");
  fill(dialog.querySelector(".confirm-title"), title);
  fill(dialog.querySelector(".confirm-message"), message || "");
  const more = dialog.querySelector(".confirm-details");
  fill(more, details || "");
  more.hidden = !details;
  const ok = dialog.querySelector(".confirm-ok");
  ok.textContent = confirm;
  ok.classList.toggle("danger", danger);
  if (pending) pending(false);
  return new Promise((resolve) => {
    pending = (answer) => {
      pending = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    dialog.showModal();
    dialog.querySelector(".confirm-cancel").focus();
  });
}

export function installDialog() {
  const dialog = document.getElementById("confirm");
  dialog.querySelector(".confirm-ok").addEventListener("click", () => pending && pending(true));
  dialog.querySelector(".confirm-cancel").addEventListener("click", () => pending && pending(false));
  dialog.addEventListener("close", () => pending && pending(false));
}

/**
 * Runs an action after confirmation: on success shows `done` (text, or a function of the answer)
 * and calls after(answer); an API error shows its title and detail. Answers whether it ran.
 */
export async function act(question, action, done, after) {
  if (!(await confirmAction(question))) return false;
  try {
    const answer = await action();
    notice(typeof done === "function" ? done(answer) : done, "ok");
    if (after) await after(answer);
    return true;
  } catch (e) {
    problem(e);
    return false;
  }
}

/**
 * Shows an API error as its problem+json title and detail. source names what failed, so that
 * the same source succeeding later can take the notice away (see clearNotice).
 */
export function problem(e, source) {
  const title = e.title || "Error";
  const detail = e.detail !== undefined ? e.detail : String(e.message || e);
  notice([h("strong", { class: "problem-title" }, title), " ", h("span", { class: "problem-detail" }, detail)], "error");
  document.getElementById("notice").dataset.source = source || "";
}

/** Hides the notice if it is an error from this source. */
export function clearNotice(source) {
  const box = document.getElementById("notice");
  if (!box.hidden && box.dataset.source === source) box.hidden = true;
}

let timer = null;

/** A line at the top of the page; errors stay until dismissed or replaced, others for 6 s. */
export function notice(content, kind = "ok") {
  const box = document.getElementById("notice");
  fill(box, h("span", { class: "notice-text" }, content), h("button", { class: "notice-close", type: "button", title: "Dismiss", onclick: () => (box.hidden = true) }, "×"));
  box.className = `notice ${kind}`;
  box.dataset.source = "";
  box.hidden = false;
  clearTimeout(timer);
  if (kind !== "error") timer = setTimeout(() => (box.hidden = true), 6000);
}
