// The Scenarios view: an API key kept for the tab, the saved scenarios found by name, tag and kind a page at a
// time by cursor, with descriptions and tags (open, re-price, rename, delete; focus stays in the list; tick two or
// more to compare them side by side), and saving the estimate on screen as a new scenario or over the one it came from.
// app.js calls init() once with what it shares.
import { apiKey, call, setApiKey } from "./api.js";
import { h } from "./dom.js";
import { fitsBadge } from "./doubt.js";
import { dateTime, number, t, usd } from "./i18n.js";
import { share } from "./share.js";
import { sweep } from "./sweep.js";

const $ = (selector, root = document) => root.querySelector(selector);
const ctx = { state: null };

export function init(helpers) {
  Object.assign(ctx, helpers);
  bindScenarios();
}

export function updateKeyState() {
  const key = apiKey();
  $("#key-state").textContent = key ? t("key.set", { tail: key.slice(-4) }) : t("key.none");
}

export function bindScenarios() {
  $("#key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("#api-key");
    setApiKey(input.value.trim());
    input.value = "";
    updateKeyState();
    loadScenarios();
    if (ctx.state.admin.id) ctx.loadAdmin(ctx.state.admin.id);
    for (const kind of ["training", "inference"]) if (ctx.state[kind]) (kind === "training" ? ctx.renderTraining : ctx.renderInference)();
  });
  $("#key-forget").addEventListener("click", () => {
    setApiKey("");
    updateKeyState();
    ctx.state.scenarios = null;
    $("#scenarios-list").replaceChildren(h("p", { class: "notice" }, t("scenarios.need_key")));
    $("#scenario-detail").replaceChildren();
    $("#scenarios-more").replaceChildren();
  });
  $("#scenarios-refresh").addEventListener("click", () => loadScenarios());
  bindFilter();
  $("#scenarios-compare").addEventListener("click", () => showCompare([...listing.ticked.keys()]));
}

/** The filter bar: the API's name, tag and kind filters, asked as one types (after a pause) or on Search. */
function bindFilter() {
  const formEl = $("#scenario-filter");
  let timer;
  const apply = () => {
    clearTimeout(timer);
    listing.filter = { name: $("#scenario-name").value.trim(), tag: $("#scenario-tag").value.trim(), kind: $("#scenario-kind").value };
    ctx.onFilter?.();
    loadScenarios();
  };
  formEl.addEventListener("submit", (event) => {
    event.preventDefault();
    apply();
  });
  formEl.addEventListener("input", (event) => {
    if (event.target.matches("select")) return apply();
    clearTimeout(timer);
    timer = setTimeout(apply, 350);
  });
}

/** Set the filter fields (a shared link) without asking yet. */
export function setFilter(filter) {
  listing.filter = { name: filter.name || "", tag: filter.tag || "", kind: filter.kind || "" };
  $("#scenario-name").value = listing.filter.name;
  $("#scenario-tag").value = listing.filter.tag;
  $("#scenario-kind").value = listing.filter.kind;
}

export function showCompare(ids) {
  for (const id of ids) if (!listing.ticked.has(id)) listing.ticked.set(id, String(id));
  ctx.onCompare?.(ids);
  // compare.js loads the first time two scenarios are compared, not with the page
  return import("./compare.js").then(({ compare }) =>
    compare(ids, { box: $("#scenario-detail"), accName: ctx.accName, problemBox: ctx.problemBox, extras: ctx.compareExtras }));
}

const PAGE_SIZE = 50;
/** What the listing asks for (name substring, tag, kind: the API's own filters), the scenarios ticked to compare
 * (kept across pages and searches) and the request in flight. */
export const listing = { filter: { name: "", tag: "", kind: "" }, ticked: new Map(), inflight: null, pendingCompare: null };

/** GET /v1/scenarios with the filters, a page of PAGE_SIZE, after `cursor` (X-Pagination's next_cursor). */
export function listPath(filter, cursor = null, pageSize = PAGE_SIZE) {
  const query = new URLSearchParams({ page_size: String(pageSize) });
  for (const key of ["name", "tag", "kind"]) if (filter[key]) query.set(key, filter[key]);
  if (cursor) query.set("cursor", cursor);
  return `v1/scenarios?${query}`;
}

