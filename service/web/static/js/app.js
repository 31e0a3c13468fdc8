// The scalecost page: training and inference estimates with charts, saved scenarios and catalog prices,
// all through the public HTTP API (relative URLs). No framework, no build step.
import { ApiError, apiKey, call, listAll, mergePatch, setApiKey } from "./api.js";
import { barChart, drawCharts, lineChart, stackedBar, COLORS } from "./charts.js";
import * as forms from "./forms.js";
import * as planner from "./planner.js";
import { compact, dateTime, lang, number, pickLanguage, setLanguage, t, translateStatic, usd } from "./i18n.js";

const $ = (selector, root = document) => root.querySelector(selector);
const VIEWS = ["training", "inference", "planner", "scenarios", "admin"];
const MAX_DEVICES = 1_000_000;

const state = {
  accelerators: [],
  byId: {},
  training: null, // {request, estimate, scenario: {id, name, etag, description, tags} | null}
  inference: null,
  sweep: null, // {count, results}
  suggestionSort: { key: null, dir: 1 },
  scenarios: null, // the last listing
  admin: { id: null, etag: null, accelerator: null },
};

/** h("p", {class: "x", onclick: fn}, "text", node, [more]) */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

let toastTimer;
function toast(message) {
  const box = $("#toast");
  box.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.textContent = ""), 6000);
}

function problemBox(error) {
  const problem = error instanceof ApiError ? error.problem : { detail: String(error.message || error) };
  const status = error instanceof ApiError ? error.status : 0;
  let title = problem.title || t("error.title");
  if (status === 401) title = t("error.401");
  else if (status === 403) title = t("error.403");
  else if (status === 412) title = t("error.412");
  else if (status === 0) title = t("error.network");
  const errors = Object.entries(problem.errors || {});
  return h("div", { class: "problem", role: "alert" },
    h("strong", {}, title),
    problem.detail && problem.detail !== title ? h("p", {}, problem.detail) : null,
    errors.length ? h("ul", {}, errors.map(([path, msgs]) => h("li", {}, h("code", {}, path), ": ", [].concat(msgs).join(" ")))) : null,
    problem.request_id ? h("p", { class: "hint" }, t("error.request_id", { id: problem.request_id })) : null);
}

function accName(id) {
  return state.byId[id]?.name || id;
}

function bytes(value) {
  if (!Number.isFinite(value)) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = Math.abs(value);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${value < 0 ? "-" : ""}${number(v, { maximumSignificantDigits: 3 })} ${units[i]}`;
}

function badge(kind, text) {
  return h("span", { class: `badge ${kind}` }, text);
}

function fitsBadge(fits) {
  if (fits === null || fits === undefined) return null;
  return fits ? badge("ok", t("r.fits")) : badge("bad", t("r.does_not_fit"));
}

function staleBadge(source) {
  // a price older than PRICE_STALE_AFTER_DAYS: the answer's price_source says so (and why, in its note)
  if (!source || typeof source !== "object" || !source.stale) return null;
  const b = badge("warning", t("r.stale_price", { days: number(source.age_days) }));
  if (source.note) b.title = source.note;
  return b;
}

function card(label, main, base, extra) {
  return h("div", { class: "card" }, h("dt", {}, label), h("dd", {}, main ?? "—", extra ? [" ", extra] : null, base ? h("span", { class: "base" }, base) : null));
}

function section(titleKey, ...children) {
  return h("section", { "aria-labelledby": null }, h("h3", { tabindex: "-1" }, t(titleKey)), ...children);
}

// --- tabs -----------------------------------------------------------------------------------------------

function showView(view, { focus = false } = {}) {
  if (!VIEWS.includes(view)) view = "training";
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.dataset.view === view;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && focus) tab.focus();
  }
  for (const name of VIEWS) $(`#view-${name}`).hidden = name !== view;
  history.replaceState(null, "", `${location.pathname}${location.search}#${view}`);
  if (view === "scenarios" && state.scenarios === null) loadScenarios();
  if (view === "admin" && !state.admin.id && state.accelerators.length) loadAdmin($("#admin-accelerator").value);
  drawCharts($(`#view-${view}`));
}

function bindTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener("click", () => showView(tab.dataset.view));
    tab.addEventListener("keydown", (event) => {
      const i = tabs.indexOf(tab);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      showView(tabs[(next + tabs.length) % tabs.length].dataset.view, { focus: true });
    });
  }
}

// --- language ---------------------------------------------------------------------------------------------

function bindLanguage() {
  $("#lang").addEventListener("change", async (event) => {
    await setLanguage(event.target.value);
    const params = new URLSearchParams(location.search);
    params.set("lang", lang());
    history.replaceState(null, "", `${location.pathname}?${params}${location.hash}`);
    translateStatic();
    refreshOptionLabels();
    // the answers' human strings (durations, money, advice, notes) come from the server in the new language
    if (state.training) await runEstimate("training", state.training.request, { scenario: state.training.scenario });
    if (state.inference) await runEstimate("inference", state.inference.request, { scenario: state.inference.scenario });
    if (state.scenarios) renderScenarioList();
    updateKeyState();
    planner.retranslate();
  });
}

// --- catalog ----------------------------------------------------------------------------------------------

function acceleratorItems() {
  return state.accelerators.map((a) => {
    const gb = number(a.memory_bytes / 1e9, { maximumFractionDigits: 0 });
    const price = a.default_usd_per_hour ? ` · ${t("opt.from_price", { price: usd(a.default_usd_per_hour) })}` : "";
    return { value: a.id, label: `${a.name} (${gb} GB)${price}` };
  });
}

