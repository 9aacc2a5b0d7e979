// The audit trail: every operator action the servers performed, newest first, with who did it
// (the token's name), to what, and the details kept; filtered by action. Reading it takes scope
// admin.

import { get } from "./api.js";
import { empty, h, table, time } from "./dom.js";
import { Section } from "./section.js";

export function auditView(query) {
  const action = query.get("action") || "";
  const list = new Section("audit-list");
  const filter = h("input", { name: "action", placeholder: "every action, or e.g. run.cancel", value: action });
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (e) => {
        e.preventDefault();
        const a = filter.value.trim();
        location.hash = a ? `#/audit?action=${encodeURIComponent(a)}` : "#/audit";
      },
    },
    h("label", null, "Action ", filter),
    h("div", { class: "filter-buttons" }, h("button", { type: "submit", class: "primary" }, "Apply"), h("a", { href: "#/audit", class: "clear" }, "Clear")),
  );

  async function refresh() {
    let data;
    try {
      data = await get(`/v1/audit?limit=100${action ? `&action=${encodeURIComponent(action)}` : ""}`);
    } catch (e) {
      if (e.status === 400 || e.status === 403) {
        list.error(e, "The audit trail");
        return;
      }
      throw e;
    }
    list.show(data, () =>
      data.entries.length === 0
        ? empty(action ? `No ${action} recorded.` : "No operator action recorded.")
        : table(
            ["At", "Actor", "Action", "Target", "Details"],
            data.entries.map((e) =>
              h(
                "tr",
                { dataset: { entry: String(e.id), action: e.action } },
                h("td", null, time(e.at)),
                h("td", { class: "actor" }, e.actor),
                h("td", { class: "mono action" }, e.action),
                h("td", { class: "mono target" }, e.target || ""),
                h("td", { class: "mono details" }, e.details ? JSON.stringify(e.details) : ""),
              ),
            ),
            "grid",
          ),
    );
  }

  const el = h("section", { class: "view audit" }, h("h1", null, "Audit trail"), form, list.el);
  return { title: "Audit trail", el, refresh };
}