function pagination(headers) {
  try {
    return JSON.parse(headers.get("X-Pagination") || "{}");
  } catch {
    return {};
  }
}

/** The first page for the current filters, or (more) the next page after the rows shown, appended. */
export async function loadScenarios({ more = false } = {}) {
  const box = $("#scenarios-list");
  if (!apiKey()) {
    box.replaceChildren(h("p", { class: "notice" }, t("scenarios.need_key")));
    $("#scenarios-more").replaceChildren();
    return;
  }
  listing.inflight?.abort();
  const controller = new AbortController();
  listing.inflight = controller;
  const before = more ? ctx.state.scenarios : null;
  if (!more) box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data, headers } = await call("GET", listPath(listing.filter, before?.next), { signal: controller.signal });
    const meta = pagination(headers);
    const rows = [...(before?.rows || []), ...(data || [])];
    const next = meta.next_cursor || null;
    // a filter's total is counted up to a point (total_is_lower_bound); on the last page the rows are all there is
    const total = next ? Math.max(meta.total ?? before?.total ?? 0, rows.length) : rows.length;
    ctx.state.scenarios = { rows, total, atLeast: !!next && !!(meta.total_is_lower_bound ?? before?.atLeast), next };
    renderScenarioList();
    if (listing.pendingCompare) {
      showCompare(listing.pendingCompare);
      listing.pendingCompare = null;
    }
    if (more && data?.length) $(`#scenarios-table tr[data-id="${data[0].id}"] button.open`)?.focus();
  } catch (error) {
    if (error.name === "AbortError") return;
    ctx.state.scenarios = null;
    box.replaceChildren(ctx.problemBox(error));
  } finally {
    if (listing.inflight === controller) listing.inflight = null;
  }
}

function headline(kind, summary) {
  if (!summary) return "—";
  return kind === "training" ? usd(summary.total_usd) : `${usd(summary.usd_per_hour)}/h`;
}

export function renderScenarioList() {
  const { rows, total, atLeast, next } = ctx.state.scenarios;
  const box = $("#scenarios-list");
  const filtered = Object.values(listing.filter).some(Boolean);
  updateCompareButton();
  $("#scenarios-more").replaceChildren(next
    ? h("button", { type: "button", id: "scenarios-next", onclick: () => loadScenarios({ more: true }) }, t("scenarios.more", { n: number(PAGE_SIZE) }))
    : "");
  if (!rows.length) {
    box.replaceChildren(h("p", {}, t(filtered ? "scenarios.no_match" : "scenarios.empty")));
    return;
  }
  box.replaceChildren(
    h("p", { class: "hint", id: "scenarios-shown" }, t(atLeast ? "scenarios.shown_at_least" : "scenarios.shown", { shown: number(rows.length), n: number(total) })),
    h("div", { class: "table-wrap" }, h("table", { id: "scenarios-table" },
      h("caption", {}, t("scenarios.caption", { n: number(total) })),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("scenarios.pick")),
        ["scenarios.name", "scenarios.kind", "scenarios.hardware", "scenarios.headline", "scenarios.changed", "scenarios.owner", "scenarios.actions"].map((k) => h("th", { scope: "col" }, t(k))))),
      h("tbody", {}, rows.map((s) => scenarioRow(s))))));
}

function updateCompareButton() {
  const button = $("#scenarios-compare");
  button.disabled = listing.ticked.size < 2;
  button.textContent = t("scenarios.compare_n", { n: number(listing.ticked.size) });
}

/** A tag as a button that lists the scenarios carrying it. */
function tagButton(tag) {
  return h("li", {}, h("button", { type: "button", class: "small tag", "aria-label": t("scenarios.tag_label", { tag }), onclick: () => {
    listing.filter.tag = tag;
    $("#scenario-tag").value = tag;
    ctx.onFilter?.();
    loadScenarios();
  } }, tag));
}