function providerItems(acceleratorId) {
  const acc = state.byId[acceleratorId];
  const providers = [...new Set((acc?.prices || []).map((p) => p.provider))].sort();
  return providers.map((p) => ({ value: p, label: p }));
}

function refreshProviders(formEl) {
  const select = $('[data-path="hardware.accelerator"]', formEl);
  if (select) forms.setOptions(formEl, "providers", providerItems(select.value));
}

function refreshOptionLabels() {
  for (const formEl of [$("#training-form"), $("#inference-form")]) {
    forms.setOptions(formEl, "accelerators", acceleratorItems());
  }
  const admin = $("#admin-accelerator");
  const keep = admin.value;
  admin.replaceChildren(...state.accelerators.map((a) => h("option", { value: a.id }, a.name)));
  if (keep) admin.value = keep;
}

async function loadCatalog() {
  try {
    const [{ data: presets }, accelerators] = await Promise.all([call("GET", "v1/models"), listAll("v1/accelerators")]);
    state.accelerators = accelerators;
    state.byId = Object.fromEntries(accelerators.map((a) => [a.id, a]));
    const presetItems = presets.map((p) => ({ value: p.id, label: `${p.id} (${compact(p.total_parameters)})` }));
    for (const formEl of [$("#training-form"), $("#inference-form")]) {
      forms.setOptions(formEl, "presets", presetItems);
      forms.setOptions(formEl, "accelerators", acceleratorItems());
      refreshProviders(formEl);
    }
    refreshOptionLabels();
    planner.catalog(presetItems, accelerators);
    const datalist = $("#price-providers-list");
    const all = [...new Set(accelerators.flatMap((a) => (a.prices || []).map((p) => p.provider)))].sort();
    datalist.replaceChildren(...all.map((p) => h("option", { value: p })));
  } catch (error) {
    $("#training-results").replaceChildren(problemBox(error));
  }
}

// --- estimates --------------------------------------------------------------------------------------------

function fillRequest(kind, request) {
  const formEl = $(`#${kind}-form`);
  const accelerator = request?.hardware?.accelerator;
  if (accelerator) {
    const select = $('[data-path="hardware.accelerator"]', formEl);
    if (![...select.options].some((o) => o.value === accelerator)) select.append(h("option", { value: accelerator }, accelerator));
    select.value = accelerator;
  }
  refreshProviders(formEl);
  forms.fillForm(formEl, request);
}

async function runEstimate(kind, request, { scenario = null } = {}) {
  const formEl = $(`#${kind}-form`);
  const out = $(`#${kind}-results`);
  const button = $('button[type="submit"]', formEl);
  forms.clearErrors(formEl);
  button.disabled = true;
  out.setAttribute("aria-busy", "true");
  try {
    const { data } = await call("POST", `v1/estimates/${kind}`, { body: request });
    state[kind] = { request, estimate: data, scenario };
    if (kind === "training") {
      renderTraining();
      sweep(request);
    } else {
      state.suggestionSort = { key: null, dir: 1 };
      renderInference();
    }
    return true;
  } catch (error) {
    out.replaceChildren(problemBox(error));
    const first = forms.showErrors(formEl, error.problem?.errors);
    if (first) {
      first.closest("details")?.setAttribute("open", "");
      first.focus();
    }
    return false;
  } finally {
    button.disabled = false;
    out.removeAttribute("aria-busy");
  }
}

function bindEstimateForm(kind) {
  const formEl = $(`#${kind}-form`);
  formEl.addEventListener("submit", (event) => {
    event.preventDefault();
    let request;
    try {
      request = forms.readForm(formEl);
    } catch (error) {
      forms.clearErrors(formEl);
      forms.showErrors(formEl, { [error.path]: [error.message] })?.focus();
      return;
    }
    runEstimate(kind, request, { scenario: state[kind]?.scenario || null });
  });
  $('[data-path="hardware.accelerator"]', formEl).addEventListener("change", () => refreshProviders(formEl));
}

async function applyRecommendation(kind, rec) {
  const current = state[kind];
  const patched = mergePatch(current.request, rec.change);
  fillRequest(kind, patched);
  toast(t("r.applied", { code: rec.code }));
  if (await runEstimate(kind, patched, { scenario: current.scenario })) {
    $(`#${kind}-results h3`)?.focus();
  }
}

function recommendationsSection(kind, recs) {
  if (!recs || !recs.length) return section("r.recommendations", h("p", {}, t("r.no_recommendations")));
  return section("r.recommendations", h("ul", { class: "recs" }, recs.map((rec, i) => {
    const id = `${kind}-rec-${i}`;
    return h("li", { class: rec.severity, dataset: { code: rec.code } },
      badge(rec.severity, t(`sev.${rec.severity}`)),
      h("p", { id }, rec.message),
      rec.change ? h("button", { type: "button", class: "small apply", "aria-describedby": id, onclick: () => applyRecommendation(kind, rec) }, t("r.apply")) : null);
  })));
}

