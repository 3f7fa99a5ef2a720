// A document (/_admin/db/{db}/documents/{id}): its JSON, editable (save, delete, purge), its attachments (download,
// upload), and its revision tree drawn as a graph — winner, conflicts, tombstones — with "keep this branch" to
// resolve a conflict by deleting the other live leaves.

import { api, ApiError, segment } from "./api.js";
import { h, show, pretty } from "./dom.js";

const base = "/_admin";
const svgNS = "http://www.w3.org/2000/svg";

/** The tree of the document's revisions from its leaves' histories: nodes by ID with parent, generation, leaf info. */
function revisionTree(leaves) {
  const nodes = new Map();
  for (const leaf of leaves) {
    const body = leaf.ok;
    const history = body._revisions;
    const ids = history.ids.map((digest, index) => `${history.start - index}-${digest}`);
    ids.forEach((id, index) => {
      const node = nodes.get(id) || { id, generation: history.start - index, parent: ids[index + 1] || null, leaf: false, deleted: false };
      if (index === 0) {
        node.leaf = true;
        node.deleted = body._deleted === true;
      }
      nodes.set(id, node);
    });
  }
  return nodes;
}

/** The tree as an SVG: one row per branch, one column per generation; the winner thick, tombstones hollow. */
function treeGraph(nodes, winner) {
  const leaves = [...nodes.values()].filter((node) => node.leaf).sort((a, b) => (a.id === winner ? -1 : b.id === winner ? 1 : a.id.localeCompare(b.id)));
  const row = new Map();
  leaves.forEach((leaf, index) => {
    for (let node = leaf; node && !row.has(node.id); node = nodes.get(node.parent)) row.set(node.id, index);
  });
  const generations = [...nodes.values()].map((node) => node.generation);
  const first = Math.min(...generations);
  const x = (node) => 30 + (node.generation - first) * 110;
  const y = (node) => 24 + row.get(node.id) * 46;
  const width = 80 + (Math.max(...generations) - first) * 110;
  const height = 40 + leaves.length * 46;
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("id", "revision-tree");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const add = (name, attributes, text) => {
    const element = document.createElementNS(svgNS, name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (text) element.textContent = text;
    svg.append(element);
    return element;
  };
  for (const node of nodes.values()) {
    const parent = nodes.get(node.parent);
    if (parent) add("line", { x1: x(parent), y1: y(parent), x2: x(node), y2: y(node), class: "edge" });
  }
  for (const node of nodes.values()) {
    const classes = ["rev", node.id === winner ? "winner" : "", node.deleted ? "tombstone" : "", node.leaf ? "leaf" : ""].join(" ");
    add("circle", { cx: x(node), cy: y(node), r: 7, class: classes, "data-rev": node.id });
    add("text", { x: x(node) - 24, y: y(node) + 20, class: "rev-label" }, node.id.slice(0, 10));
  }
  return svg;
}

export async function documentPage(db, id) {
  const path = `/${segment(db)}/${segment(id)}`;
  const isNew = new URLSearchParams(location.search).has("new");
  let body = null;
  if (!isNew) body = await api("GET", `${path}?revs=true&show_exp=true&conflicts=true&deleted_conflicts=true`);
  const status = h("p", { id: "doc-status", role: "status" });
  const editor = h("textarea", { id: "doc-json", class: "code", spellcheck: "false" });
  const shown = body ? Object.fromEntries(Object.entries(body).filter(([key]) => !["_revisions", "_conflicts", "_deleted_conflicts"].includes(key))) : {};
  editor.value = pretty(shown);
  const failed = (error) => {
    status.className = "error";
    status.textContent = error instanceof ApiError ? `${error.status}: ${error.reason}` : String(error);
  };

  async function save() {
    let value;
    try { value = JSON.parse(editor.value); } catch (error) { failed(`Not valid JSON: ${error.message}`); return; }
    try {
      const result = await api("PUT", path, value);
      location.href = `${base}/db/${segment(db)}/documents/${segment(id)}?saved=${encodeURIComponent(result.rev)}`;
    } catch (error) { failed(error); }
  }

  async function remove() {
    if (!confirm(`Delete ${id}? A tombstone revision is written (it replicates).`)) return;
    try {
      await api("DELETE", `${path}?rev=${encodeURIComponent(body._rev)}`);
      location.href = `${base}/db/${segment(db)}`;
    } catch (error) { failed(error); }
  }

  async function purge() {
    if (!confirm(`Purge ${id}? It disappears entirely, history included, and the purge does not replicate.`)) return;
    try {
      await api("POST", `/${segment(db)}/_purge`, { [id]: ["*"] });
      location.href = `${base}/db/${segment(db)}`;
    } catch (error) { failed(error); }
  }

  const parts = [
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}` }, `← ${db}`)),
    h("h1", {}, id),
    isNew ? h("p", { class: "muted" }, "A new document: edit its JSON and save.") : null,
    new URLSearchParams(location.search).has("saved") ? h("p", { class: "ok", id: "doc-saved" }, `Saved as ${new URLSearchParams(location.search).get("saved")}.`) : null,
    h("div", { class: "toolbar" },
      h("button", { id: "save-doc", type: "button", class: "primary", onclick: save }, "Save"),
      isNew ? null : h("button", { id: "delete-doc", type: "button", onclick: remove }, "Delete"),
      isNew ? null : h("button", { id: "purge-doc", type: "button", onclick: purge }, "Purge")),
    status,
    editor,
  ];
  if (body) {
    const raw = await api("GET", `/${segment(db)}/_raw/${segment(id)}`);
    const current = Object.entries(raw._sync.channels || {}).filter(([, removal]) => removal === null).map(([name]) => name).sort();
    parts.splice(4, 0, h("dl", { class: "facts", id: "doc-facts" },
      h("dt", {}, "Sequence"), h("dd", { id: "doc-sequence" }, raw._sync.sequence),
      h("dt", {}, "Channels"), h("dd", { id: "doc-channels" }, current.length ? current.join(", ") : "none"),
      h("dt", {}, "Revision"), h("dd", { class: "mono" }, body._rev)));
    parts.push(...(await attachmentsSection(db, id, body, failed)));
    parts.push(...(await treeSection(db, id, body, failed)));
  }
  show(parts);
}

async function attachmentsSection(db, id, body, failed) {
  const path = `/${segment(db)}/${segment(id)}`;
  const attachments = body._attachments || {};
  const file = h("input", { id: "attachment-file", type: "file" });
  async function upload() {
    const chosen = file.files[0];
    if (!chosen) return;
    try {
      const response = await fetch(`${path}/${segment(chosen.name)}?rev=${encodeURIComponent(body._rev)}`, {
        method: "PUT", body: chosen, credentials: "same-origin",
        headers: { "Content-Type": chosen.type || "application/octet-stream" },
      });
      if (!response.ok) throw new ApiError(response.status, (await response.json()).reason);
      location.reload();
    } catch (error) { failed(error); }
  }
  return [
    h("h2", {}, "Attachments"),
    h("ul", { class: "list", id: "attachments" }, Object.entries(attachments).map(([name, meta]) =>
      h("li", {}, h("a", { href: `${path}/${segment(name)}`, download: name }, name),
        ` ${meta.content_type || ""} · ${meta.length ?? "?"} bytes · ${meta.digest || ""}`))),
    h("div", { class: "toolbar" }, file, h("button", { id: "upload", type: "button", onclick: upload }, "Upload")),
  ];
}

async function treeSection(db, id, body, failed) {
  const path = `/${segment(db)}/${segment(id)}`;
  const leaves = (await api("GET", `${path}?open_revs=all&revs=true`)).filter((entry) => entry.ok);
  const nodes = revisionTree(leaves);
  const winner = body._rev;
  const live = leaves.filter((leaf) => leaf.ok._deleted !== true).map((leaf) => leaf.ok._rev);

  async function keep(revision) {
    const others = live.filter((rev) => rev !== revision);
    if (!confirm(`Keep ${revision} and delete the ${others.length} other branch${others.length === 1 ? "" : "es"}?`)) return;
    try {
      for (const rev of others) await api("DELETE", `${path}?rev=${encodeURIComponent(rev)}`);
      location.reload();
    } catch (error) { failed(error); }
  }

  return [
    h("h2", {}, "Revision tree"),
    h("p", { class: "muted" }, `Winner ${winner}; ${live.length} live ${live.length === 1 ? "leaf" : "leaves"}` +
      (live.length > 1 ? " (a conflict)" : "") + "."),
    treeGraph(nodes, winner),
    live.length > 1
      ? h("ul", { id: "branches", class: "list" }, live.map((rev) =>
        h("li", { "data-rev": rev }, h("span", { class: "mono" }, rev), rev === winner ? " (winner) " : " ",
          h("button", { type: "button", class: "keep", onclick: () => keep(rev) }, "Keep this branch"))))
      : null,
  ];
}
