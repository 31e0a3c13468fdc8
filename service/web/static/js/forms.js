// The estimate forms, declared field by field in fields.js: each field names its place in the request body
// (`path`), so one builder draws the form, one reader turns it into a request and one filler puts a request (a saved
// scenario, or a request with a recommendation's merge patch applied) back into it.
import { MODEL_MODES } from "./fields.js";
import { lang, t } from "./i18n.js";
import { deadlineText, deadlineValue, parseNumber } from "./numbers.js";

// The choices of the enumerated fields come from the service (GET /v1/options: by request, then by the field's
// path in its body), read once at start-up before the forms are drawn; a select names its request with
// `choices` and finds its values under its own path. Nothing here lists an engine's, a format's or a precision's
// values, so a value the engine adds is offered at once.
let enums = {};

/** Keep the answer of GET /v1/options for every form drawn from now on. */
export function setChoices(options) {
  enums = options && typeof options === "object" ? options : {};
}

/** The values `path` of request `request` accepts (empty when the options could not be read). */
export function choicesOf(request, path) {
  const values = enums[request]?.[path];
  return Array.isArray(values) ? values : [];
}

export { INFERENCE, MODEL_MODES, PRICE, TRAINING } from "./fields.js";

// --- paths -------------------------------------------------------------------------------------------------

export function getPath(obj, path) {
  return path.split(".").reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);
}

function setPath(obj, path, value) {
  const keys = path.split(".");
  let o = obj;
  for (const k of keys.slice(0, -1)) o = o[k] && typeof o[k] === "object" ? o[k] : (o[k] = {});
  o[keys[keys.length - 1]] = value;
}

/** 1.5e9 → "1.5B" when the short form is exact (at most 3 decimals); anything else stays a plain number. */
export function countText(value) {
  if (typeof value === "string") return value;
  if (!Number.isFinite(value)) return "";
  for (const [suffix, size] of [["T", 1e12], ["B", 1e9], ["M", 1e6], ["k", 1e3]]) {
    const v = value / size;
    if (Math.abs(value) >= size && Math.abs(v * 1000 - Math.round(v * 1000)) < 1e-6) return `${Math.round(v * 1000) / 1000}${suffix}`;
  }
  return String(value);
}

/** A typed number as the current language writes it ("0,04" too); what is not one goes as typed, and the API
 * answers with the field's error. */
export function numberOrText(raw, integer = false) {
  const v = parseNumber(raw, lang());
  if (typeof v === "number" && (!integer || Number.isInteger(v))) return v;
  return raw;
}

// --- building ------------------------------------------------------------------------------------------------

function fieldId(form, spec) {
  return `${form}-${spec.path.replace(/[._]/g, "-")}`;
}

function control(form, spec, options) {
  const id = fieldId(form, spec);
  let input;
  if (spec.type === "select") {
    input = document.createElement("select");
    input.dataset.options = typeof spec.options === "string" ? spec.options : "";
    fillSelect(input, spec, typeof spec.options === "string" ? options[spec.options] || [] : fixedItems(spec));
  } else if (spec.type === "json") {
    input = document.createElement("textarea");
    input.spellcheck = false;
  } else {
    input = document.createElement("input");
    input.type = spec.type === "bool" ? "checkbox" : spec.type === "date" ? "date" : "text";
    if (["int", "float", "percent", "count", "devices", "deadline"].includes(spec.type)) {
      input.inputMode = spec.type === "int" ? "numeric" : "decimal";
      input.autocomplete = "off";
    }
    if (spec.list) input.setAttribute("list", `${form}-${spec.list}-list`);
  }
  input.id = id;
  input.name = spec.path;
  input.dataset.path = spec.path;
  if (spec.layoutSwitch) input.dataset.layoutSwitch = "true";
  if (spec.placeholder) input.placeholder = spec.placeholder;
  if (spec.required) input.required = true;
  return input;
}

/** A select's own values: the service's choices for its path, or the few it lists itself (yes/no, ZeRO stages).
 * A value the dictionaries label (`spec.i18n`) shows its label; any other shows itself. */
function fixedItems(spec) {
  const values = spec.choices ? choicesOf(spec.choices, spec.path) : spec.options;
  return values.map((v) => (spec.i18n?.[v] ? { value: v, label: t(spec.i18n[v]), i18n: spec.i18n[v] } : { value: v, label: v }));
}

