// The scalecost page: training and inference estimates with charts, saved scenarios and catalog prices,
// all through the public HTTP API (relative URLs). No framework, no build step.
import * as admin from "./admin.js";
import { ApiError, apiKey, call, listAll, mergePatch } from "./api.js";
import { barChart, drawCharts, stackedBar, COLORS } from "./charts.js";
import { announce, h } from "./dom.js";
import { badge, boundText, fitsBadge, headlineUsd, ifRuns, intervalNote, layoutText, ms, priceLine, priceNote } from "./doubt.js";
import { bindFaq, retranslateFaq, scalingSection } from "./explain.js";
import { answerCsv, exportButtons, toCsv } from "./exporting.js";
import * as forms from "./forms.js";
import { compact, duration, lang, number, pickLanguage, setLanguage, t, translateStatic, usd } from "./i18n.js";
import { bindLive } from "./live.js";
import { usdDigits } from "./numbers.js";
import * as scenarios from "./scenarios.js";
import { copyLink, readShared, share } from "./share.js";
import * as suggestionsView from "./suggestions.js";
import { sweep, sweepContent } from "./sweep.js";

const $ = (selector, root = document) => root.querySelector(selector);
const VIEWS = ["training", "inference", "planner", "scenarios", "admin"];

// The Planner's modules (planner, serving, frontier, plankit: a third of the script) load the first time the view
// opens or a shared link asks for a plan, not with the page; the view shows once its forms are built.
const plannerState = { load: null, catalog: null, ready: false };
function loadPlanner() {
  plannerState.load ??= import("./planner.js").then((planner) => {
    planner.init({ h, problemBox, accName, bytes, openTraining: openTrainingEstimate, openInference: openInferenceEstimate });
    if (plannerState.catalog) planner.catalog(...plannerState.catalog);
    plannerState.ready = true;
    return planner;
  });
  return plannerState.load;
}

const state = {
  accelerators: [],
  byId: {},
  training: null, // {request, estimate, scenario: {id, name, etag, description, tags} | null}
  inference: null,
  suggestionSort: { key: null, dir: 1 },
  scenarios: null, // the last listing
  admin: { id: null, etag: null, accelerator: null },
};

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
  else if (status === 422 && /invalid-field$/.test(problem.type || "")) title = t("error.422");
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