function memoryChart(kind, memory) {
  const keys = kind === "training"
    ? ["weights", "gradients", "optimizer_states", "activations", "overhead"]
    : ["weights", "kv_cache", "activations", "overhead"];
  const breakdown = memory?.breakdown || {};
  const human = memory?.human || {};
  const parts = keys.map((key) => ({ key, label: t(`part.${key}`), value: Number(breakdown[key]) || 0, human: human[key] || bytes(breakdown[key]) }));
  const perDevice = human.per_device || bytes(memory?.per_device_bytes);
  const capacity = human.device_capacity || bytes(memory?.device_capacity_bytes);
  return stackedBar({
    caption: t("chart.memory"),
    label: t("chart.memory_label", { used: perDevice, capacity, parts: parts.filter((p) => p.value > 0).map((p) => `${p.label} ${p.human}`).join(", ") }),
    parts,
    capacity: memory?.device_capacity_bytes,
    capacityLabel: t("chart.capacity", { capacity }),
    fmt: bytes,
    unit: 1024 ** (Math.max(memory?.per_device_bytes || 0, memory?.device_capacity_bytes || 0) >= 2 * 1024 ** 4 ? 4 : 3),
  });
}

function detailsSection(details) {
  if (!details || !details.length) return null;
  return section("r.details", h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, ["r.step", "r.formula", "r.value", "r.unit", "r.source"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, details.map((d) => h("tr", {},
      h("td", {}, h("code", {}, d.name)),
      h("td", {}, d.formula),
      h("td", { class: "num" }, typeof d.value === "number" ? number(d.value, { maximumSignificantDigits: 6 }) : String(d.value ?? "")),
      h("td", {}, d.unit || ""),
      h("td", {}, d.source || "")))))));
}

function notesSection(estimate) {
  const notes = [...(estimate.notes || []), ...(estimate.model?.notes || []), ...(estimate.assumptions?.notes || []), ...(estimate.scaling?.notes || [])];
  return h("details", { class: "more" },
    h("summary", {}, t("r.notes")),
    notes.length ? h("ul", {}, notes.map((n) => h("li", {}, n))) : h("p", {}, "—"),
    h("details", { class: "more" }, h("summary", {}, t("r.json")), h("pre", { class: "json" }, JSON.stringify(estimate, null, 2))));
}

function saveRow(kind) {
  const current = state[kind];
  const request = current.request;
  const model = request.model?.preset || request.model?.name || request.model?.parameters || "model";
  const suggested = `${model} · ${request.hardware?.count ?? 1}× ${request.hardware?.accelerator}`;
  const input = h("input", { type: "text", id: `${kind}-save-name`, value: current.scenario?.name || suggested, maxlength: 200 });
  const rows = [
    h("div", { class: "field" }, h("label", { for: input.id }, t("scenarios.name")), input),
    h("button", { type: "button", class: "save-new", onclick: () => saveScenario(kind, input.value.trim()) }, t("scenarios.save_new")),
  ];
  if (current.scenario) {
    rows.push(h("button", { type: "button", class: "save-update", onclick: () => updateScenario(kind, input.value.trim()) }, t("scenarios.update", { name: current.scenario.name })));
  }
  return h("div", {},
    current.scenario ? h("p", { class: "hint" }, t("scenarios.opened_hint", { name: current.scenario.name, id: current.scenario.id })) : null,
    h("div", { class: "save-row" }, rows),
    apiKey() ? null : h("p", { class: "hint" }, t("scenarios.need_key")));
}

// --- training results ----------------------------------------------------------------------------------

function renderTraining() {
  const { estimate: e } = state.training;
  const cost = e.cost || {};
  const time = e.time || {};
  const compute = e.compute || {};
  const memory = e.memory || {};
  const price = cost.price_source && typeof cost.price_source === "object" ? cost.price_source.provider : cost.price_source;
  const summary = section("r.result",
    h("dl", { class: "cards" },
      card(t("r.total_cost"), cost.human?.total || usd(cost.total_usd), cost.usd_per_accelerator_hour ? `${usd(cost.usd_per_accelerator_hour)}/h${price ? ` · ${price}` : ""}` : null, staleBadge(cost.price_source)),
      card(t("r.time"), time.human, time.seconds ? t("r.seconds", { n: number(time.seconds, { maximumFractionDigits: 0 }) }) : null),
      card(t("r.accelerator_hours"), cost.human?.accelerator_hours || number(cost.accelerator_hours), null),
      card(t("r.flops"), compute.human?.total_flops, compute.total_flops ? `${number(compute.total_flops, { notation: "scientific", maximumSignificantDigits: 3 })} FLOP` : null),
      card(t("r.memory"), `${memory.human?.per_device || "—"} / ${memory.human?.device_capacity || "—"}`, memory.human?.headroom ? t("r.headroom", { v: memory.human.headroom }) : null, fitsBadge(memory.fits))),
    e.range?.low && e.range?.high
      ? h("p", {}, t("r.range", { low: e.range.low.human, high: e.range.high.human, lowc: usd(e.range.low.total_usd), highc: usd(e.range.high.total_usd) }))
      : null,
    saveRow("training"));
  const charts = section("r.charts", memoryChart("training", memory), h("div", { id: "training-sweep" }, sweepContent()));
  $("#training-results").replaceChildren(summary, charts, recommendationsSection("training", e.recommendations), detailsSection(e.details) || "", notesSection(e));
  drawCharts($("#training-results"));
}

function sweepCounts(count) {
  const counts = new Set([count]);
  const low = Math.max(0, Math.floor(Math.log2(count)) - 3);
  for (let k = low; k <= low + 6; k++) if (2 ** k <= MAX_DEVICES) counts.add(2 ** k);
  return [...counts].sort((a, b) => a - b);
}

function sweepRequest(request, n) {
  const body = structuredClone(request);
  body.hardware = { ...body.hardware, count: n };
  const p = body.hardware.parallelism;
  if (p && (p.data || p.tensor || p.pipeline)) {
    const fixed = (p.tensor || 1) * (p.pipeline || 1);
    if (n % fixed !== 0) return null;
    body.hardware.parallelism = { ...p, data: n / fixed };
  }
  body.output = { ...(body.output || {}), recommendations: false, details: false };
  return body;
}

