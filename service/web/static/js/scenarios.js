// The Scenarios view: an API key kept for the tab, the saved scenarios (open, re-price, rename, delete; focus
// stays in the list), and saving the estimate on screen as a new scenario or over the one it came from.
// app.js calls init() once with what it shares.
import { apiKey, call, setApiKey } from "./api.js";
import { h } from "./dom.js";
import { fitsBadge } from "./doubt.js";
import { dateTime, number, t, usd } from "./i18n.js";
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
  });
  $("#scenarios-refresh").addEventListener("click", () => loadScenarios());
}

export async function loadScenarios() {
  const box = $("#scenarios-list");
  if (!apiKey()) {
    box.replaceChildren(h("p", { class: "notice" }, t("scenarios.need_key")));
    return;
  }
  box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data, headers } = await call("GET", "v1/scenarios?page_size=100");
    let total = data.length;
    try {
      total = JSON.parse(headers.get("X-Pagination") || "{}").total ?? total;
    } catch {
      /* keep the row count */
    }
    ctx.state.scenarios = { rows: data, total };
    renderScenarioList();
  } catch (error) {
    ctx.state.scenarios = null;
    box.replaceChildren(ctx.problemBox(error));
  }
}

function headline(kind, summary) {
  if (!summary) return "—";
  return kind === "training" ? usd(summary.total_usd) : `${usd(summary.usd_per_hour)}/h`;
}

export function renderScenarioList() {
  const { rows, total } = ctx.state.scenarios;
  const box = $("#scenarios-list");
  if (!rows.length) {
    box.replaceChildren(h("p", {}, t("scenarios.empty")));
    return;
  }
  box.replaceChildren(h("div", { class: "table-wrap" }, h("table", { id: "scenarios-table" },
    h("caption", {}, t("scenarios.caption", { n: number(total) })),
    h("thead", {}, h("tr", {}, ["scenarios.name", "scenarios.kind", "scenarios.hardware", "scenarios.headline", "scenarios.changed", "scenarios.owner", "scenarios.actions"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, rows.map((s) => scenarioRow(s))))));
}

function scenarioRow(s) {
  const nameCell = h("th", { scope: "row", class: "scenario-name" }, s.name);
  const row = h("tr", { dataset: { id: s.id } },
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
