// The serving planner (POST /v1/plans/inference): the cheapest deployment under latency targets, its search
// controls (KV-cache precisions, engines, weight precisions, devices per replica, batch, replicas, utilization),
// the deployments table (TPOT in ms, stale prices marked), "Open as estimate", and nearest misses said in the page's
// language from their figures.
import { ApiError, call } from "./api.js";
import { announce } from "./dom.js";
import { ms, priceLine } from "./doubt.js";
import * as forms from "./forms.js";
import { number, t, usd } from "./i18n.js";
import { $, checks, checked, clearOwnErrors, ctx, field, input, missesSection, numberOrText, plan, section, select, showOwnErrors, tableOf } from "./plankit.js";
import { planExport } from "./exporting.js";
import { share } from "./share.js";

export function buildServingForm() {
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
      field("serve-output", t("planner.output_tokens"), input({ value: "256", inputmode: "numeric" })))),
    servingSearchControls());
  if (plan.presets) forms.setOptions(formEl, "presets", plan.presets);
}

/** The serving search's own controls (POST /v1/plans/inference `search`), their values from GET /v1/options:
 * none checked searches everything the API defaults to. */
function servingSearchControls() {
  const { h } = ctx;
  const none = () => false;
  return h("fieldset", { id: "serve-search" }, h("legend", {}, t("planner.search")),
    checks("serve-kv", t("planner.kv_precisions"), forms.choicesOf("inference", "kv_cache_precision").map((v) => [v, v]), none),
    checks("serve-engines", t("planner.engines"), forms.choicesOf("inference", "engine").map((v) => [v, v]), none),
    checks("serve-precisions", t("planner.weight_precisions"), forms.choicesOf("inference", "weights.precision").map((v) => [v, v]), none),
    h("p", { class: "hint" }, t("planner.search_defaults_hint")),
    h("div", { class: "grid" },
      field("serve-devices", t("planner.devices_per_replica"), input({ placeholder: "1, 2, 4, 8", inputmode: "text" }), t("planner.devices_per_replica_hint")),
      field("serve-max-batch", t("planner.max_batch"), input({ placeholder: "256", inputmode: "numeric" })),
      field("serve-max-replicas", t("planner.max_replicas"), input({ placeholder: "10000", inputmode: "numeric" })),
      field("serve-utilization", t("planner.max_utilization"), input({ placeholder: "100", inputmode: "decimal" }), t("planner.max_utilization_hint"))));
}

/** The `search` (and slo.max_utilization) the serving controls say. */
function readServingSearch(formEl, body) {
  const search = {};
  const kv = checked(formEl, "serve-kv");
  if (kv.length) search.kv_cache_precisions = kv;
  const engines = checked(formEl, "serve-engines");
  if (engines.length) search.engines = engines;
  const precisions = checked(formEl, "serve-precisions");
  if (precisions.length) search.formats = precisions.map((precision) => ({ precision }));
  const devices = $("#serve-devices").value.trim();
  if (devices) search.devices_per_replica = devices.split(/[\s;]+|,\s*/).filter(Boolean).map((v) => numberOrText(v));
  const batch = $("#serve-max-batch").value.trim();
  if (batch) search.max_batch_size = numberOrText(batch);
  const replicas = $("#serve-max-replicas").value.trim();
  if (replicas) search.max_replicas = numberOrText(replicas);
  if (Object.keys(search).length) body.search = search;
  const utilization = numberOrText($("#serve-utilization").value.trim());
  if (typeof utilization === "number") body.slo.max_utilization = Number((utilization / 100).toPrecision(12));
  else if (utilization) body.slo.max_utilization = utilization;
}

const SERVING_ERROR_FIELDS = {
  "slo.time_to_first_token_s": "serve-ttft",
  "slo.time_per_output_token_s": "serve-tpot",
  "workload.requests_per_second": "serve-demand",
  "workload.output_tokens_per_second": "serve-demand",
  "workload.prompt_tokens": "serve-prompt",
  "workload.output_tokens": "serve-output",
  "slo.max_utilization": "serve-utilization",
  "search.kv_cache_precisions": "serve-kv-set",
  "search.engines": "serve-engines-set",
  "search.formats": "serve-precisions-set",
  "search.devices_per_replica": "serve-devices",
  "search.max_batch_size": "serve-max-batch",
  "search.max_replicas": "serve-max-replicas",
};

export async function submitServing() {
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
  readServingSearch(formEl, body);
  await runServing(body);
}

