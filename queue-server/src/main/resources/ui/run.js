// One run: what it was given and gave back, its steps on a timeline and in its journal, its
// signals, updates, callbacks, children and parent, what holds it back (and what it holds: see
// run-holdings.js), and the actions an operator may take on it.

import { ApiError, call, del, get, post, run as runPath, seg } from "./api.js";
import { act, problem } from "./dialog.js";
import { badge, between, duration, empty, h, link, pre, table, time } from "./dom.js";
import { attributesSection, chainSection, rateLimitSection, stateSection, streamsSection } from "./run-holdings.js";
import { Section } from "./section.js";
import { timeline } from "./timeline.js";

const ENDED = ["completed", "failed", "cancelled", "timed_out"];
const RESTARTABLE = ["failed", "cancelled", "timed_out"];

const runHash = (workflow, id) => `#/workflows/${encodeURIComponent(workflow)}/runs/${id}`;

export function runView(name, runId) {
  const path = runPath(name, runId);
  let current = null;
  let journal = [];

  const header = new Section("run-header");
  const blockers = new Section("blockers");
  const data = new Section("run-data");
  const line = new Section("run-timeline");
  const steps = new Section("journal");
  const signals = new Section("signals");
  const callbacks = new Section("callbacks");
  const updates = new Section("updates");
  const family = new Section("family");
  const attributes = attributesSection(path);
  const state = stateSection(path);
  const streams = streamsSection(path);
  const chain = chainSection(name, runId, path);
  const rateLimit = rateLimitSection();

  // ---- actions: built once, so what the user types survives every refresh

  const cancelButton = h("button", { type: "button", class: "danger cancel-run", onclick: cancel }, "Cancel run");
  const pauseButton = h("button", { type: "button", class: "pause-run", onclick: () => pauseOrResume(true) }, "Pause");
  const resumeButton = h("button", { type: "button", class: "resume-run", onclick: () => pauseOrResume(false) }, "Resume");

  const eventInput = h("input", { name: "event", placeholder: "event name, e.g. payment.received", pattern: "[A-Za-z0-9._:\\-]{1,128}", required: true });
  const payloadInput = h("textarea", { name: "payload", rows: "3", spellcheck: "false" }, "{}");
  const signalForm = h(
    "form",
    { class: "action-form signal-form", onsubmit: signal },
    h("h3", null, "Signal"),
    h("label", null, "Event ", eventInput),
    h("label", null, "Payload (JSON) ", payloadInput),
    h("button", { type: "submit", class: "send-signal" }, "Send signal"),
  );

  const restartStep = h("select", { name: "fromStep", class: "restart-step" });
  const restartButton = h("button", { type: "submit", class: "restart-run" }, "Restart from step");
  const restartForm = h(
    "form",
    { class: "action-form restart-form", onsubmit: restart },
    h("h3", null, "Restart"),
    h("p", { class: "hint" }, "For a failed, cancelled or timed out run: the journal from this step on is set aside (kept, not replayed) and the run goes on from there."),
    h("label", null, "From step ", restartStep),
    restartButton,
  );

  const forkStep = h("select", { name: "fromStep", class: "fork-step" });
  const forkInput = h("textarea", { name: "input", rows: "3", spellcheck: "false", placeholder: "new input (JSON); empty keeps the run's input" });
  const forkForm = h(
    "form",
    { class: "action-form fork-form", onsubmit: fork },
    h("h3", null, "Fork"),
    h("p", { class: "hint" }, "A new run that takes this run's journal up to the step and goes on from there."),
    h("label", null, "From step ", forkStep),
    h("label", null, "Input ", forkInput),
    h("button", { type: "submit", class: "fork-run" }, "Fork run"),
  );

  const buttons = h("div", { class: "run-buttons" }, cancelButton, pauseButton, resumeButton);
  const actions = h(
    "div",
    { class: "actions-panel" },
    h("h2", null, "Signal, restart, fork"),
    h("div", { class: "action-forms" }, signalForm, restartForm, forkForm),
  );

  function parseJson(text, field) {
    try {
      return JSON.parse(text);
    } catch (e) {
      problem(new ApiError(400, "Bad Request", `${field} is not JSON: ${e.message}`));
      return undefined;
    }
  }

  async function cancel() {
    await act(
      { title: `Cancel run #${runId}?`, message: `The run of ${name} ends as cancelled; a worker inside a step learns of it through its lease. This cannot be undone.`, confirm: "Cancel run", danger: true },
      () => del(path),
      (r) => (r.cancelled ? `Run #${runId} cancelled.` : `Run #${runId} had ended already (${r.status}).`),
      refresh,
    );
  }

  async function pauseOrResume(pausing) {
    await act(
      {
        title: `${pausing ? "Pause" : "Resume"} run #${runId}?`,
        message: pausing ? "The run is not handed to a worker until it is resumed; a step in progress finishes." : "The run is handed to workers again.",
        confirm: pausing ? "Pause run" : "Resume run",
        danger: pausing,
      },
      () => post(`${path}/${pausing ? "pause" : "resume"}`),
      `Run #${runId} ${pausing ? "paused" : "resumed"}.`,
      refresh,
    );
  }

  async function signal(e) {
    e.preventDefault();
    const event = eventInput.value.trim();
    const payload = parseJson(payloadInput.value, "payload");
    if (payload === undefined) return;
    await act(
      { title: `Send signal ${event} to run #${runId}?`, message: "It is delivered to a wait for this event, or kept for a later one.", details: pre(payload), confirm: "Send signal" },
      () => call("POST", `${path}/signals/${seg(event)}`, payload),
      (r) => `Signal ${event}: ${r.outcome}.`,
      refresh,
    );
  }

  async function restart(e) {
    e.preventDefault();
    const fromStep = restartStep.value;
    await act(
      { title: `Restart run #${runId} from step ${fromStep}?`, message: `Journal rows from ${fromStep} on are set aside and the run goes on from there.`, confirm: "Restart run", danger: true },
      () => post(`${path}/restart`, { fromStep }),
      `Run #${runId} restarted from ${fromStep}.`,
      refresh,
    );
  }

  async function fork(e) {
    e.preventDefault();
    const fromStep = forkStep.value;
    const body = { fromStep };
    if (forkInput.value.trim()) {
      const input = parseJson(forkInput.value, "input");
      if (input === undefined) return;
      body.input = input;
    }
    await act(
      { title: `Fork run #${runId} from step ${fromStep}?`, message: "A new run starts with the journal before this step.", details: body.input !== undefined ? pre(body.input) : "with the run's own input", confirm: "Fork run" },
      () => post(`${path}/fork`, body),
      (r) => `Forked as run #${r.runId}.`,
      (r) => {
        location.hash = runHash(r.workflow || name, r.runId);
      },
    );
  }

  function updateActions(r) {
    const running = r.status === "running";
    cancelButton.disabled = !running;
    pauseButton.disabled = !running || r.paused === true;
    resumeButton.disabled = !running || r.paused !== true;
    for (const el of signalForm.querySelectorAll("input, textarea, button")) el.disabled = !running;
    restartButton.disabled = !RESTARTABLE.includes(r.status) || journal.length === 0;
    const names = journal.filter((s) => !s.setAside).map((s) => s.name);
    for (const select of [restartStep, forkStep]) {
      const keep = select.value;
      const have = [...select.options].map((o) => o.value);
      if (have.join("\n") !== names.join("\n")) {
        select.replaceChildren(...names.map((n) => h("option", { value: n }, n)));
        if (names.includes(keep)) select.value = keep;
      }
      select.disabled = names.length === 0;
    }
    forkForm.querySelector("button").disabled = names.length === 0;
  }

  // ---- what the run shows

  function drawHeader(r) {
    header.show(r, () => [
      h("p", { class: "crumbs" }, link("#/workflows", "Workflows"), " / ", link(`#/workflows/${encodeURIComponent(name)}`, name), " / ", `#${runId}`),
      h(
        "h1",
        null,
        `Run #${runId} `,
        h("span", { class: "subtle" }, `${name} v${r.version}`),
        " ",
        badge(r.status, "run-status"),
        r.paused ? h("span", { class: "badge paused run-paused" }, "paused") : null,
      ),
      h(
        "dl",
        { class: "facts" },
        fact("Started", time(r.startedAt)),
        fact(r.completedAt ? "Ended" : "Running for", r.completedAt ? time(r.completedAt) : duration(between(r.startedAt))),
        r.completedAt ? fact("Took", duration(between(r.startedAt, r.completedAt))) : null,
        r.dueAt ? fact("Due", time(r.dueAt)) : null,
        r.deadlineAt ? fact("Deadline", time(r.deadlineAt)) : null,
        r.idempotencyKey ? fact("Idempotency key", r.idempotencyKey) : null,
        r.concurrencyKey ? fact("Concurrency key", r.concurrencyKey) : null,
        r.priority ? fact("Priority", String(r.priority)) : null,
        r.debounceKey ? fact("Debounce key", r.debounceKey) : null,
        fact("Retention", `${r.retentionDays} days`),
        r.parent
          ? fact("Parent", r.parent.workflow ? link(runHash(r.parent.workflow, r.parent.runId), `#${r.parent.runId} (${r.parent.workflow})`, "parent-link") : `#${r.parent.runId} (deleted)`, ` at step ${r.parent.step}`)
          : null,
        r.forkedFrom ? fact("Forked from", link(runHash(name, r.forkedFrom.runId), `#${r.forkedFrom.runId}`, "forked-from-link"), ` at step ${r.forkedFrom.step}`) : null,
        r.continuedFrom ? fact("Continued from", link(runHash(name, r.continuedFrom), `#${r.continuedFrom}`, "continued-from-link")) : null,
        r.continuedTo ? fact("Continued as", link(runHash(name, r.continuedTo), `#${r.continuedTo}`, "continued-to-link")) : null,
        r.waitingFor ? fact("Waiting for", waiting(r.waitingFor)) : null,
      ),
    ]);
  }

  function fact(label, ...value) {
    return h("div", { class: "fact" }, h("dt", null, label), h("dd", null, value));
  }

  function waiting(w) {
    if (w.event) return [h("code", null, w.event), w.match ? [" matching ", h("code", null, JSON.stringify(w.match))] : "", ` (step ${w.step})`];
    return [
      w.all ? "all of " : "any of ",
      (w.arms || []).map((a, i) => [i ? ", " : "", h("code", { class: a.fired ? "fired" : null }, a.event), a.fired ? " ✓" : ""]),
      ` (step ${w.step})`,
    ];
  }

  function drawData(r) {
    data.show({ input: r.input, output: r.output, error: r.error, status: r.status }, () =>
      h(
        "div",
        { class: "io" },
        h("div", { class: "io-part" }, h("h2", null, "Input"), pre(r.input, "run-input")),
        r.error
          ? h("div", { class: "io-part" }, h("h2", null, "Error"), errorBox(r.error, "run-error"))
          : h("div", { class: "io-part" }, h("h2", null, "Output"), r.status === "completed" ? pre(r.output, "run-output") : empty(ENDED.includes(r.status) ? "No output." : "Not finished yet.")),
      ),
    );
  }

  function errorBox(err, cls) {
    const { stack, ...rest } = err;
    return h("div", { class: `error-box ${cls}` }, h("p", null, h("strong", null, err.type || "Error"), err.message ? `: ${err.message}` : ""), pre(rest), stack ? h("details", null, h("summary", null, "Stack"), h("pre", { class: "stack" }, String(stack))) : null);
  }

  function drawBlockers(b) {
    blockers.show(b, () => {
      const list = b.blockers || [];
      return [
        h("h2", null, "Blockers", h("span", { class: "subtle" }, "what keeps it from moving on")),
        list.length === 0
          ? empty(ENDED.includes(b.status) ? "It has ended." : "Nothing holds it back: it is due and about to be handed out.")
          : h(
              "ul",
              { class: "blocker-list" },
              list.map((x) => {
                const { kind, text, ...rest } = x;
                const more = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null && v !== undefined));
                return h(
                  "li",
                  { class: `blocker ${kind}`, dataset: { kind } },
                  h("span", { class: `chip ${kind}` }, kind.replace(/_/g, " ")),
                  " ",
                  h("span", { class: "blocker-text" }, text),
                  Object.keys(more).length ? h("code", { class: "blocker-data" }, JSON.stringify(more)) : null,
                );
              }),
            ),
      ];
    });
  }

  function drawJournal(list) {
    const open = new Set([...steps.el.querySelectorAll("details[open]")].map((d) => d.dataset.key));
    steps.show(list, () => [
      h("h2", null, "Journal"),
      list.length === 0
        ? empty("No step journaled yet.")
        : table(
            ["#", "Step", "Kind", "Attempt", "Started", "Completed", "Took", "Output or error"],
            list.map((s, i) =>
              h(
                "tr",
                { class: s.setAside ? "set-aside" : null, dataset: { step: s.name } },
                h("td", { class: "num" }, String(i + 1)),
                h("td", null, s.name, s.setAside ? h("span", { class: "tl-aside" }, "set aside") : null),
                h("td", null, h("span", { class: `tl-kind ${s.kind}` }, s.kind), s.timedOut ? h("span", { class: "chip timed-out" }, "timed out") : null),
                h("td", { class: "num" }, String(s.attempts)),
                h("td", null, time(s.startedAt)),
                h("td", null, time(s.completedAt)),
                h("td", { class: "num" }, duration(between(s.startedAt, s.completedAt))),
                h(
                  "td",
                  { class: "payload" },
                  h(
                    "details",
                    { dataset: { key: `${i}:${s.name}` }, open: open.has(`${i}:${s.name}`) },
                    h("summary", { class: s.error ? "failed" : null }, s.error ? `error: ${s.error.type || ""} ${s.error.message || ""}` : summary(s.output)),
                    s.error ? errorBox(s.error, "step-error") : pre(s.output, "step-output"),
                  ),
                ),
              ),
            ),
            "grid journal-table",
          ),
    ]);
  }

  function summary(v) {
    if (v === undefined || v === null) return "null";
    const s = JSON.stringify(v);
    return s.length > 60 ? `${s.slice(0, 59)}…` : s;
  }

  function drawSignals(list) {
    signals.show(list, () => [
      h("h2", null, "Signals"),
      list.length === 0
        ? empty("No signal sent to this run.")
        : table(
            ["#", "Event", "Payload", "Sent", "State"],
            list.map((s) =>
              h(
                "tr",
                { class: s.deliveredAt ? "delivered" : "buffered", dataset: { signal: s.signalId } },
                h("td", { class: "num" }, String(s.signalId)),
                h("td", null, h("code", null, s.event), s.idempotencyKey ? h("span", { class: "subtle" }, ` key ${s.idempotencyKey}`) : null),
                h("td", { class: "payload" }, pre(s.payload)),
                h("td", null, time(s.sentAt)),
                h("td", null, s.deliveredAt ? [h("span", { class: "chip delivered" }, "delivered"), ` ${time(s.deliveredAt)}`, s.deliveredTo ? ` to ${s.deliveredTo}` : ""] : h("span", { class: "chip buffered" }, "buffered")),
              ),
            ),
            "grid signal-table",
          ),
    ]);
  }

  function drawCallbacks(list) {
    const now = Date.now();
    callbacks.show(list, () => [
      h("h2", null, "Callbacks"),
      list.length === 0
        ? empty("No callback URL minted for this run.")
        : table(
            ["Callback", "Minted", "Works until", "State"],
            list.map((c) => {
              const state = c.outcome || (Date.parse(c.expiresAt) <= now ? "expired" : "pending");
              return h(
                "tr",
                { class: `callback ${state}`, dataset: { callback: c.name } },
                h("td", null, h("code", null, c.name)),
                h("td", null, time(c.createdAt)),
                h("td", null, time(c.expiresAt)),
                h("td", null, h("span", { class: `chip ${state}` }, state), c.resolvedAt ? ` ${time(c.resolvedAt)}` : ""),
              );
            }),
            "grid callback-table",
          ),
    ]);
  }

  function drawUpdates(list) {
    updates.show(list, () => [
      h("h2", null, "Updates"),
      list.length === 0
        ? empty("No update sent to this run.")
        : table(
            ["Update", "Input", "Sent", "State", "Answer"],
            list.map((u) =>
              h(
                "tr",
                { class: `update ${u.status}`, dataset: { update: u.update, updateId: String(u.updateId) } },
                h("td", null, h("code", null, u.update), ` #${u.updateId}`),
                h("td", null, h("code", null, JSON.stringify(u.input))),
                h("td", null, time(u.sentAt)),
                h("td", null, h("span", { class: `chip ${u.status}` }, u.status), u.answeredAt ? ` ${time(u.answeredAt)}` : ""),
                h("td", null, u.status === "completed" ? h("code", null, JSON.stringify(u.output)) : u.error ? u.error.message || JSON.stringify(u.error) : ""),
              ),
            ),
            "grid update-table",
          ),
    ]);
  }

  function drawFamily(r) {
    const children = r.children || [];
    family.show({ children, parent: r.parent }, () => [
      h("h2", null, "Children"),
      children.length === 0
        ? empty("Its steps started no child run.")
        : table(
            ["Run", "Workflow", "Status", "Started by step"],
            children.map((c) => [link(runHash(c.workflow, c.runId), `#${c.runId}`, "child-link"), c.workflow, badge(c.status), c.step]),
            "grid",
          ),
      children.length === 0
        ? null
        : h(
            "p",
            { class: "hint children-lists" },
            "In the runs list: ",
            [...new Set(children.map((c) => c.workflow))].map((w, i) => [i ? ", " : "", link(`#/workflows/${encodeURIComponent(w)}?parent=${runId}`, `${w} started by #${runId}`)]),
          ),
    ]);
  }

  async function refresh() {
    const [r, s, sig, b, cb, up] = await Promise.allSettled([get(path), get(`${path}/steps?setAside=true`), get(`${path}/signals`), get(`${path}/blockers`), get(`${path}/callbacks`), get(`${path}/updates`)]);
    for (const x of [r, s, sig, b, cb, up]) {
      if (x.status === "rejected" && x.reason.status === 401) throw x.reason;
    }
    if (r.status === "rejected") {
      header.error(r.reason, `Run #${runId} of ${name}`);
      return;
    }
    current = r.value;
    journal = s.status === "fulfilled" ? s.value.steps : journal;
    drawHeader(current);
    updateActions(current);
    if (b.status === "fulfilled") drawBlockers(b.value);
    else blockers.error(b.reason, "Blockers");
    drawData(current);
    if (s.status === "fulfilled") {
      const tick = current.completedAt ? 0 : Math.floor(Date.now() / 2000);
      line.show({ run: current, steps: journal, tick }, () => [h("h2", null, "Timeline"), timeline(current, journal)]);
      drawJournal(journal);
    } else {
      steps.error(s.reason, "Journal");
    }
    if (sig.status === "fulfilled") drawSignals(sig.value.signals);
    else signals.error(sig.reason, "Signals");
    if (cb.status === "fulfilled") drawCallbacks(cb.value.callbacks);
    else callbacks.error(cb.reason, "Callbacks");
    if (up.status === "fulfilled") drawUpdates(up.value.updates);
    else updates.error(up.reason, "Updates");
    drawFamily(current);
    const held = await Promise.allSettled([attributes.refresh(), state.refresh(), streams.refresh(), chain.refresh(), rateLimit.refresh(current.concurrencyKey)]);
    [attributes, state, streams, chain, rateLimit].forEach((part, i) => {
      if (held[i].status === "rejected") {
        if (held[i].reason.status === 401) throw held[i].reason;
        part.fail(held[i].reason);
      }
    });
  }

  const el = h(
    "section",
    { class: "view run" },
    header.el,
    buttons,
    blockers.el,
    data.el,
    attributes.el,
    chain.el,
    line.el,
    steps.el,
    signals.el,
    updates.el,
    callbacks.el,
    state.el,
    streams.el,
    rateLimit.el,
    family.el,
    actions,
  );
  return { title: `Run #${runId} of ${name}`, el, refresh };
}
