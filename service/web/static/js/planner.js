// The Planner view: a training plan under a deadline, a budget and a device cap (POST /v1/plans/training)
// and a serving plan under latency targets (POST /v1/plans/inference), with the time-vs-cost frontier drawn
// as a hand-written SVG (log scales, the chosen plan marked, a table as its text alternative).
// app.js calls init() once with the helpers it shares, catalog() when the catalog is loaded, and
// retranslate() when the language changes.
import { ApiError, call } from "./api.js";
import * as forms from "./forms.js";
import { compact, duration, number, t, usd } from "./i18n.js";

const NS = "http://www.w3.org/2000/svg";
const $ = (selector, root = document) => root.querySelector(selector);
const TRAINING_FIELDS = ["training.tokens", "training.global_batch_size", "training.sequence_length", "training.precision"];

const ctx = { h: null, problemBox: null, openTraining: null, accName: (id) => id, bytes: String };
const plan = { training: null, serving: null, accelerators: [] };

// --- small builders -------------------------------------------------------------------------------------

function field(id, label, control, hint, wide = false) {
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

function input(attrs) {
  return ctx.h("input", { type: "text", autocomplete: "off", spellcheck: "false", ...attrs });
}

function select(items, value) {
  const el = ctx.h("select", {}, items.map(([v, label]) => ctx.h("option", { value: v }, label)));
  el.value = value;
  return el;
}

function checks(name, legend, items, checked) {
  const { h } = ctx;
  return h("fieldset", { class: "plan-checks", id: `${name}-set` },
    h("legend", {}, legend),
    h("div", { class: "check-list" }, items.map(([value, label]) => h("label", { class: "check" },
      h("input", { type: "checkbox", name, value, checked: checked(value) }), h("span", {}, label)))));
}

function checked(formEl, name) {
  return [...formEl.querySelectorAll(`input[name="${name}"]:checked`)].map((el) => el.value);
}

function numberOrText(raw) {
  const v = Number(raw);
  return raw !== "" && Number.isFinite(v) ? v : raw;
}

function deadlineValue(raw) {
  const text = raw.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 86400; // a bare number is days
  return text.toUpperCase(); // ISO 8601: P45D, PT36H
}

function layout(p) {
  const par = p.parallelism || {};
  const parts = [];
  const names = {
    data: t("planner.deg.data"), tensor: t("planner.deg.tensor"), pipeline: t("planner.deg.pipeline"),
    virtual_pipeline: t("planner.deg.virtual_pipeline"), context: t("planner.deg.context"), expert: t("planner.deg.expert"),
  };
  for (const [key, name] of Object.entries(names)) {
    if (par[key] && (par[key] > 1 || key === "data")) parts.push(`${name} ${par[key]}`);
  }
  if (par.zero_stage) parts.push(`ZeRO-${par.zero_stage}`);
  if (par.sequence_parallel) parts.push(t("planner.deg.sequence_parallel"));
  return parts.join(" × ").replace(/ × ZeRO/, ", ZeRO");
}

function recomputation(value) {
  return { none: t("planner.recompute.none"), selective: t("planner.recompute.selective"), selective_op: t("planner.recompute.selective_op"), full: t("planner.recompute.full"), dots: t("planner.recompute.dots") }[value] || value || "—";
}

function percent(value) {
  return Number.isFinite(value) ? number(value * 100, { maximumSignificantDigits: 3 }) + " %" : "—";
}

function tableOf(caption, headers, rows, attrs = {}) {
  const { h } = ctx;
  return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption }, h("table", attrs,
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map(([label, num]) => h("th", { scope: "col", class: num ? "num" : null }, label)))),
    h("tbody", {}, rows.map((row) => h("tr", { class: row.current ? "current" : null, dataset: row.data || {} },
      row.cells.map((cell, i) => h("td", { class: headers[i][1] ? "num" : headers[i][2] || null }, cell)))))));
}

function section(title, ...children) {
  return ctx.h("section", {}, ctx.h("h3", { tabindex: "-1" }, title), ...children);
}

// --- the frontier chart ---------------------------------------------------------------------------------

function logTicks(lo, hi) {
  const out = [];
  const a = Math.floor(Math.log10(lo));
  const b = Math.ceil(Math.log10(hi));
  for (let e = a; e <= b; e++) for (const m of b - a <= 2 ? [1, 2, 5] : [1]) out.push(m * 10 ** e);
  return out.filter((v) => v >= lo / 1.0001 && v <= hi * 1.0001);
}