let sweepGeneration = 0;
async function sweep(request) {
  const generation = ++sweepGeneration;
  const count = Number(request.hardware?.count);
  if (!Number.isInteger(count) || count < 1) return;
  state.sweep = { count, results: null };
  const results = await Promise.all(sweepCounts(count).map(async (n) => {
    const body = sweepRequest(request, n);
    if (!body) return { n, error: true };
    try {
      const { data } = await call("POST", "v1/estimates/training", { body });
      return { n, estimate: data };
    } catch {
      return { n, error: true };
    }
  }));
  if (generation !== sweepGeneration) return;
  state.sweep = { count, results };
  const box = $("#training-sweep");
  if (box) {
    box.replaceChildren(sweepContent());
    drawCharts(box);
  }
}

function timeUnit(maxSeconds) {
  if (maxSeconds >= 2 * 86400) return ["unit.days", 86400];
  if (maxSeconds >= 2 * 3600) return ["unit.hours", 3600];
  if (maxSeconds >= 120) return ["unit.minutes", 60];
  return ["unit.seconds", 1];
}

function sweepContent() {
  const sweepState = state.sweep;
  if (!sweepState || !sweepState.results) return h("p", { class: "busy" }, t("chart.sweep_busy"));
  const ok = sweepState.results.filter((r) => r.estimate);
  if (ok.length < 2) return h("p", {}, t("chart.sweep_none"));
  const points = sweepState.results.map((r) => ({ x: r.n, e: r.estimate }));
  const [unitKey, unitSize] = timeUnit(Math.max(...ok.map((r) => r.estimate.time?.seconds || 0)));
  const legendItems = [{ label: t("chart.fits_filled"), color: COLORS[0] }];
  const costChart = lineChart({
    caption: t("chart.cost_by_count"),
    label: t("chart.cost_by_count_label", { points: ok.map((r) => `${r.n}: ${r.estimate.cost?.human?.total}`).join(", ") }),
    points: points.map((p) => ({ x: p.x, y: p.e ? p.e.cost?.total_usd : NaN, human: p.e?.cost?.human?.total, fits: p.e?.memory?.fits })),
    current: sweepState.count,
    fmtY: (v) => usd(v, 0),
    xTitle: t("chart.devices"),
    color: COLORS[0],
    legendItems,
  });
  const timeChart = lineChart({
    caption: t("chart.time_by_count"),
    label: t("chart.time_by_count_label", { points: ok.map((r) => `${r.n}: ${r.estimate.time?.human}`).join(", ") }),
    points: points.map((p) => ({ x: p.x, y: p.e ? (p.e.time?.seconds || 0) / unitSize : NaN, human: p.e?.time?.human, fits: p.e?.memory?.fits })),
    current: sweepState.count,
    fmtY: (v) => t(unitKey, { n: number(v, { maximumSignificantDigits: 3 }) }),
    xTitle: t("chart.devices"),
    color: COLORS[1],
    legendItems: [{ label: t("chart.fits_filled"), color: COLORS[1] }],
  });
  const table = h("details", { class: "more" }, h("summary", {}, t("chart.as_table")), h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, [t("chart.devices"), t("r.total_cost"), t("r.time"), t("r.memory")].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, sweepState.results.map((r) => h("tr", { class: r.n === sweepState.count ? "current" : null },
      h("td", { class: "num" }, number(r.n)),
      h("td", { class: "num" }, r.estimate ? r.estimate.cost?.human?.total : t("chart.not_possible")),
      h("td", { class: "num" }, r.estimate?.time?.human || ""),
      h("td", {}, r.estimate ? [r.estimate.memory?.human?.per_device, " ", fitsBadge(r.estimate.memory?.fits)] : "")))))));
  return h("div", {}, h("div", { class: "charts-row" }, costChart, timeChart), h("p", { class: "hint" }, t("chart.sweep_hint")), table);
}

// --- inference results ---------------------------------------------------------------------------------

const SUGGESTION_COLUMNS = [
  { key: "accelerator", label: "s.accelerator", text: true, value: (s) => accName(s.accelerator) },
  { key: "count", label: "s.count", value: (s) => s.count },
  { key: "fits", label: "s.fits", value: (s) => (s.fits ? 1 : 0), show: (s) => fitsBadge(s.fits) },
  { key: "meets_targets", label: "s.meets_targets", value: (s) => (s.meets_targets ? 1 : 0), show: (s) => (s.meets_targets === null || s.meets_targets === undefined ? "—" : s.meets_targets ? t("yes") : t("no")) },
  { key: "throughput", label: "s.tokens_per_s", value: (s) => s.output_tokens_per_second ?? s.samples_per_second, show: (s) => number(s.output_tokens_per_second ?? s.samples_per_second) },
  { key: "usd_per_hour", label: "s.usd_per_hour", value: (s) => s.usd_per_hour, show: (s) => usd(s.usd_per_hour) },
  { key: "usd_per_million", label: "s.usd_per_million", value: (s) => s.usd_per_million_output_tokens ?? s.usd_per_million_samples, show: (s) => usd(s.usd_per_million_output_tokens ?? s.usd_per_million_samples) },
];

