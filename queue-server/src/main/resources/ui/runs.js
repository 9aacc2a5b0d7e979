// A workflow's runs, newest first, with the list API's filters (status, input fields, parent)
// and its cursor pages.

import { get, wf } from "./api.js";
import { badge, between, duration, empty, h, link, preview, table, time } from "./dom.js";
import { Section } from "./section.js";

const STATUSES = ["running", "completed", "failed", "cancelled", "timed_out"];
const PAGE = 25;

export function runsView(name, query) {
  const filters = {
    status: query.get("status") || "",
    parent: query.get("parent") || "",
    input: [...query.entries()].filter(([k]) => k.startsWith("input.")).map(([k, v]) => [k.slice(6), v]),
  };
  // Cursor pages: the cursor of the page shown, and those of the pages before it.
  let cursor = null;
  const before = [];
  let next = null;

  const list = new Section("runs-list");
  const limits = new Section("concurrency", "p");
  const throttle = new Section("throttle", "p");
  const topics = new Section("topics", "p");
  const routing = new Section("routing", "p");
  const pager = h("div", { class: "pager" });
  const prevButton = h("button", { type: "button", class: "prev", onclick: () => page(before.pop() ?? null) }, "← Newer");
  const firstButton = h("button", { type: "button", class: "first", onclick: () => ((before.length = 0), page(null)) }, "Newest");
  const nextButton = h("button", { type: "button", class: "next", onclick: () => (before.push(cursor), page(next)) }, "Older →");
  const pageLabel = h("span", { class: "page-label" });
  pager.append(firstButton, prevButton, pageLabel, nextButton);

  const inputRows = h("div", { class: "input-filters" });
  function addInputRow(path = "", value = "") {
    const row = h(
      "div",
      { class: "input-filter" },
      h("input", { name: "path", placeholder: "field path, e.g. customer.tier", value: path }),
      h("span", null, "="),
      h("input", { name: "value", placeholder: "value", value }),
      h("button", { type: "button", class: "link", title: "Remove", onclick: () => row.remove() }, "×"),
    );
    inputRows.append(row);
  }
  filters.input.forEach(([k, v]) => addInputRow(k, v));
  if (filters.input.length === 0) addInputRow();

  const statusSelect = h(
    "select",
    { name: "status" },
    h("option", { value: "" }, "any status"),
    STATUSES.map((s) => h("option", { value: s, selected: s === filters.status }, s.replace("_", " "))),
  );
  const parentInput = h("input", { name: "parent", type: "number", min: "1", placeholder: "run id", value: filters.parent });

  const form = h(
    "form",
    { class: "filters", onsubmit: apply },
    h("label", null, "Status ", statusSelect),
    h("label", null, "Parent run ", parentInput),
    h("div", { class: "input-block" }, h("span", { class: "label" }, "Input fields"), inputRows, h("button", { type: "button", class: "link add-input", onclick: () => addInputRow() }, "+ field")),
    h("div", { class: "filter-buttons" }, h("button", { type: "submit", class: "primary" }, "Apply"), h("a", { href: `#/workflows/${encodeURIComponent(name)}`, class: "clear" }, "Clear")),
  );

  function apply(e) {
    e.preventDefault();
    const q = new URLSearchParams();
    if (statusSelect.value) q.set("status", statusSelect.value);
    if (parentInput.value.trim()) q.set("parent", parentInput.value.trim());
    for (const row of inputRows.querySelectorAll(".input-filter")) {
      const path = row.querySelector("input[name=path]").value.trim();
      if (path) q.append(`input.${path}`, row.querySelector("input[name=value]").value);
    }
    const hash = `#/workflows/${encodeURIComponent(name)}${q.toString() ? `?${q}` : ""}`;
    if (location.hash === hash) page(null);
    else location.hash = hash;
  }

  function apiQuery() {
    const q = new URLSearchParams();
    if (filters.status) q.set("status", filters.status);
    if (filters.parent) q.set("parent", filters.parent);
    filters.input.forEach(([k, v]) => q.append(`input.${k}`, v));
    q.set("limit", String(PAGE));
    if (cursor) q.set("cursor", cursor);
    return q;
  }

  async function page(c) {
    cursor = c;
    await refresh();
  }

  // The workflow's concurrency limit: how many runs of a key at once, what a start of a full key
  // does, and where the limit comes from.
  function showLimits(c) {
    limits.show(c, () => {
      if (c.limit == null) return "No concurrency limit: runs of each key start as workers take them.";
      const from = c.limitFrom
        ? `, limit from ${c.limitFrom}${c.limits ? ` (${Object.entries(c.limits).map(([k, v]) => `${k}=${v}`).join(", ")})` : ""}`
        : "";
      const total = c.totalLimit
        ? `, ${c.totalLimit} in all, keys in turn${c.weights ? ` (weights ${Object.entries(c.weights).map(([k, v]) => `${k}=${v}`).join(", ")})` : ""}`
        : "";
      const keys = (c.keys || []).map((k) => `${k.key}=${k.limit}`).join(", ");
      return [
        h("span", { class: "label" }, "Concurrency "),
        h("span", { class: "limit" }, `${c.limit} per key`),
        ", strategy ",
        h("span", { class: "strategy" }, (c.strategy || "queue").replaceAll("_", " ")),
        from,
        h("span", { class: "total" }, total),
        keys ? `; keys' own limits: ${keys}` : "",
      ];
    });
  }

  // The workflow's throttle: starts beyond its rate wait their turn.
  function showThrottle(t) {
    throttle.show(t, () =>
      t.limit == null
        ? ""
        : [
            h("span", { class: "label" }, "Throttle "),
            `${t.limit} starts per ${duration(t.periodMs)}, ${t.burst} at once${t.perKey ? ", per key" : ""}`,
          ],
    );
  }

  // Which workers take its runs: labels required and preferred, sticky runs.
  function showRouting(r) {
    const parts = [];
    const labels = (m) => Object.keys(m).sort().map((n) => `${n}=${m[n]}`).join(", ");
    if (r.require) parts.push(`only workers with ${labels(r.require)}`);
    if (r.prefer) parts.push(`workers with ${labels(r.prefer)} first`);
    if (r.sticky) parts.push("each run sticks to its worker");
    routing.show(r, () => (parts.length === 0 ? "" : [h("span", { class: "label" }, "Workers "), parts.join("; ")]));
  }

  // The topic patterns whose messages start its runs, one each or in batches.
  function showTopics(subs) {
    topics.show(subs, () =>
      subs.length === 0
        ? ""
        : [
            h("span", { class: "label" }, "Topics "),
            subs
              .map((x) =>
                x.batch
                  ? `${x.pattern} in batches of up to ${x.batch.maxSize} or ${duration(x.batch.timeoutMs)}${x.batch.key ? ` per ${x.batch.key}` : ""}`
                  : x.pattern,
              )
              .join("; "),
          ],
    );
  }

  async function refresh() {
    let data;
    try {
      const [runs, c, t, subs, r] = await Promise.all([
        get(`${wf(name)}/runs?${apiQuery()}`),
        get(`${wf(name)}/concurrency`),
        get(`${wf(name)}/throttle`),
        get("/v1/subscriptions"),
        get(`${wf(name)}/routing`),
      ]);
      data = runs;
      showLimits(c);
      showThrottle(t);
      showRouting(r);
      showTopics(subs.subscriptions.filter((x) => x.type === "workflow" && x.name === name));
    } catch (e) {
      if (e.status === 401) throw e;
      list.error(e, "The runs could not be listed");
      return;
    }
    next = data.nextCursor || null;
    nextButton.disabled = !next;
    prevButton.disabled = before.length === 0;
    firstButton.disabled = before.length === 0;
    pageLabel.textContent = `page ${before.length + 1}`;
    // A running run's age changes with time; the rest of the page only when the runs do.
    const ticking = data.runs.some((r) => !r.completedAt);
    list.show({ runs: data.runs, tick: ticking ? Math.floor(Date.now() / 5000) : 0 }, () =>
      data.runs.length === 0
        ? empty("No run matches.")
        : table(
            ["Run", "Status", "Version", "Started", "Took", "Input", "Parent"],
            data.runs.map((r) =>
              h(
                "tr",
                { dataset: { run: r.runId } },
                h("td", null, link(`#/workflows/${encodeURIComponent(name)}/runs/${r.runId}`, `#${r.runId}`, "run-link")),
                h("td", null, badge(r.status), r.paused ? h("span", { class: "badge paused" }, "paused") : null),
                h("td", { class: "num" }, `v${r.version}`),
                h("td", null, time(r.startedAt)),
                h("td", { class: "num" }, r.completedAt ? duration(between(r.startedAt, r.completedAt)) : duration(between(r.startedAt)) + " so far"),
                h("td", { class: "mono" }, preview(r.input, 60)),
                h("td", null, r.parent ? link(`#/workflows/${encodeURIComponent(r.parent.workflow || name)}/runs/${r.parent.runId}`, `#${r.parent.runId}`) : ""),
              ),
            ),
            "grid",
          ),
    );
  }

  const el = h(
    "section",
    { class: "view runs" },
    h("p", { class: "crumbs" }, link("#/workflows", "Workflows"), " / ", name),
    h("h1", null, `Runs of ${name}`),
    limits.el,
    throttle.el,
    routing.el,
    topics.el,
    form,
    list.el,
    pager,
  );
  return { title: `Runs of ${name}`, el, refresh };
}