function svgEl(name, attrs = {}, parent) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

function svgText(parent, x, y, content, attrs = {}) {
  const node = svgEl("text", { x, y, "font-size": 12, fill: "#4a5260", ...attrs }, parent);
  node.textContent = content;
  return node;
}

function samePlan(a, b) {
  return a && b && a.accelerator === b.accelerator && a.provider === b.provider && a.count === b.count
    && a.pricing_model === b.pricing_model && a.micro_batch_size === b.micro_batch_size
    && a.activation_recomputation === b.activation_recomputation
    && JSON.stringify(a.parallelism) === JSON.stringify(b.parallelism) && Math.abs(a.seconds - b.seconds) <= 1e-9 * a.seconds
    && Math.abs(a.total_usd - b.total_usd) <= 1e-9 * Math.max(1, a.total_usd);
}

/** Time (x) against total USD (y), both on log scales; `best` ringed; deadline and budget as dashed lines. */
function frontierChart(points, best, constraints) {
  const { h } = ctx;
  const shown = points.filter((p) => p.seconds > 0 && p.total_usd > 0);
  const chosen = best ? shown.findIndex((p) => samePlan(p, best)) : -1;
  const all = chosen < 0 && best ? [...shown, best] : shown;
  const bestIndex = chosen >= 0 ? chosen : best ? all.length - 1 : -1;
  const title = t("planner.chart.title");
  const desc = t("planner.chart.desc", {
    n: shown.length,
    best: best ? `${best.count} × ${ctx.accName(best.accelerator)}, ${best.time}, ${best.cost}` : "—",
  });
  const fig = h("figure", { class: "chart frontier" }, h("figcaption", {}, title));
  const plot = h("div", { class: "plot" });
  fig.append(plot);
  fig.drawChart = () => {
    const width = Math.max(260, Math.floor(plot.clientWidth || fig.clientWidth || 560));
    const height = width < 420 ? 240 : 280;
    const left = width < 420 ? 62 : 78;
    const right = 14;
    const top = 26;
    const bottom = 46;
    const xs = all.map((p) => p.seconds);
    const ys = all.map((p) => p.total_usd);
    const deadline = constraints?.deadline_s;
    const budget = constraints?.budget_usd;
    if (deadline) xs.push(deadline);
    if (budget) ys.push(budget);
    let [x0, x1] = [Math.min(...xs) / 1.25, Math.max(...xs) * 1.25];
    let [y0, y1] = [Math.min(...ys) / 1.25, Math.max(...ys) * 1.25];
    if (!(x1 > x0)) [x0, x1] = [1, 10];
    if (!(y1 > y0)) [y0, y1] = [1, 10];
    const x = (v) => left + ((width - left - right) * (Math.log(v) - Math.log(x0))) / (Math.log(x1) - Math.log(x0));
    const y = (v) => top + (height - top - bottom) * (1 - (Math.log(v) - Math.log(y0)) / (Math.log(y1) - Math.log(y0)));
    const svg = svgEl("svg", { role: "img", "aria-labelledby": "frontier-title frontier-desc", viewBox: `0 0 ${width} ${height}`, width, height });
    svgEl("title", { id: "frontier-title" }, svg).textContent = title;
    svgEl("desc", { id: "frontier-desc" }, svg).textContent = desc;
    const xt = logTicks(x0, x1);
    const yt = logTicks(y0, y1);
    const xStep = Math.max(1, Math.ceil(xt.length / (width < 420 ? 3 : 6)));
    xt.forEach((v, i) => {
      svgEl("line", { x1: x(v), x2: x(v), y1: top, y2: height - bottom, stroke: "#e1e4e8" }, svg);
      if (i % xStep === 0) svgText(svg, x(v), height - bottom + 16, duration(v), { "text-anchor": "middle", class: "tick" });
    });
    const yStep = Math.max(1, Math.ceil(yt.length / 5));
    yt.forEach((v, i) => {
      svgEl("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: "#e1e4e8" }, svg);
      if (i % yStep === 0) svgText(svg, left - 6, y(v) + 4, usd(v, 0), { "text-anchor": "end", class: "tick" });
    });
    svgText(svg, (left + width - right) / 2, height - 8, t("planner.chart.x"), { "text-anchor": "middle" });
    svgText(svg, 4, 12, t("planner.chart.y"), { "text-anchor": "start" });
    if (deadline) {
      svgEl("line", { x1: x(deadline), x2: x(deadline), y1: top, y2: height - bottom, stroke: "#c8501e", "stroke-dasharray": "6 4", "stroke-width": 2, class: "deadline" }, svg);
      svgText(svg, x(deadline) - 4, top + 12, t("planner.chart.deadline"), { "text-anchor": "end", fill: "#9a3a12" });
    }
    if (budget) {
      svgEl("line", { x1: left, x2: width - right, y1: y(budget), y2: y(budget), stroke: "#1e7b3c", "stroke-dasharray": "6 4", "stroke-width": 2, class: "budget" }, svg);
      svgText(svg, width - right, y(budget) - 5, t("planner.chart.budget"), { "text-anchor": "end", fill: "#1e6b34" });
    }
    const line = shown.slice().sort((a, b) => a.seconds - b.seconds);
    if (line.length > 1) {
      svgEl("polyline", { points: line.map((p) => `${x(p.seconds)},${y(p.total_usd)}`).join(" "), fill: "none", stroke: "#0b5cad", "stroke-width": 2 }, svg);
    }
    all.forEach((p, i) => {
      const isBest = i === bestIndex;
      const dot = svgEl("circle", {
        cx: x(p.seconds), cy: y(p.total_usd), r: isBest ? 8 : 5, fill: isBest ? "#c8501e" : "#0b5cad",
        stroke: isBest ? "#1a1d21" : "#ffffff", "stroke-width": 2, class: isBest ? "point chosen" : "point",
      }, svg);
      svgEl("title", {}, dot).textContent = `${isBest ? t("planner.chart.chosen") + ": " : ""}${p.count} × ${ctx.accName(p.accelerator)} (${p.provider}): ${p.time}, ${p.cost}`;
    });
    plot.replaceChildren(svg);
  };
  const legend = h("ul", { class: "legend" },
    h("li", {}, h("span", { class: "swatch frontier-line" }), t("planner.chart.frontier")),
    best ? h("li", {}, h("span", { class: "swatch frontier-chosen" }), t("planner.chart.chosen")) : null);
  const fallback = h("details", { class: "more" }, h("summary", {}, t("planner.chart.table")),
    tableOf(title, [[t("planner.col.plan")], [t("planner.col.time"), true], [t("planner.col.cost"), true]],
      shown.map((p) => ({ current: samePlan(p, best), cells: [`${p.count} × ${ctx.accName(p.accelerator)} (${p.provider})`, p.time, p.price_stale ? `${p.cost} (${t("planner.stale_price")})` : p.cost] }))));
  fig.append(legend, fallback);
  return fig;
}

// --- training plans -------------------------------------------------------------------------------------

function buildTrainingForm() {
  const { h } = ctx;
  const formEl = $("#plan-training-form");
  const trainingGroup = forms.TRAINING.find((g) => g.id === "training");
  forms.buildForm(formEl, [
    forms.TRAINING.find((g) => g.model),
    { id: "training", fields: trainingGroup.fields.filter((f) => TRAINING_FIELDS.includes(f.path)) },
  ]);
  const extra = $(".plan-fields", formEl);
  const objectives = { cheapest: t("planner.objective.cheapest"), fastest: t("planner.objective.fastest"), pareto: t("planner.objective.pareto") };
  // the values from the service (GET /v1/options); the dictionaries label those they know, the rest show themselves
  const objective = select(forms.choicesOf("training_plan", "objective").map((o) => [o, objectives[o] ?? o]), "cheapest");
  const pricingNames = {
    "on-demand": t("planner.pricing.on_demand"), spot: t("planner.pricing.spot"),
    "reserved-1y": t("planner.pricing.reserved_1y"), "reserved-3y": t("planner.pricing.reserved_3y"),
  };
  const providers = h("select", { multiple: true, size: 4 });
  const accelerators = h("select", { multiple: true, size: 6 });
  extra.replaceChildren(
    h("fieldset", {}, h("legend", {}, t("planner.constraints")), h("div", { class: "grid" },
      field("plan-deadline", t("planner.deadline"), input({ placeholder: "45", inputmode: "text" }), t("planner.deadline_hint")),
      field("plan-budget", t("planner.budget"), input({ placeholder: "500000", inputmode: "decimal" })),
      field("plan-max-devices", t("planner.max_devices"), input({ placeholder: "1024", inputmode: "numeric" })),
      field("plan-objective", t("planner.objective"), objective))),
    h("fieldset", {}, h("legend", {}, t("planner.search")), h("div", { class: "grid" },
      field("plan-accelerators", t("planner.accelerators"), accelerators, t("planner.accelerators_hint"), true),
      field("plan-providers", t("planner.providers"), providers, t("planner.providers_hint"), true)),
    checks("plan-pricing", t("planner.pricing_models"), forms.choicesOf("training_plan", "search.pricing_models").map((p) => [p, pricingNames[p] ?? p]), (p) => p === "on-demand")));
  if (plan.presets) forms.setOptions(formEl, "presets", plan.presets);
  fillCatalogSelects();
}

function fillCatalogSelects() {
  const { h } = ctx;
  const accSelect = $("#plan-accelerators");
  const provSelect = $("#plan-providers");
  if (!accSelect) return;
  const keepAcc = new Set([...accSelect.selectedOptions].map((o) => o.value));
  const keepProv = new Set([...provSelect.selectedOptions].map((o) => o.value));
  const fresh = !accSelect.options.length;
  accSelect.replaceChildren(...plan.accelerators.map((a) => h("option", { value: a.id, selected: fresh || keepAcc.has(a.id) }, a.name)));
  const providers = [...new Set(plan.accelerators.flatMap((a) => (a.prices || []).map((p) => p.provider)))].sort();
  provSelect.replaceChildren(...providers.map((p) => h("option", { value: p, selected: keepProv.has(p) }, p)));
}

function readTraining() {
  const formEl = $("#plan-training-form");
  const body = forms.readForm(formEl);
  const constraints = {};
  const deadline = deadlineValue($("#plan-deadline").value);
  if (deadline !== undefined) constraints.deadline = deadline;
  const budget = $("#plan-budget").value.trim();
  if (budget) constraints.budget_usd = numberOrText(budget);
  const maxDevices = $("#plan-max-devices").value.trim();
  if (maxDevices) constraints.max_devices = numberOrText(maxDevices);
  if (Object.keys(constraints).length) body.constraints = constraints;
  const search = {};
  const accs = [...$("#plan-accelerators").selectedOptions].map((o) => o.value);
  if (accs.length && accs.length < plan.accelerators.length) search.accelerators = accs;
  const providers = [...$("#plan-providers").selectedOptions].map((o) => o.value);
  if (providers.length) search.providers = providers;
  const pricing = checked(formEl, "plan-pricing");
  if (pricing.length && !(pricing.length === 1 && pricing[0] === "on-demand")) search.pricing_models = pricing;
  if (Object.keys(search).length) body.search = search;
  body.objective = $("#plan-objective").value;
  body.results = 10;
  return body;
}

const TRAINING_ERROR_FIELDS = {
  "constraints.deadline": "plan-deadline",
  "constraints.budget_usd": "plan-budget",
  "constraints.max_devices": "plan-max-devices",
  "search.accelerators": "plan-accelerators",
  "search.providers": "plan-providers",
  objective: "plan-objective",
};

function clearOwnErrors(formEl) {
  forms.clearErrors(formEl);
  for (const el of formEl.querySelectorAll(".plan-fields .error")) {
    el.hidden = true;
    el.textContent = "";
  }
  for (const el of formEl.querySelectorAll(".plan-fields [aria-invalid]")) el.removeAttribute("aria-invalid");
}

function showOwnErrors(formEl, errors, map) {
  let first = forms.showErrors(formEl, errors);
  for (const [path, messages] of Object.entries(errors || {})) {
    const key = Object.keys(map).find((k) => path === k || path.startsWith(`${k}.`) || path.startsWith(`${k}[`));
    const el = key && document.getElementById(map[key]);
    if (!el) continue;
    el.setAttribute("aria-invalid", "true");
    const box = document.getElementById(`${map[key]}-error`);
    box.textContent = [].concat(messages).join(" ");
    box.hidden = false;
    first = first || el;
  }
  return first;
}

async function submitTraining() {
  const formEl = $("#plan-training-form");
  const out = $("#plan-training-results");
  clearOwnErrors(formEl);
  let body;
  try {
    body = readTraining();
  } catch (error) {
    forms.showErrors(formEl, { [error.path]: [error.message] })?.focus();
    return;
  }
  const button = $('button[type="submit"]', formEl);
  button.disabled = true;
  out.setAttribute("aria-busy", "true");
  out.replaceChildren(ctx.h("p", { class: "hint" }, t("planner.searching")));
  try {
    const { data } = await call("POST", "v1/plans/training", { body });
    plan.training = { request: body, answer: data };
    renderTraining();
  } catch (error) {
    plan.training = null;
    if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
      out.replaceChildren(ctx.h("p", { class: "notice" }, t("planner.training_unavailable")));
    } else {
      out.replaceChildren(ctx.problemBox(error));
      const first = showOwnErrors(formEl, error.problem?.errors, TRAINING_ERROR_FIELDS);
      if (first) {
        first.closest("details")?.setAttribute("open", "");
        first.focus();
      }
    }
  } finally {
    button.disabled = false;
    out.removeAttribute("aria-busy");
  }
}

