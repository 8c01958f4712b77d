// repomap's page: search, read a file, see the map. Plain JavaScript, no library, no build step.
// It reads the JSON API of `repomap serve` (docs/http-api.md). `repomap map --html` ships this
// same file with the map's data inlined (a <script id="repomap-map-data">): then only the map
// view runs, and selecting a file shows its figures instead of opening it.
"use strict";

const DEBOUNCE_MS = 100;
const MODES = ["hybrid", "text", "symbols", "literal", "data", "commits"];
const KIND_MODES = new Set(["hybrid", "symbols"]); // /api/text has no kind filter
const LANG_MODES = new Set(["hybrid", "text", "symbols", "literal"]); // records have no language
// Files the index outlines (code, docs, and data files by their key paths; languages.py).
const OUTLINED = /\.(py|pyi|rs|c|c\+\+|cc|cpp|cxx|h|hh|hpp|hxx|inl|ipp|md|markdown|txt|json|jsonl|ndjson|toml|ya?ml|csv|tsv)$/i;
const $ = (id) => document.getElementById(id);

// --- state and the URL ------------------------------------------------------------------------

function readUrl() {
  const p = new URLSearchParams(location.search);
  const mode = p.get("mode");
  return {
    view: p.get("view") || "search",
    q: p.get("q") || "",
    mode: MODES.includes(mode) ? mode : "hybrid",
    path: p.get("path") || "",
    lang: p.get("lang") || "",
    kind: p.get("kind") || "",
    file: p.get("file") || "",
    line: parseInt(p.get("line") || "0", 10) || 0,
  };
}

function urlOf(state) {
  const p = new URLSearchParams();
  if (state.view && state.view !== "search") p.set("view", state.view);
  for (const key of ["q", "path", "lang", "kind", "file"]) if (state[key]) p.set(key, state[key]);
  if (state.q && state.mode !== "hybrid") p.set("mode", state.mode);
  if (state.line) p.set("line", String(state.line));
  const query = p.toString();
  return location.pathname + (query ? "?" + query : "");
}

function formState() {
  return {
    view: "search",
    q: $("q").value,
    mode: document.querySelector('input[name="mode"]:checked').value,
    path: $("f-path").value.trim(),
    lang: $("f-lang").value,
    kind: $("f-kind").value,
  };
}

function fillForm(state) {
  $("q").value = state.q;
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.checked = radio.value === state.mode;
  $("f-path").value = state.path;
  $("f-lang").value = state.lang;
  $("f-kind").value = state.kind;
  $("f-kind").disabled = !KIND_MODES.has(state.mode);
  $("f-lang").disabled = !LANG_MODES.has(state.mode);
}

// --- the API -------------------------------------------------------------------------------------

async function api(path, params, signal, method = "GET") {
  const clean = {};
  for (const [key, value] of Object.entries(params)) if (value !== "" && value != null) clean[key] = value;
  let response;
  if (method === "POST") {
    response = await fetch(path, {
      method: "POST", body: JSON.stringify(clean), signal, headers: { "Content-Type": "application/json" },
    });
  } else {
    const query = new URLSearchParams(clean).toString();
    response = await fetch(path + (query ? "?" + query : ""), { signal });
  }
  const data = await response.json();
  if (!response.ok) throw new Error((data.error && data.error.message) || response.statusText);
  return data;
}