function sortedSuggestions() {
  const rows = [...(state.inference.estimate.suggestions || [])];
  const { key, dir } = state.suggestionSort;
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

function suggestionTable() {
  const { key, dir } = state.suggestionSort;
  const samples = (state.inference.estimate.suggestions || []).some((s) => s.samples_per_second != null && s.output_tokens_per_second == null);
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
      state.suggestionSort = { key: c.key, dir: key === c.key ? -dir : c.text ? 1 : (c.key === "usd_per_hour" || c.key === "usd_per_million" ? 1 : -1) };
      const wrap = $("#suggestions-table");
      wrap.replaceWith(suggestionTable());
      $(`#suggestions-table button[data-sort="${c.key}"]`).focus();
    },
  }, label(c)))), h("th", { scope: "col" }, h("span", { class: "sr-only" }, t("s.action"))));
  const body = h("tbody", {}, sortedSuggestions().map((s) => h("tr", { class: s.accelerator === state.inference.request.hardware?.accelerator ? "current" : null },
    SUGGESTION_COLUMNS.map((c) => h(c.key === "accelerator" ? "th" : "td", { class: c.text ? null : "num", scope: c.key === "accelerator" ? "row" : null }, c.show ? c.show(s) : String(c.value(s) ?? "—"))),
    h("td", {}, h("button", {
      type: "button",
      class: "small",
      "aria-label": t("s.use_label", { name: accName(s.accelerator), count: s.count }),
      onclick: () => applyRecommendation("inference", { code: "suggestion", change: { hardware: { accelerator: s.accelerator, count: s.count }, cost: { provider: null } } }),
    }, t("s.use"))))));
  return h("div", { class: "table-wrap", id: "suggestions-table" }, h("table", {},
    h("caption", {}, t("s.caption", { n: (state.inference.estimate.suggestions || []).length })), h("thead", {}, head), body));
}

function renderInference() {
  const { estimate: e } = state.inference;
  const memory = e.memory || {};
  const latency = e.latency || {};
  const cost = e.cost || {};
  const throughput = e.throughput || {};
  const tokens = throughput.output_tokens_per_second ?? null;
  const summary = section("r.result",
    h("dl", { class: "cards" },
      card(t("r.memory"), `${memory.human?.per_device || "—"} / ${memory.human?.device_capacity || "—"}`, memory.human?.headroom ? t("r.headroom", { v: memory.human.headroom }) : null, fitsBadge(memory.fits)),
      card(t("r.devices_to_fit"), e.devices_needed?.to_fit != null ? number(e.devices_needed.to_fit) : "—", e.hardware ? `${e.hardware.count}× ${e.hardware.name || e.hardware.accelerator}` : null),
      card(t("r.ttft"), latency.human?.time_to_first_token, latency.bound?.prefill ? t("r.bound", { b: latency.bound.prefill }) : null),
      card(t("r.tpot"), latency.human?.time_per_output_token, latency.bound?.decode ? t("r.bound", { b: latency.bound.decode }) : null),
      card(t("r.end_to_end"), latency.human?.end_to_end, null),
      card(tokens != null ? t("r.tokens_per_s") : t("r.samples_per_s"), number(tokens ?? throughput.samples_per_second), throughput.requests_per_second ? t("r.rps", { n: number(throughput.requests_per_second) }) : null),
      card(t("r.usd_per_hour"), usd(cost.usd_per_hour), cost.price_source?.provider || null, staleBadge(cost.price_source)),
      card(cost.usd_per_million_output_tokens != null ? t("r.usd_per_million") : t("r.usd_per_million_samples"), usd(cost.usd_per_million_output_tokens ?? cost.usd_per_million_samples), cost.usd_per_million_input_tokens != null ? t("r.usd_per_million_input", { v: usd(cost.usd_per_million_input_tokens) }) : null)),
    memory.fits && memory.max_batch_size != null ? h("p", {}, t("r.max_batch", { batch: number(memory.max_batch_size), context: number(memory.max_context_tokens) })) : null,
    saveRow("inference"));
  const parts = [summary, section("r.charts", memoryChart("inference", memory))];
  const suggestions = e.suggestions || [];
  if (suggestions.length) {
    const fitting = suggestions.filter((s) => s.fits);
    const speed = (s) => s.output_tokens_per_second ?? s.samples_per_second;
    const price = (s) => s.usd_per_million_output_tokens ?? s.usd_per_million_samples;
    const samples = suggestions.some((s) => s.output_tokens_per_second == null && s.samples_per_second != null);
    const itemLabel = (s) => `${s.count}× ${accName(s.accelerator)}`;
    const fast = [...fitting].filter((s) => Number.isFinite(speed(s))).sort((a, b) => speed(b) - speed(a));
    const cheap = [...fitting].filter((s) => Number.isFinite(price(s))).sort((a, b) => price(a) - price(b));
    parts.push(section("s.title",
      h("div", { class: "charts-row" },
        barChart({
          caption: t(samples ? "chart.samples_per_s" : "chart.tokens_per_s"),
          label: t("chart.bars_label", { items: fast.slice(0, 12).map((s) => `${itemLabel(s)} ${number(speed(s))}`).join(", ") }),
          items: fast.map((s) => ({ label: itemLabel(s), value: speed(s), human: number(speed(s), { maximumSignificantDigits: 3 }) })),
          fmt: (v) => compact(v),
          color: COLORS[2],
        }),
        barChart({
          caption: t(samples ? "chart.usd_per_million_samples" : "chart.usd_per_million"),
          label: t("chart.bars_label", { items: cheap.slice(0, 12).map((s) => `${itemLabel(s)} ${usd(price(s))}`).join(", ") }),
          items: cheap.map((s) => ({ label: itemLabel(s), value: price(s), human: usd(price(s)) })),
          fmt: (v) => usd(v, Math.max(...cheap.map(price)) < 10 ? 2 : 0),
          color: COLORS[3],
        })),
      h("p", { class: "hint" }, t("s.hint")),
      suggestionTable()));
  }
  parts.push(recommendationsSection("inference", e.recommendations));
  const details = detailsSection(e.details);
  if (details) parts.push(details);
  parts.push(notesSection(e));
  $("#inference-results").replaceChildren(...parts);
  drawCharts($("#inference-results"));
}