function card(label, main, base, extra) {
  const { h } = ctx;
  return h("div", { class: "card" }, h("dt", {}, label), h("dd", {}, main ?? "—", extra ? [" ", extra] : null, base ? h("span", { class: "base" }, base) : null));
}

function bestSection(best) {
  const { h } = ctx;
  const fits = best.memory_per_device_bytes <= best.memory_capacity_bytes;
  const share = best.memory_capacity_bytes ? best.memory_per_device_bytes / best.memory_capacity_bytes : NaN;
  return h("section", { id: "plan-best" },
    h("h3", { tabindex: "-1" }, t("planner.best")),
    h("dl", { class: "cards" },
      card(t("planner.col.accelerator"), ctx.accName(best.accelerator), best.accelerator),
      card(t("planner.col.provider"), best.provider, `${best.pricing_model} · ${usd(best.usd_per_accelerator_hour)}/h`),
      card(t("planner.col.count"), number(best.count, { maximumSignificantDigits: 21 })),
      card(t("planner.col.layout"), layout(best)),
      card(t("planner.col.micro_batch"), number(best.micro_batch_size, { maximumSignificantDigits: 21 }), recomputation(best.activation_recomputation)),
      card(t("planner.col.time"), best.time, duration(best.seconds)),
      card(t("planner.col.cost"), best.cost, t("planner.accelerator_hours", { n: compact(best.accelerator_hours) })),
      card(t("planner.col.memory"), best.memory_per_device,
        t("planner.of_capacity", { capacity: ctx.bytes(best.memory_capacity_bytes), share: percent(share) }),
        h("span", { class: `badge ${fits ? "ok" : "bad"}` }, fits ? t("r.fits") : t("r.does_not_fit"))),
      card(t("planner.col.utilization"), percent(best.utilization), t("planner.mfu"))),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", id: "plan-open-estimate", onclick: () => ctx.openTraining(best.estimate_request) }, t("planner.open_estimate")),
      h("span", { class: "hint" }, t("planner.open_estimate_hint"))));
}