// Each mode as one request and its hits as {file, line, label, text, spans}.
function searchRequest(state, signal) {
  const common = { pathPrefix: state.path, lang: state.lang };
  if (state.mode === "hybrid") {
    return api("/api/search", { q: state.q, topK: 50, kind: state.kind, ...common }, signal, "POST")
      .then((data) => ({ data, hits: data.results.map((r) => {
        // the head, then the lines holding the question's words (`12: line`)
        const text = [firstLines(r.snippet), ...(r.match_lines || []).map((m) => `${m.line}: ${m.text}`)]
          .join("\n");
        return { file: r.file_path, line: r.line_number, label: `${r.kind} ${r.name || ""}`.trim(),
          text, spans: termSpans(text, state.q) };
      }) }));
  }
  if (state.mode === "symbols") {
    return api("/api/symbols", { q: state.q, topK: 50, kind: state.kind, ...common }, signal)
      .then((data) => ({ data, hits: data.results.map((r) => {
        const text = r.signature || r.qualified_name;
        return { file: r.file_path, line: r.line_number, label: `${r.kind} ${r.qualified_name}`, text,
          spans: termSpans(text, state.q) };
      }) }));
  }
  if (state.mode === "data") {  // records of CSV, JSON, TOML and YAML files: exact text
    return api("/api/data", { q: state.q, topK: 50, pathPrefix: state.path }, signal)
      .then((data) => ({ data, hits: data.results.map((r) => {
        const fields = Object.entries(r.fields || {});
        const text = (fields.length === 1 && fields[0][0] === "value"
          ? `${r.key} = ${fields[0][1]}`
          : `${r.key}: ${fields.map(([name, value]) => `${name}=${value}`).join(", ")}`).slice(0, 300);
        return { file: r.file_path, line: r.line || 1, label: r.match_field, text,
          spans: exactSpans(text, state.q) };
      }) }));
  }
  if (state.mode === "commits") {  // HEAD's history: exact text in subject, body, author, paths
    return api("/api/commits", { q: state.q, topK: 50, pathPrefix: state.path }, signal)
      .then((data) => ({ data, hits: data.results.map((r) => {
        const text = r.match_field === "subject" ? r.subject : `${r.subject}\n${r.match_snippet}`;
        return { file: "commits", line: r.id.slice(0, 10), open: false,
          label: `${r.commit_time.slice(0, 10)} ${r.author_name}`, text, spans: exactSpans(text, state.q) };
      }) }));
  }
  const mode = state.mode === "literal" ? "literal" : "fts";
  return api("/api/text", { q: state.q, mode, topK: 50, ...common }, signal)
    .then((data) => ({ data, hits: data.results.map((r) => ({
      file: r.file_path, line: r.match_line || r.line_number, label: r.element_type,
      text: r.snippet, spans: r.highlights && r.highlights.length ? r.highlights : termSpans(r.snippet, state.q),
    })) }));
}

// [start, end) of each exact, case-sensitive occurrence of the query (data and commits modes).
function exactSpans(text, query) {
  const spans = [];
  const needle = query.trim();
  if (!needle) return spans;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) spans.push([at, at + needle.length]);
  return spans;
}

function firstLines(text) {
  const lines = (text || "").split("\n").filter((line) => line.trim());
  return lines.slice(0, 3).join("\n");
}

// [start, end) of each query word (2+ characters) in text, case-insensitively.
function termSpans(text, query) {
  const words = (query.match(/[\p{L}\p{N}_]{2,}/gu) || []).map((w) => w.toLowerCase());
  const lower = text.toLowerCase();
  const spans = [];
  for (const word of new Set(words)) {
    for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + word.length)) spans.push([at, at + word.length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else merged.push([...span]);
  }
  return merged;
}

