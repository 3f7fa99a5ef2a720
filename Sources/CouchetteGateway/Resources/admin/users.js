// Users and roles (/_admin/db/{db}/users, /_admin/db/{db}/users/{name}, /_admin/db/{db}/roles/{name}): list,
// create, edit (password, channels, roles, email, disabled), delete, and revoke a user's sessions.

import { api, ApiError, segment } from "./api.js";
import { h, show, pretty } from "./dom.js";

const base = "/_admin";

/** "a, b" → ["a", "b"]. */
function names(text) {
  return text.split(",").map((name) => name.trim()).filter((name) => name.length > 0);
}

function message(element, error) {
  element.className = "error";
  element.textContent = error instanceof ApiError ? `${error.status}: ${error.reason}` : String(error);
}

export async function usersPage(db) {
  const [users, roles] = await Promise.all([
    api("GET", `/${segment(db)}/_user/`),
    api("GET", `/${segment(db)}/_role/`),
  ]);
  const status = h("p", { id: "users-status", role: "status" });
  const newUser = h("input", { id: "new-user-name", type: "text", placeholder: "name" });
  const newPassword = h("input", { id: "new-user-password", type: "password", placeholder: "password", autocomplete: "new-password" });
  const newChannels = h("input", { id: "new-user-channels", type: "text", placeholder: "channels, comma-separated" });
  const newRole = h("input", { id: "new-role-name", type: "text", placeholder: "name" });
  const newRoleChannels = h("input", { id: "new-role-channels", type: "text", placeholder: "channels, comma-separated" });

  async function createUser() {
    try {
      await api("POST", `/${segment(db)}/_user/`, {
        name: newUser.value.trim(), password: newPassword.value, admin_channels: names(newChannels.value),
      });
      location.href = `${base}/db/${segment(db)}/users/${segment(newUser.value.trim())}`;
    } catch (error) { message(status, error); }
  }

  async function createRole() {
    try {
      await api("POST", `/${segment(db)}/_role/`, { name: newRole.value.trim(), admin_channels: names(newRoleChannels.value) });
      location.reload();
    } catch (error) { message(status, error); }
  }

  show(
    h("h1", {}, "Users"),
    h("ul", { class: "list", id: "users" },
      users.map((name) => h("li", {}, h("a", { href: `${base}/db/${segment(db)}/users/${segment(name)}` }, name)))),
    h("div", { class: "inputs row" }, newUser, newPassword, newChannels,
      h("span", {}, h("button", { id: "create-user", type: "button", onclick: createUser }, "Create user"))),
    h("h2", {}, "Roles"),
    h("ul", { class: "list", id: "roles" },
      roles.map((name) => h("li", {}, h("a", { href: `${base}/db/${segment(db)}/roles/${segment(name)}` }, name)))),
    h("div", { class: "inputs row" }, newRole, newRoleChannels,
      h("span", {}, h("button", { id: "create-role", type: "button", onclick: createRole }, "Create role"))),
    status);
}

