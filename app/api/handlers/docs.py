"""/openapi.json and /docs: the API described, and a page to browse it.

The page is self-contained (inline CSS and JS, nothing fetched but
./openapi.json from this server) and its Content-Security-Policy forbids
anything else, so it works on machines without internet.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from aiohttp import web

from app.api.openapi import openapi_document

# Set it at application start (`app[OPENAPI] = openapi_document()`) to build the
# document once per application; without it, each request builds it (~10 ms).
OPENAPI = web.AppKey[dict[str, Any]]("openapi")

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 70rem;
  padding: 1rem 2rem; color: #1d2330; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .4rem; border-bottom: 1px solid #ccd; }
h4 { margin: .8rem 0 .3rem; }
code, .path, .name { font-family: ui-monospace, monospace; }
details.op { border: 1px solid #d6d9e0; border-radius: 4px; margin: .3rem 0; }
details.op > summary { cursor: pointer; padding: .35rem .6rem; }
details.op[open] > summary { border-bottom: 1px solid #d6d9e0; }
details.op > :not(summary) { margin-left: .8rem; margin-right: .8rem; }
.method { display: inline-block; min-width: 4.2rem; font-weight: 700; }
.get .method { color: #1b6ac9; } .post .method { color: #17803d; }
.put .method, .patch .method { color: #a05a00; } .delete .method { color: #b3261e; }
.summary, .desc, .note { color: #4a5161; }
.open { font-size: .8rem; background: #eef6ee; border-radius: 3px; padding: 0 .3rem; }
table { border-collapse: collapse; margin: .3rem 0 .6rem; width: 100%; }
th, td { border: 1px solid #e0e3ea; padding: .2rem .45rem; text-align: left;
  vertical-align: top; font-size: .9rem; }
th { background: #f4f5f8; }
.code { margin-right: .4rem; }
.response { margin: .3rem 0 .6rem; }
details.schema > summary { cursor: pointer; font-family: ui-monospace, monospace; }
"""

