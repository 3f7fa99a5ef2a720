// Small helpers to build the page without HTML strings (no markup injection from stored data).

/** An element: `h("a", {href: "/x", class: "y"}, "text", child…)`. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) {
      element.addEventListener(name.slice(2), value);
    } else if (value === true) {
      element.setAttribute(name, "");
    } else {
      element.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Replaces the page's content. */
export function show(...children) {
  const main = document.getElementById("main");
  main.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
}

/** A JSON value as indented text. */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}
