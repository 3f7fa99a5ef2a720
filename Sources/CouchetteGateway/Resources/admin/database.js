// A database's overview (/_admin/db/{db}): its state with online/offline and compaction, its documents (paged),
// its configuration, a live view of its changes feed, and the gateway's counters as small charts that update.

import { api, ApiError, segment } from "./api.js";
import { h, show, pretty } from "./dom.js";

const base = "/_admin";
const svgNS = "http://www.w3.org/2000/svg";

/** A sparkline of `values` (most recent last), drawn as an SVG polyline. */
function sparkline(values) {
  const width = 160;
  const height = 32;
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("class", "sparkline");
  const line = document.createElementNS(svgNS, "polyline");
  const top = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  line.setAttribute("points", values.map((value, index) => `${(index * step).toFixed(1)},${(height - 2 - (value / top) * (height - 4)).toFixed(1)}`).join(" "));
  svg.append(line);
  return svg;
}

export async function overviewPage(db) {
  const params = new URLSearchParams(location.search);
  const skip = Math.max(0, parseInt(params.get("skip") || "0", 10) || 0);
  const pageSize = 50;
  // Search by ID: the documents whose ID starts with the text.
  const prefix = params.get("id") || "";
  const range = prefix ? `&startkey=${encodeURIComponent(JSON.stringify(prefix))}&endkey=${encodeURIComponent(JSON.stringify(prefix + "\uffff"))}` : "";
  const [info, all, config] = await Promise.all([
    api("GET", `/${segment(db)}/`),
    api("GET", `/${segment(db)}/_all_docs?limit=${pageSize}&skip=${skip}${range}`),
    api("GET", `/${segment(db)}/_config`),
  ]);
  const status = h("p", { id: "db-status", role: "status" });
  const state = h("dd", { id: "state" }, info.state);

  async function setState(online) {
    if (!online && !confirm(`Take ${db} offline? Its clients get 503 until it is back online.`)) return;
    try {
      await api("POST", `/${segment(db)}/${online ? "_online" : "_offline"}`);
      // Going online may be delayed; the state shown is the one the gateway reports now.
      state.textContent = (await api("GET", `/${segment(db)}/`)).state;
      status.className = "ok";
      status.textContent = online ? "Bringing the database online." : "The database is offline.";
    } catch (error) {
      status.className = "error";
      status.textContent = error instanceof ApiError ? error.reason : String(error);
    }
  }

  async function compact() {
    if (!confirm(`Compact ${db}? Bodies of old revisions are dropped.`)) return;
    try {
      const result = await api("POST", `/${segment(db)}/_compact`);
      status.className = "ok";
      status.textContent = `Compacted: ${result.revs} old revision bodies removed.`;
    } catch (error) {
      status.className = "error";
      status.textContent = error instanceof ApiError ? error.reason : String(error);
    }
  }

  const rows = all.rows.map((row) =>
    h("tr", {},
      h("td", {}, h("a", { href: `${base}/db/${segment(db)}/documents/${segment(row.id)}` }, row.id)),
      h("td", { class: "mono" }, row.value.rev)));
  const search = prefix ? `&id=${encodeURIComponent(prefix)}` : "";
  const more = all.rows.length === pageSize;
  const pager = h("p", { class: "pager" },
    skip > 0 ? h("a", { href: `?skip=${Math.max(0, skip - pageSize)}${search}` }, "← Previous") : null,
    prefix ? ` ${all.rows.length === 0 ? "no" : `${skip + 1}–${skip + all.rows.length}`} document IDs starting with “${prefix}” `
      : ` ${all.total_rows === 0 ? 0 : skip + 1}–${skip + all.rows.length} of ${all.total_rows} `,
    (prefix ? more : skip + pageSize < all.total_rows) ? h("a", { href: `?skip=${skip + pageSize}${search}` }, "Next →") : null);
  const searchInput = h("input", { id: "doc-search", type: "search", value: prefix, placeholder: "document ID starts with…" });
  searchInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter") location.search = searchInput.value ? `?id=${encodeURIComponent(searchInput.value)}` : "";
  });
  const changes = h("ol", { id: "live-changes", class: "changes", reversed: true });
  const counters = h("div", { id: "counters", class: "counters" });

  show(
    h("h1", {}, db),
    h("dl", { class: "facts" },
      h("dt", {}, "State"), state,
      h("dt", {}, "Documents"), h("dd", { id: "doc-count" }, info.doc_count),
      h("dt", {}, "Update sequence"), h("dd", { id: "update-seq" }, info.update_seq)),
    h("div", { class: "toolbar" },
      h("button", { id: "go-offline", type: "button", onclick: () => setState(false) }, "Take offline"),
      h("button", { id: "go-online", type: "button", onclick: () => setState(true) }, "Bring online"),
      h("button", { id: "compact", type: "button", onclick: compact }, "Compact"),
      h("button", { id: "new-doc", type: "button", onclick: () => {
        const id = prompt("The new document's ID");
        if (id) location.href = `${base}/db/${segment(db)}/documents/${segment(id)}?new`;
      } }, "New document")),
    status,
    h("h2", {}, "Documents"),
    h("p", {}, searchInput),
    h("table", { id: "documents" }, h("thead", {}, h("tr", {}, h("th", {}, "ID"), h("th", {}, "Revision"))),
      h("tbody", {}, rows)),
    pager,
    h("h2", {}, "Live changes"),
    changes,
    h("h2", {}, "Gateway counters"),
    counters,
    h("details", {}, h("summary", {}, "Configuration"), h("pre", { class: "json", id: "config" }, pretty(config))));

  followChanges(db, info.update_seq, changes);
  followCounters(counters);
}

/** Shows each change of the feed as it comes (a longpoll feed, asked again after each answer). */
async function followChanges(db, since, list) {
  let position = since;
  for (;;) {
    let feed;
    try {
      feed = await api("GET", `/${segment(db)}/_changes?feed=longpoll&since=${encodeURIComponent(position)}&timeout=25000`);
    } catch {
      return;  // offline or gone: stop following
    }
    for (const change of feed.results) {
      list.prepend(h("li", { "data-id": change.id },
        h("a", { href: `${base}/db/${segment(db)}/documents/${segment(change.id)}` }, change.id),
        ` ${change.changes.map((entry) => entry.rev).join(", ")}${change.deleted ? " (deleted)" : ""} · seq ${change.seq}`));
      while (list.childElementCount > 20) list.lastElementChild.remove();
    }
    position = feed.last_seq;
  }
}

/** The gateway's request, write and feed counters (/_expvar), as rates per 2 s with a sparkline each. */
async function followCounters(element) {
  const series = { "requests": [], "revisions written": [], "open feeds": [] };
  let previous = null;
  for (;;) {
    let vars;
    try {
      vars = await api("GET", "/_expvar");
    } catch {
      return;
    }
    const now = {
      requests: vars.syncGateway_stats.requests_total,
      revisions: vars.syncGateway_db.revs_added,
      feeds: vars.syncGateway_stats.changesFeeds_active,
    };
    if (previous) {
      series["requests"].push(now.requests - previous.requests);
      series["revisions written"].push(now.revisions - previous.revisions);
    }
    series["open feeds"].push(now.feeds);
    for (const values of Object.values(series)) if (values.length > 30) values.shift();
    previous = now;
    element.replaceChildren(...Object.entries(series).map(([name, values]) =>
      h("div", { class: "counter", "data-counter": name },
        h("div", { class: "muted" }, name), h("div", { class: "value" }, values.length ? values[values.length - 1] : "…"),
        sparkline(values.length ? values : [0]))));
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
