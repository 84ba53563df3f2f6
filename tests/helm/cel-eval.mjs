// SPDX-License-Identifier: Apache-2.0
// Evaluates a ValidatingAdmissionPolicy's CEL the way the API server applies it, with the
// CEL implementation of the npm package @marcbachmann/cel-js (tests/helm/get-cel.sh):
// matchConditions (all true, else the request is not the policy's), then the variables in
// order (each sees object, oldObject, request and the variables before it), then the
// validations in order: the first false one denies with its message (messageExpression
// when given); an evaluation error denies too (failurePolicy Fail).
//
//   node cel-eval.mjs CEL_JS_DIR INPUT.json   ->  one JSON array of results on stdout
// INPUT: {"spec": <the policy's spec>, "cases": [{"name", "object", "oldObject", "request"}]}
// A case may carry "device" instead (a DeviceClass's selectors, resource.k8s.io/v1): the
// spec is then {"validations": [{"expression": <each selector's CEL>}]}, and "allowed"
// says whether every selector selects that device.
// result: {"name", "matched", "allowed", "failed": <validation index or null>, "message"}
import * as fs from "node:fs";
import * as path from "node:path";
import {pathToFileURL} from "node:url";

const dir = process.argv[2];
const input = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const cel = await import(pathToFileURL(path.join(dir, "node_modules", "@marcbachmann", "cel-js", "lib", "index.js")).href);

function run(expr, ctx) {
  return cel.evaluate(expr, ctx);
}

const out = [];
for (const c of input.cases) {
  const ctx = {object: c.object, oldObject: c.oldObject, request: c.request, variables: {}};
  if ("device" in c) ctx.device = c.device;
  const r = {name: c.name, matched: true, allowed: true, failed: null, message: ""};
  try {
    for (const m of input.spec.matchConditions || []) {
      if (run(m.expression, ctx) !== true) { r.matched = false; break; }
    }
    if (r.matched) {
      for (const v of input.spec.variables || []) ctx.variables[v.name] = run(v.expression, ctx);
      (input.spec.validations || []).some((v, i) => {
        if (run(v.expression, ctx) === true) return false;
        r.allowed = false;
        r.failed = i;
        r.message = v.messageExpression ? String(run(v.messageExpression, ctx)) : (v.message || "");
        return true;
      });
    }
  } catch (e) {
    r.allowed = false;
    r.message = "evaluation error: " + e.message;
  }
  out.push(r);
}
console.log(JSON.stringify(out));
