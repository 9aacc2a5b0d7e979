// Workers: the workers the servers saw lately, of every workflow or of one.

import { get } from "./api.js";
import { between, duration, empty, h, link, table, time } from "./dom.js";
import { Section } from "./section.js";

// A worker's labels, name=value each, by name; a dash for none.
export function labelChips(labels) {
  const names = Object.keys(labels || {}).sort();
  return names.length === 0
    ? ["—"]
    : names.flatMap((n, i) => [i === 0 ? "" : " ", h("span", { class: "chip label" }, `${n}=${labels[n]}`)]);
}

export function workersView(query) {
  const workflow = query.get("workflow") || "";
  const list = new Section("workers-list");
  const filter = h("input", { name: "workflow", placeholder: "every workflow", value: workflow });
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (e) => {
        e.preventDefault();
        const w = filter.value.trim();
        location.hash = w ? `#/workers?workflow=${encodeURIComponent(w)}` : "#/workers";
      },
    },
    h("label", null, "Workflow ", filter),
    h("div", { class: "filter-buttons" }, h("button", { type: "submit", class: "primary" }, "Apply"), h("a", { href: "#/workers", class: "clear" }, "Clear")),
  );

  async function refresh() {
    const data = await get(`/v1/workers${workflow ? `?workflow=${encodeURIComponent(workflow)}` : ""}`);
    // Seen-ago changes every refresh; the rest of a row only when the worker does.
    list.show({ workers: data.workers, tick: Math.floor(Date.now() / 5000) }, () =>
      data.workers.length === 0
        ? empty(workflow ? `No worker of ${workflow} seen lately.` : "No worker seen lately.")
        : table(
            ["Worker", "Workflow", "Host", "Versions", "Slots", "Mode", "Labels", "Server", "Last seen"],
            data.workers.map((w) =>
              h(
                "tr",
                { dataset: { worker: w.id } },
                h("td", { class: "mono" }, w.id),
                h("td", null, link(`#/workflows/${encodeURIComponent(w.workflow)}`, w.workflow)),
                h("td", null, w.host),
                h("td", null, (w.versions || []).join(", ")),
                h("td", { class: "num" }, w.slots === null || w.slots === undefined ? "—" : String(w.slots)),
                h("td", null, h("span", { class: `chip ${w.mode}` }, w.mode)),
                h("td", { class: "labels" }, ...labelChips(w.labels)),
                h("td", { class: "mono" }, w.server),
                h("td", { title: time(w.lastSeen) }, `${duration(between(w.lastSeen))} ago`),
              ),
            ),
            "grid",
          ),
    );
  }

  const el = h("section", { class: "view workers" }, h("h1", null, "Workers"), form, list.el);
  return { title: "Workers", el, refresh };
}