function card(label, main, base, extra) {
  const under = [].concat(base ?? []).filter((b) => b !== null && b !== undefined && b !== false && b !== "");
  return h("div", { class: "card" }, h("dt", {}, label), h("dd", {}, main ?? "—", extra ? [" ", extra] : null, under.length ? h("span", { class: "base" }, under) : null));
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
  for (const name of VIEWS) $(`#view-${name}`).hidden = name !== view || (name === "planner" && !plannerState.ready);
  if (view === "planner" && !plannerState.ready) {
    loadPlanner().then(() => {
      if ($("#tab-planner").getAttribute("aria-selected") === "true") showView("planner");
    });
  }
  history.replaceState(null, "", `${location.pathname}${location.search}#${view}`);
  if (view === "scenarios" && state.scenarios === null) scenarios.loadScenarios();
  if (view === "admin" && !state.admin.id && state.accelerators.length) admin.loadAdmin($("#admin-accelerator").value);
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
    if (state.scenarios) scenarios.renderScenarioList();
    scenarios.updateKeyState();
    plannerState.load?.then((planner) => planner.retranslate());
    retranslateFaq({ bytes, problemBox });
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
  const picker = $("#admin-accelerator");
  const keep = picker.value;
  picker.replaceChildren(...state.accelerators.map((a) => h("option", { value: a.id }, a.name)));
  if (keep) picker.value = keep;
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
    plannerState.catalog = [presetItems, accelerators];
    plannerState.load?.then((planner) => planner.catalog(presetItems, accelerators));
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

const inflight = { training: null, inference: null }; // the estimate request in flight, aborted by a newer one

async function runEstimate(kind, request, { scenario = null, live = false } = {}) {
  const formEl = $(`#${kind}-form`);
  const out = $(`#${kind}-results`);
  const button = $('button[type="submit"]', formEl);
  inflight[kind]?.abort();
  const controller = new AbortController();
  inflight[kind] = controller;
  forms.clearErrors(formEl);
  if (!live) button.disabled = true;
  out.setAttribute("aria-busy", "true");
  try {
    const { data } = await call("POST", `v1/estimates/${kind}`, { body: request, signal: controller.signal });
    state[kind] = { request, estimate: data, scenario };
    share({ [kind]: request });
    if (kind === "training") {
      renderTraining();
      sweep(request, data);
    } else {
      state.suggestionSort = { key: null, dir: 1 };
      renderInference();
    }
    if (!live) announceCards(kind);
    return true;
  } catch (error) {
    if (error.name === "AbortError") return false; // a newer request took its place
    out.replaceChildren(problemBox(error));
    if (!live) announce(out.textContent);
    const first = forms.showErrors(formEl, error.problem?.errors);
    if (first && !live) {
      first.closest("details")?.setAttribute("open", "");
      first.focus();
    }
    return false;
  } finally {
    if (inflight[kind] === controller) {
      inflight[kind] = null;
      button.disabled = false;
      out.removeAttribute("aria-busy");
    }
  }
}

/** Tell screen readers what the new result says: each card's label and figure. */
function announceCards(kind) {
  const cards = [...document.querySelectorAll(`#${kind}-results .cards .card`)].slice(0, 4);
  const said = cards.map((c) => `${c.querySelector("dt").textContent}: ${c.querySelector("dd").innerText.split("\n")[0]}`);
  announce(`${t("announce.ready")} ${said.join("; ")}`);
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
    : ["weights", "kv_cache", "draft", "activations", "overhead"];
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

/** A details row's source as words: a structured price source is said from the answer's cost.price_source
 * (the API writes that row's source as a serialised mapping). */
function detailSource(d, estimate) {
  const text = d.source == null ? "" : String(d.source);
  if (!text.startsWith("{")) return text;
  const p = estimate?.cost?.price_source;
  if (!p || typeof p !== "object") return "";
  return [p.provider, p.instance_type, p.region, p.pricing_model, p.effective_from || p.as_of, p.source].filter(Boolean).join(" · ");
}

function detailsSection(details, estimate) {
  if (!details || !details.length) return null;
  return section("r.details", h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, ["r.step", "r.formula", "r.value", "r.unit", "r.source"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, details.map((d) => h("tr", {},
      h("td", {}, h("code", {}, d.name)),
      h("td", {}, d.formula),
      h("td", { class: "num" }, typeof d.value === "number" ? number(d.value, { maximumSignificantDigits: 6 }) : String(d.value ?? "")),
      h("td", {}, d.unit || ""),
      h("td", {}, detailSource(d, estimate))))))));
}

function notesSection(estimate) {
  const notes = [...(estimate.notes || []), ...(estimate.model?.notes || []), ...(estimate.assumptions?.notes || []), ...(estimate.scaling?.notes || [])];
  return h("details", { class: "more" },
    h("summary", {}, t("r.notes")),
    notes.length ? h("ul", {}, notes.map((n) => h("li", {}, n))) : h("p", {}, "—"),
    h("details", { class: "more" }, h("summary", {}, t("r.json")), h("pre", { class: "json" }, JSON.stringify(estimate, null, 2))));
}

/** Copy link (the address holds the request) and the answer as CSV or JSON. */
function shareRow(kind) {
  const copy = h("button", { type: "button", class: "small copy-link", onclick: async () => {
    const done = await copyLink();
    toast(done ? t("share.copied") : t("share.copy_failed", { url: location.href }));
  } }, t("share.copy"));
  const get = () => ({
    name: `scalecost-${kind}-estimate`,
    csv: () => answerCsv({ request: state[kind].request, estimate: state[kind].estimate }),
    json: () => ({ request: state[kind].request, estimate: state[kind].estimate }),
  });
  const row = exportButtons(get, t("export.label", { what: t("r.result") }));
  row.prepend(copy);
  return row;
}