function highlightedText(text, spans) {
  const out = document.createDocumentFragment();
  let at = 0;
  for (const [start, end] of spans) {
    if (start < at || end > text.length) continue;
    out.append(text.slice(at, start));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(start, end);
    out.append(mark);
    at = end;
  }
  out.append(text.slice(at));
  return out;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

// --- search as you type ----------------------------------------------------------------------------

let searchSeq = 0;
let inFlight = null;
let debounceTimer = 0;
let active = -1;
// For bench/page.py and the tests: when the last input came and when its hits were shown.
window.repomapTimings = { input: 0, shown: 0, q: "", mode: "", seq: 0 };

function scheduleSearch() {
  window.repomapTimings.input = performance.now();
  clearTimeout(debounceTimer);
  debounceTimer = setTimeout(runSearch, DEBOUNCE_MS);
}

async function runSearch(push = false) {
  const state = formState();
  $("f-kind").disabled = !KIND_MODES.has(state.mode);
  $("f-lang").disabled = !LANG_MODES.has(state.mode);
  const url = urlOf(state);
  if (url !== location.pathname + location.search) history[push ? "pushState" : "replaceState"](null, "", url);
  const seq = ++searchSeq;
  if (inFlight) inFlight.abort();
  inFlight = new AbortController();
  if (!state.q.trim()) {
    $("results").replaceChildren();
    $("status").textContent = "Type to search. Arrow keys move through the hits, Enter opens one.";
    $("q").setAttribute("aria-expanded", "false");
    return;
  }
  let found;
  try {
    found = await searchRequest(state, inFlight.signal);
  } catch (error) {
    if (error.name === "AbortError" || seq !== searchSeq) return;
    $("results").replaceChildren();
    $("status").textContent = error.message;
    $("status").className = "error";
    return;
  }
  if (seq !== searchSeq) return; // a newer query was sent meanwhile: this answer is stale
  renderHits(state, found);
  window.repomapTimings = { ...window.repomapTimings, shown: performance.now(), q: state.q, mode: state.mode, seq };
}

function renderHits(state, found) {
  const groups = new Map();
  for (const hit of found.hits) {
    if (!groups.has(hit.file)) groups.set(hit.file, []);
    groups.get(hit.file).push(hit);
  }
  const box = $("results");
  const nodes = [];
  let index = 0;
  for (const [file, hits] of groups) {
    const heading = el("h2", { id: `g${nodes.length}`, text: file });
    const group = el("div", { class: "group", role: "group", "aria-labelledby": heading.id }, heading);
    for (const hit of hits) {
      if (hit.open === false) {  // a commit: nothing to open, its hash in place of a line
        group.append(el("div", { class: "hit", role: "option", id: `hit-${index++}`, "aria-selected": "false" },
          el("span", { class: "ln", text: String(hit.line) }),
          el("span", { class: "text" }, el("span", { class: "label", text: hit.label }),
            highlightedText(hit.text || "", hit.spans || []))));
        continue;
      }
      const link = el("a", {
        class: "hit", role: "option", id: `hit-${index++}`, "aria-selected": "false",
        href: urlOf({ ...state, view: "file", file: hit.file, line: hit.line }),
        "data-file": hit.file, "data-line": String(hit.line),
      },
      el("span", { class: "ln", text: String(hit.line) }),
      el("span", { class: "text" }, hit.label ? el("span", { class: "label", text: hit.label }) : "",
        highlightedText(hit.text || "", hit.spans || [])));
      link.addEventListener("click", (event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        openFile(hit.file, hit.line);
      });
      group.append(link);
    }
    nodes.push(group);
  }
  box.replaceChildren(...nodes);
  active = -1;
  $("q").removeAttribute("aria-activedescendant");
  $("q").setAttribute("aria-expanded", String(index > 0));
  const status = $("status");
  status.className = "";
  const more = found.data.truncated ? " (more exist: narrow the query or the filters)" : "";
  const notices = (found.data.notices || []).join(" ");
  status.textContent = index
    ? `${index} hit${index === 1 ? "" : "s"} in ${groups.size} file${groups.size === 1 ? "" : "s"}${more}. ${notices}`
    : `Nothing matches ${JSON.stringify(state.q)} in ${state.mode} mode. ${notices}`;
}

function moveActive(step) {
  const hits = [...document.querySelectorAll("#results .hit")];
  if (!hits.length) return;
  if (active >= 0 && hits[active]) {
    hits[active].classList.remove("active");
    hits[active].setAttribute("aria-selected", "false");
  }
  active = Math.max(0, Math.min(hits.length - 1, active + step));
  const hit = hits[active];
  hit.classList.add("active");
  hit.setAttribute("aria-selected", "true");
  hit.scrollIntoView({ block: "nearest" });
  $("q").setAttribute("aria-activedescendant", hit.id);
}

// --- the file view ------------------------------------------------------------------------------

const KEYWORDS = {
  python: "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case self",
  rust: "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
  cpp: "auto bool break case catch char class const constexpr continue default delete do double else enum explicit extern false float for friend if inline int long namespace new noexcept nullptr operator private protected public return short signed sizeof static struct switch template this throw true try typedef typename union unsigned using virtual void volatile while #include #define #if #ifdef #ifndef #endif #else #pragma",
};

// Simple highlighting by regular expressions: comments, strings, numbers and keywords, with
// Python's triple-quoted strings and C-style block comments carried across lines. Not a parser.
function highlighter(language) {
  const words = KEYWORDS[language];
  if (!words) return null;
  const comment = language === "python" ? "#.*" : "\\/\\/.*";
  const keyword = words.split(" ").map((w) => w.replace(/[#]/g, "\\#")).join("|");
  const block = language === "python" ? `"""|'''` : "\\/\\*";
  // in Rust and C++ a single quote is a character (or a lifetime), not a string
  const single = language === "python" ? "'(?:\\\\.|[^'\\\\])*'" : "'(?:\\\\.|[^'\\\\]){1,2}'";
  const token = new RegExp(
    `(${comment})|(${block})|("(?:\\\\.|[^"\\\\])*"|${single})|\\b(\\d[\\d_.xXa-fA-F]*)\\b|(?<![\\w#])(${keyword})\\b`, "g");
  let open = null; // the closing delimiter of a string or comment still open from an earlier line
  return (line) => {
    const out = document.createDocumentFragment();
    let at = 0;
    const span = (cls, text) => out.append(el("span", { class: cls, text }));
    if (open) {
      const end = line.indexOf(open);
      const cls = open === "*/" ? "tok-com" : "tok-str";
      if (end < 0) { span(cls, line); return out; }
      span(cls, line.slice(0, end + open.length));
      at = end + open.length;
      open = null;
    }
    token.lastIndex = at;
    for (let m = token.exec(line); m; m = token.exec(line)) {
      out.append(line.slice(at, m.index));
      if (m[2]) { // a triple quote or /*: closed on this line, or left open
        const close = m[2] === "/*" ? "*/" : m[2];
        const cls = m[2] === "/*" ? "tok-com" : "tok-str";
        const end = line.indexOf(close, m.index + m[2].length);
        if (end < 0) {
          span(cls, line.slice(m.index));
          open = close;
          return out;
        }
        span(cls, line.slice(m.index, end + close.length));
        at = end + close.length;
        token.lastIndex = at;
        continue;
      }
      span(m[1] ? "tok-com" : m[3] ? "tok-str" : m[4] ? "tok-num" : "tok-kw", m[0]);
      at = m.index + m[0].length;
    }
    out.append(line.slice(at));
    return out;
  };
}

let fileSeq = 0;

function openFile(file, line, push = true) {
  const state = { ...formState(), view: "file", file, line };
  history[push ? "pushState" : "replaceState"](null, "", urlOf(state));
  showFile(state);
}

async function showFile(state) {
  showView("file");
  const seq = ++fileSeq;
  $("file-title").textContent = state.file;
  $("file-meta").textContent = "loading…";
  $("back").href = urlOf({ ...state, view: "search", file: "", line: 0 });
  let text, outline;
  try {
    [text, outline] = await Promise.all([
      api("/api/file", { path: state.file, maxLines: 20000 }),
      OUTLINED.test(state.file) ? api("/api/outline", { path: state.file }).catch(() => null) : null,
    ]);
  } catch (error) {
    $("file-meta").textContent = error.message;
    $("source").replaceChildren();
    return;
  }
  if (seq !== fileSeq) return;
  const paint = highlighter(text.language);
  const rows = text.lines.map((content, i) => {
    const number = text.startLine + i;
    return el("div", { class: "line", id: `L${number}` },
      el("a", { class: "num", href: urlOf({ ...state, line: number }), "aria-label": `line ${number}`, text: String(number) }),
      el("span", { class: "code" }, paint ? paint(content) : content));
  });
  $("source").replaceChildren(...rows);
  $("file-meta").textContent = `${text.language || "text"} · ${text.totalLines} lines` +
    (text.truncated ? ` · first ${text.lines.length} shown` : "") +
    (paint ? "" : " · no highlighting");
  renderOutline(state, outline);
  markLine(state.line);
}

function renderOutline(state, outline) {
  const entries = (outline && outline.files && outline.files[0] && outline.files[0].entries) || [];
  const list = el("ul");
  for (const entry of entries) {
    const link = el("a", { href: urlOf({ ...state, line: entry.start_line }), title: `${entry.kind} ${entry.name}` + (entry.start_line ? ` (line ${entry.start_line})` : "") },
      el("span", { class: "kind", text: entry.kind }), entry.name);
    link.style.paddingLeft = `${0.2 + entry.depth * 0.9}rem`;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      history.replaceState(null, "", link.getAttribute("href"));
      markLine(entry.start_line);
    });
    list.append(el("li", {}, link));
  }
  $("outline").replaceChildren(el("h2", { class: "visually-hidden", text: "Outline" }),
    entries.length ? list : el("p", { class: "legend", text: "No symbols or headings." }));
}

function markLine(line) {
  for (const old of document.querySelectorAll(".source .line.marked")) old.classList.remove("marked");
  const row = line && $(`L${line}`);
  if (!row) { window.scrollTo(0, 0); return; }
  row.classList.add("marked");
  row.setAttribute("tabindex", "-1");
  row.scrollIntoView({ block: "center" });
  row.focus({ preventScroll: true });
}

// --- the map view -------------------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  node.append(...children);
  return node;
}

// A folder tree from the files' paths: {name, path, children, value (lines), file}.
function folderTree(files) {
  const root = { name: "", path: "", children: new Map(), value: 0 };
  for (const file of files) {
    const parts = file.path.split("/");
    let node = root;
    parts.forEach((part, i) => {
      node.value += Math.max(1, file.lines);
      if (i === parts.length - 1) {
        node.children.set(part + "\u0000", { name: part, path: file.path, value: Math.max(1, file.lines), file });
        return;
      }
      if (!node.children.has(part)) node.children.set(part, { name: part, path: parts.slice(0, i + 1).join("/"), children: new Map(), value: 0 });
      node = node.children.get(part);
    });
  }
  return root;
}

// Squarified treemap (Bruls, Huizing, van Wijk): children laid in rows along the shorter side,
// a row grown while its worst aspect ratio improves.
function squarify(items, x, y, w, h) {
  const out = [];
  const total = items.reduce((sum, item) => sum + item.value, 0);
  if (!total || w <= 0 || h <= 0) return out;
  const scale = (w * h) / total;
  const rest = items.map((item) => ({ item, area: item.value * scale })).sort((a, b) => b.area - a.area);
  const worst = (row, side) => {
    const sum = row.reduce((s, r) => s + r.area, 0);
    let max = 0, min = Infinity;
    for (const r of row) { max = Math.max(max, r.area); min = Math.min(min, r.area); }
    return Math.max((side * side * max) / (sum * sum), (sum * sum) / (side * side * min));
  };
  let row = [];
  while (rest.length) {
    const side = Math.min(w, h);
    const next = rest[0];
    if (!row.length || worst([...row, next], side) <= worst(row, side)) { row.push(rest.shift()); continue; }
    [x, y, w, h] = layRow(row, x, y, w, h, out);
    row = [];
  }
  if (row.length) layRow(row, x, y, w, h, out);
  return out;
}

function layRow(row, x, y, w, h, out) {
  const sum = row.reduce((s, r) => s + r.area, 0);
  if (w >= h) { // a column on the left
    const cw = sum / h;
    let cy = y;
    for (const r of row) { const rh = r.area / cw; out.push({ item: r.item, x, y: cy, w: cw, h: rh }); cy += rh; }
    return [x + cw, y, w - cw, h];
  }
  const rh = sum / w;
  let cx = x;
  for (const r of row) { const rw = r.area / rh; out.push({ item: r.item, x: cx, y, w: rw, h: rh }); cx += rw; }
  return [x, y + rh, w, h - rh];
}

function rankColour(rank, low, high) {
  const t = high > low ? (Math.log(rank) - low) / (high - low) : 0.5;
  const clamp = Math.max(0, Math.min(1, t));
  // from pale blue to deep blue (lightness 92% to 22%)
  return { fill: `hsl(214 70% ${92 - clamp * 70}%)`, dark: clamp > 0.55 };
}

function renderTreemap(data, onFile) {
  const box = $("treemap");
  const width = Math.max(320, Math.round(box.clientWidth || 960));
  const height = Math.round(Math.min(720, Math.max(320, width * 0.6)));
  const ranks = data.files.map((f) => f.rank).filter((r) => r > 0);
  const low = Math.log(Math.min(...ranks, 1));
  const high = Math.log(Math.max(...ranks, 1e-12));
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": `Treemap of ${data.files.length} files` });
  const HEADER = 14;
  const place = (node, x, y, w, h, depth) => {
    const children = [...node.children.values()];
    for (const cell of squarify(children, x, y, w, h)) {
      const child = cell.item;
      if (child.file) {
        const colour = rankColour(child.file.rank || Number.MIN_VALUE, low, high);
        const link = svg("a", { href: urlOf({ view: "file", file: child.path }), class: "file-link", "data-path": child.path,
          "aria-label": `${child.path}, ${child.file.lines} lines, rank ${child.file.rank}` },
        svg("title", {}, `${child.path}\n${child.file.lines} lines · rank ${child.file.rank}`),
        svg("rect", { class: "file", x: cell.x, y: cell.y, width: Math.max(0, cell.w), height: Math.max(0, cell.h), fill: colour.fill }));
        if (cell.w > 60 && cell.h > 14) {
          link.append(svg("text", { x: cell.x + 3, y: cell.y + 11, fill: colour.dark ? "#ffffff" : "#1b1f24" }, clip(child.name, cell.w / 6.5)));
        }
        link.addEventListener("click", (event) => { event.preventDefault(); onFile(child.path); });
        root.append(link);
        continue;
      }
      const labelled = cell.w > 50 && cell.h > HEADER * 2.5 && depth < 3;
      root.append(svg("rect", { x: cell.x, y: cell.y, width: cell.w, height: cell.h, fill: "#eef1f4", stroke: "#8c959f", "stroke-width": 0.8 }));
      if (labelled) root.append(svg("text", { class: "folder", x: cell.x + 3, y: cell.y + 11 }, clip(child.name + "/", cell.w / 7)));
      const top = labelled ? HEADER : 1;
      place(child, cell.x + 1, cell.y + top, cell.w - 2, cell.h - top - 1, depth + 1);
    }
  };
  place(folderTree(data.files), 0, 0, width, height, 0);
  box.replaceChildren(root);
}

function clip(text, chars) {
  const n = Math.floor(chars);
  return text.length <= n ? text : text.slice(0, Math.max(1, n - 1)) + "…";
}

// The top files' dependency graph: nodes on a circle, best-ranked first, arrows source → target.
function renderGraph(data, onFile) {
  const box = $("graph");
  const names = [];
  for (const edge of data.edges) for (const end of [edge.source, edge.target]) if (!names.includes(end)) names.push(end);
  if (!names.length) { box.replaceChildren(el("p", { class: "legend", text: "No dependencies among the top files." })); return; }
  const width = Math.max(320, Math.round(box.clientWidth || 960));
  const height = Math.round(Math.min(640, Math.max(360, width * 0.6)));
  const radius = Math.min(width, height) / 2 - 90;
  const cx = width / 2, cy = height / 2;
  const at = new Map(names.map((name, i) => {
    const angle = (2 * Math.PI * i) / names.length - Math.PI / 2;
    return [name, { x: cx + radius * Math.cos(angle), y: cy + radius * Math.sin(angle), angle }];
  }));
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": `Dependencies among ${names.length} files` },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 16, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#57606a" }))));
  for (const edge of data.edges) {
    const a = at.get(edge.source), b = at.get(edge.target);
    root.append(svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": 0.5 + edge.weight * 4,
      "stroke-opacity": 0.35 + edge.weight * 0.6, "marker-end": "url(#arrow)" },
    svg("title", {}, `${edge.source} uses ${edge.names} names of ${edge.target} (${Math.round(edge.weight * 100)}% of its references)`)));
  }
  for (const name of names) {
    const p = at.get(name);
    const right = Math.cos(p.angle) >= 0;
    const link = svg("a", { href: urlOf({ view: "file", file: name }), class: "node-link", "data-path": name, "aria-label": name },
      svg("title", {}, name), svg("circle", { cx: p.x, cy: p.y, r: 6 }),
      svg("text", { x: p.x + (right ? 9 : -9), y: p.y + 4, "text-anchor": right ? "start" : "end" }, clip(name.split("/").pop(), 28)));
    link.addEventListener("click", (event) => { event.preventDefault(); onFile(name); });
    root.append(link);
  }
  box.replaceChildren(root);
}