function resultsTable(rows, best) {
  // the figures people compare first, then how the plan is laid out
  return tableOf(t("planner.results"), [
    [t("planner.col.accelerator")], [t("planner.col.count"), true], [t("planner.col.time"), true], [t("planner.col.cost"), true],
    [t("planner.col.memory"), true], [t("planner.col.utilization"), true], [t("planner.col.provider"), false, "nowrap"],
    [t("planner.col.layout"), false, "nowrap"], [t("planner.col.micro_batch"), true], [t("planner.col.recomputation")], [""],
  ], rows.map((p) => ({
    current: samePlan(p, best),
    cells: [ctx.accName(p.accelerator), number(p.count, { maximumSignificantDigits: 21 }), p.time, p.cost,
      p.memory_per_device, percent(p.utilization), `${p.provider} · ${p.pricing_model}`, layout(p),
      number(p.micro_batch_size, { maximumSignificantDigits: 21 }), recomputation(p.activation_recomputation),
      ctx.h("button", { type: "button", class: "small", onclick: () => ctx.openTraining(p.estimate_request) }, t("planner.open"))],
  })), { id: "plan-results-table" });
}

function exclusionsSection(excluded) {
  const { h } = ctx;
  const reasons = {
    invalid_layout: t("planner.reason.invalid_layout"),
    does_not_fit: t("planner.reason.does_not_fit"),
    misses_deadline: t("planner.reason.misses_deadline"),
    over_budget: t("planner.reason.over_budget"),
  };
  const accs = excluded?.accelerators || [];
  return section(t("planner.excluded"),
    h("ul", { class: "plan-exclusions" }, Object.entries(reasons).map(([key, label]) =>
      h("li", { dataset: { reason: key } }, h("strong", {}, number(excluded?.[key] || 0, { maximumSignificantDigits: 21 })), " ", label))),
    accs.length ? h("details", { class: "more" }, h("summary", {}, t("planner.excluded_accelerators", { n: accs.length })),
      h("ul", {}, accs.map((a) => h("li", {}, `${ctx.accName(a.accelerator)}: `, a.reason === "no_price" ? t("planner.reason.no_price") : t("planner.reason.precision_unsupported"))))) : null);
}

