// The sync function workbench (/_admin/db/{db}/sync): edit the function, try it on pasted or stored documents as any
// user (Live Preview: a dry run on the server, nothing stored) beside the deployed function, then Deploy To Server.

import { api, apiText, ApiError, segment } from "./api.js";
import { h, show } from "./dom.js";

/** The line an error names ("… (line 3)"), or null. */
function errorLine(reason) {
  const match = /\(line (\d+)\)\s*$/.exec(reason || "");
  return match ? parseInt(match[1], 10) : null;
}

/** A textarea with line numbers beside it; `markLine(n)` flags a line, `markLine(null)` clears it. */
function codeEditor(id, text) {
  const gutter = h("div", { class: "gutter", "aria-hidden": "true" });
  const area = h("textarea", { id, class: "code", spellcheck: "false", autocapitalize: "off", wrap: "off" });
  area.value = text;
  let marked = null;
  const renumber = () => {
    const count = area.value.split("\n").length;
    if (gutter.childElementCount !== count) {
      gutter.replaceChildren(...Array.from({ length: count }, (_, index) => h("div", { "data-line": index + 1 }, index + 1)));
    }
    for (const line of gutter.children) line.classList.toggle("error", Number(line.dataset.line) === marked);
  };
  area.addEventListener("input", renumber);
  // Tab indents (two spaces) instead of leaving the editor; Escape then Tab leaves it.
  let escaped = false;
  area.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { escaped = true; return; }
    if (event.key !== "Tab" || event.shiftKey || escaped) { escaped = false; return; }
    event.preventDefault();
    area.setRangeText("  ", area.selectionStart, area.selectionEnd, "end");
    renumber();
  });
  area.addEventListener("scroll", () => { gutter.scrollTop = area.scrollTop; });
  renumber();
  const element = h("div", { class: "editor" }, gutter, area);
  return {
    element, area,
    markLine(line) { marked = line; renumber(); },
  };
}

/** What one preview result shows: channels, grants, expiry, or the rejection; then the console lines. */
function outcome(result) {
  if (!result) return h("div", { class: "outcome muted" }, "—");
  const parts = [];
  if (result.error) {
    parts.push(h("div", { class: "rejected" }, `${result.status} ${result.error}: ${result.reason}`));
    if (result.detail) parts.push(h("div", { class: "detail" }, result.detail));
  } else {
    const list = (values) => (values.length ? values.join(", ") : "none");
    const grants = (object) => Object.entries(object).map(([name, values]) => `${name} → ${list(values)}`);
    parts.push(h("div", { class: "channels" }, `channels: ${list(result.channels)}`));
    for (const line of grants(result.access)) parts.push(h("div", { class: "access" }, `access: ${line}`));
    for (const line of grants(result.roles)) parts.push(h("div", { class: "roles" }, `roles: ${line}`));
    if (result.expiry) parts.push(h("div", { class: "expiry" }, `expiry: ${result.expiry}`));
  }
  for (const line of result.logs || []) {
    parts.push(h("div", { class: `log log-${line.level}` }, `console.${line.level}: ${line.message}`));
  }
  return h("div", { class: "outcome" }, parts);
}

