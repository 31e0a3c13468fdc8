// What the Planner's two forms share (planner.js: training plans; serving.js: serving plans): the helpers app.js
// hands over (ctx), the answers held (plan), small form builders, tables, cards, field errors and nearest misses.
import * as forms from "./forms.js";
import { layoutText } from "./doubt.js";
import { lang, number, t } from "./i18n.js";
import { deadlineValue as readDeadline, parseNumber } from "./numbers.js";

export const $ = (selector, root = document) => root.querySelector(selector);
export const ctx = { h: null, problemBox: null, openTraining: null, openInference: null, accName: (id) => id, bytes: String };
export const plan = { training: null, serving: null, accelerators: [] };

// --- small builders -------------------------------------------------------------------------------------

export function field(id, label, control, hint, wide = false) {
  const { h } = ctx;
  control.id = id;
  const described = [];
  if (hint) described.push(`${id}-hint`);
  described.push(`${id}-error`);
  control.setAttribute("aria-describedby", described.join(" "));
  return h("div", { class: wide ? "field wide" : "field" },
    h("label", { for: id }, label),
    control,
    hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null,
    h("p", { class: "error", id: `${id}-error`, hidden: true }));
}

export function input(attrs) {
  return ctx.h("input", { type: "text", autocomplete: "off", spellcheck: "false", ...attrs });
}

export function select(items, value) {
  const el = ctx.h("select", {}, items.map(([v, label]) => ctx.h("option", { value: v }, label)));
  el.value = value;
  return el;
}

export function checks(name, legend, items, checked) {
  const { h } = ctx;
  return h("fieldset", { class: "plan-checks", id: `${name}-set` },
    h("legend", {}, legend),
    h("div", { class: "check-list" }, items.map(([value, label]) => h("label", { class: "check" },
      h("input", { type: "checkbox", name, value, checked: checked(value) }), h("span", {}, label)))));
}

export function checked(formEl, name) {
  return [...formEl.querySelectorAll(`input[name="${name}"]:checked`)].map((el) => el.value);
}

/** A typed number as the page's language writes it ("0,04" too); anything else goes as typed for the API to name. */
export function numberOrText(raw) {
  return parseNumber(raw, lang());
}

export function deadlineValue(raw) {
  return readDeadline(raw, lang()); // a bare number is days; else ISO 8601 (P45D, PT36H)
}

export function layout(p) {
  return layoutText(p.parallelism || {});
}

export function recomputation(value) {
  return { none: t("planner.recompute.none"), selective: t("planner.recompute.selective"), selective_op: t("planner.recompute.selective_op"), full: t("planner.recompute.full"), dots: t("planner.recompute.dots") }[value] || value || "—";
}

export function percent(value) {
  return Number.isFinite(value) ? number(value * 100, { maximumSignificantDigits: 3 }) + " %" : "—";
}

export function tableOf(caption, headers, rows, attrs = {}) {
  const { h } = ctx;
  return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption }, h("table", attrs,
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map(([label, num]) => h("th", { scope: "col", class: num ? "num" : null }, label)))),
    h("tbody", {}, rows.map((row) => h("tr", { class: row.current ? "current" : null, dataset: row.data || {} },
      row.cells.map((cell, i) => h("td", { class: headers[i][1] ? "num" : headers[i][2] || null }, cell)))))));
}

export function section(title, ...children) {
  return ctx.h("section", {}, ctx.h("h3", { tabindex: "-1" }, title), ...children);
}

export function clearOwnErrors(formEl) {
  forms.clearErrors(formEl);
  for (const el of formEl.querySelectorAll(".plan-fields .error")) {
    el.hidden = true;
    el.textContent = "";
  }
  for (const el of formEl.querySelectorAll(".plan-fields [aria-invalid]")) el.removeAttribute("aria-invalid");
}

export function showOwnErrors(formEl, errors, map) {
  let first = forms.showErrors(formEl, errors);
  for (const [path, messages] of Object.entries(errors || {})) {
    const key = Object.keys(map).find((k) => path === k || path.startsWith(`${k}.`) || path.startsWith(`${k}[`));
    const el = key && document.getElementById(map[key]);
    if (!el) continue;
    el.setAttribute("aria-invalid", "true");
    const box = document.getElementById(`${map[key]}-error`);
    if (box) {
      box.textContent = [].concat(messages).join(" ");
      box.hidden = false;
    }
    first = first || el;
  }
  return first;
}

export function card(label, main, base, extra) {
  const { h } = ctx;
  return h("div", { class: "card" }, h("dt", {}, label), h("dd", {}, main ?? "—", extra ? [" ", extra] : null, base ? h("span", { class: "base" }, base) : null));
}

export function missesSection(misses, render, planOf = (m) => m.plan, prefix = "plan-miss") {
  const { h } = ctx;
  return h("section", { id: `${prefix}es`, class: "plan-misses" }, h("h3", { tabindex: "-1" }, t("planner.nothing")),
    h("p", {}, t("planner.nothing_help")),
    h("ul", { class: "recs" }, misses.map((m, i) => h("li", { class: "warning", dataset: { reason: m.reason || m.objective || "" } },
      h("p", { id: `${prefix}-${i}` }, m.message), planOf(m) && render ? render(planOf(m), `${prefix}-${i}`) : null))));
}

/** A serving nearest miss said in the page's language from its figures (the API's sentence keeps English numbers
 * and catalog ids); the API's own message for the kinds without a deployment. */
