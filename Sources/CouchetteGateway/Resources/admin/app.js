// The Admin UI's pages, chosen by the URL: every page has one, so any can be bookmarked or linked from the docs.
//
//   /_admin/                          databases
//   /_admin/db/{db}                   a database: its information and documents
//   /_admin/db/{db}/documents/{id}    a document
//   /_admin/db/{db}/users             users and roles
//   /_admin/db/{db}/users/{name}      a user
//   /_admin/db/{db}/sync              the sync function workbench (Live Preview, Deploy To Server)

import { api, ApiError, segment } from "./api.js";
import { h, show, pretty } from "./dom.js";
import { syncPage } from "./sync.js";

const base = "/_admin";

function route() {
  const parts = location.pathname.replace(/^\/_admin\/?/, "").split("/").filter((part) => part.length > 0)
    .map(decodeURIComponent);
  if (parts.length === 0) return { page: "databases" };
  if (parts[0] !== "db" || parts.length < 2) return { page: "missing" };
  const db = parts[1];
  const section = parts[2] || "overview";
  return { page: section, db, item: parts[3] };
}

function navigation(db, current) {
  const nav = document.getElementById("nav");
  if (!db) {
    nav.replaceChildren();
    return;
  }
  const link = (section, label) =>
    h("a", { href: `${base}/db/${segment(db)}${section ? "/" + section : ""}`, class: current === (section || "overview") ? "current" : null }, label);
  nav.replaceChildren(
    h("span", { class: "db-name" }, db),
    link("", "Documents"), link("users", "Users"), link("sync", "Sync"));
}

function failure(error) {
  const text = error instanceof ApiError ? `${error.status}: ${error.reason}` : String(error);
  return h("p", { class: "error", role: "alert" }, text);
}

async function databasesPage() {
  const names = await api("GET", "/_all_dbs");
  show(
    h("h1", {}, "Databases"),
    h("ul", { class: "list", id: "databases" },
      names.map((name) => h("li", {}, h("a", { href: `${base}/db/${segment(name)}` }, name)))));
}

async function overviewPage(db) {
  const params = new URLSearchParams(location.search);
  const skip = Math.max(0, parseInt(params.get("skip") || "0", 10) || 0);
  const pageSize = 50;
  const [info, all] = await Promise.all([
    api("GET", `/${segment(db)}/`),
    api("GET", `/${segment(db)}/_all_docs?limit=${pageSize}&skip=${skip}`),
  ]);
  const rows = all.rows.map((row) =>
    h("tr", {},
      h("td", {}, h("a", { href: `${base}/db/${segment(db)}/documents/${segment(row.id)}` }, row.id)),
      h("td", { class: "mono" }, row.value.rev)));
  const pager = h("p", { class: "pager" },
    skip > 0 ? h("a", { href: `?skip=${Math.max(0, skip - pageSize)}` }, "← Previous") : null,
    ` ${all.total_rows === 0 ? 0 : skip + 1}–${skip + all.rows.length} of ${all.total_rows} `,
    skip + pageSize < all.total_rows ? h("a", { href: `?skip=${skip + pageSize}` }, "Next →") : null);
  show(
    h("h1", {}, db),
    h("dl", { class: "facts" },
      h("dt", {}, "State"), h("dd", { id: "state" }, info.state),
      h("dt", {}, "Documents"), h("dd", { id: "doc-count" }, info.doc_count),
      h("dt", {}, "Update sequence"), h("dd", {}, info.update_seq)),
    h("h2", {}, "Documents"),
    h("table", { id: "documents" }, h("thead", {}, h("tr", {}, h("th", {}, "ID"), h("th", {}, "Revision"))),
      h("tbody", {}, rows)),
    pager);
}

async function documentPage(db, id) {
  const body = await api("GET", `/${segment(db)}/${segment(id)}?revs=true&show_exp=true`);
  show(
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}` }, `← ${db}`)),
    h("h1", {}, id),
    h("pre", { class: "json", id: "document" }, pretty(body)));
}

async function usersPage(db) {
  const [users, roles] = await Promise.all([
    api("GET", `/${segment(db)}/_user/`),
    api("GET", `/${segment(db)}/_role/`),
  ]);
  show(
    h("h1", {}, "Users"),
    h("ul", { class: "list", id: "users" },
      users.map((name) => h("li", {}, h("a", { href: `${base}/db/${segment(db)}/users/${segment(name)}` }, name)))),
    h("h2", {}, "Roles"),
    h("ul", { class: "list", id: "roles" }, roles.map((name) => h("li", {}, name))));
}

async function userPage(db, name) {
  const user = await api("GET", `/${segment(db)}/_user/${segment(name)}`);
  show(
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}/users` }, "← Users")),
    h("h1", {}, name),
    h("pre", { class: "json", id: "user" }, pretty(user)));
}

async function main() {
  const { page, db, item } = route();
  navigation(db, page === "documents" ? "overview" : page);
  document.title = db ? `${db} · Couchette Admin` : "Couchette Admin";
  try {
    switch (page) {
      case "databases": await databasesPage(); break;
      case "overview": await overviewPage(db); break;
      case "documents": item ? await documentPage(db, item) : await overviewPage(db); break;
      case "users": item ? await userPage(db, item) : await usersPage(db); break;
      case "sync": await syncPage(db); break;
      default: show(h("h1", {}, "Not found"), h("p", {}, "This page does not exist."));
    }
  } catch (error) {
    show(h("h1", {}, db || "Couchette Admin"), failure(error));
  }
  document.body.dataset.ready = "true";
}

main();
