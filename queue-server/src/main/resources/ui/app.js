// The dashboard's shell: hash routes, sign-in, and the refresh of the visible view every 2 s (or
// at the view's own refreshMs, for a view whose data costs the server more to gather).

import { onUnauthorized, signIn, signOut, token } from "./api.js";
import { auditView } from "./audit.js";
import { clearNotice, installDialog, problem } from "./dialog.js";
import { fill, h } from "./dom.js";
import { queueView, queuesView } from "./queues.js";
import { runView } from "./run.js";
import { runsView } from "./runs.js";
import { schedulesView } from "./schedules.js";
import { searchView } from "./search.js";
import { workersView } from "./workers.js";
import { workflowsView } from "./workflows.js";

const REFRESH_MS = 2000;

const routes = [
  [/^\/?$/, () => workflowsView()],
  [/^\/workflows$/, () => workflowsView()],
  [/^\/workflows\/([^/]+)$/, (m, q) => runsView(decodeURIComponent(m[1]), q)],
  [/^\/workflows\/([^/]+)\/runs\/(\d+)$/, (m) => runView(decodeURIComponent(m[1]), m[2])],
  [/^\/queues$/, () => queuesView()],
  [/^\/queues\/([^/]+)$/, (m) => queueView(decodeURIComponent(m[1]))],
  [/^\/workers$/, (m, q) => workersView(q)],
  [/^\/search$/, (m, q) => searchView(q)],
  [/^\/schedules$/, () => schedulesView()],
  [/^\/audit$/, (m, q) => auditView(q)],
];

let current = null;
let lastRefresh = 0;
let busy = false;
let signedOut = false;

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const i = raw.indexOf("?");
  return { path: i < 0 ? raw : raw.slice(0, i), query: new URLSearchParams(i < 0 ? "" : raw.slice(i + 1)) };
}

function route() {
  const { path, query } = parseHash();
  let view = null;
  for (const [pattern, make] of routes) {
    const m = path.match(pattern);
    if (m) {
      view = make(m, query);
      break;
    }
  }
  if (!view) view = { title: "Not found", el: h("p", { class: "empty" }, `Nothing at ${path}.`), refresh: async () => {} };
  current = view;
  document.title = `${view.title} · pgworkflows`;
  for (const a of document.querySelectorAll("nav.sections a")) {
    a.classList.toggle("active", path.startsWith(a.dataset.section) || (a.dataset.section === "/workflows" && path === "/"));
  }
  fill(document.getElementById("view"), view.el);
  refresh();
}

async function refresh() {
  if (busy || signedOut || !current) return;
  const view = current;
  busy = true;
  lastRefresh = Date.now();
  try {
    await view.refresh();
    if (view === current) {
      clearNotice("refresh");
      document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
      document.body.dataset.refreshed = String(Date.now());
    }
  } catch (e) {
    if (e.status !== 401) problem(e, "refresh");
  } finally {
    busy = false;
  }
  // The user moved on while this one was on its way: the new view gets its data now.
  if (view !== current) refresh();
}

function showSignIn(message) {
  signedOut = true;
  const form = document.getElementById("signin");
  form.hidden = false;
  document.getElementById("app").hidden = true;
  fill(form.querySelector(".signin-message"), message || "");
  form.querySelector("input[name=token]").focus();
}

function installSignIn() {
  const form = document.getElementById("signin");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const input = form.querySelector("input[name=token]");
    const value = input.value.trim();
    if (!value) return;
    signIn(value);
    input.value = "";
    form.hidden = true;
    document.getElementById("app").hidden = false;
    signedOut = false;
    updateWho();
    route();
  });
  document.getElementById("signout").addEventListener("click", () => {
    signOut();
    updateWho();
    showSignIn("Signed out.");
  });
  onUnauthorized(() => {
    if (!signedOut) {
      showSignIn(token() ? "The server did not accept this token. Sign in again." : "This server wants a token.");
    }
  });
}

function updateWho() {
  document.getElementById("signout").hidden = !token();
}

installDialog();
installSignIn();
updateWho();
window.addEventListener("hashchange", route);
setInterval(() => {
  const every = (current && current.refreshMs) || REFRESH_MS;
  if (!document.hidden && Date.now() - lastRefresh >= every - REFRESH_MS / 2) refresh();
}, REFRESH_MS);
route();
