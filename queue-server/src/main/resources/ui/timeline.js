// A run's steps on one time axis: a bar from each step's start to its end, sleeps and waits
// hatched (the run holds no worker then), the time between one step's end and the next one's
// start as a dotted gap, retries as the attempt the step was journaled on.

import { between, duration, h, time } from "./dom.js";

/** The timeline of a run (its view) and its journal rows, as an element. */
export function timeline(run, steps) {
  const now = Date.now();
  // A worker's clock may run behind the server's: its steps' starts widen the axis to the left.
  let t0 = Date.parse(run.startedAt);
  let t1 = run.completedAt ? Date.parse(run.completedAt) : now;
  for (const s of steps) {
    t0 = Math.min(t0, Date.parse(s.startedAt));
    t1 = Math.max(t1, Date.parse(s.completedAt), Date.parse(s.startedAt));
  }
  const span = Math.max(1, t1 - t0);
  const pct = (t) => `${(((t - t0) / span) * 100).toFixed(3)}%`;
  const width = (a, b) => `${Math.max(0.3, ((b - a) / span) * 100).toFixed(3)}%`;

  const rows = [];
  let previousEnd = Date.parse(run.startedAt);
  steps.forEach((s, i) => {
    const start = Date.parse(s.startedAt);
    const end = Math.max(start, Date.parse(s.completedAt));
    const track = h("div", { class: "tl-track" });
    if (!s.setAside && start - previousEnd > 0) {
      const gap = h("div", { class: "tl-gap", title: `${duration(start - previousEnd)} between steps` });
      gap.style.left = pct(previousEnd);
      gap.style.width = width(previousEnd, start);
      track.append(gap);
    }
    const classes = ["tl-bar", s.kind];
    if (s.error) classes.push("failed");
    if (s.timedOut) classes.push("timed-out");
    if (s.setAside) classes.push("set-aside");
    if (end > now) classes.push("pending");
    const bar = h(
      "div",
      {
        class: classes.join(" "),
        title: `${s.name} (${s.kind}) ${time(s.startedAt)} → ${time(s.completedAt)}: ${duration(end - start)}` + (s.attempts > 1 ? `, attempt ${s.attempts}` : ""),
      },
      h("span", { class: "tl-bar-text" }, duration(end - start)),
    );
    bar.style.left = pct(start);
    bar.style.width = width(start, end);
    track.append(bar);
    rows.push(
      h(
        "div",
        { class: `tl-row${s.setAside ? " set-aside" : ""}`, dataset: { step: s.name } },
        h(
          "div",
          { class: "tl-label" },
          h("span", { class: "tl-index" }, String(i + 1)),
          h("span", { class: "tl-name" }, s.name),
          h("span", { class: `tl-kind ${s.kind}` }, s.kind),
          s.attempts > 1 ? h("span", { class: "tl-attempts", title: "the attempt it was journaled on" }, `attempt ${s.attempts}`) : null,
          s.setAside ? h("span", { class: "tl-aside" }, "set aside") : null,
        ),
        track,
      ),
    );
    if (!s.setAside) previousEnd = Math.max(previousEnd, end);
  });
  if (!run.completedAt) {
    const track = h("div", { class: "tl-track" });
    if (now > previousEnd) {
      const gap = h("div", { class: "tl-gap open", title: `${duration(now - previousEnd)} since the last step` });
      gap.style.left = pct(previousEnd);
      gap.style.width = width(previousEnd, now);
      track.append(gap);
    }
    const marker = h("div", { class: "tl-now" });
    marker.style.left = pct(now);
    track.append(marker);
    rows.push(h("div", { class: "tl-row now-row" }, h("div", { class: "tl-label" }, h("span", { class: "tl-name" }, "now")), track));
  }
  return h(
    "div",
    { class: "timeline" },
    h(
      "div",
      { class: "tl-axis" },
      h("span", null, time(new Date(t0).toISOString())),
      h("span", { class: "tl-total" }, `${duration(between(run.startedAt, run.completedAt))}${run.completedAt ? "" : " so far"}`),
      h("span", null, run.completedAt ? time(run.completedAt) : "now"),
    ),
    rows.length ? rows : h("p", { class: "empty" }, "No step journaled yet."),
  );
}
