// Hand-written SVG charts (no library): a stacked bar against a capacity, a line over categories and
// horizontal bars. Each is drawn at its container's width and redrawn when the window is resized; every mark
// carries a <title>, and the figure an aria-label that says what the chart shows in words. Points and bars say
// their values under the chart on hover and on keyboard focus (Tab to the chart, arrows between marks); every
// chart downloads as SVG or PNG.
import { download, fileName, savePng, svgFile } from "./exporting.js";
import { t } from "./i18n.js";

const NS = "http://www.w3.org/2000/svg";
export const COLORS = ["#0b5cad", "#c8501e", "#1e7b3c", "#7d3c98", "#8a6d00", "#4f5b66"];

function svgEl(name, attrs = {}, parent) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, content, attrs = {}) {
  const node = svgEl("text", { x, y, "font-size": 12, fill: "#1a1d21", ...attrs }, parent);
  node.textContent = content;
  return node;
}

function titled(node, content) {
  svgEl("title", {}, node).textContent = content;
  return node;
}

/** Round tick values from 0 to at least `max`. */
export function ticks(max, count = 4) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  const out = [];
  for (let v = 0; v <= max + step * 0.999; v += step) out.push(v);
  return out;
}

function figure(caption, label, draw) {
  const fig = document.createElement("figure");
  fig.className = "chart";
  const cap = document.createElement("figcaption");
  cap.textContent = caption;
  fig.appendChild(cap);
  const plot = document.createElement("div");
  plot.className = "plot";
  fig.appendChild(plot);
  fig.drawChart = () => {
    const width = Math.max(260, Math.floor(plot.clientWidth || fig.clientWidth || 560));
    const svg = svgEl("svg", { role: "img", "aria-label": label, xmlns: NS });
    draw(svg, width);
    plot.replaceChildren(svg);
    bindReadout(fig, svg);
  };
  chartTools(fig, caption);
  return fig;
}

/** Under a chart: the line that says the value of the mark pointed at or focused, and "Download SVG". */
export function chartTools(fig, caption) {
  const readout = document.createElement("p");
  readout.className = "hint readout";
  readout.setAttribute("aria-live", "polite");
  // one button per file kind (class download-<kind>); the dictionary keys stay literal for the unused-key test
  const saver = (kind, label, name, save) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `small download-${kind}`;
    b.textContent = t(label);
    b.setAttribute("aria-label", t(name, { chart: caption }));
    b.addEventListener("click", () => {
      const svg = fig.querySelector(".plot svg");
      if (svg) save(svg, `${fileName(caption)}.${kind}`);
    });
    return b;
  };
  const button = saver("svg", "chart.download_svg", "chart.download_svg_label",
    (svg, file) => download(file, "image/svg+xml", svgFile(svg)));
  const png = saver("png", "chart.download_png", "chart.download_png_label", savePng);
  const tools = document.createElement("div");
  tools.className = "actions chart-tools";
  tools.append(button, png);
  fig.querySelector(".plot").after(readout);
  fig.append(tools);
}

/** Marks with data-say: one tab stop for the chart, arrow keys from mark to mark, the values said on hover and
 * focus in the readout line (and as each mark's accessible name). The svg becomes a labelled group. */
export function bindReadout(fig, svg) {
  const readout = fig.querySelector(".readout");
  const marks = [...svg.querySelectorAll("[data-say]")];
  if (!marks.length || !readout) return;
  svg.setAttribute("role", "group");
  const show = (mark) => {
    for (const other of marks) other.classList.toggle("active", other === mark);
    readout.textContent = mark.dataset.say;
  };
  marks.forEach((mark, i) => {
    mark.setAttribute("tabindex", i === 0 ? "0" : "-1");
    mark.setAttribute("role", "img");
    mark.setAttribute("aria-label", mark.dataset.say);
    mark.addEventListener("mouseenter", () => show(mark));
    mark.addEventListener("focus", () => {
      for (const other of marks) other.setAttribute("tabindex", other === mark ? "0" : "-1");
      show(mark);
    });
    mark.addEventListener("keydown", (event) => {
      const next = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: marks.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      marks[Math.min(marks.length - 1, Math.max(0, next))].focus();
    });
  });
}

function legend(items) {
  const list = document.createElement("ul");
  list.className = "legend";
  for (const { label, color, value } of items) {
    const li = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = color;
    li.append(swatch, value ? `${label}: ${value}` : label);
    list.appendChild(li);
  }
  return list;
}

/** Draw (or redraw) every chart inside `root`, at its current width. */
export function drawCharts(root = document) {
  for (const fig of root.querySelectorAll("figure.chart")) if (fig.drawChart) fig.drawChart();
}

let resizeTimer;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => drawCharts(document), 150);
});

/**
 * One horizontal bar made of `parts` ({label, value, human}) with the capacity marked.
 * fmt formats an axis value; ticks fall on round multiples of `unit` (e.g. 2^30 for bytes).
 */