export async function userPage(db, name) {
  const path = `/${segment(db)}/_user/${segment(name)}`;
  const user = await api("GET", path);
  const status = h("p", { id: "user-status", role: "status" });
  const password = h("input", { id: "user-password", type: "password", placeholder: "unchanged", autocomplete: "new-password" });
  const channels = h("input", { id: "user-channels", type: "text", value: (user.admin_channels || []).join(", ") });
  const roles = h("input", { id: "user-roles", type: "text", value: (user.admin_roles || []).join(", ") });
  const email = h("input", { id: "user-email", type: "text", value: user.email || "" });
  const disabled = h("input", { id: "user-disabled", type: "checkbox", checked: user.disabled === true });
  const details = h("pre", { class: "json", id: "user" }, pretty(user));

  async function save() {
    const body = { name, admin_channels: names(channels.value), admin_roles: names(roles.value), disabled: disabled.checked };
    if (email.value.trim()) body.email = email.value.trim();
    if (password.value) body.password = password.value;
    try {
      await api("PUT", path, body);
      password.value = "";
      details.textContent = pretty(await api("GET", path));
      status.className = "ok";
      status.textContent = "Saved.";
    } catch (error) { message(status, error); }
  }

  async function revokeSessions() {
    if (!confirm(`Log ${name} out everywhere (delete all their sessions)?`)) return;
    try {
      await api("DELETE", `${path}/_session`);
      status.className = "ok";
      status.textContent = "Sessions revoked.";
      await loadSessions();
    } catch (error) { message(status, error); }
  }

  const sessions = h("ul", { id: "sessions", class: "list" });
  async function loadSessions() {
    try {
      const list = (await api("GET", `${path}/_session`)).sessions;
      sessions.replaceChildren(...(list.length ? list.map((session) =>
        h("li", { "data-session": session.id },
          h("span", { class: "mono" }, `${session.id.slice(0, 8)}…`), ` expires ${new Date(session.expires).toLocaleString()} `,
          h("button", { type: "button", class: "revoke", onclick: async () => {
            if (!confirm(`Revoke this session of ${name}?`)) return;
            try {
              await api("DELETE", `${path}/_session/${segment(session.id)}`);
              await loadSessions();
            } catch (error) { message(status, error); }
          } }, "Revoke"))) : [h("li", { class: "muted" }, "No session.")]));
    } catch (error) { message(status, error); }
  }

  async function remove() {
    if (!confirm(`Delete user ${name}?`)) return;
    try {
      await api("DELETE", path);
      location.href = `${base}/db/${segment(db)}/users`;
    } catch (error) { message(status, error); }
  }

  show(
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}/users` }, "← Users")),
    h("h1", {}, name),
    h("div", { class: "inputs row" },
      h("label", {}, "Password", password), h("label", {}, "Channels", channels),
      h("label", {}, "Roles", roles), h("label", {}, "Email", email)),
    h("p", {}, h("label", { class: "inline" }, disabled, " disabled")),
    h("div", { class: "toolbar" },
      h("button", { id: "save-user", type: "button", class: "primary", onclick: save }, "Save"),
      h("button", { id: "revoke-sessions", type: "button", onclick: revokeSessions }, "Revoke sessions"),
      h("button", { id: "delete-user", type: "button", onclick: remove }, "Delete"),
      h("a", { href: `${base}/db/${segment(db)}/access?user=${encodeURIComponent(name)}` }, "Explain access")),
    status,
    h("h2", {}, "Sessions"),
    sessions,
    details);
  await loadSessions();
}

export async function rolePage(db, name) {
  const path = `/${segment(db)}/_role/${segment(name)}`;
  const role = await api("GET", path);
  const status = h("p", { id: "role-status", role: "status" });
  const channels = h("input", { id: "role-channels", type: "text", value: (role.admin_channels || []).join(", ") });
  const details = h("pre", { class: "json", id: "role" }, pretty(role));

  async function save() {
    try {
      await api("PUT", path, { name, admin_channels: names(channels.value) });
      details.textContent = pretty(await api("GET", path));
      status.className = "ok";
      status.textContent = "Saved.";
    } catch (error) { message(status, error); }
  }

  async function remove() {
    if (!confirm(`Delete role ${name}?`)) return;
    try {
      await api("DELETE", path);
      location.href = `${base}/db/${segment(db)}/users`;
    } catch (error) { message(status, error); }
  }

  show(
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}/users` }, "← Users and roles")),
    h("h1", {}, `Role ${name}`),
    h("div", { class: "inputs row" }, h("label", {}, "Channels", channels)),
    h("div", { class: "toolbar" },
      h("button", { id: "save-role", type: "button", class: "primary", onclick: save }, "Save"),
      h("button", { id: "delete-role", type: "button", onclick: remove }, "Delete")),
    status,
    details);
}