function saveRow(kind) {
  const current = state[kind];
  const request = current.request;
  const model = request.model?.preset || request.model?.name || request.model?.parameters || "model";
  const suggested = `${model} · ${request.hardware?.count ?? 1}× ${request.hardware?.accelerator}`;
  const input = h("input", { type: "text", id: `${kind}-save-name`, value: current.scenario?.name || suggested, maxlength: 200 });
  const rows = [
    h("div", { class: "field" }, h("label", { for: input.id }, t("scenarios.name")), input),
    h("button", { type: "button", class: "save-new", onclick: () => scenarios.saveScenario(kind, input.value.trim()) }, t("scenarios.save_new")),
  ];
  if (current.scenario) {
    rows.push(h("button", { type: "button", class: "save-update", onclick: () => scenarios.updateScenario(kind, input.value.trim()) }, t("scenarios.update", { name: current.scenario.name })));
  }
  return h("div", {},
    shareRow(kind),
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
  const runs = memory.fits;
  // the calibration's p10–p90 (answers that carry `intervals`), beside the figures it qualifies
  const spans = runs === false ? {} : e.intervals || {};
  const money = (v) => usd(v, usdDigits(v));
  const summary = section("r.result",
    h("dl", { class: "cards" },
      card(t("r.total_cost"), ifRuns(runs, cost.total_usd != null ? headlineUsd(cost.total_usd) : null), [priceNote(cost.price_source, cost.usd_per_accelerator_hour), intervalNote(spans.cost?.total_usd, money)]),
      card(t("r.time"), ifRuns(runs, time.human), [runs !== false && time.seconds ? t("r.seconds", { n: number(time.seconds, { maximumFractionDigits: 0 }) }) : null, intervalNote(spans.time?.seconds, duration)]),
      card(t("r.accelerator_hours"), ifRuns(runs, cost.human?.accelerator_hours || number(cost.accelerator_hours)), null),
      card(t("r.flops"), compute.human?.total_flops, compute.total_flops ? `${number(compute.total_flops, { notation: "scientific", maximumSignificantDigits: 3 })} FLOP` : null),
      card(t("r.memory"), memoryFigure(memory), memory.human?.headroom ? t("r.headroom", { v: memory.human.headroom }) : null, fitsBadge(memory.fits)),
      layoutCard(e)),
    priceLine(cost.price_source),
    runs !== false && e.range?.low && e.range?.high
      ? h("p", {}, t("r.range", { low: e.range.low.human, high: e.range.high.human, lowc: usd(e.range.low.total_usd, usdDigits(e.range.low.total_usd)), highc: usd(e.range.high.total_usd, usdDigits(e.range.high.total_usd)) }))
      : null,
    saveRow("training"));
  const charts = section("r.charts", memoryChart("training", memory), h("div", { id: "training-sweep" }, sweepContent()));
  $("#training-results").replaceChildren(summary, charts, scalingSection(e.scaling) || "", recommendationsSection("training", e.recommendations), detailsSection(e.details, e) || "", notesSection(e));
  drawCharts($("#training-results"));
}

/** "17.2 GiB / 79.6 GiB": each figure whole, the line free to break at the slash. */
function memoryFigure(memory) {
  return [h("span", { class: "figure" }, memory.human?.per_device || "—"), " / ", h("span", { class: "figure" }, memory.human?.device_capacity || "—")];
}

/** The layout the estimate ran with; when the API chose it (parallelism or count "auto"), said so, with a button
 * that puts it in the form's own fields to edit. */
function layoutCard(e) {
  const auto = e.assumptions?.auto;
  const par = auto?.chosen_parallelism || e.assumptions?.parallelism;
  const count = auto?.chosen_count ?? e.hardware?.count ?? state.training.request.hardware?.count;
  const edit = auto ? h("button", { type: "button", class: "small", id: "training-edit-layout", onclick: () => editLayout(auto) }, t("layout.edit")) : null;
  return h("div", { class: "card layout-card" }, h("dt", {}, t(auto ? "layout.chosen" : "layout.used")),
    h("dd", {}, h("span", { class: "layout" }, layoutText(par)),
      h("span", { class: "base" }, [t("layout.devices", { n: number(count, { maximumFractionDigits: 0 }) }),
        auto?.chosen_micro_batch_size ? t("layout.micro_batch", { n: auto.chosen_micro_batch_size }) : null].filter(Boolean).join(", ")),
      edit));
}

function editLayout(auto) {
  const formEl = $("#training-form");
  forms.fillLayout(formEl, auto.chosen_parallelism);
  if (auto.count === "auto") $('[data-path="hardware.count"]', formEl).value = String(auto.chosen_count);
  if (auto.chosen_micro_batch_size) $('[data-path="training.micro_batch_size"]', formEl).value = String(auto.chosen_micro_batch_size);
  toast(t("layout.edited"));
  $('[data-path="hardware.parallelism.data"]', formEl).focus();
}

// --- inference results ---------------------------------------------------------------------------------

function renderInference() {
  const { estimate: e } = state.inference;
  const memory = e.memory || {};
  const latency = e.latency || {};
  const cost = e.cost || {};
  const throughput = e.throughput || {};
  const tokens = throughput.output_tokens_per_second ?? null;
  const runs = memory.fits;
  const spans = runs === false ? {} : e.intervals || {};
  const summary = section("r.result",
    h("dl", { class: "cards" },
      card(t("r.memory"), memoryFigure(memory), memory.human?.headroom ? t("r.headroom", { v: memory.human.headroom }) : null, fitsBadge(memory.fits)),
      card(t("r.devices_to_fit"), e.devices_needed?.to_fit != null ? number(e.devices_needed.to_fit) : "—", e.hardware ? `${e.hardware.count}× ${e.hardware.name || e.hardware.accelerator}` : null),
      card(t("r.ttft"), ifRuns(runs, latency.human?.time_to_first_token), [runs !== false && latency.bound?.prefill ? t("r.bound", { b: boundText(latency.bound.prefill) }) : null, intervalNote(spans.latency?.time_to_first_token_s, duration)]),
      card(t("r.tpot"), ifRuns(runs, latency.human?.time_per_output_token), [runs !== false && latency.bound?.decode ? t("r.bound", { b: boundText(latency.bound.decode) }) : null, intervalNote(spans.latency?.time_per_output_token_s, ms)]),
      card(t("r.end_to_end"), ifRuns(runs, latency.human?.end_to_end), null),
      card(tokens != null ? t("r.tokens_per_s") : t("r.samples_per_s"), ifRuns(runs, number(tokens ?? throughput.samples_per_second)), runs !== false && throughput.requests_per_second ? t("r.rps", { n: number(throughput.requests_per_second) }) : null),
      card(t("r.usd_per_hour"), headlineUsd(cost.usd_per_hour), [priceNote(cost.price_source, null), intervalNote(spans.cost?.usd_per_hour, usd)]),
      card(cost.usd_per_million_output_tokens != null ? t("r.usd_per_million") : t("r.usd_per_million_samples"), ifRuns(runs, usd(cost.usd_per_million_output_tokens ?? cost.usd_per_million_samples)), runs !== false && cost.usd_per_million_input_tokens != null ? t("r.usd_per_million_input", { v: usd(cost.usd_per_million_input_tokens) }) : null)),
    priceLine(cost.price_source),
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
      suggestionsView.suggestionTable()));
  }
  parts.push(recommendationsSection("inference", e.recommendations));
  const details = detailsSection(e.details, e);
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

