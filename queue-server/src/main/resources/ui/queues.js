// Queues: their numbers, and for one queue its dead letters and parked messages, each of which
// can be sent back, and the controls of its message groups.

import { get, post, seg } from "./api.js";
import { act } from "./dialog.js";
import { duration, empty, h, link, pre, table, time } from "./dom.js";
import { Section } from "./section.js";

const LIMIT = 100;
const q = (name) => `/v1/queues/${seg(name)}`;
const isWorkflowQueue = (name) => name.startsWith("__wf_");

export function queuesView() {
  const list = new Section("queues-list");
  async function refresh() {
    const data = await get("/v1/queues");
    list.show(data.queues, () =>
      data.queues.length === 0
        ? empty("No queue yet.")
        : table(
            ["Queue", "Kind", "Depth", "Visible", "In flight", "Delayed", "Oldest", "Dead letters"],
            data.queues.map((x) =>
              h(
                "tr",
                { dataset: { queue: x.name } },
                h("td", null, link(`#/queues/${encodeURIComponent(x.name)}`, x.name, "queue-link")),
                h("td", null, isWorkflowQueue(x.name) ? "workflow" : x.fifo ? "FIFO" : "standard"),
                h("td", { class: "num depth" }, String(x.metrics.depth)),
                h("td", { class: "num" }, String(x.metrics.visible)),
                h("td", { class: "num" }, String(x.metrics.inFlight)),
                h("td", { class: "num" }, String(x.metrics.delayed)),
                h("td", { class: "num" }, x.metrics.depth ? duration(x.metrics.oldestAgeSeconds * 1000) : "—"),
                h("td", { class: `num dead${x.metrics.deadLettered ? " some" : ""}` }, String(x.metrics.deadLettered)),
              ),
            ),
            "grid",
          ),
    );
  }
  const el = h("section", { class: "view queues" }, h("h1", null, "Queues"), list.el);
  return { title: "Queues", el, refresh };
}

