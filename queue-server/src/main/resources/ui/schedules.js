// Schedules: every schedule with its cron, next tick, overlap policy, buffered ticks and failures
// in a row, and whether it is paused.

import { get } from "./api.js";
import { empty, h, link, table, time } from "./dom.js";
import { Section } from "./section.js";

export function schedulesView() {
  const list = new Section("schedules-list");

  async function refresh() {
    const data = await get("/v1/schedules");
    list.show(data, () =>
      data.schedules.length === 0
        ? empty("No schedule.")
        : table(
            ["Schedule", "Workflow", "Cron", "Zone", "Next tick", "Overlap", "Failures in a row", "State"],
            data.schedules.map((s) =>
              h(
                "tr",
                { dataset: { schedule: s.name } },
                h("td", { class: "mono" }, s.name),
                h("td", null, link(`#/workflows/${encodeURIComponent(s.workflow)}`, s.workflow)),
                h("td", { class: "mono" }, s.cron),
                h("td", null, s.zone),
                h("td", { class: "next-tick" }, s.nextTick ? time(s.nextTick) : "—"),
                h("td", { class: "overlap" }, (s.overlap || "allow_all").replace(/_/g, " "), s.buffered ? ` (${s.buffered} buffered)` : ""),
                h("td", { class: "num failures" }, s.pauseAfterFailures ? `${s.failuresInRow || 0} of ${s.pauseAfterFailures}` : String(s.failuresInRow || 0)),
                h("td", { class: "state" }, h("span", { class: `chip ${s.paused ? "paused" : "active"}` }, s.paused ? "paused" : "active")),
              ),
            ),
            "grid",
          ),
    );
  }

  const el = h("section", { class: "view schedules" }, h("h1", null, "Schedules"), list.el);
  return { title: "Schedules", el, refresh };
}
