// What the page says about how far to trust a figure: a price's age and source (stale prices marked wherever a
// price is shown), a result that does not fit (never priced or timed as if it ran), the layout the API chose,
// and the API's enum values said in words of the page's language.
import { h } from "./dom.js";
import { number, t, usd } from "./i18n.js";
import { usdDigits } from "./numbers.js";

/** A headline dollar figure: no cents from $1,000 on, and never broken across lines. */
export function headlineUsd(value) {
  return h("span", { class: "figure" }, usd(value, usdDigits(value)));
}

/** Per hour, where, and a "stale" mark with the price's age when the API flags it (price_source.stale): what
 * a card beside a price says. */
export function priceNote(source, perHour) {
  const hourly = perHour ? `${usd(perHour)}/h` : null;
  if (!source || typeof source !== "object") return hourly ? h("span", { class: "price-note" }, hourly) : null;
  return h("span", { class: "price-note" },
    [hourly, source.provider].filter(Boolean).join(" · "),
    source.stale ? [" ", h("span", { class: "badge warning stale", title: source.note || null },
      Number.isFinite(source.age_days) ? t("price.stale_age", { n: number(source.age_days, { maximumFractionDigits: 0 }) }) : t("price.stale"))] : null);
}

/** The whole provenance of a price, for a line under the figures: what, since when, how old, from where. */
export function priceLine(source) {
  if (!source || typeof source !== "object") return null;
  const since = source.effective_from || source.as_of;
  const parts = [
    [source.provider, source.instance_type, source.region, source.pricing_model].filter(Boolean).join(" "),
    since ? t("price.since", { date: since }) : null,
    Number.isFinite(source.age_days) ? t("price.age", { n: number(source.age_days, { maximumFractionDigits: 0 }) }) : null,
    source.source ? t("price.source", { source: source.source }) : null,
  ].filter(Boolean);
  return h("p", { class: `hint price-line${source.stale ? " stale-line" : ""}` },
    source.stale ? [h("span", { class: "badge warning stale" }, t("price.stale")), " "] : null,
    `${t("price.label")} ${parts.join(" · ")}`, source.stale && source.note ? h("span", { class: "sr-only" }, ` ${source.note}`) : null);
}

/** A price row of the catalog (GET /v1/accelerators/{id}): its age, marked when stale. */
export function ageCell(price) {
  if (!Number.isFinite(price?.age_days)) return "";
  return [t("price.days", { n: number(price.age_days, { maximumFractionDigits: 0 }) }),
    price.stale ? [" ", h("span", { class: "badge warning stale" }, t("price.stale"))] : null];
}

/** A figure that only exists if the job runs: "—" and why, when it does not fit. */
export function ifRuns(fits, value) {
  return fits === false ? h("span", { class: "not-run" }, t("r.not_run")) : value;
}

/** "data 64 × tensor 2 × pipeline 4, ZeRO-2, sequence parallel" for a parallelism object. */
export function layoutText(par) {
  if (!par || typeof par !== "object") return "—";
  const names = {
    data: t("planner.deg.data"), tensor: t("planner.deg.tensor"), pipeline: t("planner.deg.pipeline"),
    virtual_pipeline: t("planner.deg.virtual_pipeline"), context: t("planner.deg.context"), expert: t("planner.deg.expert"),
  };
  const parts = [];
  for (const [key, name] of Object.entries(names)) {
    if (par[key] && (par[key] > 1 || key === "data")) parts.push(`${name} ${number(par[key], { maximumFractionDigits: 0 })}`);
  }
  const tail = [];
  if (par.zero_stage) tail.push(`ZeRO-${par.zero_stage}`);
  if (par.sequence_parallel) tail.push(t("planner.deg.sequence_parallel"));
  return [parts.join(" × "), ...tail].filter(Boolean).join(", ");
}

/** The API's roofline bound ("compute", "memory-bandwidth", …) in the page's words. */
export function boundText(bound) {
  const words = { compute: t("bound.compute"), "memory-bandwidth": t("bound.memory_bandwidth"), communication: t("bound.communication") };
  return words[bound] ?? bound;
}

/** Seconds per token in milliseconds ("9.67 ms"): a TPOT reads in ms. */
export function ms(seconds) {
  return Number.isFinite(seconds) ? t("unit.ms", { n: number(seconds * 1000, { maximumSignificantDigits: 3 }) }) : "—";
}

export function badge(kind, text) {
  return h("span", { class: `badge ${kind}` }, text);
}

/** "fits" or "does not fit", as a badge; nothing when the answer does not say. */
export function fitsBadge(fits) {
  if (fits === null || fits === undefined) return null;
  return fits ? badge("ok", t("r.fits")) : badge("bad", t("r.does_not_fit"));
}

/** A prediction interval of the calibration ({p10, p90}, e.g. an answer's intervals.time.seconds) as numbers, or
 * null when the answer has none or it is not two finite numbers in order. */
export function intervalRange(interval) {
  if (!interval || typeof interval !== "object") return null;
  const low = Number(interval.p10);
  const high = Number(interval.p90);
  if (interval.p10 == null || interval.p90 == null || !Number.isFinite(low) || !Number.isFinite(high) || low > high) return null;
  return { low, high };
}

/** "p10–p90: a – b" under a headline figure when the answer carries that interval; nothing otherwise. */
export function intervalNote(interval, format) {
  const range = intervalRange(interval);
  if (!range) return null;
  return h("span", { class: "interval" }, t("doubt.interval", { low: format(range.low), high: format(range.high) }));
}