function scenarioRow(s) {
  const nameCell = h("th", { scope: "row", class: "scenario-name" }, s.name,
    s.description ? h("p", { class: "description" }, s.description) : null,
    s.tags?.length ? h("ul", { class: "tags", "aria-label": t("scenarios.tags") }, s.tags.map(tagButton)) : null);
  const tick = h("input", { type: "checkbox", id: `pick-${s.id}`, checked: listing.ticked.has(s.id), onchange: (event) => {
    if (event.target.checked) listing.ticked.set(s.id, s.name);
    else listing.ticked.delete(s.id);
    updateCompareButton();
  } });
  const row = h("tr", { dataset: { id: s.id } },
    h("td", { class: "pick" }, tick, h("label", { for: tick.id, class: "sr-only" }, t("scenarios.pick_label", { name: s.name }))),
    nameCell,
    h("td", {}, t(`tab.${s.kind}`)),
    h("td", {}, s.summary ? `${s.summary.count ?? ""}× ${ctx.accName(s.summary.accelerator)}` : "—", " ", fitsBadge(s.summary?.fits)),
    h("td", { class: "num" }, headline(s.kind, s.summary)),
    h("td", {}, dateTime(s.updated_at)),
    h("td", {}, s.owner || ""),
    h("td", {}, h("div", { class: "actions" },
      h("button", { type: "button", class: "small open", "aria-label": t("scenarios.open_label", { name: s.name }), onclick: () => openScenario(s.id) }, t("scenarios.open")),
      h("button", { type: "button", class: "small reprice", "aria-label": t("scenarios.reprice_label", { name: s.name }), onclick: () => repriceScenario(s.id, s.name) }, t("scenarios.reprice")),
      h("button", { type: "button", class: "small rename", "aria-label": t("scenarios.rename_label", { name: s.name }), onclick: () => startRename(nameCell, s) }, t("scenarios.rename")),
      deleteButton(s))));
  return row;
}

function deleteButton(s) {
  let armed = false;
  const button = h("button", { type: "button", class: "small danger delete", "aria-label": t("scenarios.delete_label", { name: s.name }) }, t("scenarios.delete"));
  button.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      button.textContent = t("scenarios.delete_confirm");
      button.setAttribute("aria-label", t("scenarios.delete_confirm_label", { name: s.name }));
      ctx.toast(t("scenarios.delete_again", { name: s.name }));
      return;
    }
    button.disabled = true;
    try {
      const { etag } = await call("GET", `v1/scenarios/${s.id}`);
      await call("DELETE", `v1/scenarios/${s.id}`, { ifMatch: etag });
      ctx.toast(t("scenarios.deleted", { name: s.name }));
      for (const kind of ["training", "inference"]) if (ctx.state[kind]?.scenario?.id === s.id) ctx.state[kind].scenario = null;
      const rows = ctx.state.scenarios?.rows || [];
      const next = rows[rows.findIndex((r) => r.id === s.id) + 1] || rows[rows.findIndex((r) => r.id === s.id) - 1];
      await loadScenarios();
      // focus stays in the list: the row that took the deleted one's place, else the refresh button
      (next && $(`#scenarios-table tr[data-id="${next.id}"] button.open`) || $("#scenarios-refresh")).focus();
    } catch (error) {
      $("#scenario-detail").replaceChildren(ctx.problemBox(error));
      button.disabled = false;
    }
  });
  return button;
}

/** Back to the list, focus on the row's Rename button (where the person was). */
function endRename(id) {
  renderScenarioList();
  $(`#scenarios-table tr[data-id="${id}"] button.rename`)?.focus();
}

function startRename(cell, s) {
  const input = h("input", { type: "text", value: s.name, id: `rename-${s.id}`, maxlength: 200 });
  const save = async () => {
    const name = input.value.trim();
    if (!name || name === s.name) return endRename(s.id);
    try {
      const { data, etag } = await call("GET", `v1/scenarios/${s.id}`);
      const body = { name, description: data.description ?? null, tags: data.tags || [], kind: data.kind, request: data.request };
      await call("PUT", `v1/scenarios/${s.id}`, { body, ifMatch: etag });
      ctx.toast(t("scenarios.renamed", { name }));
      for (const kind of ["training", "inference"]) if (ctx.state[kind]?.scenario?.id === s.id) ctx.state[kind].scenario.name = name;
      await loadScenarios();
      $(`#scenarios-table tr[data-id="${s.id}"] button.rename`)?.focus();
    } catch (error) {
      $("#scenario-detail").replaceChildren(ctx.problemBox(error));
    }
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") save();
    if (event.key === "Escape") endRename(s.id);
  });
  cell.replaceChildren(
    h("label", { for: input.id, class: "sr-only" }, t("scenarios.new_name")),
    input,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "small rename-save", onclick: save }, t("scenarios.rename_save")),
      h("button", { type: "button", class: "small", onclick: () => endRename(s.id) }, t("cancel"))));
  input.focus();
  input.select();
}