/** Ask for a serving plan with `body` (the form's, or a shared link's) and show it. */
async function runServing(body) {
  const formEl = $("#plan-serving-form");
  const out = $("#plan-serving-results");
  const button = $('button[type="submit"]', formEl);
  button.disabled = true;
  out.setAttribute("aria-busy", "true");
  out.replaceChildren(ctx.h("p", { class: "hint" }, t("planner.searching")));
  try {
    const { data } = await call("POST", "v1/plans/inference", { body });
    plan.serving = { request: body, answer: data };
    share({ plan_serving: body });
    renderServing();
    announce(data.plan ? `${t("planner.serving_best")}: ${$("#plan-serving-results p").textContent}` : t("planner.nothing"));
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

/** A shared serving plan request back in the form (to edit), then asked again. */
export function restoreServing(body) {
  const formEl = $("#plan-serving-form");
  forms.fillForm(formEl, body);
  const text = (v) => (v === undefined || v === null ? "" : Array.isArray(v) ? v.join(", ") : String(v));
  const slo = body.slo || {};
  const work = body.workload || {};
  const search = body.search || {};
  $("#serve-ttft").value = text(slo.time_to_first_token_s);
  $("#serve-tpot").value = text(slo.time_per_output_token_s);
  const demand = work.output_tokens_per_second !== undefined ? "output_tokens_per_second" : "requests_per_second";
  $("#serve-demand-kind").value = demand;
  $("#serve-demand").value = text(work[demand]);
  $("#serve-prompt").value = text(work.prompt_tokens);
  $("#serve-output").value = text(work.output_tokens);
  const ticked = { "serve-kv": search.kv_cache_precisions, "serve-engines": search.engines, "serve-precisions": (search.formats || []).map((f) => f.precision) };
  for (const [name, values] of Object.entries(ticked)) {
    for (const box of formEl.querySelectorAll(`input[name="${name}"]`)) box.checked = (values || []).includes(box.value);
  }
  $("#serve-devices").value = text(search.devices_per_replica);
  $("#serve-max-batch").value = text(search.max_batch_size);
  $("#serve-max-replicas").value = text(search.max_replicas);
  $("#serve-utilization").value = typeof slo.max_utilization === "number" ? String(Number((slo.max_utilization * 100).toPrecision(12))) : text(slo.max_utilization);
  return runServing(body);
}

// Latencies at the percentile the plan held its objectives at (slo.percentile), the p50 scalars for static batches
function deploymentRows(deployments, chosen, pct) {
  const s = (v) => (Number.isFinite(v) ? t("unit.seconds", { n: number(v, { maximumSignificantDigits: 3 }) }) : "—");
  const at = (d, metric) => d.latency?.percentiles?.[metric]?.[pct] ?? d.latency?.[metric];
  const head = (label) => (pct ? t("planner.at_percentile", { metric: label, p: pct }) : label);
  return tableOf(t("planner.serving_results"), [
    [t("planner.col.accelerator")], [t("planner.col.provider")], [t("planner.col.engine")], [t("planner.col.format")], [t("planner.col.kv")],
    [t("planner.col.devices_per_replica"), true], [t("planner.col.replicas"), true], [t("planner.col.batch"), true],
    [head(t("planner.ttft")), true], [head(t("planner.tpot")), true], [t("planner.col.usd_hour"), true],
    [t("planner.col.usd_m_input"), true], [t("planner.col.usd_m_output"), true],
  ], deployments.map((d) => ({
    current: chosen && d === chosen,
    cells: [d.name || ctx.accName(d.accelerator), d.provider, d.engine, d.weights?.format || d.weights?.precision || "—", d.kv_cache_precision || "—",
      number(d.devices_per_replica, { maximumSignificantDigits: 21 }), number(d.replicas, { maximumSignificantDigits: 21 }),
      number(d.batch_size, { maximumSignificantDigits: 21 }), s(at(d, "time_to_first_token_s")), ms(at(d, "time_per_output_token_s")),
      [usd(d.cost?.usd_per_hour), d.cost?.price_source?.stale ? [" ", ctx.h("span", { class: "badge warning stale", title: d.cost.price_source.note || null }, t("price.stale"))] : null],
      usd(d.cost?.usd_per_million_input_tokens, 4), usd(d.cost?.usd_per_million_output_tokens, 4)],
  })), { id: "serving-plan-table" });
}

export function renderServing() {
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
    })), priceLine(a.plan.cost?.price_source),
    ctx.h("div", { class: "actions" }, ctx.h("button", { type: "button", class: "primary", id: "serve-open-estimate",
      onclick: () => ctx.openInference(a.plan.estimate_request) }, t("planner.open_estimate"))),
    planExport("scalecost-serving-plan", rows, t("export.label", { what: t("planner.serving_results") })),
    deploymentRows(rows, a.plan, a.slo?.percentile)));
  } else {
    parts.push(missesSection((a.nearest_misses || []).map((m) => ({ ...m, message: servingMiss(m) })),
      (p, id) => ctx.h("button", { type: "button", class: "small", "aria-describedby": id, onclick: () => ctx.openInference(p.estimate_request) }, t("planner.open")),
      (m) => m.deployment, "serve-miss"));
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

export async function probeServing() {
  try {
    const response = await fetch("v1/plans/inference", { method: "OPTIONS", credentials: "omit" });
    setServingAvailable(!(response.status === 404 || response.status === 405));
  } catch {
    setServingAvailable(false);
  }
}

function servingMiss(m) {
  const d = m.deployment;
  if (!d) return m.message;
  const where = t("planner.smiss.where", {
    devices: number(d.devices_per_replica, { maximumFractionDigits: 0 }), name: d.name || ctx.accName(d.accelerator),
    engine: d.engine, format: d.weights?.format || d.weights?.precision || "", batch: number(d.batch_size, { maximumFractionDigits: 0 }),
  });
  const slo = plan.serving?.answer?.slo || plan.serving?.request?.slo || {};
  const sec = (v) => t("unit.seconds", { n: number(v, { maximumSignificantDigits: 3 }) });
  const vars = { where, hour: usd(d.cost?.usd_per_hour), replicas: number(m.value, { maximumFractionDigits: 0 }) };
  switch (m.objective) {
    case "time_to_first_token_s": return t("planner.smiss.ttft", { ...vars, value: sec(m.value), slo: sec(slo.time_to_first_token_s) });
    case "time_per_output_token_s": return t("planner.smiss.tpot", { ...vars, value: ms(m.value), slo: ms(slo.time_per_output_token_s) });
    case "cheapest_meeting_ttft": return t("planner.smiss.cheapest_ttft", { ...vars, value: ms(m.value) });
    case "cheapest_meeting_tpot": return t("planner.smiss.cheapest_tpot", { ...vars, value: sec(m.value) });
    case "replicas": return t("planner.smiss.replicas", vars);
    default: return m.message;
  }
}
