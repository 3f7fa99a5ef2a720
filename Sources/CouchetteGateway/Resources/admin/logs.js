// Logs (/_admin/logs): the gateway's recent log lines as they are written, filtered by level and log key, and the
// log keys switched on and off at run time (PUT /_logging).

import { api, ApiError } from "./api.js";
import { h, show } from "./dom.js";

const knownKeys = ["HTTP", "HTTP+", "Auth", "CRUD", "Changes", "Access", "Javascript"];

export async function logsPage() {
  const enabled = await api("GET", "/_logging");
  const status = h("p", { id: "logs-status", role: "status" });
  const level = h("select", { id: "log-level" }, ["trace", "debug", "info", "warning", "error"].map((name) =>
    h("option", { value: name, selected: name === "info" }, name)));
  const keyFilter = h("input", { id: "log-key", type: "text", placeholder: "any key" });
  const lines = h("ol", { id: "log-lines", class: "log-lines" });
  let last = 0;

  const toggles = knownKeys.map((key) => {
    const box = h("input", { type: "checkbox", "data-key": key, checked: enabled[key] === true || enabled["*"] === true });
    box.addEventListener("change", async () => {
      try {
        await api("PUT", "/_logging", { [key]: box.checked });
        status.className = "ok";
        status.textContent = `${key} ${box.checked ? "on" : "off"}.`;
      } catch (error) {
        status.className = "error";
        status.textContent = error instanceof ApiError ? error.reason : String(error);
      }
    });
    return h("label", { class: "inline" }, box, ` ${key}`);
  });

  function restart() {
    last = 0;
    lines.replaceChildren();
  }
  level.addEventListener("change", restart);
  keyFilter.addEventListener("change", restart);

  show(
    h("h1", {}, "Logs"),
    h("div", { class: "toolbar", id: "log-keys" }, h("span", { class: "muted" }, "Log keys:"), toggles),
    status,
    h("div", { class: "inputs row" }, h("label", {}, "At least", level), h("label", {}, "Key", keyFilter)),
    lines);

  follow();

  /** Asks for the lines after the last one shown, every second, while the page is open. */
  async function follow() {
    for (;;) {
      let tail;
      try {
        const key = keyFilter.value.trim();
        tail = await api("GET", `/_logging/tail?since=${last}&level=${level.value}${key ? `&key=${encodeURIComponent(key)}` : ""}`);
      } catch {
        return;
      }
      for (const line of tail.lines) {
        lines.append(h("li", { class: `log-${line.level}` },
          h("span", { class: "muted" }, `${line.time} ${line.level} `), line.message));
      }
      while (lines.childElementCount > 500) lines.firstElementChild.remove();
      last = tail.last;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
