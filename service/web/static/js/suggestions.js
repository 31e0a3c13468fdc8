// The Inference view's suggestions: the accelerators that can run the model as a table sortable by any column
// (buttons, so the keyboard works), "Meets targets" n/a without targets, nothing priced that does not fit, each row
// usable as the request's hardware, and the table as CSV or JSON. app.js calls init() once with what it shares.
import { h } from "./dom.js";
import { fitsBadge, ifRuns } from "./doubt.js";
import { exportButtons, flatten, toCsv } from "./exporting.js";
import { lang, number, t, usd } from "./i18n.js";

const $ = (selector, root = document) => root.querySelector(selector);
const ctx = { state: null, accName: (id) => id, applyRecommendation: () => {} };
const accName = (id) => ctx.accName(id);
const applyRecommendation = (kind, rec) => ctx.applyRecommendation(kind, rec);

export function init(helpers) {
  Object.assign(ctx, helpers);
}

const SUGGESTION_COLUMNS = [
  { key: "accelerator", label: "s.accelerator", text: true, value: (s) => accName(s.accelerator) },
  { key: "count", label: "s.count", value: (s) => s.count },
  { key: "fits", label: "s.fits", value: (s) => (s.fits ? 1 : 0), show: (s) => fitsBadge(s.fits) },
  { key: "meets_targets", label: "s.meets_targets", value: (s) => (hasTargets() && s.meets_targets ? 1 : 0), show: (s) => (!hasTargets() || s.meets_targets === null || s.meets_targets === undefined ? t("s.na") : s.meets_targets ? t("yes") : t("no")) },
  { key: "throughput", label: "s.tokens_per_s", value: (s) => (s.fits === false ? null : s.output_tokens_per_second ?? s.samples_per_second), show: (s) => ifRuns(s.fits, number(s.output_tokens_per_second ?? s.samples_per_second)) },
  { key: "usd_per_hour", label: "s.usd_per_hour", value: (s) => s.usd_per_hour, show: (s) => usd(s.usd_per_hour) },
  { key: "usd_per_million", label: "s.usd_per_million", value: (s) => (s.fits === false ? null : s.usd_per_million_output_tokens ?? s.usd_per_million_samples), show: (s) => ifRuns(s.fits, usd(s.usd_per_million_output_tokens ?? s.usd_per_million_samples)) },
];

/** Whether the inference request set any latency or throughput target ("Meets targets" is n/a otherwise). */
function hasTargets() {
  const targets = ctx.state.inference?.request?.targets;
  return !!targets && Object.values(targets).some((v) => v !== null && v !== undefined && v !== "");
}

function sortedSuggestions() {
  const rows = [...(ctx.state.inference.estimate.suggestions || [])];
  const { key, dir } = ctx.state.suggestionSort;
  if (!key) return rows;
  const column = SUGGESTION_COLUMNS.find((c) => c.key === key);
  return rows.sort((a, b) => {
    const x = column.value(a);
    const y = column.value(b);
    if (x === y) return 0;
    if (x === null || x === undefined || Number.isNaN(x)) return 1;
    if (y === null || y === undefined || Number.isNaN(y)) return -1;
    return (column.text ? String(x).localeCompare(String(y), lang()) : x - y) * dir;
  });
}

export function suggestionTable() {
  const { key, dir } = ctx.state.suggestionSort;
  const samples = (ctx.state.inference.estimate.suggestions || []).some((s) => s.samples_per_second != null && s.output_tokens_per_second == null);
  const label = (c) => t(samples && c.key === "throughput" ? "s.samples_per_s" : samples && c.key === "usd_per_million" ? "s.usd_per_million_samples" : c.label);
  const head = h("tr", {}, SUGGESTION_COLUMNS.map((c) => h("th", {
    scope: "col",
    class: c.text ? null : "num",
    "aria-sort": key === c.key ? (dir > 0 ? "ascending" : "descending") : null,
  }, h("button", {
    type: "button",
    class: "sort",
    dataset: { sort: c.key },
    onclick: () => {
      ctx.state.suggestionSort = { key: c.key, dir: key === c.key ? -dir : c.text ? 1 : (c.key === "usd_per_hour" || c.key === "usd_per_million" ? 1 : -1) };
      const wrap = $("#suggestions-table");
      wrap.replaceWith(suggestionTable());
      $(`#suggestions-table button[data-sort="${c.key}"]`).focus();
    },
  }, label(c)))), h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("s.action"))));
  const body = h("tbody", {}, sortedSuggestions().map((s) => h("tr", { class: s.accelerator === ctx.state.inference.request.hardware?.accelerator ? "current" : null },
    SUGGESTION_COLUMNS.map((c) => h(c.key === "accelerator" ? "th" : "td", { class: c.text ? null : "num", scope: c.key === "accelerator" ? "row" : null }, c.show ? c.show(s) : String(c.value(s) ?? "—"))),
    h("td", {}, h("button", {
      type: "button",
      class: "small",
      "aria-label": t("s.use_label", { name: accName(s.accelerator), count: s.count }),
      onclick: () => applyRecommendation("inference", { code: "suggestion", change: { hardware: { accelerator: s.accelerator, count: s.count }, cost: { provider: null } } }),
    }, t("s.use"))))));
  const get = () => ({ name: "scalecost-suggestions", csv: () => toCsv(sortedSuggestions().map((s) => flatten(s))), json: () => sortedSuggestions() });
  return h("div", { id: "suggestions-table" }, exportButtons(get, t("export.label", { what: t("s.title") })),
    h("div", { class: "table-wrap" }, h("table", {},
      h("caption", {}, t("s.caption", { n: (ctx.state.inference.estimate.suggestions || []).length })), h("thead", {}, head), body)));
}