// --- planner --------------------------------------------------------------------------------------------

/** The planner's "Open as estimate": the plan's estimate body in the Training view, estimated. */
async function openTrainingEstimate(request) {
  fillRequest("training", request);
  showView("training");
  if (await runEstimate("training", request)) $("#training-results h3")?.focus();
}

// --- scenarios ------------------------------------------------------------------------------------------

function updateKeyState() {
  const key = apiKey();
  $("#key-state").textContent = key ? t("key.set", { tail: key.slice(-4) }) : t("key.none");
}

function bindScenarios() {
  $("#key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("#api-key");
    setApiKey(input.value.trim());
    input.value = "";
    updateKeyState();
    loadScenarios();
    if (state.admin.id) loadAdmin(state.admin.id);
    for (const kind of ["training", "inference"]) if (state[kind]) (kind === "training" ? renderTraining : renderInference)();
  });
  $("#key-forget").addEventListener("click", () => {
    setApiKey("");
    updateKeyState();
    state.scenarios = null;
    $("#scenarios-list").replaceChildren(h("p", { class: "notice" }, t("scenarios.need_key")));
    $("#scenario-detail").replaceChildren();
  });
  $("#scenarios-refresh").addEventListener("click", () => loadScenarios());
}

async function loadScenarios() {
  const box = $("#scenarios-list");
  if (!apiKey()) {
    box.replaceChildren(h("p", { class: "notice" }, t("scenarios.need_key")));
    return;
  }
  box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data, headers } = await call("GET", "v1/scenarios?page_size=100");
    let total = data.length;
    try {
      total = JSON.parse(headers.get("X-Pagination") || "{}").total ?? total;
    } catch {
      /* keep the row count */
    }
    state.scenarios = { rows: data, total };
    renderScenarioList();
  } catch (error) {
    state.scenarios = null;
    box.replaceChildren(problemBox(error));
  }
}

function headline(kind, summary) {
  if (!summary) return "—";
  return kind === "training" ? usd(summary.total_usd) : `${usd(summary.usd_per_hour)}/h`;
}

function renderScenarioList() {
  const { rows, total } = state.scenarios;
  const box = $("#scenarios-list");
  if (!rows.length) {
    box.replaceChildren(h("p", {}, t("scenarios.empty")));
    return;
  }
  box.replaceChildren(h("div", { class: "table-wrap" }, h("table", { id: "scenarios-table" },
    h("caption", {}, t("scenarios.caption", { n: number(total) })),
    h("thead", {}, h("tr", {}, ["scenarios.name", "scenarios.kind", "scenarios.hardware", "scenarios.headline", "scenarios.changed", "scenarios.owner", "scenarios.actions"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, rows.map((s) => scenarioRow(s))))));
}

function scenarioRow(s) {
  const nameCell = h("th", { scope: "row", class: "scenario-name" }, s.name);
  const row = h("tr", { dataset: { id: s.id } },
    nameCell,
    h("td", {}, t(`tab.${s.kind}`)),
    h("td", {}, s.summary ? `${s.summary.count ?? ""}× ${accName(s.summary.accelerator)}` : "—", " ", fitsBadge(s.summary?.fits)),
    h("td", { class: "num" }, headline(s.kind, s.summary)),
    h("td", {}, dateTime(s.updated_at)),
    h("td", {}, s.owner || ""),
    h("td", {}, h("div", { class: "actions" },
      h("button", { type: "button", class: "small open", "aria-label": t("scenarios.open_label", { name: s.name }), onclick: () => openScenario(s.id) }, t("scenarios.open")),
      h("button", { type: "button", class: "small reprice", "aria-label": t("scenarios.reprice_label", { name: s.name }), onclick: () => repriceScenario(s.id, s.name) }, t("scenarios.reprice")),
      h("button", { type: "button", class: "small rename", "aria-label": t("scenarios.rename_label", { name: s.name }), onclick: () => startRename(nameCell, s) }, t("scenarios.rename")),
      deleteButton(s))));
  return row;
}

function deleteButton(s) {
  let armed = false;
  const button = h("button", { type: "button", class: "small danger delete", "aria-label": t("scenarios.delete_label", { name: s.name }) }, t("scenarios.delete"));
  button.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      button.textContent = t("scenarios.delete_confirm");
      button.setAttribute("aria-label", t("scenarios.delete_confirm_label", { name: s.name }));
      toast(t("scenarios.delete_again", { name: s.name }));
      return;
    }
    button.disabled = true;
    try {
      const { etag } = await call("GET", `v1/scenarios/${s.id}`);
      await call("DELETE", `v1/scenarios/${s.id}`, { ifMatch: etag });
      toast(t("scenarios.deleted", { name: s.name }));
      for (const kind of ["training", "inference"]) if (state[kind]?.scenario?.id === s.id) state[kind].scenario = null;
      await loadScenarios();
    } catch (error) {
      $("#scenario-detail").replaceChildren(problemBox(error));
      button.disabled = false;
    }
  });
  return button;
}