/** The serving planner's "Open as estimate": the deployment's estimate body in the Inference view, estimated. */
async function openInferenceEstimate(request) {
  fillRequest("inference", request);
  showView("inference");
  if (await runEstimate("inference", request)) $("#inference-results h3")?.focus();
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

/** A shared link's requests: filled in and asked again, so the link reopens the same answer. */
async function restoreShared(shared) {
  const runs = [];
  for (const kind of ["training", "inference"]) {
    if (!shared[kind]) continue;
    fillRequest(kind, shared[kind]);
    runs.push(runEstimate(kind, shared[kind]));
  }
  if (shared.plan_training || shared.plan_serving) runs.push(loadPlanner().then((planner) => planner.restore(shared)));
  await Promise.all(runs);
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
  for (const kind of ["training", "inference"]) {
    bindLive($(`#${kind}-form`), () => state[kind], (request, scenario) => runEstimate(kind, request, { scenario, live: true }));
  }
  scenarios.init({
    state, renderTraining, renderInference, fillRequest, showView, toast, problemBox, accName, card, loadAdmin: admin.loadAdmin,
    onFilter: () => share({ ...scenarios.listing.filter, compare: null }),
    onCompare: (ids) => share({ compare: ids }),
    compareExtras: (rows) => exportButtons(() => ({ name: "scalecost-compare", csv: () => toCsv(rows), json: () => rows }), t("export.label", { what: t("scenarios.pick") })),
  });
  admin.init({ state, problemBox, toast, accName, refreshProviders });
  suggestionsView.init({ state, accName, applyRecommendation });
  bindFaq({ bytes, problemBox });
  scenarios.updateKeyState();
  const shared = readShared(location.search);
  if (shared.filter) scenarios.setFilter(shared.filter);
  if (shared.compare) scenarios.listing.pendingCompare = shared.compare;
  const view = location.hash.slice(1);
  showView(VIEWS.includes(view) ? view : "training");
  await loadCatalog();
  if (choicesError) $("#training-results").replaceChildren(problemBox(choicesError));
  if (shared.accelerator && state.byId[shared.accelerator]) $("#admin-accelerator").value = shared.accelerator;
  if (!$("#view-admin").hidden) admin.loadAdmin($("#admin-accelerator").value);
  await restoreShared(shared);
  await plannerState.load; // opened on the Planner: its forms are there before the page says it is ready
  document.body.dataset.ready = "true";
}

boot();
