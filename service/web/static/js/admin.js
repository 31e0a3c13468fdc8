// The Prices (admin) view: an accelerator's current prices (each with its age, stale ones marked), their history,
// the audit trail, and the form that sets a provider's price (an admin key; If-Match on the accelerator's ETag).
// app.js calls init() once with what it shares and load() when the view opens or the key changes.
import { apiKey, call } from "./api.js";
import { h } from "./dom.js";
import { ageCell } from "./doubt.js";
import * as forms from "./forms.js";
import { dateTime, t, usd } from "./i18n.js";
import { share } from "./share.js";

const $ = (selector, root = document) => root.querySelector(selector);
const ctx = { state: null, problemBox: null, toast: null, accName: (id) => id, refreshProviders: () => {} };

export function init(helpers) {
  Object.assign(ctx, helpers);
  bindAdmin();
}

function bindAdmin() {
  $("#admin-accelerator").addEventListener("change", (event) => {
    share({ accelerator: event.target.value });
    loadAdmin(event.target.value);
  });
  $("#price-form").addEventListener("submit", (event) => {
    event.preventDefault();
    savePrice();
  });
}

function pricesTable(prices, captionKey, history = false) {
  if (!prices.length) return h("p", {}, t("admin.no_prices"));
  // the age right after the price: a stale mark seen without scrolling the table sideways on a phone
  const columns = ["admin.provider", "admin.pricing_model", "admin.usd_per_hour", "admin.age", "admin.instance", "admin.region", "admin.from"];
  if (history) columns.push("admin.to");
  columns.push("admin.source");
  return h("div", { class: "table-wrap" }, h("table", {},
    h("caption", {}, t(captionKey)),
    h("thead", {}, h("tr", {}, columns.map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, prices.map((p) => h("tr", { class: history && !p.effective_to ? "current" : null },
      h("td", {}, p.provider),
      h("td", {}, p.pricing_model || ""),
      h("td", { class: "num" }, usd(p.usd_per_hour, 4)),
      h("td", { class: "age" }, ageCell(p)),
      h("td", {}, p.instance_type || ""),
      h("td", {}, p.region || ""),
      h("td", {}, p.effective_from || p.as_of || ""),
      history ? h("td", {}, p.effective_to || t("admin.current")) : null,
      h("td", {}, p.source || ""))))));
}

export async function loadAdmin(id) {
  if (!id) return;
  ctx.state.admin.id = id;
  const current = $("#admin-current");
  current.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const { data, etag } = await call("GET", `v1/accelerators/${encodeURIComponent(id)}`);
    if (ctx.state.admin.id !== id) return;
    ctx.state.admin.etag = etag;
    ctx.state.admin.accelerator = data;
    ctx.state.byId[id] = data;
    current.replaceChildren(pricesTable(data.prices || [], "admin.current_prices"));
  } catch (error) {
    current.replaceChildren(ctx.problemBox(error));
  }
  loadHistory(id);
  loadAudit(id);
}

async function loadHistory(id) {
  const box = $("#admin-history");
  try {
    const { data } = await call("GET", `v1/accelerators/${encodeURIComponent(id)}/prices/history`);
    if (ctx.state.admin.id === id) box.replaceChildren(h("h3", {}, t("admin.history")), pricesTable(data || [], "admin.history_caption", true));
  } catch (error) {
    box.replaceChildren(ctx.problemBox(error));
  }
}

function auditSummary(value) {
  if (!value) return "—";
  if (Array.isArray(value.prices)) {
    return value.prices.map((p) => `${p.provider} ${p.pricing_model || ""} ${usd(p.usd_per_hour, 4)}${p.effective_to ? ` (→ ${p.effective_to})` : ""}`).join("; ") || "—";
  }
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

async function loadAudit(id) {
  const box = $("#admin-audit");
  if (!apiKey()) {
    box.replaceChildren(h("h3", {}, t("admin.audit")), h("p", { class: "notice" }, t("admin.audit_needs_key")));
    return;
  }
  try {
    const { data } = await call("GET", `v1/audit-events?target=${encodeURIComponent(`accelerator:${id}`)}&page_size=25`);
    if (ctx.state.admin.id !== id) return;
    box.replaceChildren(h("h3", {}, t("admin.audit")), data.length
      ? h("div", { class: "table-wrap" }, h("table", { id: "audit-table" },
        h("caption", {}, t("admin.audit_caption", { name: ctx.accName(id) })),
        h("thead", {}, h("tr", {}, ["admin.at", "admin.actor", "admin.action", "admin.before", "admin.after"].map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", {}, data.map((ev) => h("tr", {},
          h("td", {}, dateTime(ev.at)), h("td", {}, ev.actor), h("td", {}, h("code", {}, ev.action)),
          h("td", {}, auditSummary(ev.before)), h("td", {}, auditSummary(ev.after)))))))
      : h("p", {}, t("admin.audit_empty")));
  } catch (error) {
    box.replaceChildren(h("h3", {}, t("admin.audit")), ctx.problemBox(error));
  }
}

async function savePrice() {
  const formEl = $("#price-form");
  forms.clearErrors(formEl);
  const body = forms.readForm(formEl);
  const provider = body.provider;
  delete body.provider;
  if (!provider) {
    forms.showErrors(formEl, { provider: [t("admin.provider_required")] })?.focus();
    return;
  }
  const id = ctx.state.admin.id;
  const button = $('button[type="submit"]', formEl);
  button.disabled = true;
  try {
    const { data, etag } = await call("PUT", `v1/accelerators/${encodeURIComponent(id)}/prices/${encodeURIComponent(provider)}`, { body, ifMatch: ctx.state.admin.etag });
    ctx.state.admin.etag = etag;
    ctx.state.byId[id] = data;
    const index = ctx.state.accelerators.findIndex((a) => a.id === id);
    if (index >= 0) ctx.state.accelerators[index] = data;
    for (const f of [$("#training-form"), $("#inference-form")]) ctx.refreshProviders(f);
    ctx.toast(t("admin.saved", { provider, name: data.name, price: usd(body.usd_per_hour, 4) }));
    $("#admin-current").replaceChildren(pricesTable(data.prices || [], "admin.current_prices"));
    forms.resetForm(formEl);
    loadHistory(id);
    loadAudit(id);
  } catch (error) {
    $("#admin-current").prepend(ctx.problemBox(error));
    forms.showErrors(formEl, error.problem?.errors);
    if (error.status === 412) loadAdmin(id);
  } finally {
    button.disabled = false;
  }
}