function statsSection(stats) {
  const { h } = ctx;
  const n = (v) => number(v, { maximumSignificantDigits: 21 });
  return section(t("planner.stats"), h("dl", { class: "cards" },
    card(t("planner.stat.considered"), n(stats.configurations_considered)),
    card(t("planner.stat.evaluated"), n(stats.configurations_evaluated)),
    card(t("planner.stat.pruned"), n(stats.pruned_invalid)),
    card(t("planner.stat.feasible"), n(stats.feasible)),
    card(t("planner.stat.seconds"), t("unit.seconds", { n: number(stats.server_seconds, { maximumSignificantDigits: 2 }) }))));
}

function missesSection(misses, render) {
  const { h } = ctx;
  return h("section", { id: "plan-misses" }, h("h3", { tabindex: "-1" }, t("planner.nothing")),
    h("p", {}, t("planner.nothing_help")),
    h("ul", { class: "recs" }, misses.map((m, i) => h("li", { class: "warning", dataset: { reason: m.reason || m.objective || "" } },
      h("p", { id: `plan-miss-${i}` }, m.message), m.plan && render ? render(m.plan, `plan-miss-${i}`) : null))));
}

function renderTraining() {
  const out = $("#plan-training-results");
  if (!plan.training) return;
  const a = plan.training.answer;
  const parts = [];
  if (a.best) {
    parts.push(bestSection(a.best));
    if ((a.frontier || []).length || a.best) parts.push(ctx.h("section", {}, frontierChart(a.frontier || [], a.best, a.constraints)));
    parts.push(section(t("planner.results"), resultsTable(a.results || [], a.best)));
  } else {
    parts.push(missesSection(a.nearest_misses || [], (p, id) => ctx.h("button", { type: "button", class: "small", "aria-describedby": id, onclick: () => ctx.openTraining(p.estimate_request) }, t("planner.open"))));
    if ((a.frontier || []).length) parts.push(ctx.h("section", {}, frontierChart(a.frontier, null, a.constraints)));
  }
  parts.push(exclusionsSection(a.excluded));
  if (a.search) parts.push(statsSection(a.search));
  if ((a.notes || []).length) {
    parts.push(ctx.h("details", { class: "more" }, ctx.h("summary", {}, t("planner.notes", { n: a.notes.length })), ctx.h("ul", {}, a.notes.map((n) => ctx.h("li", {}, n)))));
  }
  out.replaceChildren(...parts);
  drawAll(out);
}

