// Cost and time of the same training job over device counts around an estimate's (one estimate per count, the
// layout rules of the request, no advice): two line charts and their table. Counts that do not fit are listed,
// never drawn or priced.
import { call } from "./api.js";
import { COLORS, drawCharts, lineChart } from "./charts.js";
import { h } from "./dom.js";
import { fitsBadge, ifRuns } from "./doubt.js";
import { number, t, usd } from "./i18n.js";

const $ = (selector, root = document) => root.querySelector(selector);
const MAX_DEVICES = 1_000_000;

function sweepCounts(count) {
  const counts = new Set([count]);
  const low = Math.max(0, Math.floor(Math.log2(count)) - 3);
  for (let k = low; k <= low + 6; k++) if (2 ** k <= MAX_DEVICES) counts.add(2 ** k);
  return [...counts].sort((a, b) => a - b);
}

function sweepRequest(request, n) {
  const body = structuredClone(request);
  body.hardware = { ...body.hardware, count: n };
  delete body.constraints; // a deadline only goes with count "auto"
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
const held = { sweep: null }; // {count, results}: the last sweep, for sweepContent()
/** Cost and time at other device counts around this estimate's (the count the API chose when it was "auto"). */
export async function sweep(request, estimate) {
  const generation = ++sweepGeneration;
  const given = Number(request.hardware?.count);
  const count = Number.isInteger(given) ? given : Number(estimate?.assumptions?.auto?.chosen_count);
  if (!Number.isInteger(count) || count < 1) {
    held.sweep = { count: null, results: [] };
    return;
  }
  held.sweep = { count, results: null };
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
  held.sweep = { count, results };
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

export function sweepContent() {
  const sweepState = held.sweep;
  if (!sweepState || !sweepState.results) return h("p", { class: "busy" }, t("chart.sweep_busy"));
  const ok = sweepState.results.filter((r) => r.estimate && r.estimate.memory?.fits !== false);
  if (ok.length < 2) return h("p", {}, t("chart.sweep_none"));
  const points = sweepState.results.map((r) => ({ x: r.n, e: r.estimate }));
  const [unitKey, unitSize] = timeUnit(Math.max(...ok.map((r) => r.estimate.time?.seconds || 0)));
  const legendItems = [{ label: t("chart.fits_filled"), color: COLORS[0] }];
  const costChart = lineChart({
    caption: t("chart.cost_by_count"),
    label: t("chart.cost_by_count_label", { points: ok.map((r) => `${r.n}: ${r.estimate.cost?.human?.total}`).join(", ") }),
    points: points.map((p) => ({ x: p.x, y: p.e && p.e.memory?.fits !== false ? p.e.cost?.total_usd : NaN, human: p.e?.cost?.human?.total, fits: p.e?.memory?.fits })),
    current: sweepState.count,
    fmtY: (v) => usd(v, 0),
    xTitle: t("chart.devices"),
    color: COLORS[0],
    legendItems,
  });
  const timeChart = lineChart({
    caption: t("chart.time_by_count"),
    label: t("chart.time_by_count_label", { points: ok.map((r) => `${r.n}: ${r.estimate.time?.human}`).join(", ") }),
    points: points.map((p) => ({ x: p.x, y: p.e && p.e.memory?.fits !== false ? (p.e.time?.seconds || 0) / unitSize : NaN, human: p.e?.time?.human, fits: p.e?.memory?.fits })),
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
      h("td", { class: "num" }, r.estimate ? ifRuns(r.estimate.memory?.fits, r.estimate.cost?.human?.total) : t("chart.not_possible")),
      h("td", { class: "num" }, r.estimate ? ifRuns(r.estimate.memory?.fits, r.estimate.time?.human || "") : ""),
      h("td", {}, r.estimate ? [r.estimate.memory?.human?.per_device, " ", fitsBadge(r.estimate.memory?.fits)] : "")))))));
  return h("div", {}, h("div", { class: "charts-row" }, costChart, timeChart), h("p", { class: "hint" }, t("chart.sweep_hint")), table);
}
