// The frequent questions, answered by asking the API (nothing is typed in: the figures are the engine's): how
// much memory a 7B model needs, what each weight precision saves, how many tokens to train on. explain.js loads
// this module the first time the questions are opened.
import { call } from "./api.js";
import { h } from "./dom.js";
import * as forms from "./forms.js";
import { compact, number, t } from "./i18n.js";

const $ = (selector, root = document) => root.querySelector(selector);

const FAQ_MODEL = "llama-2-7b"; // "a 7B model": the catalog's Llama 2 7B preset
const FAQ_ACCELERATOR = "nvidia-h100-sxm-80gb";

async function inference(extra = {}) {
  const body = { model: { preset: FAQ_MODEL }, hardware: { accelerator: FAQ_ACCELERATOR, count: 1 }, output: { suggestions: false, recommendations: false }, ...extra };
  return (await call("POST", "v1/estimates/inference", { body })).data;
}

/** Ask the API the questions' numbers and write the answers. */
export async function answer({ bytes, problemBox }) {
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
