// Building elements without markup strings (no innerHTML: whatever the API answers is text).

/**
 * h("a", {href: "#/x", class: "link", onclick: fn}, "text", child) makes an element. Attributes
 * starting with "on" become listeners; "dataset" takes an object; null or false children and
 * attributes are skipped; arrays of children are flattened.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of el. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** JSON as indented text; undefined as an em dash. */
export function json(value) {
  return value === undefined ? "—" : JSON.stringify(value, null, 2);
}

/** A short one-line preview of a JSON value. */
export function preview(value, max = 80) {
  if (value === undefined || value === null) return "";
  const s = JSON.stringify(value);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A timestamp as local date and time to the second, or an em dash. */
export function time(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

/** A duration in ms as "850 ms", "12.3 s", "4 min 05 s", "3 h 02 min", "2 d 4 h". */
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours} h ${String(m % 60).padStart(2, "0")} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Milliseconds between two timestamps (the second defaults to now). */
export function between(from, to) {
  if (!from) return null;
  return (to ? Date.parse(to) : Date.now()) - Date.parse(from);
}

/** A status badge (running, completed, failed, cancelled, timed_out, ...). */
export function badge(status, extra) {
  return h("span", { class: `badge ${status}${extra ? ` ${extra}` : ""}` }, status.replace("_", " "));
}

/** A <pre> of JSON. */
export function pre(value, cls) {
  return h("pre", { class: cls ? `json ${cls}` : "json" }, json(value));
}

/** A table with a header row and body rows; rows are arrays of cells (nodes or text). */
export function table(headers, rows, cls) {
  return h(
    "table",
    { class: cls || null },
    h("thead", null, h("tr", null, headers.map((x) => h("th", null, x)))),
    h(
      "tbody",
      null,
      rows.map((r) => (r instanceof Node ? r : h("tr", null, r.map((c) => h("td", null, c))))),
    ),
  );
}

/** A small paragraph for an empty list. */
export function empty(text) {
  return h("p", { class: "empty" }, text);
}

/** A hash link. */
export function link(hash, text, cls) {
  return h("a", { href: hash, class: cls || null }, text);
}