function renderTopFiles(data, onFile) {
  const rows = data.files.slice(0, 25).map((file) => {
    const link = el("a", { href: urlOf({ view: "file", file: file.path }), text: file.path });
    link.addEventListener("click", (event) => { event.preventDefault(); onFile(file.path); });
    return el("tr", {}, el("td", {}, link), el("td", { text: String(file.lines) }), el("td", { text: file.rank.toExponential(2) }));
  });
  document.querySelector("#top-files tbody").replaceChildren(...rows);
}

function renderMap(data, onFile) {
  renderTreemap(data, onFile);
  renderGraph(data, onFile);
  renderTopFiles(data, onFile);
  document.body.dataset.mapFiles = String(data.files.length);
}

let mapData = null;
async function showMap() {
  showView("map");
  if (!mapData) {
    $("treemap").replaceChildren(el("p", { class: "legend", text: "loading…" }));
    try {
      mapData = await api("/api/map", { edgeFiles: 30, maxEdges: 120 });
    } catch (error) {
      $("treemap").replaceChildren(el("p", { class: "error", text: error.message }));
      return;
    }
  }
  renderMap(mapData, (path) => openFile(path, 0));
}

// The file's figures, for the self-contained map (no server to read the file from).
function showDetail(data, path) {
  const file = data.files.find((f) => f.path === path);
  const uses = data.edges.filter((e) => e.source === path).map((e) => e.target);
  const usedBy = data.edges.filter((e) => e.target === path).map((e) => e.source);
  $("file-detail").replaceChildren(
    el("strong", { text: path }), el("br"),
    `${file ? file.lines : "?"} lines · rank ${file ? file.rank : "?"}`, el("br"),
    `uses: ${uses.join(", ") || "—"}`, el("br"), `used by: ${usedBy.join(", ") || "—"}`);
}

