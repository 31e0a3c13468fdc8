// Unit tests of the page's number handling (service/web/static/js/numbers.js), run by `node --test tests/web/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { deadlineText, deadlineValue, decimalSeparator, logTicks, parseNumber, timeTicks, usdDigits } from "../../../service/web/static/js/numbers.js";

test("a decimal comma is read in every language", () => {
  for (const locale of ["en", "es", "pt-BR", "fr"]) {
    assert.equal(parseNumber("0,04", locale), 0.04, locale);
    assert.equal(parseNumber("0.04", locale), 0.04, locale);
  }
});

test("thousands separators are read as the locale writes them", () => {
  assert.equal(parseNumber("1,234.5", "en"), 1234.5);
  assert.equal(parseNumber("1.234,5", "es"), 1234.5);
  assert.equal(parseNumber("1 234,5", "fr"), 1234.5);
  assert.equal(parseNumber("1\u202f234,5", "fr"), 1234.5);
  assert.equal(parseNumber("1,000", "en"), 1000);
  assert.equal(parseNumber("1,000", "fr"), 1);
  assert.equal(parseNumber("1.000.000", "pt-BR"), 1000000);
  assert.equal(parseNumber("2e9", "fr"), 2e9);
});

test("what is not a number comes back as typed, for the API to name", () => {
  assert.equal(parseNumber("abc", "en"), "abc");
  assert.equal(parseNumber("1,2,3", "en"), "1,2,3");
  assert.equal(parseNumber("1.2.3,4.5", "es"), "1.2.3,4.5");
  assert.equal(parseNumber("", "en"), "");
});

test("the decimal separator of each language", () => {
  assert.equal(decimalSeparator("en"), ".");
  assert.equal(decimalSeparator("fr"), ",");
  assert.equal(decimalSeparator("pt-BR"), ",");
});

test("a deadline is days or an ISO 8601 duration, and shows back as days", () => {
  assert.equal(deadlineValue("45"), 45 * 86400);
  assert.equal(deadlineValue("1,5", "fr"), 1.5 * 86400);
  assert.equal(deadlineValue("p45d"), "P45D");
  assert.equal(deadlineValue("  "), undefined);
  assert.equal(deadlineText(45 * 86400), "45");
  assert.equal(deadlineText("P45D"), "P45D");
});

test("no cents from a thousand dollars on", () => {
  assert.equal(usdDigits(1552381.23), 0);
  assert.equal(usdDigits(-2000), 0);
  assert.equal(usdDigits(999.99), 2);
  assert.equal(usdDigits(2.99), 2);
});

test("log ticks are 1, 2, 5 over narrow ranges and powers of ten over wide ones", () => {
  assert.deepEqual(logTicks(1, 100), [1, 2, 5, 10, 20, 50, 100]);
  assert.deepEqual(logTicks(1, 1e6), [1, 10, 100, 1000, 1e4, 1e5, 1e6]);
});

test("time ticks are round in days when the values are days", () => {
  const { unit, ticks } = timeTicks(1.8 * 86400, 7 * 86400);
  assert.equal(unit.name, "days");
  assert.deepEqual(ticks.map((s) => s / 86400), [2, 5]);
  const narrow = timeTicks(2.31 * 86400, 2.9 * 86400);
  assert.equal(narrow.unit.name, "days");
  assert.deepEqual(narrow.ticks.map((s) => s / 86400), [2.3, 2.9]);
  const minutes = timeTicks(190, 9000);
  assert.equal(minutes.unit.name, "minutes");
  for (const tick of minutes.ticks) assert.ok(Number.isInteger(tick / 60), String(tick));
});