function startRename(cell, s) {
  const input = h("input", { type: "text", value: s.name, id: `rename-${s.id}`, maxlength: 200 });
  const save = async () => {
    const name = input.value.trim();
    if (!name || name === s.name) return renderScenarioList();
    try {
      const { data, etag } = await call("GET", `v1/scenarios/${s.id}`);
      const body = { name, description: data.description ?? null, tags: data.tags || [], kind: data.kind, request: data.request };
      await call("PUT", `v1/scenarios/${s.id}`, { body, ifMatch: etag });
      toast(t("scenarios.renamed", { name }));
      for (const kind of ["training", "inference"]) if (state[kind]?.scenario?.id === s.id) state[kind].scenario.name = name;
      await loadScenarios();
    } catch (error) {
      $("#scenario-detail").replaceChildren(problemBox(error));
    }
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") save();
    if (event.key === "Escape") renderScenarioList();
  });
  cell.replaceChildren(
    h("label", { for: input.id, class: "sr-only" }, t("scenarios.new_name")),
    input,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "small rename-save", onclick: save }, t("scenarios.rename_save")),
      h("button", { type: "button", class: "small", onclick: () => renderScenarioList() }, t("cancel"))));
  input.focus();
  input.select();
}

async function openScenario(id) {
  try {
    const { data, etag } = await call("GET", `v1/scenarios/${id}`);
    const kind = data.kind;
    fillRequest(kind, data.request);
    state[kind] = {
      request: data.request,
      estimate: data.estimate,
      scenario: { id: data.id, name: data.name, etag, description: data.description ?? null, tags: data.tags || [] },
    };
    showView(kind);
    if (kind === "training") {
      renderTraining();
      sweep(data.request);
    } else {
      state.suggestionSort = { key: null, dir: 1 };
      renderInference();
    }
    toast(t("scenarios.opened", { name: data.name }));
    $(`#${kind}-results h3`)?.focus();
  } catch (error) {
    $("#scenario-detail").replaceChildren(problemBox(error));
  }
}

async function saveScenario(kind, name) {
  if (!apiKey()) {
    toast(t("scenarios.need_key"));
    return;
  }
  try {
    const current = state[kind];
    const { data, etag } = await call("POST", "v1/scenarios", { body: { name, kind, request: current.request } });
    current.scenario = { id: data.id, name: data.name, etag, description: null, tags: [] };
    toast(t("scenarios.saved", { name: data.name }));
    (kind === "training" ? renderTraining : renderInference)();
    state.scenarios = null;
  } catch (error) {
    $(`#${kind}-results`).prepend(problemBox(error));
  }
}

async function updateScenario(kind, name) {
  const current = state[kind];
  try {
    const body = { name: name || current.scenario.name, description: current.scenario.description, tags: current.scenario.tags, kind, request: current.request };
    const { data, etag } = await call("PUT", `v1/scenarios/${current.scenario.id}`, { body, ifMatch: current.scenario.etag });
    current.scenario = { ...current.scenario, name: data.name, etag };
    toast(t("scenarios.updated", { name: data.name }));
    (kind === "training" ? renderTraining : renderInference)();
    state.scenarios = null;
  } catch (error) {
    $(`#${kind}-results`).prepend(problemBox(error));
  }
}

async function repriceScenario(id, name) {
  const box = $("#scenario-detail");
  box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data } = await call("GET", `v1/scenarios/${id}/estimate`);
    const training = data.delta?.basis !== "usd_per_hour";
    const pick = (e) => (training ? e?.cost?.total_usd : e?.cost?.usd_per_hour);
    const delta = data.delta || {};
    const direction = delta.total_usd > 0 ? "up" : delta.total_usd < 0 ? "down" : "";
    const sign = delta.total_usd > 0 ? "+" : "";
    box.replaceChildren(h("section", { class: "panel", id: "reprice" },
      h("h3", { tabindex: "-1" }, t("scenarios.repriced_title", { name })),
      h("dl", { class: "cards" },
        card(t(training ? "scenarios.saved_total" : "scenarios.saved_hourly"), usd(pick(data.saved)), null),
        card(t(training ? "scenarios.current_total" : "scenarios.current_hourly"), usd(pick(data.current)), null),
        card(t("scenarios.delta"), h("span", { class: `delta ${direction}` }, delta.total_usd == null ? "—" : `${sign}${usd(delta.total_usd)}`),
          delta.percent == null ? null : `${sign}${number(delta.percent, { maximumFractionDigits: 1 })} %`))));
    $("#reprice h3").focus();
  } catch (error) {
    box.replaceChildren(problemBox(error));
  }
}

// --- admin: prices, history, audit -------------------------------------------------------------------------

function bindAdmin() {
  $("#admin-accelerator").addEventListener("change", (event) => loadAdmin(event.target.value));
  $("#price-form").addEventListener("submit", (event) => {
    event.preventDefault();
    savePrice();
  });
}

function pricesTable(prices, captionKey, history = false) {
  if (!prices.length) return h("p", {}, t("admin.no_prices"));
  const columns = ["admin.provider", "admin.pricing_model", "admin.usd_per_hour", "admin.instance", "admin.region", "admin.from"];
  if (history) columns.push("admin.to");
  columns.push("admin.source");
  return h("div", { class: "table-wrap" }, h("table", {},
    h("caption", {}, t(captionKey)),
    h("thead", {}, h("tr", {}, columns.map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, prices.map((p) => h("tr", { class: history && !p.effective_to ? "current" : null },
      h("td", {}, p.provider),
      h("td", {}, p.pricing_model || ""),
      h("td", { class: "num" }, usd(p.usd_per_hour, 4)),
      h("td", {}, p.instance_type || ""),
      h("td", {}, p.region || ""),
      h("td", {}, p.effective_from || p.as_of || ""),
      history ? h("td", {}, p.effective_to || t("admin.current")) : null,
      h("td", {}, p.source || ""))))));
}

async function loadAdmin(id) {
  if (!id) return;
  state.admin.id = id;
  const current = $("#admin-current");
  current.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data, etag } = await call("GET", `v1/accelerators/${encodeURIComponent(id)}`);
    if (state.admin.id !== id) return;
    state.admin.etag = etag;
    state.admin.accelerator = data;
    state.byId[id] = data;
    current.replaceChildren(pricesTable(data.prices || [], "admin.current_prices"));
  } catch (error) {
    current.replaceChildren(problemBox(error));
  }
  loadHistory(id);
  loadAudit(id);
}