export function stackedBar({ caption, label, parts, capacity, capacityLabel, fmt, unit = 1 }) {
  const shown = parts.filter((p) => p.value > 0).map((p, i) => ({ ...p, color: COLORS[i % COLORS.length] }));
  const total = shown.reduce((s, p) => s + p.value, 0);
  const fig = figure(caption, label, (svg, width) => {
    const height = 96;
    const left = 8;
    const right = 16;
    const top = 26;
    const barH = 34;
    const axis = ticks((Math.max(total, capacity || 0) * 1.04) / unit, width < 420 ? 3 : 5).map((v) => v * unit);
    const max = axis[axis.length - 1];
    const x = (v) => left + ((width - left - right) * v) / max;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    for (const v of axis) {
      svgEl("line", { x1: x(v), x2: x(v), y1: top - 4, y2: top + barH + 4, stroke: "#d5d9df" }, svg);
      const anchor = v === 0 ? "start" : v === max ? "end" : "middle";
      text(svg, x(v), top + barH + 20, fmt(v), { "text-anchor": anchor, fill: "#4a5260" });
    }
    let at = 0;
    shown.forEach((p) => {
      const rect = svgEl("rect", {
        x: x(at), y: top, width: Math.max(1, x(at + p.value) - x(at)), height: barH, fill: p.color,
        class: "bar", "data-part": p.key,
      }, svg);
      titled(rect, `${p.label}: ${p.human}`);
      rect.dataset.say = `${p.label}: ${p.human}`;
      at += p.value;
    });
    if (capacity > 0) {
      const cx = x(capacity);
      svgEl("line", { x1: cx, x2: cx, y1: top - 10, y2: top + barH + 6, stroke: "#1a1d21", "stroke-width": 2,
        "stroke-dasharray": "5 3", class: "capacity" }, svg);
      const anchor = cx > width * 0.7 ? "end" : cx < width * 0.3 ? "start" : "middle";
      text(svg, cx, top - 13, capacityLabel, { "text-anchor": anchor, "font-weight": 600 });
    }
  });
  fig.appendChild(legend(shown.map((p) => ({ label: p.label, color: p.color, value: p.human }))));
  return fig;
}

/**
 * A line over categories (device counts): points {x, y, human, fits}; `current` is the x to mark.
 * Points that do not fit are drawn hollow.
 */
export function lineChart({ caption, label, points, current, fmtY, xTitle, color = COLORS[0], legendItems }) {
  const fig = figure(caption, label, (svg, width) => {
    const height = 210;
    const left = 70;
    const right = 14;
    const top = 12;
    const bottom = 44;
    const values = points.map((p) => p.y).filter((v) => Number.isFinite(v));
    const axis = ticks(Math.max(...values, 0) * 1.08, 4);
    const max = axis[axis.length - 1];
    const n = points.length;
    const x = (i) => left + (n === 1 ? (width - left - right) / 2 : ((width - left - right) * i) / (n - 1));
    const y = (v) => top + (height - top - bottom) * (1 - v / max);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    for (const v of axis) {
      svgEl("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: "#e1e4e8" }, svg);
      text(svg, left - 6, y(v) + 4, fmtY(v), { "text-anchor": "end", fill: "#4a5260" });
    }
    points.forEach((p, i) => {
      text(svg, x(i), height - bottom + 16, String(p.x), { "text-anchor": "middle", fill: "#4a5260" });
      if (p.x === current) {
        svgEl("line", { x1: x(i), x2: x(i), y1: top, y2: height - bottom, stroke: "#8a93a0", "stroke-dasharray": "3 3" }, svg);
      }
    });
    text(svg, (left + width - right) / 2, height - 6, xTitle, { "text-anchor": "middle", fill: "#4a5260" });
    const drawn = points.map((p, i) => ({ ...p, i })).filter((p) => Number.isFinite(p.y));
    if (drawn.length > 1) {
      svgEl("polyline", {
        points: drawn.map((p) => `${x(p.i)},${y(p.y)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2.5,
      }, svg);
    }
    for (const p of drawn) {
      const dot = svgEl("circle", {
        cx: x(p.i), cy: y(p.y), r: p.x === current ? 7 : 5, fill: p.fits === false ? "#fff" : color, stroke: color,
        "stroke-width": 2.5, class: "point",
      }, svg);
      titled(dot, `${p.x}: ${p.human}`);
      dot.dataset.say = `${xTitle} ${p.x}: ${p.human}`;
    }
  });
  if (legendItems) fig.appendChild(legend(legendItems));
  return fig;
}

/** Horizontal bars, one per item {label, value, human}; the best `limit` items in the given order. */
export function barChart({ caption, label, items, color = COLORS[0], fmt, limit = 12 }) {
  const rows = items.filter((it) => Number.isFinite(it.value)).slice(0, limit);
  return figure(caption, label, (svg, width) => {
    const rowH = 24;
    const top = 4;
    const labelW = Math.min(170, Math.floor(width * 0.42));
    const right = 74;
    const height = top + rows.length * rowH + 22;
    const axis = ticks(Math.max(...rows.map((r) => r.value), 0) * 1.02, width < 420 ? 3 : 4);
    const max = axis[axis.length - 1];
    const x = (v) => labelW + ((width - labelW - right) * v) / max;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    for (const v of axis) {
      svgEl("line", { x1: x(v), x2: x(v), y1: top, y2: top + rows.length * rowH, stroke: "#e1e4e8" }, svg);
      text(svg, x(v), height - 6, fmt(v), { "text-anchor": "middle", fill: "#4a5260", "font-size": 11 });
    }
    const maxChars = Math.max(6, Math.floor(labelW / 7));
    rows.forEach((r, i) => {
      const yy = top + i * rowH;
      const name = r.label.length > maxChars ? `${r.label.slice(0, maxChars - 1)}…` : r.label;
      text(svg, labelW - 6, yy + 16, name, { "text-anchor": "end" });
      const rect = svgEl("rect", {
        x: labelW, y: yy + 4, width: Math.max(1, x(r.value) - labelW), height: rowH - 8, fill: color, class: "bar",
      }, svg);
      titled(rect, `${r.label}: ${r.human}`);
      rect.dataset.say = `${r.label}: ${r.human}`;
      text(svg, x(r.value) + 4, yy + 16, r.human, { "font-size": 11 });
    });
  });
}
