// A part of a view that the 2 s refresh redraws only when its data changed, so buttons and links
// stay the same elements (and the text a user selected stays selected) while nothing happens.

import { fill, h } from "./dom.js";

export class Section {
  constructor(cls, tag = "div") {
    this.el = h(tag, { class: `section ${cls}` });
    this.shown = undefined;
  }

  /** Draws build() in place unless data is what the last draw was made of. */
  show(data, build) {
    const key = JSON.stringify(data);
    if (key === this.shown) return;
    this.shown = key;
    fill(this.el, build());
  }

  /** Shows an error from the API (its problem+json title and detail) in place of the content. */
  error(e, what) {
    this.show({ error: e.status, detail: e.detail }, () =>
      h(
        "p",
        { class: "section-error" },
        what ? `${what}: ` : "",
        h("strong", { class: "problem-title" }, e.title || "Error"),
        " ",
        h("span", { class: "problem-detail" }, e.detail || String(e.message || "")),
      ),
    );
  }
}