function drawAll(root) {
  for (const fig of root.querySelectorAll("figure.chart")) if (fig.drawChart) fig.drawChart();
}

// --- serving plans --------------------------------------------------------------------------------------

function buildServingForm() {
  const { h } = ctx;
  const formEl = $("#plan-serving-form");
  forms.buildForm(formEl, [forms.INFERENCE.find((g) => g.model)]);
  const demand = select([["requests_per_second", t("planner.demand.requests")], ["output_tokens_per_second", t("planner.demand.tokens")]], "requests_per_second");
  $(".plan-fields", formEl).replaceChildren(
    h("fieldset", {}, h("legend", {}, t("planner.slo")), h("div", { class: "grid" },
      field("serve-ttft", t("planner.ttft"), input({ value: "1", inputmode: "decimal" }), t("planner.seconds_hint")),
      field("serve-tpot", t("planner.tpot"), input({ value: "0.04", inputmode: "decimal" }), t("planner.seconds_hint")))),
    h("fieldset", {}, h("legend", {}, t("planner.workload")), h("div", { class: "grid" },
      field("serve-demand-kind", t("planner.demand"), demand),
      field("serve-demand", t("planner.demand_value"), input({ value: "50", inputmode: "decimal" })),
      field("serve-prompt", t("planner.prompt_tokens"), input({ value: "512", inputmode: "numeric" })),
      field("serve-output", t("planner.output_tokens"), input({ value: "256", inputmode: "numeric" })))));
  if (plan.presets) forms.setOptions(formEl, "presets", plan.presets);
}