SCRIPT = r"""
"use strict";
let doc = {};
const METHODS = ["get", "put", "post", "patch", "delete", "head", "options"];
const CHECKS = [["enum", "one of"], ["const", "exactly"], ["format", "format"],
  ["minimum", ">="], ["exclusiveMinimum", ">"], ["maximum", "<="],
  ["exclusiveMaximum", "<"], ["minLength", "min length"],
  ["maxLength", "max length"], ["pattern", "pattern"], ["minItems", "min items"],
  ["maxItems", "max items"], ["minProperties", "min entries"],
  ["maxProperties", "max entries"], ["default", "default"], ["examples", "e.g."]];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function resolve(obj) {
  for (let hops = 0; obj && obj.$ref && hops < 32; hops++) {
    const parts = obj.$ref.replace(/^#\//, "").split("/");
    obj = parts.map(p => p.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((o, k) => (o && Object.hasOwn(o, k) ? o[k] : undefined), doc);
  }
  return obj || {};
}
function link(ref) {
  const name = ref.split("/").pop();
  const a = el("a", "ref", name);
  a.href = "#schema-" + encodeURIComponent(name);
  a.addEventListener("click", () => {
    const target = document.getElementById("schema-" + name);
    if (target) target.open = true;
  });
  return a;
}
function typeOf(s) {
  const span = el("span", "type");
  if (!s || typeof s !== "object") span.textContent = "any";
  else if (s.$ref) span.append(link(s.$ref));
  else if (s.anyOf || s.oneOf) (s.anyOf || s.oneOf).forEach((branch, i) => {
    if (i) span.append(" | ");
    span.append(typeOf(branch));
  });
  else if (s.type === "array") span.append("array of ", typeOf(s.items));
  else if (s.type === "object" && typeof s.additionalProperties === "object"
           && !s.properties) span.append("map of string to ",
                                         typeOf(s.additionalProperties));
  else span.textContent = [].concat(s.type || "any").join(" | ");
  return span;
}
function prose(cls, text, tag) {
  const p = el(tag || "p", cls);
  String(text || "").split("`").forEach((part, i) => {
    p.append(i % 2 ? el("code", null, part) : part);
  });
  return p;
}
function show(v) { return typeof v === "string" ? v : JSON.stringify(v); }
function constraints(s, out) {
  if (!s || typeof s !== "object") return out;
  if (s.$ref) {
    const target = resolve(s);
    if (target.enum) out.push("one of " + target.enum.map(show).join(", "));
  }
  for (const [key, label] of CHECKS) {
    if (s[key] === undefined) continue;
    const v = s[key];
    out.push(label + " " + (Array.isArray(v) ? v.map(show).join(", ")
                                              : key === "default" ? JSON.stringify(v)
                                              : show(v)));
  }
  for (const branch of s.anyOf || s.oneOf || []) constraints(branch, out);
  return out;
}
function row(table, cells, tag) {
  const tr = table.insertRow();
  for (const cell of cells) {
    const td = el(tag || "td");
    td.append(cell === undefined || cell === null ? "" : cell);
    tr.append(td);
  }
  return tr;
}
function propsTable(schema) {
  const s = resolve(schema), box = el("div", "props");
  if (s.description) box.append(prose("desc", s.description));
  if (s.enum) { box.append(el("p", null, "one of " + s.enum.map(show).join(", "))); }
  const props = s.properties || {}, required = new Set(s.required || []);
  if (!Object.keys(props).length) return box;
  const table = el("table");
  const described = Object.values(props).some(p => p.description);
  const heads = ["property", "type", "required", "constraints", "description"];
  row(table, described ? heads : heads.slice(0, 4), "th");
  for (const [name, p] of Object.entries(props)) {
    const cells = [name, typeOf(p), required.has(name) ? "yes" : "",
                   constraints(p, []).join("; ")];
    if (described) cells.push(prose(null, p.description, "span"));
    const tr = row(table, cells);
    tr.dataset.property = name;
    tr.cells[0].className = "name";
  }
  box.append(table);
  if (s.additionalProperties === false) {
    box.append(el("p", "note", "No other properties are accepted."));
  }
  return box;
}
function schemaBlock(media, schema, expand) {
  const box = el("div", "schema-block"), line = el("p");
  line.append(media + ": ", typeOf(schema));
  box.append(line);
  const target = schema && schema.type === "array" ? schema.items : schema;
  const r = resolve(target);
  if (expand && (r.properties || r.enum)) box.append(propsTable(target));
  return box;
}
function renderOp(path, method, op, shared) {
  const d = el("details", "op " + method);
  if (op.operationId) d.id = "op-" + op.operationId;
  const summary = el("summary");
  summary.append(el("span", "method", method.toUpperCase()), " ",
                 el("code", "path", path), " ", el("span", "summary", op.summary));
  if (!(op.security || doc.security || []).length) {
    summary.append(" ", el("span", "open", "no token"));
  }
  d.append(summary);
  if (op.description) d.append(prose("desc", op.description));
  if (op.operationId) d.append(el("p", "note", "operationId: " + op.operationId));
  const params = (shared || []).concat(op.parameters || []).map(resolve);
  if (params.length) {
    d.append(el("h4", null, "Parameters"));
    const table = el("table");
    row(table, ["name", "in", "type", "required", "constraints", "description"],
        "th");
    for (const p of params) {
      row(table, [p.name, p.in, typeOf(p.schema), p.required ? "yes" : "",
                  constraints(p.schema, []).join("; "),
                  prose(null, p.description, "span")]);
    }
    d.append(table);
  }
  if (op.requestBody) {
    const body = resolve(op.requestBody);
    const box = el("div", "request-body");
    box.append(el("h4", null, "Request body"));
    for (const [media, content] of Object.entries(body.content || {})) {
      box.append(schemaBlock(media, content.schema, true));
    }
    d.append(box);
  }
  d.append(el("h4", null, "Responses"));
  for (const [code, raw] of Object.entries(op.responses || {})) {
    const r = resolve(raw), box = el("div", "response"), head = el("p");
    head.append(el("strong", "code", code), " ", prose(null, r.description, "span"));
    box.append(head);
    for (const [name, h] of Object.entries(r.headers || {})) {
      const header = resolve(h), line = el("p", "header");
      line.append("header ", el("code", null, name), ": ", typeOf(header.schema),
                  " - ", prose(null, header.description, "span"));
      box.append(line);
    }
    for (const [media, content] of Object.entries(r.content || {})) {
      box.append(schemaBlock(media, content.schema || {}, Number(code) < 300));
    }
    d.append(box);
  }
  return d;
}
function render() {
  const info = doc.info || {};
  document.title = (info.title || "API") + " " + (info.version || "");
  document.getElementById("title").textContent = document.title;
  document.getElementById("about").replaceWith(prose("desc", info.description));
  const ops = document.getElementById("ops");
  ops.replaceChildren();
  for (const [path, item] of Object.entries(doc.paths || {})) {
    const section = el("section", "path");
    section.append(el("h2", null, path));
    for (const method of METHODS) {
      if (item[method]) section.append(renderOp(path, method, item[method],
                                                item.parameters));
    }
    ops.append(section);
  }
  const schemas = document.getElementById("schemas");
  for (const name of Object.keys((doc.components || {}).schemas || {})) {
    const d = el("details", "schema");
    d.id = "schema-" + name;
    d.append(el("summary", null, name),
             propsTable({$ref: "#/components/schemas/" + name}));
    schemas.append(d);
  }
  document.body.dataset.ready = "true";
}
fetch("./openapi.json", {headers: {Accept: "application/json"}})
  .then(r => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
  .then(d => { doc = d; render(); })
  .catch(e => {
    document.getElementById("status").textContent = "Cannot load the API: " + e;
  });
"""

PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>API reference</title>
<style>{STYLE}</style>
</head>
<body>
<h1 id="title">API reference</h1>
<p id="about" class="desc"></p>
<main id="ops"><p id="status">Loading ./openapi.json</p></main>
<h2>Schemas</h2>
<div id="schemas"></div>
<script>{SCRIPT}</script>
</body>
</html>
"""


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return "'sha256-" + base64.b64encode(raw).decode() + "'"


def _security_headers() -> dict[str, str]:
    """Only the inline style and script above may run, and only this server may
    be fetched from."""
    policy = (
        "default-src 'none'; connect-src 'self'; img-src data:; "
        f"style-src {_digest(STYLE)}; script-src {_digest(SCRIPT)}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


async def openapi_json(request: web.Request) -> web.Response:
    document = request.app.get(OPENAPI)
    if document is None:
        document = openapi_document()
    return web.json_response(document)


async def docs_page(request: web.Request) -> web.Response:
    return web.Response(
        text=PAGE, content_type="text/html", headers=_security_headers()
    )
