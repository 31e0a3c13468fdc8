// The page's own words in en, es, pt-BR and fr (static/i18n/<lang>.json); the API's strings come translated
// by the service when it can (every call sends Accept-Language for the language picked here).
export const LANGUAGES = ["en", "es", "pt-BR", "fr"];
const dictionaries = {};
let current = "en";

export function lang() {
  return current;
}

/** ?lang= first, then the browser's languages, then English. */
export function pickLanguage() {
  const asked = new URLSearchParams(location.search).get("lang");
  const wanted = [asked, ...(navigator.languages || [navigator.language])].filter(Boolean);
  for (const code of wanted) {
    const exact = LANGUAGES.find((l) => l.toLowerCase() === code.toLowerCase());
    if (exact) return exact;
    const base = LANGUAGES.find((l) => l.split("-")[0] === code.toLowerCase().split("-")[0]);
    if (base) return base;
  }
  return "en";
}

const loading = {}; // one request per dictionary, however many ask for it at once

function load(code) {
  loading[code] ??= fetch(`assets/i18n/${code}.json`, { headers: { Accept: "application/json" } })
    .then((response) => (response.ok ? response.json() : {}))
    .catch(() => {
      delete loading[code]; // asked again next time
      return {};
    })
    .then((words) => (dictionaries[code] = words));
  return loading[code];
}

export async function setLanguage(code) {
  await Promise.all([load("en"), load(code)]);
  current = code;
  document.documentElement.lang = code;
}

/** The text of `key` in the current language ({name} placeholders filled from `vars`). */
export function t(key, vars) {
  const text = dictionaries[current]?.[key] ?? dictionaries.en?.[key] ?? key;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

/** Translate every element carrying data-i18n (text), data-i18n-aria-label or data-i18n-placeholder. */
export function translateStatic(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-aria-label]")) el.setAttribute("aria-label", t(el.dataset.i18nAriaLabel));
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  document.title = t("app.title");
}

/** Accept-Language for API calls: the picked language first, English as the fallback. */
export function acceptLanguage() {
  return current === "en" ? "en" : `${current}, en;q=0.5`;
}

export function number(value, options = {}) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "—";
  return new Intl.NumberFormat(current, { maximumSignificantDigits: 4, ...options }).format(Number(value));
}

export function usd(value, digits = 2) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "—";
  const v = Number(value);
  const options = Math.abs(v) >= 0.01 || v === 0
    ? { minimumFractionDigits: digits, maximumFractionDigits: digits }
    : { maximumSignificantDigits: 2 };
  return new Intl.NumberFormat(current, { style: "currency", currency: "USD", ...options }).format(v);
}

export function compact(value) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "—";
  return new Intl.NumberFormat(current, { notation: "compact", maximumSignificantDigits: 3 }).format(Number(value));
}

export function dateTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(d);
}

/** Seconds as the page says them (chart axes; the API's own `human` strings are shown where given). */
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return "—";
  const units = [["unit.days", 86400], ["unit.hours", 3600], ["unit.minutes", 60], ["unit.seconds", 1]];
  for (const [key, size] of units) {
    if (seconds >= size || size === 1) return t(key, { n: number(seconds / size, { maximumSignificantDigits: 3 }) });
  }
  return "—";
}