const SERVING_ERROR_FIELDS = {
  "slo.time_to_first_token_s": "serve-ttft",
  "slo.time_per_output_token_s": "serve-tpot",
  "workload.requests_per_second": "serve-demand",
  "workload.output_tokens_per_second": "serve-demand",
  "workload.prompt_tokens": "serve-prompt",
  "workload.output_tokens": "serve-output",
};

async function submitServing() {
  const formEl = $("#plan-serving-form");
  const out = $("#plan-serving-results");
  clearOwnErrors(formEl);
  let body;
  try {
    body = forms.readForm(formEl);
  } catch (error) {
    forms.showErrors(formEl, { [error.path]: [error.message] })?.focus();
    return;
  }
  const v = (id) => numberOrText($(`#${id}`).value.trim());
  body.slo = { time_to_first_token_s: v("serve-ttft"), time_per_output_token_s: v("serve-tpot") };
  body.workload = { [$("#serve-demand-kind").value]: v("serve-demand"), prompt_tokens: v("serve-prompt"), output_tokens: v("serve-output") };
  for (const group of [body.slo, body.workload]) for (const [k, val] of Object.entries(group)) if (val === "") delete group[k];
  const button = $('button[type="submit"]', formEl);
  button.disabled = true;
  out.setAttribute("aria-busy", "true");
  out.replaceChildren(ctx.h("p", { class: "hint" }, t("planner.searching")));
  try {
    const { data } = await call("POST", "v1/plans/inference", { body });
    plan.serving = { request: body, answer: data };
    renderServing();
  } catch (error) {
    plan.serving = null;
    if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
      setServingAvailable(false);
      out.replaceChildren();
    } else {
      out.replaceChildren(ctx.problemBox(error));
      showOwnErrors(formEl, error.problem?.errors, SERVING_ERROR_FIELDS)?.focus();
    }
  } finally {
    button.disabled = false;
    out.removeAttribute("aria-busy");
  }
}

function deploymentRows(deployments, chosen) {
  const s = (v) => (Number.isFinite(v) ? t("unit.seconds", { n: number(v, { maximumSignificantDigits: 3 }) }) : "—");
  return tableOf(t("planner.serving_results"), [
    [t("planner.col.accelerator")], [t("planner.col.provider")], [t("planner.col.engine")], [t("planner.col.format")],
    [t("planner.col.devices_per_replica"), true], [t("planner.col.replicas"), true], [t("planner.col.batch"), true],
    [t("planner.ttft"), true], [t("planner.tpot"), true], [t("planner.col.usd_hour"), true],
    [t("planner.col.usd_m_input"), true], [t("planner.col.usd_m_output"), true],
  ], deployments.map((d) => ({
    current: chosen && d === chosen,
    cells: [d.name || ctx.accName(d.accelerator), d.provider, d.engine, d.weights?.format || d.weights?.precision || "—",
      number(d.devices_per_replica, { maximumSignificantDigits: 21 }), number(d.replicas, { maximumSignificantDigits: 21 }),
      number(d.batch_size, { maximumSignificantDigits: 21 }), s(d.latency?.time_to_first_token_s), s(d.latency?.time_per_output_token_s),
      usd(d.cost?.usd_per_hour), usd(d.cost?.usd_per_million_input_tokens, 4), usd(d.cost?.usd_per_million_output_tokens, 4)],
  })), { id: "serving-plan-table" });
}