export async function syncPage(db) {
  const deployed = await apiText(`/${segment(db)}/_config/sync`);
  const editor = codeEditor("source", deployed || "function(doc, oldDoc) {\n  channel(doc.channels);\n}");
  const status = h("p", { id: "status", role: "status", class: "muted" }, deployed ? "The deployed function." : "No sync function is deployed: the default routes doc.channels.");
  const docInput = h("textarea", { id: "doc", class: "code small", spellcheck: "false" });
  docInput.value = JSON.stringify({ _id: "example", type: "task-list", name: "Groceries", owner: "user1" }, null, 2);
  const oldDocInput = h("textarea", { id: "old-doc", class: "code small", spellcheck: "false", placeholder: "empty: a new document" });
  const storedID = h("input", { id: "doc-id", type: "text", placeholder: "a stored document's ID" });
  const random = h("input", { id: "random", type: "checkbox" });
  const sample = h("input", { id: "sample", type: "number", min: "0", max: "1000", value: "0" });
  const user = h("input", { id: "user", type: "text", placeholder: "empty: the admin (require* pass)" });
  const results = h("table", { id: "results" });

  let deployedSource = deployed;

  /** The pasted document and its oldDoc, the pasted one given an ID if it has none (the same for both runs). */
  function pairs() {
    const docText = docInput.value.trim();
    if (!docText) return [];
    const doc = JSON.parse(docText);
    if (doc && typeof doc === "object" && !Array.isArray(doc) && doc._id === undefined) doc._id = "preview";
    const oldText = oldDocInput.value.trim();
    return [{ doc, oldDoc: oldText ? JSON.parse(oldText) : null }];
  }

  /** The edited function's run: the pasted pair, the stored document named, random ones. */
  function editedRequest() {
    const body = { sync: editor.area.value, pairs: pairs() };
    if (storedID.value.trim()) body.doc_ids = [storedID.value.trim()];
    if (random.checked) body.random = true;
    const count = parseInt(sample.value, 10);
    if (count > 0) body.sample = count;
    if (user.value.trim()) body.user = user.value.trim();
    return body;
  }

  /** The deployed function's run over the same documents: the stored ones the edited run drew, by ID. */
  function deployedRequest(edited, pasted) {
    const body = { pairs: pasted, doc_ids: edited.results.slice(pasted.length).map((result) => result.id) };
    if (user.value.trim()) body.user = user.value.trim();
    return body;
  }

  async function preview() {
    editor.markLine(null);
    status.className = "muted";
    status.textContent = "Running…";
    let edited;
    let current;
    let pasted;
    try {
      pasted = pairs();
      edited = await api("POST", `/${segment(db)}/_sync_preview`, editedRequest());
    } catch (error) {
      status.className = "error";
      if (error instanceof SyntaxError) {
        status.textContent = `The document is not valid JSON: ${error.message}`;
        return;
      }
      status.textContent = error instanceof ApiError ? error.reason : String(error);
      editor.markLine(error instanceof ApiError ? errorLine(error.reason) : null);
      return;
    }
    try {
      current = await api("POST", `/${segment(db)}/_sync_preview`, deployedRequest(edited, pasted));
    } catch (error) {
      current = { results: [] };
    }
    const deployedByID = new Map(current.results.map((result) => [result.id, result]));
    results.replaceChildren(
      h("thead", {}, h("tr", {}, h("th", {}, "Document"), h("th", {}, "Edited function"), h("th", {}, "Deployed function"))),
      h("tbody", {}, edited.results.map((result) =>
        h("tr", { "data-id": result.id },
          h("td", { class: "mono" }, result.id),
          h("td", { class: "edited" }, outcome(result)),
          h("td", { class: "deployed" }, outcome(deployedByID.get(result.id)))))));
    status.className = "ok";
    status.textContent = `Live Preview: ${edited.results.length} document${edited.results.length === 1 ? "" : "s"}, nothing stored.`;
  }

  async function deploy() {
    if (!confirm(`Deploy this sync function to ${db}? New writes use it at once; stored documents keep their channels until a resync.`)) return;
    editor.markLine(null);
    try {
      // The compile check (a preview of nothing) names the line of a syntax error before anything changes.
      await api("POST", `/${segment(db)}/_sync_preview`, { sync: editor.area.value });
      await api("PUT", `/${segment(db)}/_config/sync`, editor.area.value, "application/javascript");
      deployedSource = editor.area.value;
      status.className = "ok";
      status.textContent = "Deployed to server.";
      await loadHistory();
    } catch (error) {
      status.className = "error";
      status.textContent = error instanceof ApiError ? error.reason : String(error);
      editor.markLine(error instanceof ApiError ? errorLine(error.reason) : null);
    }
  }

  const impactSample = h("input", { id: "impact-sample", type: "number", min: "0", max: "10000", value: "100" });
  const impactAll = h("input", { id: "impact-all", type: "checkbox" });
  const impactResult = h("div", { id: "impact" });

  /** What deploying the edited function would change for stored documents. */
  async function impact() {
    editor.markLine(null);
    impactResult.replaceChildren(h("p", { class: "muted" }, "Comparing…"));
    const body = { sync: editor.area.value };
    if (impactAll.checked) body.all = true; else body.sample = parseInt(impactSample.value, 10) || 0;
    let report;
    try {
      report = await api("POST", `/${segment(db)}/_sync_impact`, body);
    } catch (error) {
      impactResult.replaceChildren(h("p", { class: "error" }, error instanceof ApiError ? error.reason : String(error)));
      editor.markLine(error instanceof ApiError ? errorLine(error.reason) : null);
      return;
    }
    const list = (values) => (values.length ? values.join(", ") : "none");
    const summary = `${report.changed} of ${report.documents} document${report.documents === 1 ? "" : "s"} change` +
      (report.refused ? `; ${report.refused} would be refused` : "") +
      (report.accepted ? `; ${report.accepted} would be accepted` : "") + ".";
    const principals = Object.entries(report.principals).sort(([a], [b]) => a.localeCompare(b)).map(([name, change]) =>
      h("li", { "data-principal": name }, `${name}: ` +
        [change.gains.length ? `gains ${list(change.gains)}` : null, change.loses.length ? `loses ${list(change.loses)}` : null]
          .filter(Boolean).join("; ")));
    const describe = (change) => {
      const parts = [];
      if (change.refused) parts.push(`refused (${change.refused})`);
      if (change.accepted) parts.push(`accepted (was ${change.accepted})`);
      if (change.channels) parts.push(`channels +[${change.channels.added}] −[${change.channels.removed}]`);
      for (const [kind, entries] of [["access", change.access], ["roles", change.roles]]) {
        for (const [name, diff] of Object.entries(entries || {})) {
          parts.push(`${kind} ${name} +[${diff.added}] −[${diff.removed}]`);
        }
      }
      return parts.join("; ");
    };
    impactResult.replaceChildren(
      h("p", { id: "impact-summary" }, summary),
      principals.length ? h("ul", { id: "impact-principals" }, principals) : null,
      report.changes.length ? h("table", { id: "impact-changes" },
        h("tbody", {}, report.changes.map((change) =>
          h("tr", {}, h("td", { class: "mono" }, h("a", { href: `/_admin/db/${segment(db)}/documents/${segment(change.id)}` }, change.id)),
            h("td", {}, describe(change)))))) : null);
  }

  const historyList = h("ol", { id: "history", class: "history" });

  /** The deployed versions, newest first, each loadable into the editor or deployed again (rollback). */
  async function loadHistory() {
    let history;
    try {
      history = await api("GET", `/${segment(db)}/_config/sync/history`);
    } catch (error) {
      historyList.replaceChildren(h("li", { class: "error" }, error instanceof ApiError ? error.reason : String(error)));
      return;
    }
    if (history.versions.length === 0) {
      historyList.replaceChildren(h("li", { class: "muted" }, "Nothing deployed from here yet."));
      return;
    }
    historyList.replaceChildren(...history.versions.map((entry, index) =>
      h("li", { "data-version": entry.version },
        h("span", { class: "mono" }, `v${entry.version}`), ` ${new Date(entry.deployed).toLocaleString()} `,
        index === 0 ? h("span", { class: "muted" }, "(deployed) ") : null,
        h("button", { type: "button", class: "load", onclick: () => {
          editor.area.value = entry.sync || "";
          editor.area.dispatchEvent(new Event("input"));
          status.className = "muted";
          status.textContent = `Version ${entry.version} loaded into the editor (not deployed).`;
        } }, "Load"),
        index === 0 ? null : h("button", { type: "button", class: "rollback", onclick: () => rollback(entry) }, "Roll back to this"))));
  }

  async function rollback(entry) {
    if (!confirm(`Deploy version ${entry.version} again to ${db}?`)) return;
    try {
      if (entry.sync === null) await api("DELETE", `/${segment(db)}/_config/sync`);
      else await api("PUT", `/${segment(db)}/_config/sync`, entry.sync, "application/javascript");
      deployedSource = entry.sync || "";
      editor.area.value = deployedSource;
      editor.area.dispatchEvent(new Event("input"));
      status.className = "ok";
      status.textContent = `Rolled back to version ${entry.version}.`;
      await loadHistory();
    } catch (error) {
      status.className = "error";
      status.textContent = error instanceof ApiError ? error.reason : String(error);
    }
  }

  const resyncBar = h("progress", { id: "resync-progress", max: "1", value: "0" });
  const resyncStatus = h("span", { id: "resync-status", class: "muted" }, "");

  /** Shows a resync's progress, asking again while it runs. */
  async function followResync() {
    let progress;
    try {
      progress = await api("GET", `/${segment(db)}/_resync`);
    } catch (error) {
      resyncStatus.textContent = error instanceof ApiError ? error.reason : String(error);
      return;
    }
    resyncBar.max = Math.max(1, progress.docs_total);
    resyncBar.value = Math.min(progress.docs_processed, resyncBar.max);
    resyncStatus.textContent = `${progress.status}: ${progress.docs_processed} of ${progress.docs_total} documents, ${progress.docs_changed} changed` +
      (progress.error ? ` (${progress.error})` : "");
    if (progress.status === "running" || progress.status === "stopping") setTimeout(followResync, 250);
  }

  async function resync() {
    if (!confirm(`Re-run the deployed sync function over every document of ${db}? The database stays online.`)) return;
    try {
      await api("POST", `/${segment(db)}/_resync?action=start`);
    } catch (error) {
      resyncStatus.textContent = error instanceof ApiError ? error.reason : String(error);
      return;
    }
    await followResync();
  }

  function revert() {
    editor.area.value = deployedSource || "";
    editor.area.dispatchEvent(new Event("input"));
    editor.markLine(null);
    status.className = "muted";
    status.textContent = "Back to the deployed function.";
  }

  show(
    h("h1", {}, "Sync function"),
    h("div", { class: "toolbar" },
      h("button", { id: "preview", type: "button", onclick: preview }, "Live Preview"),
      h("button", { id: "deploy", type: "button", class: "primary", onclick: deploy }, "Deploy To Server"),
      h("button", { id: "revert", type: "button", onclick: revert }, "Revert to deployed")),
    status,
    editor.element,
    h("h2", {}, "Try it on"),
    h("div", { class: "inputs" },
      h("label", {}, "Document (doc)", docInput),
      h("label", {}, "Old document (oldDoc)", oldDocInput)),
    h("div", { class: "inputs row" },
      h("label", {}, "Stored document", storedID),
      h("label", { class: "inline" }, random, " a random stored document"),
      h("label", {}, "Sample of stored documents", sample),
      h("label", {}, "Run as user", user)),
    h("h2", {}, "Results"),
    results,
    h("h2", {}, "Deployed versions"),
    historyList,
    h("div", { class: "resync" },
      h("button", { id: "resync", type: "button", onclick: resync }, "Resync documents"), " ", resyncBar, " ", resyncStatus),
    h("h2", {}, "Impact before deploy"),
    h("div", { class: "inputs row" },
      h("label", {}, "Random stored documents", impactSample),
      h("label", { class: "inline" }, impactAll, " all documents"),
      h("span", {}, h("button", { id: "impact-run", type: "button", onclick: impact }, "Compare with deployed"))),
    impactResult);
  await loadHistory();
  const running = await api("GET", `/${segment(db)}/_resync`).catch(() => null);
  if (running && running.status !== "idle") await followResync();
}
