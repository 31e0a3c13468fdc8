// The Planner view: a training plan under a deadline, a budget and a device cap (POST /v1/plans/training), the
// frontier drawn by frontier.js, and the serving planner of serving.js beside it.
// app.js calls init() once with the helpers it shares, catalog() when the catalog is loaded, and
// retranslate() when the language changes.
import { ApiError, call } from "./api.js";
import { announce } from "./dom.js";
import { priceLine, priceNote } from "./doubt.js";
import { planExport } from "./exporting.js";
import * as forms from "./forms.js";
import { frontierChart, samePlan } from "./frontier.js";
import { compact, duration, number, t, usd } from "./i18n.js";
import { $, card, checked, checks, clearOwnErrors, ctx, deadlineValue, field, input, layout, missesSection, numberOrText, percent, plan, recomputation, section, select, showOwnErrors, tableOf } from "./plankit.js";
import { deadlineText } from "./numbers.js";
import { buildServingForm, probeServing, renderServing, restoreServing, submitServing } from "./serving.js";
import { share } from "./share.js";

const TRAINING_FIELDS = ["training.tokens", "training.global_batch_size", "training.sequence_length", "training.precision"];

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
  await runTraining(body);
}

/** Ask for a training plan with `body` (the form's, or a shared link's) and show it. */
async function runTraining(body) {
  const formEl = $("#plan-training-form");
  const out = $("#plan-training-results");
  const button = $('button[type="submit"]', formEl);
  button.disabled = true;
  out.setAttribute("aria-busy", "true");
  out.replaceChildren(ctx.h("p", { class: "hint" }, t("planner.searching")));
  try {
    const { data } = await call("POST", "v1/plans/training", { body });
    plan.training = { request: body, answer: data };
    share({ plan_training: body });
    renderTraining();
    announce(data.best ? `${t("planner.best")}: ${data.best.count} × ${ctx.accName(data.best.accelerator)}, ${data.best.time}, ${data.best.cost}` : t("planner.nothing"));
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

/** A shared training plan request back in the form (to edit), then asked again. */
function fillTraining(body) {
  const formEl = $("#plan-training-form");
  forms.fillForm(formEl, body);
  const c = body.constraints || {};
  $("#plan-deadline").value = deadlineText(c.deadline);
  $("#plan-budget").value = c.budget_usd ?? "";
  $("#plan-max-devices").value = c.max_devices ?? "";
  if (body.objective) $("#plan-objective").value = body.objective;
  const accs = body.search?.accelerators;
  for (const o of $("#plan-accelerators").options) o.selected = !accs || accs.includes(o.value);
  for (const o of $("#plan-providers").options) o.selected = (body.search?.providers || []).includes(o.value);
  const pricing = body.search?.pricing_models || ["on-demand"];
  for (const box of formEl.querySelectorAll('input[name="plan-pricing"]')) box.checked = pricing.includes(box.value);
}

/** The planner requests of a shared link (?plan_training=…, ?plan_serving=…): filled in and asked again. */
export async function restore(shared) {
  const runs = [];
  if (shared.plan_training) {
    fillTraining(shared.plan_training);
    runs.push(runTraining(shared.plan_training));
  }
  if (shared.plan_serving) runs.push(restoreServing(shared.plan_serving));
  await Promise.all(runs);
}

function bestSection(best) {
  const { h } = ctx;
  const fits = best.memory_per_device_bytes <= best.memory_capacity_bytes;
  const share = best.memory_capacity_bytes ? best.memory_per_device_bytes / best.memory_capacity_bytes : NaN;
  return h("section", { id: "plan-best" },
    h("h3", { tabindex: "-1" }, t("planner.best")),
    h("dl", { class: "cards" },
      card(t("planner.col.accelerator"), ctx.accName(best.accelerator), best.accelerator),
      card(t("planner.col.provider"), best.provider, best.estimate?.cost?.price_source
        ? priceNote(best.estimate.cost.price_source, best.usd_per_accelerator_hour)
        : `${best.pricing_model} · ${usd(best.usd_per_accelerator_hour)}/h`),
      card(t("planner.col.count"), number(best.count, { maximumSignificantDigits: 21 })),
      card(t("planner.col.layout"), layout(best)),
      card(t("planner.col.micro_batch"), number(best.micro_batch_size, { maximumSignificantDigits: 21 }), recomputation(best.activation_recomputation)),
      card(t("planner.col.time"), best.time, duration(best.seconds)),
      card(t("planner.col.cost"), best.cost, t("planner.accelerator_hours", { n: compact(best.accelerator_hours) })),
      card(t("planner.col.memory"), best.memory_per_device,
        t("planner.of_capacity", { capacity: ctx.bytes(best.memory_capacity_bytes), share: percent(share) }),
        h("span", { class: `badge ${fits ? "ok" : "bad"}` }, fits ? t("r.fits") : t("r.does_not_fit"))),
      card(t("planner.col.utilization"), percent(best.utilization), t("planner.mfu"))),
    priceLine(best.estimate?.cost?.price_source),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", id: "plan-open-estimate", onclick: () => ctx.openTraining(best.estimate_request) }, t("planner.open_estimate")),
      h("span", { class: "hint" }, t("planner.open_estimate_hint"))));
}

/** The plans as the table says them, each said once: plans whose every shown cell is the same (the search can
 * return the same plan under two ids) are one row. */
function distinctPlans(rows) {
  const seen = new Set();
  return rows.filter((p) => {
    const key = JSON.stringify([p.accelerator, p.count, p.time, p.cost, p.memory_per_device, p.utilization, p.provider,
      p.pricing_model, layout(p), p.micro_batch_size, p.activation_recomputation]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function resultsTable(rows, best) {
  // the figures people compare first, then how the plan is laid out
  return tableOf(t("planner.results"), [
    [t("planner.col.accelerator")], [t("planner.col.count"), true], [t("planner.col.time"), true], [t("planner.col.cost"), true],
    [t("planner.col.memory"), true], [t("planner.col.utilization"), true], [t("planner.col.provider"), false, "nowrap"],
    [t("planner.col.layout"), false, "nowrap"], [t("planner.col.micro_batch"), true], [t("planner.col.recomputation")], [""],
  ], distinctPlans(rows).map((p) => ({
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

function renderTraining() {
  const out = $("#plan-training-results");
  if (!plan.training) return;
  const a = plan.training.answer;
  const parts = [];
  if (a.best) {
    parts.push(bestSection(a.best));
    if ((a.frontier || []).length || a.best) parts.push(ctx.h("section", {}, frontierChart(a.frontier || [], a.best, a.constraints)));
    parts.push(section(t("planner.results"), planExport("scalecost-training-plans", a.results || [], t("export.label", { what: t("planner.results") })), resultsTable(a.results || [], a.best)));
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

export async function retranslate() {
  const keep = {};
  for (const id of ["plan-deadline", "plan-budget", "plan-max-devices", "plan-objective", "serve-ttft", "serve-tpot", "serve-demand-kind",
    "serve-demand", "serve-prompt", "serve-output", "serve-devices", "serve-max-batch", "serve-max-replicas", "serve-utilization"]) {
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
  const boxes = Object.fromEntries(["serve-kv", "serve-engines", "serve-precisions"].map((n) => [n, checked($("#plan-serving-form"), n)]));
  buildTrainingForm();
  buildServingForm();
  forms.fillForm($("#plan-training-form"), trainingRequest);
  forms.fillForm($("#plan-serving-form"), servingRequest);
  for (const [id, value] of Object.entries(keep)) if (value !== undefined && $(`#${id}`)) $(`#${id}`).value = value;
  for (const o of $("#plan-accelerators").options) o.selected = accs.includes(o.value);
  for (const o of $("#plan-providers").options) o.selected = provs.includes(o.value);
  for (const c of document.querySelectorAll('input[name="plan-pricing"]')) c.checked = pricing.includes(c.value);
  for (const [name, values] of Object.entries(boxes)) for (const c of document.querySelectorAll(`input[name="${name}"]`)) c.checked = values.includes(c.value);
  probeServing();
  renderTraining(); // at once with the page's words in the new language, then with the service's
  renderServing();
  // the answers' sentences, durations and money come from the service: asked again in the new language
  await Promise.all([askAgain("training", "v1/plans/training", renderTraining), askAgain("serving", "v1/plans/inference", renderServing)]);
}

async function askAgain(kind, path, render) {
  const held = plan[kind];
  if (!held) return;
  try {
    const { data } = await call("POST", path, { body: held.request });
    if (plan[kind] === held) plan[kind] = { request: held.request, answer: data };
  } catch {
    /* the answer in the former language stays */
  }
  render();
}