async function loadHistory(id) {
  const box = $("#admin-history");
  try {
    const { data } = await call("GET", `v1/accelerators/${encodeURIComponent(id)}/prices/history`);
    if (state.admin.id === id) box.replaceChildren(h("h3", {}, t("admin.history")), pricesTable(data || [], "admin.history_caption", true));
  } catch (error) {
    box.replaceChildren(problemBox(error));
  }
}

function auditSummary(value) {
  if (!value) return "—";
  if (Array.isArray(value.prices)) {
    return value.prices.map((p) => `${p.provider} ${p.pricing_model || ""} ${usd(p.usd_per_hour, 4)}${p.effective_to ? ` (→ ${p.effective_to})` : ""}`).join("; ") || "—";
  }
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

async function loadAudit(id) {
  const box = $("#admin-audit");
  if (!apiKey()) {
    box.replaceChildren(h("h3", {}, t("admin.audit")), h("p", { class: "notice" }, t("admin.audit_needs_key")));
    return;
  }
  try {
    const { data } = await call("GET", `v1/audit-events?target=${encodeURIComponent(`accelerator:${id}`)}&page_size=25`);
    if (state.admin.id !== id) return;
    box.replaceChildren(h("h3", {}, t("admin.audit")), data.length
      ? h("div", { class: "table-wrap" }, h("table", { id: "audit-table" },
        h("caption", {}, t("admin.audit_caption", { name: accName(id) })),
        h("thead", {}, h("tr", {}, ["admin.at", "admin.actor", "admin.action", "admin.before", "admin.after"].map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", {}, data.map((ev) => h("tr", {},
          h("td", {}, dateTime(ev.at)), h("td", {}, ev.actor), h("td", {}, h("code", {}, ev.action)),
          h("td", {}, auditSummary(ev.before)), h("td", {}, auditSummary(ev.after)))))))
      : h("p", {}, t("admin.audit_empty")));
  } catch (error) {
    box.replaceChildren(h("h3", {}, t("admin.audit")), problemBox(error));
  }
}

async function savePrice() {
  const formEl = $("#price-form");
  forms.clearErrors(formEl);
  const body = forms.readForm(formEl);
  const provider = body.provider;
  delete body.provider;
  if (!provider) {
    forms.showErrors(formEl, { provider: [t("admin.provider_required")] })?.focus();
    return;
  }
  const id = state.admin.id;
  const button = $('button[type="submit"]', formEl);
  button.disabled = true;
  try {
    const { data, etag } = await call("PUT", `v1/accelerators/${encodeURIComponent(id)}/prices/${encodeURIComponent(provider)}`, { body, ifMatch: state.admin.etag });
    state.admin.etag = etag;
    state.byId[id] = data;
    const index = state.accelerators.findIndex((a) => a.id === id);
    if (index >= 0) state.accelerators[index] = data;
    for (const f of [$("#training-form"), $("#inference-form")]) refreshProviders(f);
    toast(t("admin.saved", { provider, name: data.name, price: usd(body.usd_per_hour, 4) }));
    $("#admin-current").replaceChildren(pricesTable(data.prices || [], "admin.current_prices"));
    forms.resetForm(formEl);
    loadHistory(id);
    loadAudit(id);
  } catch (error) {
    $("#admin-current").prepend(problemBox(error));
    forms.showErrors(formEl, error.problem?.errors);
    if (error.status === 412) loadAdmin(id);
  } finally {
    button.disabled = false;
  }
}

// --- start ------------------------------------------------------------------------------------------------

/** The values of every enumerated field (GET /v1/options), before any form is drawn; a failure leaves the
 * selects at "(automatic)" and says why where the results go. */
async function loadChoices() {
  try {
    forms.setChoices((await call("GET", "v1/options")).data);
    return null;
  } catch (error) {
    return error;
  }
}

async function boot() {
  const [, choicesError] = await Promise.all([setLanguage(pickLanguage()), loadChoices()]);
  $("#lang").value = lang();
  translateStatic();
  forms.buildForm($("#training-form"), forms.TRAINING);
  forms.buildForm($("#inference-form"), forms.INFERENCE);
  forms.buildForm($("#price-form"), forms.PRICE);
  bindTabs();
  bindLanguage();
  bindEstimateForm("training");
  bindEstimateForm("inference");
  bindScenarios();
  bindAdmin();
  planner.init({ h, problemBox, accName, bytes, openTraining: openTrainingEstimate });
  updateKeyState();
  const view = location.hash.slice(1);
  showView(VIEWS.includes(view) ? view : "training");
  await loadCatalog();
  if (choicesError) $("#training-results").replaceChildren(problemBox(choicesError));
  if (!$("#view-admin").hidden) loadAdmin($("#admin-accelerator").value);
  document.body.dataset.ready = "true";
}

boot();
