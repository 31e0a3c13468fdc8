// Results, plans and tables as files: CSV (RFC 4180, one header row) and JSON, made in the page and saved by the
// browser (a blob: link, nothing sent anywhere); charts as SVG.
import { h } from "./dom.js";
import { t } from "./i18n.js";

/** A cell as CSV writes it: quoted when it holds a comma, quote or line break; formulas defused. */
export function csvCell(value) {
  if (value === null || value === undefined) return "";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^-?\d/.test(text)) text = `'${text}`; // a spreadsheet would run it
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Objects as CSV: columns are `columns`, or every key met (in first-seen order). */
export function toCsv(rows, columns = null) {
  const keys = columns || [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const lines = [keys.map(csvCell).join(","), ...rows.map((r) => keys.map((k) => csvCell(r[k])).join(","))];
  return `${lines.join("\r\n")}\r\n`;
}

/** A nested answer as dotted paths and leaf values ({a: {b: 1}, c: [2]} → a.b=1, c.0=2), objects in order. */
export function flatten(value, prefix = "", out = {}) {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    if (!entries.length && prefix) out[prefix] = Array.isArray(value) ? "[]" : "{}";
    for (const [key, inner] of entries) flatten(inner, prefix ? `${prefix}.${key}` : key, out);
  } else if (prefix) {
    out[prefix] = value;
  }
  return out;
}

/** An answer as a two-column CSV: field (dotted path), value. */
export function answerCsv(answer) {
  return toCsv(Object.entries(flatten(answer)).map(([field, value]) => ({ field, value })), ["field", "value"]);
}

/** Save `content` (text or a Blob) as a file called `name`. */
export function download(name, type, content) {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** "Download CSV" and "Download JSON" buttons for what `get()` returns: {name, csv: () => text, json: () => value}. */
export function exportButtons(get, label) {
  const save = (kind) => {
    const { name, csv, json } = get();
    if (kind === "csv") download(`${name}.csv`, "text/csv;charset=utf-8", csv());
    else download(`${name}.json`, "application/json", `${JSON.stringify(json(), null, 2)}\n`);
  };
  return h("div", { class: "actions export", role: "group", "aria-label": label },
    h("button", { type: "button", class: "small export-csv", onclick: () => save("csv") }, t("export.csv")),
    h("button", { type: "button", class: "small export-json", onclick: () => save("json") }, t("export.json")));
}

/** Plans or deployments as flat rows (their estimate request left out: it is in the JSON). */
export function planRows(rows) {
  return rows.map((r) => {
    const { estimate_request: _request, ...rest } = r;
    return flatten(rest);
  });
}

/** Buttons exporting plan rows: CSV of planRows, JSON of the rows whole. */
export function planExport(name, rows, label) {
  return exportButtons(() => ({ name, csv: () => toCsv(planRows(rows)), json: () => rows }), label);
}

/** A chart's SVG as a standalone file (its own namespace and font), named after the chart. */
export function svgFile(svg) {
  const copy = svg.cloneNode(true);
  copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  copy.setAttribute("font-family", "system-ui, sans-serif");
  for (const node of copy.querySelectorAll("[tabindex]")) node.removeAttribute("tabindex");
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}\n`;
}

/** A chart as PNG at twice its size on white: the SVG drawn on a canvas (through a data: image, which the page's
 * CSP allows), then saved. */
export function savePng(svg, name) {
  const width = Number(svg.getAttribute("width")) || 560;
  const height = Number(svg.getAttribute("height")) || 300;
  const image = new Image();
  image.addEventListener("load", () => {
    const scale = 2;
    const canvas = document.createElement("canvas");
    canvas.width = width * scale;
    canvas.height = height * scale;
    const g = canvas.getContext("2d");
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.scale(scale, scale);
    g.drawImage(image, 0, 0, width, height);
    canvas.toBlob((blob) => blob && download(name, "image/png", blob), "image/png");
  });
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgFile(svg))}`;
}

/** A file name from a title: letters, digits and dashes. */
export function fileName(title) {
  return (title || "chart").normalize("NFKD").replace(/[^\w\s-]/g, "").trim().replace(/\s+/g, "-").toLowerCase().slice(0, 60) || "chart";
}