export function queueView(name) {
  const facts = new Section("queue-facts");
  const dead = new Section("dead-letters");
  const parked = new Section("parked");

  const groupInput = h("input", { name: "group", placeholder: "group id", required: true });
  const groupForm = h(
    "form",
    { class: "action-form group-form", onsubmit: (e) => e.preventDefault() },
    h("h3", null, "Message group"),
    h("p", { class: "hint" }, "Pause a group (its messages are not handed out), resume it, or park its head message so the group goes on with the next one."),
    h("label", null, "Group ", groupInput),
    h(
      "div",
      { class: "run-buttons" },
      h("button", { type: "button", class: "pause-group", onclick: () => group("pause") }, "Pause group"),
      h("button", { type: "button", class: "resume-group", onclick: () => group("resume") }, "Resume group"),
      h("button", { type: "button", class: "park-group danger", onclick: () => group("park") }, "Park head message"),
    ),
  );

  async function group(action) {
    const id = groupInput.value.trim();
    if (!id) {
      groupInput.reportValidity();
      return;
    }
    const words = {
      pause: ["Pause", `No message of group ${id} is handed out until it is resumed.`, () => `Group ${id} paused.`],
      resume: ["Resume", `Messages of group ${id} are handed out again.`, () => `Group ${id} resumed.`],
      park: ["Park the head message of", `The oldest message of group ${id} is set aside (it can be re-driven later) and the group goes on with its next message.`, (r) => `Message ${r.messageId} of group ${id} parked.`],
    }[action];
    await act(
      { title: `${words[0]} group ${id} of ${name}?`, message: words[1], confirm: `${words[0].split(" ")[0]} group`, danger: action !== "resume" },
      () => post(`${q(name)}/groups/${seg(id)}/${action}`),
      words[2],
      refresh,
    );
  }

  async function redriveDead(ids) {
    await act(
      {
        title: ids ? `Re-drive dead letter ${ids.join(", ")}?` : `Re-drive every dead letter of ${name}?`,
        message: "The messages go back to the queue as new messages and are received again.",
        confirm: "Re-drive",
      },
      () => post(`${q(name)}/dead-letters/redrive`, ids ? { ids } : undefined),
      (r) => `${r.redriven} message(s) back in ${name}.`,
      refresh,
    );
  }

  async function redriveParked(m) {
    await act(
      { title: `Re-drive parked message ${m.messageId}?`, message: `It goes back to group ${m.groupId || "(none)"} of ${name}.`, confirm: "Re-drive" },
      () => post(`${q(name)}/parked/${seg(m.id)}/redrive`),
      `Parked message ${m.messageId} back in ${name}.`,
      refresh,
    );
  }

  function messageRows(list, idOf, when, onRedrive) {
    return list.map((m) =>
      h(
        "tr",
        { dataset: { id: idOf(m) } },
        h("td", { class: "num" }, String(idOf(m))),
        h("td", { class: "num" }, String(m.messageId)),
        h("td", null, m.groupId || "—"),
        h("td", { class: "num" }, String(m.readCount)),
        h("td", null, time(m.enqueuedAt)),
        h("td", null, time(when(m))),
        h("td", { class: "payload" }, pre(m.body), m.headers && Object.keys(m.headers).length ? h("details", null, h("summary", null, "headers"), pre(m.headers)) : null),
        h("td", { class: "actions" }, h("button", { type: "button", class: "redrive", onclick: () => onRedrive(m) }, "Re-drive")),
      ),
    );
  }

  async function refresh() {
    const [info, d, p] = await Promise.allSettled([get(q(name)), get(`${q(name)}/dead-letters?limit=${LIMIT}`), get(`${q(name)}/parked?limit=${LIMIT}`)]);
    for (const x of [info, d, p]) {
      if (x.status === "rejected" && x.reason.status === 401) throw x.reason;
    }
    if (info.status === "rejected") {
      facts.error(info.reason, `Queue ${name}`);
    } else {
      const x = info.value;
      facts.show(x, () =>
        h(
          "dl",
          { class: "facts" },
          fact("Kind", isWorkflowQueue(name) ? "a workflow's queue (engine-owned)" : x.fifo ? "FIFO" : "standard"),
          fact("Depth", String(x.metrics.depth), "depth"),
          fact("Visible", String(x.metrics.visible)),
          fact("In flight", String(x.metrics.inFlight), "in-flight"),
          fact("Delayed", String(x.metrics.delayed)),
          fact("Oldest", x.metrics.depth ? duration(x.metrics.oldestAgeSeconds * 1000) : "—"),
          fact("Dead letters", String(x.metrics.deadLettered), "dead-count"),
          fact("Visibility timeout", `${x.visibilityTimeoutSeconds} s`),
          fact("Max receives", x.maxReceives === null || x.maxReceives === undefined ? "unlimited" : String(x.maxReceives)),
          fact("Created", time(x.createdAt)),
        ),
      );
    }
    if (d.status === "rejected") {
      dead.error(d.reason, "Dead letters");
    } else {
      const list = d.value.deadLetters;
      dead.show(list, () => [
        h("h2", null, "Dead letters", list.length ? h("button", { type: "button", class: "redrive-all", onclick: () => redriveDead(null) }, "Re-drive all") : null),
        list.length === 0
          ? empty("No dead letter.")
          : [
              table(["Dead id", "Message", "Group", "Receives", "Sent", "Died", "Body", ""], messageRows(list, (m) => m.deadId, (m) => m.deadAt, (m) => redriveDead([m.deadId])), "grid dead-table"),
              d.value.next ? h("p", { class: "hint" }, `The first ${LIMIT} are shown.`) : null,
            ],
      ]);
    }
    if (p.status === "rejected") {
      parked.error(p.reason, "Parked messages");
    } else {
      const list = p.value.messages;
      parked.show(list, () => [
        h("h2", null, "Parked messages"),
        list.length === 0
          ? empty("No parked message.")
          : table(["Parked id", "Message", "Group", "Receives", "Sent", "Parked", "Body", ""], messageRows(list, (m) => m.id, (m) => m.parkedAt, redriveParked), "grid parked-table"),
      ]);
    }
  }

  function fact(label, value, cls) {
    return h("div", { class: `fact${cls ? ` ${cls}` : ""}` }, h("dt", null, label), h("dd", null, value));
  }

  const el = h(
    "section",
    { class: "view queue" },
    h("p", { class: "crumbs" }, link("#/queues", "Queues"), " / ", name),
    h("h1", null, `Queue ${name}`),
    facts.el,
    isWorkflowQueue(name) ? null : groupForm,
    dead.el,
    parked.el,
  );
  return { title: `Queue ${name}`, el, refresh };
}