function fillSelect(select, spec, items) {
  const previous = select.value;
  const nodes = [];
  if (spec.auto) {
    const auto = document.createElement("option");
    auto.value = "";
    auto.textContent = t(typeof spec.auto === "string" ? spec.auto : "opt.auto");
    auto.dataset.i18n = typeof spec.auto === "string" ? spec.auto : "opt.auto";
    nodes.push(auto);
  }
  for (const item of items) {
    const option = document.createElement("option");
    option.value = item.value;
    option.textContent = item.label;
    if (item.i18n) option.dataset.i18n = item.i18n;
    nodes.push(option);
  }
  select.replaceChildren(...nodes);
  if (previous && items.some((i) => i.value === previous)) select.value = previous;
  else if (spec.value !== undefined && items.some((i) => i.value === String(spec.value))) select.value = String(spec.value);
}

/** Replace the options of every select fed by `name` (presets, accelerators, providers), keeping the value. */
export function setOptions(formEl, name, items) {
  for (const select of formEl.querySelectorAll(`select[data-options="${name}"]`)) {
    const spec = select._spec;
    fillSelect(select, spec, items);
  }
}

/** Draw the groups of `specs` into `formEl`'s .fields container. */
export function buildForm(formEl, specs, options = {}) {
  const form = formEl.id.replace(/-form$/, "");
  const container = formEl.querySelector(".fields");
  container.replaceChildren();
  for (const group of specs) {
    let box;
    let body;
    if (group.bare) {
      box = body = document.createElement("div");
      body.className = "grid";
    } else if (group.collapsed) {
      box = document.createElement("details");
      box.className = "group";
      const summary = document.createElement("summary");
      summary.dataset.i18n = `group.${group.id}`;
      summary.textContent = t(`group.${group.id}`);
      box.appendChild(summary);
      body = document.createElement("div");
      body.className = "grid";
      box.appendChild(body);
    } else {
      box = document.createElement("fieldset");
      const legend = document.createElement("legend");
      legend.dataset.i18n = `group.${group.id}`;
      legend.textContent = t(`group.${group.id}`);
      box.appendChild(legend);
      body = document.createElement("div");
      body.className = "grid";
      box.appendChild(body);
    }
    box.dataset.group = group.id;
    if (group.model) {
      const modes = document.createElement("div");
      modes.className = "modes";
      modes.setAttribute("role", "radiogroup");
      modes.setAttribute("aria-label", t("group.model_form"));
      modes.dataset.i18nAriaLabel = "group.model_form";
      for (const mode of MODEL_MODES) {
        const label = document.createElement("label");
        const radio = document.createElement("input");
        radio.type = "radio";
        radio.name = `${form}-model-mode`;
        radio.value = mode;
        radio.id = `${form}-mode-${mode}`;
        radio.checked = mode === "preset";
        radio.addEventListener("change", () => showMode(formEl));
        const span = document.createElement("span");
        span.dataset.i18n = `mode.${mode}`;
        span.textContent = t(`mode.${mode}`);
        label.append(radio, span);
        modes.appendChild(label);
      }
      box.insertBefore(modes, body);
    }
    for (const spec of group.fields) {
      if (spec.type === "const") continue;
      const wrap = document.createElement("div");
      wrap.className = `field${spec.type === "bool" ? " check" : ""}${spec.wide || spec.type === "json" ? " wide" : ""}`;
      if (spec.modes) wrap.dataset.modes = spec.modes.join(" ");
      if (spec.layout) wrap.dataset.layout = "manual";
      const input = control(form, spec, options);
      input._spec = spec;
      if (spec.layoutSwitch) input.addEventListener("change", () => showMode(formEl));
      const label = document.createElement("label");
      label.htmlFor = input.id;
      label.dataset.i18n = `f.${spec.path}`;
      label.textContent = t(`f.${spec.path}`);
      const error = document.createElement("p");
      error.className = "error";
      error.id = `${input.id}-error`;
      error.hidden = true;
      const described = [error.id];
      let hint;
      if (spec.hint) {
        const key = typeof spec.hint === "string" ? spec.hint : `h.${spec.path}`;
        hint = document.createElement("p");
        hint.className = "hint";
        hint.id = `${input.id}-hint`;
        hint.dataset.i18n = key;
        hint.textContent = t(key);
        described.unshift(hint.id);
      }
      input.setAttribute("aria-describedby", described.join(" "));
      if (spec.type === "bool") wrap.append(input, label);
      else wrap.append(label, input);
      if (hint) wrap.appendChild(hint);
      wrap.appendChild(error);
      body.appendChild(wrap);
    }
    container.appendChild(box);
  }
  for (const spec of specs.flatMap((g) => g.fields)) {
    if (spec.list) {
      const list = document.createElement("datalist");
      list.id = `${form}-${spec.list}-list`;
      container.appendChild(list);
    }
  }
  formEl._specs = specs;
  resetForm(formEl);
}

