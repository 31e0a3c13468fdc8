// The training planner's time-vs-cost frontier: a hand-written SVG (log scales, time ticks round in the unit the
// values are read in, the chosen plan marked, deadline and budget dashed) with a table as its text alternative.
import { bindReadout, chartTools } from "./charts.js";
import { t, number, usd } from "./i18n.js";
import { logTicks, timeTicks } from "./numbers.js";
import { ctx, tableOf } from "./plankit.js";

const NS = "http://www.w3.org/2000/svg";

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

export function samePlan(a, b) {
  return a && b && a.accelerator === b.accelerator && a.provider === b.provider && a.count === b.count
    && a.pricing_model === b.pricing_model && a.micro_batch_size === b.micro_batch_size
    && a.activation_recomputation === b.activation_recomputation
    && JSON.stringify(a.parallelism) === JSON.stringify(b.parallelism) && Math.abs(a.seconds - b.seconds) <= 1e-9 * a.seconds
    && Math.abs(a.total_usd - b.total_usd) <= 1e-9 * Math.max(1, a.total_usd);
}

/** Time (x) against total USD (y), both on log scales; `best` ringed; deadline and budget as dashed lines. */
export function frontierChart(points, best, constraints) {
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
    // time ticks round in the unit the values are read in (2 d, 5 d, 10 d; not 2.31 d from round seconds)
    const { unit, ticks: xt } = timeTicks(Math.min(...xs), Math.max(...xs));
    const yt = logTicks(y0, y1);
    const xStep = Math.max(1, Math.ceil(xt.length / (width < 420 ? 3 : 6)));
    xt.forEach((v, i) => {
      svgEl("line", { x1: x(v), x2: x(v), y1: top, y2: height - bottom, stroke: "#e1e4e8" }, svg);
      if (i % xStep === 0) {
        svgText(svg, x(v), height - bottom + 16, t(`unit.${unit.name}`, { n: number(v / unit.size, { maximumSignificantDigits: 3 }) }), { "text-anchor": "middle", class: "tick" });
      }
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
      dot.dataset.say = dot.textContent;
    });
    plot.replaceChildren(svg);
    bindReadout(fig, svg);
  };
  chartTools(fig, title);
  const legend = h("ul", { class: "legend" },
    h("li", {}, h("span", { class: "swatch frontier-line" }), t("planner.chart.frontier")),
    best ? h("li", {}, h("span", { class: "swatch frontier-chosen" }), t("planner.chart.chosen")) : null);
  const fallback = h("details", { class: "more" }, h("summary", {}, t("planner.chart.table")),
    tableOf(title, [[t("planner.col.plan")], [t("planner.col.time"), true], [t("planner.col.cost"), true]],
      shown.map((p) => ({ current: samePlan(p, best), cells: [`${p.count} × ${ctx.accName(p.accelerator)} (${p.provider})`, p.time, p.cost] }))));
  fig.append(legend, fallback);
  return fig;
}
