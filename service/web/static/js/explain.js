// What the seeds explain, written for this page and answered with the API's own numbers: the compute-optimal
// (Chinchilla) panel of a training answer (its `scaling` section), and the hook of the frequent questions (faq.js,
// loaded when they are first opened).
import { h } from "./dom.js";
import { compact, number, t } from "./i18n.js";

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

let faq = null; // faq.js, once the questions have been opened

/** The questions' panel: faq.js loads and answers (once) the first time it is opened. */
export function bindFaq(helpers) {
  const panel = document.getElementById("faq");
  if (!panel) return;
  panel.addEventListener("toggle", () => {
    if (!panel.open || faq) return;
    faq = import("./faq.js").then((module) => {
      module.answer(helpers);
      return module;
    });
  });
}

/** Ask again in the page's language (a language switch), if the answers are on screen. */
export function retranslateFaq(helpers) {
  faq?.then((module) => module.answer(helpers));
}