export function modeOf(formEl) {
  const checked = formEl.querySelector('input[type="radio"][name$="-model-mode"]:checked');
  return checked ? checked.value : null;
}

/** "auto" or "manual": what the layout switch says (null in a form without one). */
export function layoutOf(formEl) {
  const select = formEl.querySelector("select[data-layout-switch]");
  return select ? select.value : null;
}

export function showMode(formEl) {
  const mode = modeOf(formEl);
  for (const wrap of formEl.querySelectorAll(".field[data-modes]")) {
    wrap.hidden = !wrap.dataset.modes.split(" ").includes(mode);
  }
  const layout = layoutOf(formEl);
  for (const wrap of formEl.querySelectorAll(".field[data-layout]")) wrap.hidden = layout === "auto";
}

function inputFor(formEl, spec) {
  return spec.type === "const" ? null : formEl.querySelector(`#${fieldId(formEl.id.replace(/-form$/, ""), spec)}`);
}

function activeSpecs(formEl) {
  const mode = modeOf(formEl);
  const manual = layoutOf(formEl) !== "auto";
  return formEl._specs.flatMap((g) => g.fields).filter((s) => (!s.modes || s.modes.includes(mode)) && (!s.layout || manual));
}

/** Put every field back to its default. */
export function resetForm(formEl) {
  for (const spec of formEl._specs.flatMap((g) => g.fields)) {
    const input = inputFor(formEl, spec);
    if (!input) continue;
    if (spec.type === "bool") input.checked = spec.value === true;
    else if (spec.type === "select") {
      input.value = spec.value ?? "";
      if (input.selectedIndex < 0 && input.options.length) input.selectedIndex = 0; // no "(automatic)": the first
    } else input.value = spec.value ?? "";
  }
  const preset = formEl.querySelector('input[value="preset"][name$="-model-mode"]');
  if (preset) preset.checked = true;
  showMode(formEl);
}

/** Show a layout the API chose (assumptions.auto.chosen_parallelism) in the manual fields, switched to manual. */
export function fillLayout(formEl, parallelism) {
  const select = formEl.querySelector("select[data-layout-switch]");
  if (!select) return;
  select.value = "manual";
  for (const spec of formEl._specs.flatMap((g) => g.fields).filter((s) => s.layout)) {
    const input = inputFor(formEl, spec);
    const value = parallelism?.[spec.path.split(".").pop()];
    if (!input) continue;
    if (spec.type === "bool") input.checked = value === true;
    else input.value = value === undefined || value === null ? "" : String(value);
    if (spec.type === "select" && input.selectedIndex < 0 && input.options.length) input.selectedIndex = 0;
  }
  showMode(formEl);
}

/** The request body the form says. Throws {path, message} for a config.json that is not JSON. */
export function readForm(formEl) {
  const out = {};
  for (const spec of activeSpecs(formEl)) {
    if (spec.type === "const") {
      setPath(out, spec.path, spec.value);
      continue;
    }
    const input = inputFor(formEl, spec);
    if (!input) continue;
    if (spec.type === "bool") {
      if (input.checked) setPath(out, spec.path, true);
      else if (spec.sendFalse) setPath(out, spec.path, false);
      continue;
    }
    const raw = input.value.trim();
    if (raw === "") continue;
    let value = raw;
    if (spec.layoutSwitch) {
      if (raw === "auto") setPath(out, spec.path, "auto");
      continue; // manual: the degrees below say the layout
    }
    if (spec.type === "int") value = numberOrText(raw, true);
    else if (spec.type === "float") value = numberOrText(raw, false);
    else if (spec.type === "percent") {
      const v = numberOrText(raw, false);
      value = typeof v === "number" ? Number((v / 100).toPrecision(12)) : v;
    } else if (spec.type === "devices") value = raw.toLowerCase() === "auto" ? "auto" : numberOrText(raw, true);
    else if (spec.type === "deadline") value = deadlineValue(raw, lang());
    else if (spec.type === "select" && spec.number) value = Number(raw);
    else if (spec.type === "select" && spec.bool) value = raw === "true";
    else if (spec.type === "json") {
      try {
        value = JSON.parse(raw);
      } catch (error) {
        throw Object.assign(new Error(t("error.json")), { path: spec.path });
      }
    }
    setPath(out, spec.path, value);
  }
  return out;
}

