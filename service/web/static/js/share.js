// Every view's inputs in the address, so that a copied link reopens the same answer: the estimate requests as
// JSON (?training=…, ?inference=…), the planner requests (?plan_training=…, ?plan_serving=…), the Scenarios
// filters and compared ids (?name=, ?tag=, ?kind=, ?compare=1,2), the Prices view's accelerator (?accelerator=),
// the language (?lang=) and the view (#training…). Never the API key.
export const SHARED = ["training", "inference", "plan_training", "plan_serving"];
export const FILTERS = ["name", "tag", "kind"];

/** What an address says: the JSON requests parsed (a broken one is left out), the rest as text. */
export function readShared(search) {
  const params = new URLSearchParams(search);
  const out = {};
  for (const key of SHARED) {
    const raw = params.get(key);
    if (!raw) continue;
    try {
      const value = JSON.parse(raw);
      if (value && typeof value === "object" && !Array.isArray(value)) out[key] = value;
    } catch {
      /* not JSON: ignored */
    }
  }
  const filter = {};
  for (const key of FILTERS) if (params.get(key)) filter[key] = params.get(key);
  if (Object.keys(filter).length) out.filter = filter;
  const ids = (params.get("compare") || "").split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
  if (ids.length) out.compare = ids;
  if (params.get("accelerator")) out.accelerator = params.get("accelerator");
  return out;
}

/** The query string with `changes` applied: an object or array is written as JSON, null/"" removes the key. */
export function withShared(search, changes) {
  const params = new URLSearchParams(search);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) params.delete(key);
    else if (Array.isArray(value)) params.set(key, value.join(","));
    else if (typeof value === "object") params.set(key, JSON.stringify(value));
    else params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Put `changes` in the address bar (no new history entry). */
export function share(changes) {
  history.replaceState(null, "", `${location.pathname}${withShared(location.search, changes)}${location.hash}`);
}

/** Copy the address to the clipboard; false when the browser refuses (the caller then shows it). */
export async function copyLink() {
  try {
    await navigator.clipboard.writeText(location.href);
    return true;
  } catch {
    return false;
  }
}
