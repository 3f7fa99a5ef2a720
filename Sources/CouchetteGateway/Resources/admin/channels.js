// Channels (/_admin/db/{db}/channels, /_admin/db/{db}/channels/{name}): every channel with its document count; a
// channel's documents and a live tail of its changes; who can read it.

import { api, segment } from "./api.js";
import { h, show } from "./dom.js";

const base = "/_admin";

export async function channelsPage(db) {
  const { channels } = await api("GET", `/${segment(db)}/_channels`);
  show(
    h("h1", {}, "Channels"),
    h("table", { id: "channels" },
      h("thead", {}, h("tr", {}, h("th", {}, "Channel"), h("th", {}, "Documents"))),
      h("tbody", {}, channels.map((entry) =>
        h("tr", { "data-channel": entry.name },
          h("td", {}, h("a", { href: `${base}/db/${segment(db)}/channels/${segment(entry.name)}` }, entry.name)),
          h("td", {}, entry.documents))))));
}

export async function channelPage(db, name) {
  const feedPath = `/${segment(db)}/_changes?filter=sync_gateway/bychannel&channels=${encodeURIComponent(name)}`;
  const feed = await api("GET", feedPath);
  const documents = h("ul", { id: "channel-documents", class: "list" });
  const tail = h("ol", { id: "channel-tail", class: "changes" });
  const entry = (change) => h("li", { "data-id": change.id },
    h("a", { href: `${base}/db/${segment(db)}/documents/${segment(change.id)}` }, change.id),
    change.removed ? " (left the channel)" : change.deleted ? " (deleted)" : "", ` · seq ${change.seq}`);
  for (const change of feed.results) documents.append(entry(change));
  show(
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}/channels` }, "← Channels")),
    h("h1", {}, `Channel ${name}`),
    h("p", {}, h("a", { href: `${base}/db/${segment(db)}/access?channel=${encodeURIComponent(name)}` }, "Who can read it")),
    h("h2", {}, "Documents"), documents,
    h("h2", {}, "Live changes"), tail);
  let since = feed.last_seq;
  (async () => {
    for (;;) {
      let next;
      try {
        next = await api("GET", `${feedPath}&feed=longpoll&since=${encodeURIComponent(since)}&timeout=25000`);
      } catch {
        return;
      }
      for (const change of next.results) {
        tail.prepend(entry(change));
        while (tail.childElementCount > 50) tail.lastElementChild.remove();
      }
      since = next.last_seq;
    }
  })();
}
