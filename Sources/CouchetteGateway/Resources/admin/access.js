// The access explainer (/_admin/db/{db}/access?user=U&doc=D or ?channel=C): why a user can read what they can,
// whether they can read and write a document, and who can read a channel.

import { api, ApiError, segment } from "./api.js";
import { h, show } from "./dom.js";

/** One way a channel or role is held, in words. */
function origin(entry) {
  switch (entry.via) {
    case "public": return "everyone (the public channel)";
    case "admin": return "admin grant";
    case "document": return `document ${entry.doc} (grant at sequence ${entry.seq})`;
    case "role": return entry.how === "document"
      ? `role ${entry.role}, granted to it by document ${entry.doc} (sequence ${entry.seq})`
      : `role ${entry.role} (admin grant to the role)`;
    default: return JSON.stringify(entry);
  }
}

function table(id, object) {
  const names = Object.keys(object).sort();
  return h("table", { id }, h("tbody", {}, names.map((name) =>
    h("tr", { "data-name": name }, h("td", { class: "mono" }, name),
      h("td", {}, object[name].map((entry) => h("div", {}, origin(entry))))))));
}

export async function accessPage(db) {
  const params = new URLSearchParams(location.search);
  const userInput = h("input", { id: "access-user", type: "text", value: params.get("user") || "", placeholder: "user name" });
  const docInput = h("input", { id: "access-doc", type: "text", value: params.get("doc") || "", placeholder: "document ID (optional)" });
  const channelInput = h("input", { id: "access-channel", type: "text", value: params.get("channel") || "", placeholder: "channel" });
  const output = h("div", { id: "access-result" });

  async function explainUser() {
    const user = userInput.value.trim();
    if (!user) return;
    const doc = docInput.value.trim();
    history.replaceState(null, "", `?user=${encodeURIComponent(user)}${doc ? `&doc=${encodeURIComponent(doc)}` : ""}`);
    try {
      const report = await api("GET", `/${segment(db)}/_access?user=${encodeURIComponent(user)}${doc ? `&doc=${encodeURIComponent(doc)}` : ""}`);
      const parts = [];
      if (report.document) {
        const d = report.document;
        const read = !d.exists ? `Document ${d.id} does not exist.`
          : d.can_read ? `${report.user} can read ${d.id} through ${d.read_through.join(", ")}.`
            : `${report.user} cannot read ${d.id}: it is in ${d.channels.length ? d.channels.join(", ") : "no channel"}, which they do not hold.`;
        parts.push(h("p", { id: "access-read", class: d.can_read ? "ok" : "error" }, read));
        if (d.exists) {
          parts.push(h("p", { id: "access-write", class: d.can_write ? "ok" : "error" },
            d.can_write ? `${report.user} can write ${d.id} (the deployed sync function accepts their update).`
              : `${report.user} cannot write ${d.id}: ${d.write_refused}.`));
        }
      }
      parts.push(h("h2", {}, `Channels of ${report.user}`), table("access-channels", report.channels));
      parts.push(h("p", { class: "muted" }, `Effective: ${report.all_channels.join(", ")}`));
      parts.push(h("h2", {}, "Roles"), Object.keys(report.roles).length ? table("access-roles", report.roles) : h("p", { class: "muted" }, "None."));
      output.replaceChildren(...parts);
    } catch (error) {
      output.replaceChildren(h("p", { class: "error" }, error instanceof ApiError ? `${error.status}: ${error.reason}` : String(error)));
    }
  }

  async function explainChannel() {
    const channel = channelInput.value.trim();
    if (!channel) return;
    history.replaceState(null, "", `?channel=${encodeURIComponent(channel)}`);
    try {
      const report = await api("GET", `/${segment(db)}/_access?channel=${encodeURIComponent(channel)}`);
      output.replaceChildren(
        h("h2", {}, `Who can read ${report.channel}`),
        h("p", { id: "channel-users" }, `Users: ${report.users.length ? report.users.join(", ") : "none"}`),
        h("p", { id: "channel-roles" }, `Roles: ${report.roles.length ? report.roles.join(", ") : "none"}`));
    } catch (error) {
      output.replaceChildren(h("p", { class: "error" }, error instanceof ApiError ? `${error.status}: ${error.reason}` : String(error)));
    }
  }

  show(
    h("h1", {}, "Access"),
    h("div", { class: "inputs row" },
      h("label", {}, "User", userInput), h("label", {}, "Document", docInput),
      h("span", {}, h("button", { id: "explain-user", type: "button", onclick: explainUser }, "Explain"))),
    h("div", { class: "inputs row" },
      h("label", {}, "Channel", channelInput),
      h("span", {}, h("button", { id: "explain-channel", type: "button", onclick: explainChannel }, "Who can read it"))),
    output);
  if (params.get("user")) await explainUser();
  else if (params.get("channel")) await explainChannel();
}
