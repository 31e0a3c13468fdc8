// Calls to the public HTTP API by relative URL (the page could be served by a static host in front of the
// service). The API key lives in this tab's sessionStorage only: never in a URL, never in a cookie.
import { acceptLanguage } from "./i18n.js";

const KEY_STORAGE = "scalecost.apiKey";

export function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) || "";
  } catch {
    return "";
  }
}

export function setApiKey(value) {
  if (value) sessionStorage.setItem(KEY_STORAGE, value);
  else sessionStorage.removeItem(KEY_STORAGE);
}

export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

/**
 * One API call. `path` is relative ("v1/estimates/training"). Returns {data, etag, headers, status};
 * throws ApiError with the problem+json body for any 4xx/5xx.
 */
export async function call(method, path, { body, ifMatch, signal } = {}) {
  const headers = { Accept: "application/json, application/problem+json", "Accept-Language": acceptLanguage() };
  const key = apiKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch) headers["If-Match"] = ifMatch;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, { title: "Network error", detail: String(error.message || error) });
  }
  const type = response.headers.get("Content-Type") || "";
  let data = null;
  if (response.status !== 204 && type.includes("json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return { data, etag: response.headers.get("ETag"), headers: response.headers, status: response.status };
}

/** Every page of a paginated listing (X-Pagination), up to `limit` rows. */
export async function listAll(path, { pageSize = 100, limit = 1000 } = {}) {
  const rows = [];
  for (let page = 1; rows.length < limit; page++) {
    const sep = path.includes("?") ? "&" : "?";
    const { data, headers } = await call("GET", `${path}${sep}page=${page}&page_size=${pageSize}`);
    rows.push(...(data || []));
    let meta = {};
    try {
      meta = JSON.parse(headers.get("X-Pagination") || "{}");
    } catch {
      meta = {};
    }
    if (!meta.next_page || !data || data.length === 0) break;
  }
  return rows;
}

/** RFC 7386 JSON Merge Patch (the `change` of a recommendation). Inputs are not modified. */
export function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result = target && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