function detectMode(model) {
  if (!model || typeof model !== "object") return "preset";
  if ("preset" in model) return "preset";
  if ("hf_config" in model) return "hf";
  if ("layers" in model || (model.architecture === "transformer" && !("parameters" in model))) return "shape";
  return "parameters";
}

/** Show `request` in the form (fields it does not name go back to empty). */
export function fillForm(formEl, request) {
  const mode = detectMode(request.model);
  const radio = formEl.querySelector(`input[value="${mode}"][name$="-model-mode"]`);
  if (radio) radio.checked = true;
  showMode(formEl);
  for (const spec of formEl._specs.flatMap((g) => g.fields)) {
    const input = inputFor(formEl, spec);
    if (!input) continue;
    if (spec.modes && !spec.modes.includes(mode)) continue;
    const value = getPath(request, spec.path);
    if (spec.layoutSwitch) {
      // a saved request without a layout meant pure data parallelism: it opens as the manual layout it was
      input.value = value === "auto" ? "auto" : "manual";
      continue;
    }
    if (spec.layout && getPath(request, "hardware.parallelism") === "auto") {
      input.value = "";
      if (spec.type === "bool") input.checked = false;
      if (spec.type === "select" && input.selectedIndex < 0 && input.options.length) input.selectedIndex = 0;
      continue;
    }
    if (spec.type === "bool") {
      input.checked = value === undefined ? spec.sendFalse && spec.value === true : value === true;
    } else if (value === undefined || value === null) {
      input.value = "";
      if (spec.type === "select" && input.selectedIndex < 0 && input.options.length) input.selectedIndex = 0;
    } else if (spec.type === "select") {
      const text = String(value);
      if (![...input.options].some((o) => o.value === text)) {
        const option = document.createElement("option");
        option.value = option.textContent = text;
        input.appendChild(option);
      }
      input.value = text;
    } else if (spec.type === "percent") {
      input.value = typeof value === "number" ? String(Number((value * 100).toPrecision(12))) : String(value);
    } else if (spec.type === "count") {
      input.value = countText(value);
    } else if (spec.type === "deadline") {
      input.value = deadlineText(value);
    } else if (spec.type === "json") {
      input.value = JSON.stringify(value, null, 2);
    } else {
      input.value = String(value);
    }
  }
}

export function clearErrors(formEl) {
  for (const p of formEl.querySelectorAll(".field .error")) {
    p.hidden = true;
    p.textContent = "";
  }
  for (const input of formEl.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
}

/**
 * Mark the fields a problem's `errors` name ("hardware.count", "request.training.tokens", …).
 * Returns the first input marked, or null.
 */
export function showErrors(formEl, errors, prefix = "") {
  let first = null;
  for (const [key, messages] of Object.entries(errors || {})) {
    const path = prefix && key.startsWith(prefix) ? key.slice(prefix.length) : key;
    const input = [...formEl.querySelectorAll("[data-path]")]
      .filter((el) => !el.closest(".field")?.hidden)
      .filter((el) => path === el.dataset.path || path.startsWith(`${el.dataset.path}.`))
      .sort((x, y) => y.dataset.path.length - x.dataset.path.length)[0]; // the field itself before its group
    if (!input) continue;
    input.setAttribute("aria-invalid", "true");
    const error = formEl.querySelector(`#${input.id}-error`);
    if (error) {
      error.textContent = [].concat(messages).join(" ");
      error.hidden = false;
    }
    first = first || input;
  }
  return first;
}
