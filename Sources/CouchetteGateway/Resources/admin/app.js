// The Admin UI's pages, chosen by the URL: every page has one, so any can be bookmarked or linked from the docs.
//
//   /_admin/                          databases
//   /_admin/logs                      the gateway's log lines as they come; log keys on and off
//   /_admin/db/{db}                   a database: state, online/offline, compact, documents, live changes,
//                                     counters, configuration
//   /_admin/db/{db}/documents/{id}    a document: JSON editor, attachments, revision tree (?new for a new one)
//   /_admin/db/{db}/users             users and roles
//   /_admin/db/{db}/users/{name}      a user (edit, delete, revoke sessions)
//   /_admin/db/{db}/roles/{name}      a role
//   /_admin/db/{db}/sync              the sync function workbench (Live Preview, Deploy To Server)
//   /_admin/db/{db}/access            the access explainer (?user=U&doc=D, ?channel=C)
//   /_admin/db/{db}/channels          channels with document counts; /channels/{name}: its documents, live

import { api, ApiError, segment } from "./api.js";
import { h, show } from "./dom.js";
import { syncPage } from "./sync.js";
import { accessPage } from "./access.js";
import { usersPage, userPage, rolePage } from "./users.js";
import { overviewPage } from "./database.js";
import { documentPage } from "./document.js";
import { channelsPage, channelPage } from "./channels.js";
import { logsPage } from "./logs.js";

const base = "/_admin";

// Uncaught errors are counted on the page (data-errors), where the browser tests look for them in every browser.
function recordError(text) {
  document.body.dataset.errors = String(Number(document.body.dataset.errors || "0") + 1);
  document.body.dataset.lastError = text;
}
window.addEventListener("error", (event) => recordError(String(event.message)));
window.addEventListener("unhandledrejection", (event) => recordError(String(event.reason)));

function route() {
  const parts = location.pathname.replace(/^\/_admin\/?/, "").split("/").filter((part) => part.length > 0)
    .map(decodeURIComponent);
  if (parts.length === 0) return { page: "databases" };
  if (parts[0] === "logs") return { page: "logs" };
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
    link("", "Documents"), link("channels", "Channels"), link("users", "Users"), link("sync", "Sync"),
    link("access", "Access"));
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

async function main() {
  const { page, db, item } = route();
  navigation(db, page === "documents" ? "overview" : page === "roles" ? "users" : page);
  document.title = db ? `${db} · Couchette Admin` : "Couchette Admin";
  try {
    switch (page) {
      case "databases": await databasesPage(); break;
      case "logs": await logsPage(); break;
      case "overview": await overviewPage(db); break;
      case "documents": item ? await documentPage(db, item) : await overviewPage(db); break;
      case "users": item ? await userPage(db, item) : await usersPage(db); break;
      case "roles": item ? await rolePage(db, item) : await usersPage(db); break;
      case "sync": await syncPage(db); break;
      case "access": await accessPage(db); break;
      case "channels": item ? await channelPage(db, item) : await channelsPage(db); break;
      default: show(h("h1", {}, "Not found"), h("p", {}, "This page does not exist."));
    }
  } catch (error) {
    show(h("h1", {}, db || "Couchette Admin"), failure(error));
  }
  document.body.dataset.ready = "true";
}

main();