async function openScenario(id) {
  try {
    const { data, etag } = await call("GET", `v1/scenarios/${id}`);
    const kind = data.kind;
    ctx.fillRequest(kind, data.request);
    ctx.state[kind] = {
      request: data.request,
      estimate: data.estimate,
      scenario: { id: data.id, name: data.name, etag, description: data.description ?? null, tags: data.tags || [] },
    };
    ctx.showView(kind);
    share({ [kind]: data.request });
    if (kind === "training") {
      ctx.renderTraining();
      sweep(data.request, data.estimate);
    } else {
      ctx.state.suggestionSort = { key: null, dir: 1 };
      ctx.renderInference();
    }
    ctx.toast(t("scenarios.opened", { name: data.name }));
    $(`#${kind}-results h3`)?.focus();
  } catch (error) {
    $("#scenario-detail").replaceChildren(ctx.problemBox(error));
  }
}

export async function saveScenario(kind, name) {
  if (!apiKey()) {
    ctx.toast(t("scenarios.need_key"));
    return;
  }
  try {
    const current = ctx.state[kind];
    const { data, etag } = await call("POST", "v1/scenarios", { body: { name, kind, request: current.request } });
    current.scenario = { id: data.id, name: data.name, etag, description: null, tags: [] };
    ctx.toast(t("scenarios.saved", { name: data.name }));
    (kind === "training" ? ctx.renderTraining : ctx.renderInference)();
    ctx.state.scenarios = null;
    $(`#${kind}-results .save-update`)?.focus();
  } catch (error) {
    $(`#${kind}-results`).prepend(ctx.problemBox(error));
  }
}

export async function updateScenario(kind, name) {
  const current = ctx.state[kind];
  try {
    const body = { name: name || current.scenario.name, description: current.scenario.description, tags: current.scenario.tags, kind, request: current.request };
    const { data, etag } = await call("PUT", `v1/scenarios/${current.scenario.id}`, { body, ifMatch: current.scenario.etag });
    current.scenario = { ...current.scenario, name: data.name, etag };
    ctx.toast(t("scenarios.updated", { name: data.name }));
    (kind === "training" ? ctx.renderTraining : ctx.renderInference)();
    ctx.state.scenarios = null;
    $(`#${kind}-results .save-update`)?.focus();
  } catch (error) {
    $(`#${kind}-results`).prepend(ctx.problemBox(error));
  }
}

async function repriceScenario(id, name) {
  const box = $("#scenario-detail");
  box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data } = await call("GET", `v1/scenarios/${id}/estimate`);
    const training = data.delta?.basis !== "usd_per_hour";
    const pick = (e) => (training ? e?.cost?.total_usd : e?.cost?.usd_per_hour);
    const delta = data.delta || {};
    const direction = delta.total_usd > 0 ? "up" : delta.total_usd < 0 ? "down" : "";
    const sign = delta.total_usd > 0 ? "+" : "";
    box.replaceChildren(h("section", { class: "panel", id: "reprice" },
      h("h3", { tabindex: "-1" }, t("scenarios.repriced_title", { name })),
      h("dl", { class: "cards" },
        ctx.card(t(training ? "scenarios.saved_total" : "scenarios.saved_hourly"), usd(pick(data.saved)), null),
        ctx.card(t(training ? "scenarios.current_total" : "scenarios.current_hourly"), usd(pick(data.current)), null),
        ctx.card(t("scenarios.delta"), h("span", { class: `delta ${direction}` }, delta.total_usd == null ? "—" : `${sign}${usd(delta.total_usd)}`),
          delta.percent == null ? null : `${sign}${number(delta.percent, { maximumFractionDigits: 1 })} %`))));
    $("#reprice h3").focus();
  } catch (error) {
    box.replaceChildren(ctx.problemBox(error));
  }
}
