// SPDX-License-Identifier: Apache-2.0
// Evaluates DRA device selectors the way the scheduler's allocator does (resource.k8s.io/v1,
// with the CEL of the npm package @marcbachmann/cel-js, tests/helm/get-cel.sh): each
// device of the ResourceSlices as the CEL variable `device` {driver, attributes (grouped
// by domain: an unqualified name is in the driver's domain, "resource.kubernetes.io/x"
// in resource.kubernetes.io), capacity, allowMultipleAllocations}; a request's
// DeviceClass selectors first, then its own, in order, stopping at the first false; a
// result other than true or false, or an evaluation error, fails the request (the
// allocator aborts).
//
//   node cel-device.mjs CEL_JS_DIR INPUT.json  ->  one JSON object on stdout
// INPUT: {"slices": [ResourceSlice...], "classes": {name: [expression...]},
//         "requests": [{"name", "class", "selectors": [expression...]}]}
// output: {request name: {"devices": [device name...]} or {"error": message}}
import * as fs from "node:fs";
import * as path from "node:path";
import {pathToFileURL} from "node:url";

const dir = process.argv[2];
const input = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const cel = await import(pathToFileURL(path.join(dir, "node_modules", "@marcbachmann", "cel-js", "lib", "index.js")).href);

function value(v) {
  const k = Object.keys(v);
  if (k.length !== 1) throw new Error("attribute with " + k.length + " values");
  if (k[0] === "int") return BigInt(v.int);
  if (k[0] === "bool" || k[0] === "string") return v[k[0]];
  throw new Error("attribute type " + k[0] + " not evaluated here");
}

function device(slice, d) {
  const driver = slice.spec.driver;
  const attrs = {};
  for (const [name, v] of Object.entries(d.attributes || {})) {
    const i = name.indexOf("/");
    const dom = i < 0 ? driver : name.slice(0, i), id = i < 0 ? name : name.slice(i + 1);
    (attrs[dom] ||= {})[id] = value(v);
  }
  return {driver, attributes: attrs, capacity: {}, allowMultipleAllocations: false};
}

const devs = [];
for (const s of input.slices) for (const d of s.spec.devices || []) devs.push({name: d.name, dev: device(s, d)});
const out = {};
for (const r of input.requests) {
  const exprs = [...(input.classes[r.class] || []), ...(r.selectors || [])];
  const picked = [];
  try {
    for (const {name, dev} of devs) {
      let ok = true;
      for (const e of exprs) {
        const v = cel.evaluate(e, {device: dev});
        if (v !== true && v !== false) throw new Error(`${e}: on ${name}: not a bool: ${v}`);
        if (!v) { ok = false; break; }
      }
      if (ok) picked.push(name);
    }
    out[r.name] = {devices: picked};
  } catch (e) {
    out[r.name] = {error: e.message.split("\n")[0]};
  }
}
console.log(JSON.stringify(out));