function renderServing() {
  const out = $("#plan-serving-results");
  if (!plan.serving) return;
  const a = plan.serving.answer;
  const parts = [];
  if (a.plan) {
    const rows = [a.plan, ...(a.frontier || []).filter((d) => !(d.accelerator === a.plan.accelerator && d.replicas === a.plan.replicas
      && d.batch_size === a.plan.batch_size && d.engine === a.plan.engine && d.devices_per_replica === a.plan.devices_per_replica))];
    parts.push(section(t("planner.serving_best"), ctx.h("p", {}, t("planner.serving_summary", {
      replicas: a.plan.replicas, devices: a.plan.devices_per_replica, name: a.plan.name || ctx.accName(a.plan.accelerator),
      engine: a.plan.engine, hour: usd(a.plan.cost?.usd_per_hour),
    })), deploymentRows(rows, a.plan)));
  } else {
    parts.push(missesSection(a.nearest_misses || [], null));
  }
  const reasons = {
    unsupported_engine: t("planner.sreason.unsupported_engine"), unsupported_format: t("planner.sreason.unsupported_format"),
    unsupported_kv_precision: t("planner.sreason.unsupported_kv_precision"), invalid_devices: t("planner.sreason.invalid_devices"),
    no_price: t("planner.reason.no_price"), does_not_fit: t("planner.reason.does_not_fit"), misses_ttft: t("planner.sreason.misses_ttft"),
    misses_tpot: t("planner.sreason.misses_tpot"), too_many_replicas: t("planner.sreason.too_many_replicas"),
  };
  const ex = Object.entries(a.exclusions || {}).filter(([, n]) => Number.isFinite(n));
  if (ex.length) {
    parts.push(section(t("planner.excluded"), ctx.h("ul", { class: "plan-exclusions" },
      ex.map(([reason, n]) => ctx.h("li", {}, ctx.h("strong", {}, number(n, { maximumSignificantDigits: 21 })), " ", reasons[reason] || reason)))));
  }
  out.replaceChildren(...parts);
}

function setServingAvailable(available) {
  const box = $("#planner-status");
  box.dataset.available = String(available);
  box.hidden = available;
  box.textContent = available ? "" : t("planner.unavailable");
  $("#plan-serving-form").hidden = !available;
}

async function probeServing() {
  try {
    const response = await fetch("v1/plans/inference", { method: "OPTIONS", credentials: "omit" });
    setServingAvailable(!(response.status === 404 || response.status === 405));
  } catch {
    setServingAvailable(false);
  }
}

// --- hooks for app.js -----------------------------------------------------------------------------------

export function init(helpers) {
  Object.assign(ctx, helpers);
  buildTrainingForm();
  buildServingForm();
  $("#plan-training-form").addEventListener("submit", (event) => {
    event.preventDefault();
    submitTraining();
  });
  $("#plan-serving-form").addEventListener("submit", (event) => {
    event.preventDefault();
    submitServing();
  });
  probeServing();
}

export function catalog(presetItems, accelerators) {
  plan.presets = presetItems;
  plan.accelerators = accelerators.filter((a) => a.default_usd_per_hour || (a.prices || []).length);
  for (const formEl of [$("#plan-training-form"), $("#plan-serving-form")]) forms.setOptions(formEl, "presets", presetItems);
  forms.resetForm($("#plan-training-form"));
  forms.resetForm($("#plan-serving-form"));
  fillCatalogSelects();
}

export function retranslate() {
  const keep = {};
  for (const id of ["plan-deadline", "plan-budget", "plan-max-devices", "plan-objective", "serve-ttft", "serve-tpot", "serve-demand-kind", "serve-demand", "serve-prompt", "serve-output"]) {
    keep[id] = $(`#${id}`)?.value;
  }
  const read = (formEl) => {
    try {
      return forms.readForm(formEl);
    } catch {
      return { model: {} }; // a config.json that is not JSON: the rebuilt form starts from its defaults
    }
  };
  const trainingRequest = read($("#plan-training-form"));
  const servingRequest = read($("#plan-serving-form"));
  const accs = [...$("#plan-accelerators").selectedOptions].map((o) => o.value);
  const provs = [...$("#plan-providers").selectedOptions].map((o) => o.value);
  const pricing = checked($("#plan-training-form"), "plan-pricing");
  buildTrainingForm();
  buildServingForm();
  forms.fillForm($("#plan-training-form"), trainingRequest);
  forms.fillForm($("#plan-serving-form"), servingRequest);
  for (const [id, value] of Object.entries(keep)) if (value !== undefined && $(`#${id}`)) $(`#${id}`).value = value;
  for (const o of $("#plan-accelerators").options) o.selected = accs.includes(o.value);
  for (const o of $("#plan-providers").options) o.selected = provs.includes(o.value);
  for (const c of document.querySelectorAll('input[name="plan-pricing"]')) c.checked = pricing.includes(c.value);
  probeServing();
  renderTraining();
  renderServing();
}
