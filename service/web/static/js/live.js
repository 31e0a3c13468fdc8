// Live recalculation: after the first estimate of a form, each change asks again once typing pauses (the older
// answer's request aborted by the caller's runEstimate); a field the page cannot read yet says so in place, and
// focus stays where the person types.
import * as forms from "./forms.js";

export const LIVE_DELAY_MS = 600;

/** Watch `formEl`: `current()` is the answer on screen ({request, scenario}) or null before the first estimate;
 * `run(request, scenario)` asks again. */
export function bindLive(formEl, current, run) {
  let timer;
  const again = () => {
    clearTimeout(timer);
    if (!current()) return;
    timer = setTimeout(() => {
      let request;
      try {
        request = forms.readForm(formEl);
      } catch (error) {
        forms.clearErrors(formEl);
        forms.showErrors(formEl, { [error.path]: [error.message] });
        return;
      }
      if (JSON.stringify(request) === JSON.stringify(current()?.request)) return;
      run(request, current()?.scenario || null);
    }, LIVE_DELAY_MS);
  };
  formEl.addEventListener("input", again);
  formEl.addEventListener("change", again);
  formEl.addEventListener("submit", () => clearTimeout(timer));
}
