// What the seeds explain, written for this page and answered with the API's own numbers: the compute-optimal
// (Chinchilla) panel of a training answer (its `scaling` section), and the frequent questions, each answered by
// asking the API when the questions are opened (nothing is typed in: the figures are the engine's).
import { call } from "./api.js";
import { h } from "./dom.js";
import * as forms from "./forms.js";
import { compact, number, t } from "./i18n.js";

const $ = (selector, root = document) => root.querySelector(selector);

/** The training answer's `scaling` as cards and sentences; null when the answer has none (e.g. not an LM). */
export function scalingSection(scaling) {
  if (!scaling || !Number.isFinite(scaling.compute_optimal_tokens)) return null;
  const ratio = (v) => number(v, { maximumSignificantDigits: 3 });
  const kaplan = scaling.kaplan || {};
  const card = (label, main, base) => h("div", { class: "card" }, h("dt", {}, label), h("dd", {}, main, base ? h("span", { class: "base" }, base) : null));
  return h("section", { id: "scaling" },
    h("h3", { tabindex: "-1" }, t("cx.title")),
    h("p", { class: "hint" }, t("cx.intro")),
    h("dl", { class: "cards" },
      card(t("cx.optimal_tokens"), compact(scaling.compute_optimal_tokens), t("cx.this_run", { n: number(scaling.tokens_per_parameter, { maximumSignificantDigits: 3 }) })),
      card(t("cx.same_compute"), t("cx.params", { n: compact(scaling.compute_optimal_parameters) }), t("cx.on_tokens", { n: compact(scaling.compute_optimal_tokens_for_this_compute) })),
      card(t("cx.loss"), number(scaling.predicted_loss, { maximumFractionDigits: 3 }),
        Number.isFinite(scaling.compute_optimal_loss) ? t("cx.loss_optimal", { n: number(scaling.compute_optimal_loss, { maximumFractionDigits: 3 }) }) : null)),
    Number.isFinite(kaplan.loss_ratio_if_parameters_doubled) && Number.isFinite(kaplan.loss_ratio_if_tokens_doubled)
      ? h("p", {}, t("cx.doubling", { params: ratio(kaplan.loss_ratio_if_parameters_doubled), tokens: ratio(kaplan.loss_ratio_if_tokens_doubled) }))
      : null);
}

// --- frequent questions ---------------------------------------------------------------------------------------

const FAQ_MODEL = "llama-2-7b"; // "a 7B model": the catalog's Llama 2 7B preset
const FAQ_ACCELERATOR = "nvidia-h100-sxm-80gb";

let asked = null;

/** The questions' panel: answered (once) the first time it is opened. */
export function bindFaq({ bytes, problemBox }) {
  const panel = $("#faq");
  if (!panel) return;
  panel.addEventListener("toggle", () => {
    if (panel.open && !asked) asked = answerFaq(bytes, problemBox);
  });
}

/** Ask again in the page's language (a language switch), if the answers are on screen. */
export function retranslateFaq({ bytes, problemBox }) {
  if (asked) asked = answerFaq(bytes, problemBox);
}

async function inference(extra = {}) {
  const body = { model: { preset: FAQ_MODEL }, hardware: { accelerator: FAQ_ACCELERATOR, count: 1 }, output: { suggestions: false, recommendations: false }, ...extra };
  return (await call("POST", "v1/estimates/inference", { body })).data;
}

async function answerFaq(bytes, problemBox) {
  const box = $("#faq-answers");
  box.replaceChildren(h("p", { class: "busy" }, t("busy")));
  try {
    const precisions = forms.choicesOf("inference", "weights.precision");
    const [base, training, ...quantized] = await Promise.all([
      inference(),
      call("POST", "v1/estimates/training", { body: { model: { preset: FAQ_MODEL }, training: { tokens: "1B", global_batch_size: 64, sequence_length: 4096 }, hardware: { accelerator: FAQ_ACCELERATOR, count: 8 }, output: { recommendations: false } } }).then((r) => r.data),
      ...precisions.map((precision) => inference({ weights: { precision } }).then((e) => ({ precision, e })).catch(() => ({ precision, e: null }))),
    ]);
    const name = base.model?.name || FAQ_MODEL;
    const weights = base.memory?.breakdown?.weights;
    const rows = quantized.filter((q) => Number.isFinite(q.e?.memory?.breakdown?.weights)).sort((a, b) => b.e.memory.breakdown.weights - a.e.memory.breakdown.weights);
    const largest = rows[0]?.e.memory.breakdown.weights;
    box.replaceChildren(
      question(t("faq.memory_q"), h("p", {}, t("faq.memory_a", {
        model: name, params: compact(base.model?.total_parameters), precision: base.model?.weights?.precision || "—", weights: bytes(weights),
        total: bytes(base.memory?.per_device_bytes), accelerator: base.hardware?.name || FAQ_ACCELERATOR,
        batch: number(base.memory?.max_batch_size ?? 1),
      }))),
      question(t("faq.quant_q"), h("p", {}, t("faq.quant_a", { model: name })), h("div", { class: "table-wrap" }, h("table", { id: "faq-quant" },
        h("caption", { class: "sr-only" }, t("faq.quant_q")),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("faq.col_precision")), h("th", { scope: "col", class: "num" }, t("faq.col_weights")), h("th", { scope: "col", class: "num" }, t("faq.col_saved")))),
        h("tbody", {}, rows.map((q) => h("tr", {}, h("th", { scope: "row" }, q.precision), h("td", { class: "num" }, bytes(q.e.memory.breakdown.weights)),
          h("td", { class: "num" }, `${number((1 - q.e.memory.breakdown.weights / largest) * 100, { maximumSignificantDigits: 2 })} %`))))))),
      question(t("faq.tokens_q"), h("p", {}, t("faq.tokens_a", {
        model: name, tokens: compact(training.scaling?.compute_optimal_tokens),
        ratio: number((training.scaling?.compute_optimal_tokens || NaN) / (training.model?.total_parameters ?? NaN), { maximumSignificantDigits: 2 }),
      }))));
  } catch (error) {
    box.replaceChildren(problemBox(error));
  }
}

function question(q, ...answer) {
  return h("div", { class: "faq-item" }, h("h3", {}, q), ...answer);
}
