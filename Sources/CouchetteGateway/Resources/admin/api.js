// The admin REST API, as the Admin UI calls it: same-origin requests (the admin port's credentials, if any, are the
// browser's), JSON in and out, failures thrown as ApiError with the gateway's status and reason.

export class ApiError extends Error {
  constructor(status, reason) {
    super(reason);
    this.status = status;
    this.reason = reason;
  }
}

/** Calls the admin API: `body` is sent as JSON, or as given when it is a string with `contentType`. */
export async function api(method, path, body, contentType) {
  const options = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    options.body = typeof body === "string" ? body : JSON.stringify(body);
    options.headers["Content-Type"] = contentType || "application/json";
  }
  const response = await fetch(path, options);
  const text = await response.text();
  let value = null;
  if (text.length > 0) {
    try { value = JSON.parse(text); } catch { value = text; }
  }
  if (!response.ok) {
    const reason = value && typeof value === "object" && value.reason ? value.reason : response.statusText;
    throw new ApiError(response.status, reason);
  }
  return value;
}

/** Reads a text resource (the sync function's source). */
export async function apiText(path) {
  const response = await fetch(path, { credentials: "same-origin" });
  const text = await response.text();
  if (!response.ok) {
    let reason = response.statusText;
    try { reason = JSON.parse(text).reason || reason; } catch { /* not JSON */ }
    throw new ApiError(response.status, reason);
  }
  return text;
}

/** A path segment, percent-encoded. */
export function segment(text) {
  return encodeURIComponent(text);
}
