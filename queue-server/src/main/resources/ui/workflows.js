// Workflows: run counts by status, whether each is paused, how many runs completed lately.

import { get, post, wf } from "./api.js";
import { act } from "./dialog.js";
import { Section } from "./section.js";
import { empty, h, link, table } from "./dom.js";

const WINDOW_MS = 60_000;
// The list is a count over every run of every workflow: refreshed every 15 s, not every 2 s.
const REFRESH_MS = 15_000;
const REFRESH_SLACK_MS = REFRESH_MS + 5_000;
const SEED_PAGE = 200;

export function workflowsView() {
  // Per workflow: when the page first saw it, the completion times of its newest completed runs
  // then (the list API's first page), and its completed count at each refresh since. The runs
  // that completed in the last minute are those of the first page within it plus the growth of
  // the count since, or once the page has watched for a minute, the growth over that minute.
  const seen = new Map();
  const list = new Section("workflows-list");
  const el = h(
    "section",
    { class: "view workflows" },
    h("h1", null, "Workflows"),
    h("p", { class: "lead" }, "Runs by status, and how many completed in the last minute."),
    list.el,
  );

  async function watch(w, now) {
    let times = [];
    if (w.completed > 0) {
      const page = await get(`${wf(w.name)}/runs?status=completed&limit=${SEED_PAGE}`);
      times = page.runs.map((r) => Date.parse(r.completedAt)).filter((t) => now - t <= WINDOW_MS);
    }
    seen.set(w.name, { at: now, completed: w.completed, times, samples: [] });
  }

  function lastMinute(w, now) {
    const s = seen.get(w.name);
    s.samples = s.samples.filter((x) => now - x.at <= WINDOW_MS + REFRESH_SLACK_MS);
    s.samples.push({ at: now, completed: w.completed });
    const from = now - WINDOW_MS;
    if (from < s.at) {
      return s.times.filter((t) => t >= from).length + Math.max(0, w.completed - s.completed);
    }
    const base = s.samples.find((x) => x.at >= from) || s.samples[0];
    return Math.max(0, w.completed - base.completed);
  }

  async function toggle(w) {
    const pausing = !w.paused;
    await act(
      {
        title: `${pausing ? "Pause" : "Resume"} workflow ${w.name}?`,
        message: pausing
          ? "Starts are still accepted, but no run of this workflow is handed to a worker until it is resumed."
          : "Its runs are handed to workers again.",
        confirm: pausing ? "Pause workflow" : "Resume workflow",
        danger: pausing,
      },
      () => post(`${wf(w.name)}/${pausing ? "pause" : "resume"}`),
      `Workflow ${w.name} ${pausing ? "paused" : "resumed"}.`,
      () => refresh(),
    );
  }

  async function refresh() {
    const data = await get("/v1/workflows");
    const now = Date.now();
    await Promise.all(data.workflows.filter((w) => !seen.has(w.name)).map((w) => watch(w, now)));
    const rows = data.workflows.map((w) => ({ w, t: { text: String(lastMinute(w, now)) } }));
    list.show(rows.map(({ w, t }) => [w, t.text]), () =>
      rows.length === 0
        ? empty("No workflow has runs yet.")
        : table(
            ["Workflow", "State", "Running", "Completed", "Failed", "Cancelled", "Timed out", "Completed, last minute", ""],
            rows.map(({ w, t }) =>
              h(
                "tr",
                { dataset: { workflow: w.name } },
                h("td", null, link(`#/workflows/${encodeURIComponent(w.name)}`, w.name, "workflow-link")),
                h("td", null, w.paused ? h("span", { class: "badge paused" }, "paused") : h("span", { class: "badge active" }, "active")),
                h("td", { class: "num" }, link(`#/workflows/${encodeURIComponent(w.name)}?status=running`, String(w.running))),
                h("td", { class: "num" }, link(`#/workflows/${encodeURIComponent(w.name)}?status=completed`, String(w.completed))),
                h("td", { class: "num" }, link(`#/workflows/${encodeURIComponent(w.name)}?status=failed`, String(w.failed))),
                h("td", { class: "num" }, link(`#/workflows/${encodeURIComponent(w.name)}?status=cancelled`, String(w.cancelled))),
                h("td", { class: "num" }, link(`#/workflows/${encodeURIComponent(w.name)}?status=timed_out`, String(w.timedOut ?? 0))),
                h("td", { class: "num throughput" }, t.text),
                h(
                  "td",
                  { class: "actions" },
                  h("button", { type: "button", class: w.paused ? "resume" : "pause", onclick: () => toggle(w) }, w.paused ? "Resume" : "Pause"),
                ),
              ),
            ),
            "grid",
          ),
    );
  }

  return { title: "Workflows", el, refresh, refreshMs: REFRESH_MS };
}
