// What a person types and what the page shows, without the DOM: numbers typed with a decimal comma or
// thousands separators, deadlines in days or ISO 8601, how many cents a dollar figure keeps, and the ticks of a
// time axis in the unit its values are read in. Unit-tested by Node's built-in runner (tests/web/js/).

/** The decimal separator `locale` writes ("." in en, "," in es, pt-BR and fr). */
export function decimalSeparator(locale) {
  const part = new Intl.NumberFormat(locale).formatToParts(1.5).find((p) => p.type === "decimal");
  return part ? part.value : ".";
}

/**
 * The number `raw` says, read as a person of `locale` writes it: "0,04" and "0.04" are 0.04 in every language,
 * "1,234.5" (en) and "1.234,5" or "1 234,5" (es, pt-BR, fr) are 1234.5; a lone separator followed by exactly three
 * digits is read as the locale reads it ("1,000" is 1000 in en, 1 in fr). Anything else comes back unchanged (a
 * string), so the API answers with the field's error.
 */
export function parseNumber(raw, locale = "en") {
  if (typeof raw !== "string") return raw;
  const text = raw.trim().replace(/[\s\u00a0\u202f']/g, "");
  if (text === "") return raw;
  if (/^[-+]?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(text)) return Number(text);
  const decimal = decimalSeparator(locale);
  const group = decimal === "," ? "." : ",";
  let normal = null;
  const both = /^[-+]?\d{1,3}([.,]\d{3})+([.,]\d+)?$/;
  if (text.includes(",") && text.includes(".")) {
    // the separator written last is the decimal one
    if (both.test(text)) {
      const last = Math.max(text.lastIndexOf(","), text.lastIndexOf("."));
      const dec = text[last];
      const grp = dec === "," ? "." : ",";
      if (!text.slice(last + 1).includes(grp)) normal = `${text.slice(0, last).split(grp).join("")}.${text.slice(last + 1)}`;
    }
  } else if (/^[-+]?\d+,\d+$/.test(text)) {
    // one comma: a thousands group in English when three digits follow, a decimal comma otherwise
    const after = text.split(",")[1];
    normal = group === "," && after.length === 3 ? text.replace(",", "") : text.replace(",", ".");
  } else if (/^[-+]?\d{1,3}(,\d{3})+$/.test(text) && group === ",") {
    normal = text.split(",").join("");
  } else if (/^[-+]?\d{1,3}(\.\d{3})+$/.test(text) && group === ".") {
    normal = text.split(".").join("");
  }
  if (normal === null) return raw;
  const value = Number(normal);
  return Number.isFinite(value) ? value : raw;
}

/** A deadline field: a bare number is days (seconds out), anything else an ISO 8601 duration (P45D, PT36H). */
export function deadlineValue(raw, locale = "en") {
  const text = String(raw ?? "").trim();
  if (!text) return undefined;
  const days = parseNumber(text, locale);
  if (typeof days === "number") return Math.round(days * 86400 * 1000) / 1000;
  return text.toUpperCase();
}

/** Seconds back to the days a deadline field shows (a string stays as written). */
export function deadlineText(value) {
  if (typeof value === "number") return String(Math.round((value / 86400) * 1e6) / 1e6);
  return value === undefined || value === null ? "" : String(value);
}

/** Cents only where they matter: none from $1,000 on (a $1.5M total to the cent reads as false precision). */
export function usdDigits(value) {
  return Math.abs(Number(value)) >= 1000 ? 0 : 2;
}

const TIME_UNITS = [["days", 86400], ["hours", 3600], ["minutes", 60], ["seconds", 1]];

/** The unit a time axis reads in: the largest of days, hours, minutes and seconds that the smallest value reaches. */
export function timeUnit(minSeconds) {
  for (const [name, size] of TIME_UNITS) if (minSeconds >= size || size === 1) return { name, size };
  return { name: "seconds", size: 1 };
}

/** Round ticks (1, 2, 5 × 10^k, or only the powers of ten over wide ranges) between lo and hi, log scale. */
export function logTicks(lo, hi) {
  if (!(lo > 0) || !(hi >= lo)) return [];
  const out = [];
  const a = Math.floor(Math.log10(lo));
  const b = Math.ceil(Math.log10(hi));
  for (let e = a; e <= b; e++) for (const m of b - a <= 2 ? [1, 2, 5] : [1]) out.push(Number((m * 10 ** e).toPrecision(12)));
  return out.filter((v) => v >= lo / 1.0001 && v <= hi * 1.0001);
}

/**
 * Ticks of a log time axis from lo to hi seconds, round in the unit the values are read in: {unit, ticks} where
 * ticks are seconds and each tick / unit.size is a round number (1, 2, 5, 10, … days). A range narrower than one
 * round step gets its two ends, rounded to two significant digits of the unit.
 */
export function timeTicks(lo, hi) {
  const unit = timeUnit(lo);
  let ticks = logTicks(lo / unit.size, hi / unit.size);
  if (ticks.length < 2) {
    ticks = [...new Set([lo, hi].map((v) => Number((v / unit.size).toPrecision(2))))];
  }
  return { unit, ticks: ticks.map((v) => v * unit.size) };
}
