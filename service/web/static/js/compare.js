// The Scenarios view's side-by-side table: POST /v1/scenarios/compare over the ticked scenarios (any page of the
// listing), the API's cheapest training scenario marked. scenarios.js calls compare() with what it shares.
import { call } from "./api.js";
import { h } from "./dom.js";
import { fitsBadge, ifRuns } from "./doubt.js";
import { duration, number, t, usd } from "./i18n.js";
import { usdDigits } from "./numbers.js";

const $ = (selector, root = document) => root.querySelector(selector);

/** The compare answer as table rows (one per scenario, in the order asked): pure, for the export too. */
export function compareRows(answer, accName = (id) => id) {
  return (answer?.scenarios || []).map((s) => ({
    id: s.id,
    name: s.name,
    kind: s.kind,
    hardware: s.accelerator ? `${s.count ?? ""}× ${accName(s.accelerator)}` : "—",
    fits: s.fits,
    total_usd: s.total_usd ?? null,
    seconds: s.seconds ?? null,
    accelerator_hours: s.accelerator_hours ?? null,
    usd_per_hour: s.usd_per_hour ?? null,
    usd_per_million_output_tokens: s.usd_per_million_output_tokens ?? null,
    output_tokens_per_second: s.output_tokens_per_second ?? null,
    cheapest: answer.cheapest_id != null && s.id === answer.cheapest_id,
  }));
}

const COLUMNS = [
  ["scenarios.kind", (r) => t(`tab.${r.kind}`)],
  ["scenarios.hardware", (r) => [r.hardware, " ", fitsBadge(r.fits)]],
  ["scenarios.cmp_total", (r) => (r.total_usd == null ? "—" : ifRuns(r.fits, usd(r.total_usd, usdDigits(r.total_usd)))), true],
  ["scenarios.cmp_time", (r) => (r.seconds == null ? "—" : ifRuns(r.fits, duration(r.seconds))), true],
  ["scenarios.cmp_hours", (r) => (r.accelerator_hours == null ? "—" : ifRuns(r.fits, number(r.accelerator_hours, { maximumSignificantDigits: 3 }))), true],
  ["scenarios.cmp_per_hour", (r) => (r.usd_per_hour == null ? "—" : usd(r.usd_per_hour)), true],
  ["scenarios.cmp_per_million", (r) => (r.usd_per_million_output_tokens == null ? "—" : ifRuns(r.fits, usd(r.usd_per_million_output_tokens))), true],
  ["scenarios.cmp_tokens", (r) => (r.output_tokens_per_second == null ? "—" : ifRuns(r.fits, number(r.output_tokens_per_second))), true],
];

/** Ask the API to compare `ids` and show the answer in `box`; focus lands on its heading. */
export async function compare(ids, { box, accName, problemBox, extras = () => null }) {
  box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data } = await call("POST", "v1/scenarios/compare", { body: { ids } });
    const rows = compareRows(data, accName);
    box.replaceChildren(h("section", { class: "panel", id: "scenario-compare" },
      h("h3", { tabindex: "-1" }, t("scenarios.cmp_title", { n: rows.length })),
      h("div", { class: "table-wrap" }, h("table", { id: "compare-table" },
        h("caption", { class: "sr-only" }, t("scenarios.cmp_title", { n: rows.length })),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("scenarios.name")),
          COLUMNS.map(([key, , num]) => h("th", { scope: "col", class: num ? "num" : null }, t(key))))),
        h("tbody", {}, rows.map((r) => h("tr", { dataset: { id: r.id }, class: r.cheapest ? "cheapest" : null },
          h("th", { scope: "row" }, r.name, r.cheapest ? [" ", h("span", { class: "badge ok" }, t("scenarios.cmp_cheapest"))] : null),
          COLUMNS.map(([, show, num]) => h("td", { class: num ? "num" : null }, show(r)))))))),
      extras(rows, data)));
    $("#scenario-compare h3").focus();
  } catch (error) {
    box.replaceChildren(problemBox(error));
  }
}
