// What a run holds besides its journal, each a section of the run's page: its search attributes,
// its state, its streams (with their last entries), its continue-as-new chain, and the rate limit
// of its concurrency key.

import { get, seg } from "./api.js";
import { badge, empty, h, link, pre, table, time } from "./dom.js";
import { Section } from "./section.js";

const runHash = (workflow, id) => `#/workflows/${encodeURIComponent(workflow)}/runs/${id}`;

/** The run's state, key by key with its version. */
export function stateSection(path) {
  const section = new Section("run-state");
  async function refresh() {
    const s = await get(`${path}/state`);
    const keys = Object.keys(s.state).sort();
    section.show(s, () => [
      h("h2", null, "State"),
      keys.length === 0
        ? empty("The run has set no state.")
        : table(
            ["Key", "Version", "Value"],
            keys.map((k) => h("tr", { dataset: { key: k } }, h("td", null, h("code", null, k)), h("td", { class: "num" }, String(s.versions[k])), h("td", { class: "payload" }, pre(s.state[k])))),
            "grid state-table",
          ),
    ]);
  }
  return { el: section.el, refresh, fail: (e) => section.error(e, "State") };
}

/** The run's search attributes. */
export function attributesSection(path) {
  const section = new Section("run-attributes");
  async function refresh() {
    const a = await get(`${path}/attributes`);
    const names = Object.keys(a.attributes).sort();
    section.show(a, () =>
      names.length === 0
        ? ""
        : [
            h("h2", null, "Search attributes"),
            h(
              "dl",
              { class: "facts attributes" },
              names.map((n) => h("div", { class: "fact", dataset: { attribute: n } }, h("dt", null, n), h("dd", null, h("code", null, JSON.stringify(a.attributes[n]))))),
            ),
          ],
    );
  }
  return { el: section.el, refresh, fail: (e) => section.error(e, "Search attributes") };
}

/** The run's streams, each with its last ten entries. */
export function streamsSection(path) {
  const section = new Section("run-streams");
  async function refresh() {
    const list = await get(`${path}/streams`);
    const pages = await Promise.all(
      list.streams.map((s) => get(`${path}/streams/${seg(s.name)}?from=${Math.max(0, s.size - 10)}&limit=10`)),
    );
    section.show({ list, pages }, () => [
      h("h2", null, "Streams"),
      list.streams.length === 0
        ? empty("The run has written to no stream.")
        : list.streams.map((s, i) =>
            h(
              "div",
              { class: "stream", dataset: { stream: s.name } },
              h("h3", null, h("code", null, s.name), " ", h("span", { class: "subtle" }, `${s.size} entr${s.size === 1 ? "y" : "ies"}, ${s.closed ? "closed" : "open"}`)),
              table(
                ["Offset", "Written", "Value"],
                pages[i].entries.map((e) => h("tr", { dataset: { offset: String(e.offset) } }, h("td", { class: "num" }, String(e.offset)), h("td", null, time(e.writtenAt)), h("td", { class: "payload" }, h("code", null, JSON.stringify(e.value))))),
                "grid stream-table",
              ),
            ),
          ),
    ]);
  }
  return { el: section.el, refresh, fail: (e) => section.error(e, "Streams") };
}

/** The runs of the run's continue-as-new chain, first to last; nothing for a run in no chain. */
export function chainSection(name, runId, path) {
  const section = new Section("run-chain");
  async function refresh() {
    const c = await get(`${path}/chain`);
    section.show(c, () =>
      c.runs.length <= 1
        ? ""
        : [
            h("h2", null, "Chain", h("span", { class: "subtle" }, "the runs it continued as, first to last")),
            table(
              ["Run", "Status", "Started", "Ended", "Input"],
              c.runs.map((r) =>
                h(
                  "tr",
                  { class: String(r.runId) === String(runId) ? "this-run" : null, dataset: { run: String(r.runId) } },
                  h("td", null, link(runHash(name, r.runId), `#${r.runId}`, "chain-link")),
                  h("td", null, badge(r.status)),
                  h("td", null, time(r.startedAt)),
                  h("td", null, r.completedAt ? time(r.completedAt) : "—"),
                  h("td", null, h("code", null, JSON.stringify(r.input))),
                ),
              ),
              "grid chain-table",
            ),
          ],
    );
  }
  return { el: section.el, refresh, fail: (e) => section.error(e, "Chain") };
}

/** The rate limit of the run's concurrency key, when it has one. */
export function rateLimitSection() {
  const section = new Section("run-rate-limit");
  async function refresh(key) {
    if (!key) {
      section.show(null, () => "");
      return;
    }
    const r = await get(`/v1/rate-limits/${seg(key)}`);
    section.show(r, () => [
      h("h2", null, "Rate limit", h("span", { class: "subtle" }, ` of key ${key}`)),
      h(
        "p",
        { class: "rate-limit" },
        r.limit ? `${r.limit} per ${r.periodMs} ms` : "No rate limit.",
        r.suspendedUntil ? [" Held back until ", time(r.suspendedUntil), "."] : "",
      ),
    ]);
  }
  return { el: section.el, refresh, fail: (e) => section.error(e, "Rate limit") };
}
