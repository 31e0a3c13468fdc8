// Unit tests of the shared links (share.js) and the exports (exporting.js), run by `node --test tests/web/js/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { answerCsv, csvCell, fileName, flatten, planRows, toCsv } from "../../../service/web/static/js/exporting.js";
import { readShared, withShared } from "../../../service/web/static/js/share.js";

const REQUEST = { model: { preset: "llama-2-70b" }, training: { tokens: "2T", global_batch_size: 1024 }, hardware: { accelerator: "nvidia-h100-sxm-80gb", count: 512, parallelism: "auto" } };

test("a request written in the address reads back the same", () => {
  const search = withShared("?lang=fr", { training: REQUEST });
  assert.deepEqual(readShared(search).training, REQUEST);
  assert.equal(new URLSearchParams(search).get("lang"), "fr");
});

test("null removes a key; arrays are comma lists; filters and ids are read", () => {
  let search = withShared("", { name: "fleet", tag: "q3", compare: [4, 9] });
  assert.deepEqual(readShared(search).filter, { name: "fleet", tag: "q3" });
  assert.deepEqual(readShared(search).compare, [4, 9]);
  search = withShared(search, { compare: null, tag: "" });
  assert.equal(readShared(search).compare, undefined);
  assert.deepEqual(readShared(search).filter, { name: "fleet" });
});

test("a broken or non-object request in the address is ignored", () => {
  assert.equal(readShared("?training=%7Bnope").training, undefined);
  assert.equal(readShared("?inference=%5B1%2C2%5D").inference, undefined);
  assert.deepEqual(readShared("?compare=1,x,-3,7").compare, [1, 7]);
});

test("CSV quotes commas, quotes and line breaks, and defuses formulas", () => {
  assert.equal(csvCell('a "b", c'), '"a ""b"", c"');
  assert.equal(csvCell("line\nbreak"), '"line\nbreak"');
  assert.equal(csvCell("=HYPERLINK(1)"), "'=HYPERLINK(1)");
  assert.equal(csvCell(-5.5), "-5.5");
  assert.equal(csvCell(null), "");
  assert.equal(toCsv([{ a: 1, b: 2 }, { b: 3, c: "x,y" }]), 'a,b,c\r\n1,2,\r\n,3,"x,y"\r\n');
});

test("an answer flattens to dotted paths, every leaf once", () => {
  const flat = flatten({ cost: { total_usd: 1.5, human: { total: "$1.50" } }, notes: ["a", "b"], empty: {} });
  assert.deepEqual(flat, { "cost.total_usd": 1.5, "cost.human.total": "$1.50", "notes.0": "a", "notes.1": "b", empty: "{}" });
  const csv = answerCsv({ request: REQUEST, estimate: { time: { seconds: 3600 } } });
  assert.match(csv, /^field,value\r\n/);
  assert.match(csv, /\r\nrequest\.hardware\.count,512\r\n/);
  assert.match(csv, /\r\nestimate\.time\.seconds,3600\r\n$/);
});

test("plan rows leave out the estimate request and flatten the layout", () => {
  const rows = planRows([{ accelerator: "a100", count: 8, parallelism: { data: 8 }, estimate_request: REQUEST }]);
  assert.deepEqual(rows, [{ accelerator: "a100", count: 8, "parallelism.data": 8 }]);
});

test("chart file names are plain", () => {
  assert.equal(fileName("Coût total (USD) / appareils"), "cout-total-usd-appareils");
  assert.equal(fileName(""), "chart");
});

test("a prediction interval is read only when it is two finite numbers in order", async () => {
  const { intervalRange } = await import("../../../service/web/static/js/doubt.js");
  assert.deepEqual(intervalRange({ p10: 3600, p90: 7200 }), { low: 3600, high: 7200 });
  assert.equal(intervalRange(undefined), null); // answers before the calibration lands
  assert.equal(intervalRange({ p10: null, p90: 5 }), null);
  assert.equal(intervalRange({ p10: 9, p90: 5 }), null);
  assert.equal(intervalRange({ p10: "x", p90: 5 }), null);
});