// --- views and start -------------------------------------------------------------------------

function showView(name) {
  $("search-view").hidden = name !== "search";
  $("file-view").hidden = name !== "file";
  $("map-view").hidden = name !== "map";
  $("search-form").hidden = name === "map";
  $("nav-map").toggleAttribute("aria-current", name === "map");
  if (name === "map") $("nav-map").setAttribute("aria-current", "page");
  document.body.dataset.view = name;
}

function route() {
  const state = readUrl();
  fillForm(state);
  if (state.view === "file" && state.file) return showFile(state);
  if (state.view === "map") return showMap();
  showView("search");
  return runSearch();
}

function start() {
  const inline = document.getElementById("repomap-map-data");
  if (inline) { // `repomap map --html`: the map alone
    const data = JSON.parse(inline.textContent);
    document.querySelector(".top").hidden = true;
    showView("map");
    renderMap(data, (path) => showDetail(data, path));
    return;
  }
  const q = $("q");
  q.addEventListener("input", scheduleSearch);
  q.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") { event.preventDefault(); moveActive(1); }
    else if (event.key === "ArrowUp") { event.preventDefault(); moveActive(-1); }
    else if (event.key === "Enter") {
      event.preventDefault();
      const hits = document.querySelectorAll("#results .hit");
      const hit = hits[Math.max(0, active)];
      if (hit) openFile(hit.dataset.file, Number(hit.dataset.line));
    } else if (event.key === "Escape") { q.value = ""; scheduleSearch(); }
  });
  $("search-form").addEventListener("submit", (event) => event.preventDefault());
  for (const radio of document.querySelectorAll('input[name="mode"]')) radio.addEventListener("change", () => runSearch());
  $("f-path").addEventListener("input", scheduleSearch);
  $("f-lang").addEventListener("change", () => runSearch());
  $("f-kind").addEventListener("change", () => runSearch());
  $("nav-map").addEventListener("click", (event) => {
    event.preventDefault();
    history.pushState(null, "", "/?view=map");
    showMap();
  });
  $("nav-search").addEventListener("click", (event) => {
    event.preventDefault();
    history.pushState(null, "", urlOf({ ...formState(), view: "search" }));
    route().then(() => q.focus());
  });
  $("back").addEventListener("click", (event) => {
    event.preventDefault();
    history.pushState(null, "", $("back").getAttribute("href"));
    route().then(() => q.focus());
  });
  window.addEventListener("popstate", route);
  document.addEventListener("keydown", (event) => {
    if (event.key === "/" && document.activeElement !== q && !(event.target instanceof HTMLInputElement)) {
      event.preventDefault();
      q.focus();
    }
  });
  route();
  if (readUrl().view === "search") q.focus();
}

document.addEventListener("DOMContentLoaded", start);
