// Search: runs of every workflow that a query over their fields and search attributes selects,
// with how many there are; the attributes defined, to write queries with; and an action on all of
// them as a bulk operation, its count confirmed first, with the bulk operations made so far.

import { get, post, run } from "./api.js";
import { act } from "./dialog.js";
import { badge, empty, h, link, preview, table, time } from "./dom.js";
import { Section } from "./section.js";

export function searchView(query) {
  const text = query.get("q") || "";
  const results = new Section("search-results");
  const defined = new Section("search-attributes");
  const batches = new Section("batches");
  const input = h("input", {
    name: "q",
    class: "query",
    size: 80,
    placeholder: "status = 'failed' AND customer = 'acme' AND startedAt > '2026-12-01'",
    value: text,
  });
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (e) => {
        e.preventDefault();
        const q = input.value.trim();
        location.hash = q ? `#/search?q=${encodeURIComponent(q)}` : "#/search";
      },
    },
    h("label", null, "Query ", input),
    h("div", { class: "filter-buttons" }, h("button", { type: "submit", class: "primary" }, "Find"), h("a", { href: "#/search", class: "clear" }, "Clear")),
  );

  async function refresh() {
    const attributes = await get("/v1/search-attributes");
    defined.show(attributes, () =>
      attributes.attributes.length === 0
        ? empty("No search attribute defined (PUT /v1/search-attributes/{name}).")
        : h(
            "p",
            { class: "attribute-list" },
            "Attributes: ",
            ...attributes.attributes.flatMap((a, i) => [i === 0 ? "" : ", ", h("span", { class: "mono" }, a.name), ` (${a.type})`]),
            ". Fields of every run: status, workflow, runId, version, startedAt, completedAt.",
          ),
    );
    await showBatches();
    const q = text ? `?query=${encodeURIComponent(text)}` : "";
    let page;
    let count;
    try {
      [page, count] = await Promise.all([get(`/v1/runs${q}${q ? "&" : "?"}limit=100`), get(`/v1/runs/count${q}`)]);
    } catch (e) {
      if (e.status === 400) {
        results.error(e, "The query");
        return;
      }
      throw e;
    }
    results.show({ page, count }, () => [
      text && count.count > 0
        ? h(
            "div",
            { class: "bulk-actions" },
            "On all of them: ",
            ...["cancel", "pause", "resume", "restart"].map((action) =>
              h("button", { type: "button", class: `bulk ${action}`, onclick: () => bulk(action) }, action === "restart" ? "restart from the failed step" : action),
            ),
          )
        : "",
      h("p", { class: "count" }, `${count.count} run${count.count === 1 ? "" : "s"}${page.nextCursor ? ", the newest 100 below" : ""}`),
      page.runs.length === 0
        ? empty("No run matches.")
        : table(
            ["Workflow", "Run", "Status", "Input", "Started", "Completed"],
            page.runs.map((r) =>
              h(
                "tr",
                { dataset: { run: String(r.runId) } },
                h("td", null, link(`#/workflows/${encodeURIComponent(r.workflow)}`, r.workflow)),
                h("td", null, link(`#${run(r.workflow, r.runId).replace("/v1", "")}`, String(r.runId), "run-link")),
                h("td", null, badge(r.status)),
                h("td", { class: "mono" }, preview(r.input)),
                h("td", null, time(r.startedAt)),
                h("td", null, r.completedAt ? time(r.completedAt) : "—"),
              ),
            ),
            "grid",
          ),
    ]);
  }

  // The count comes again just before asking: the question says how many runs it will act on now.
  async function bulk(action) {
    const now = await get(`/v1/runs/count?query=${encodeURIComponent(text)}`);
    await act(
      {
        title: `${action[0].toUpperCase()}${action.slice(1)} ${now.count} run${now.count === 1 ? "" : "s"}?`,
        message: `A bulk operation acts on each run the query selects now, 100 a second; runs started later are not in it. A run the action does not fit is skipped.`,
        details: h("code", null, text),
        confirm: `${action[0].toUpperCase()}${action.slice(1)} ${now.count} runs`,
        danger: action === "cancel",
      },
      () => post("/v1/batches", { action, query: text, confirm: now.count > 1000 }),
      (b) => `Batch ${b.batchId}: ${b.action} of ${b.selected} runs, running.`,
      refresh,
    );
  }

  async function showBatches() {
    const data = await get("/v1/batches?limit=10");
    batches.show(data, () =>
      data.batches.length === 0
        ? ""
        : [
            h("h2", null, "Bulk operations"),
            table(
              ["Batch", "Action", "Status", "Selected", "Done", "Skipped", "Failed", "Query"],
              data.batches.map((b) =>
                h(
                  "tr",
                  { dataset: { batch: String(b.batchId) } },
                  h("td", { class: "num" }, String(b.batchId)),
                  h("td", null, b.action),
                  h("td", { class: "status" }, b.status),
                  h("td", { class: "num" }, String(b.selected)),
                  h("td", { class: "num done" }, String(b.done)),
                  h("td", { class: "num" }, String(b.skipped)),
                  h("td", { class: "num" }, String(b.failed)),
                  h("td", { class: "mono" }, b.query || ""),
                ),
              ),
              "grid",
            ),
          ],
    );
  }

  const el = h("section", { class: "view search" }, h("h1", null, "Search"), form, defined.el, results.el, batches.el);
  return { title: "Search", el, refresh };
}
