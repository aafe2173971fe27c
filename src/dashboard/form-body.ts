import { declaredOver, readUpTo } from "../body-limit.js";
import { leaveUnread } from "../body-drain.js";
import type { Form } from "./dashboard-app.js";

/** The login form: a password and where to go next. */
export const LOGIN_FORM_BYTES = 16_384;
/** Forms behind the login, the largest an edited payload (urlencoded, so up to three times its size) and a list of ids. */
export const SESSION_FORM_BYTES = 8 * 1_048_576;

/**
 * A form body, read with a byte limit checked before (Content-Length) and while reading, so a body
 * is never buffered whole past it: null when it is larger (what is left of it is the dashboard's last
 * middleware's to read off). A body that does not parse is an empty form.
 * Repeated fields become arrays, as Hono's `parseBody({ all: true })` gives them.
 */
export const readForm = async (req: Request, limit: number): Promise<Form | null> => {
  if (declaredOver(req, limit) !== undefined) return null;
  if (!req.body) return {};
  const read = await readUpTo(req.body, limit);
  if (!("bytes" in read)) return leaveUnread(req, read.over, read.size), null;
  try {
    const data = await new Response(new Blob([read.bytes]), { headers: { "content-type": req.headers.get("content-type") ?? "" } }).formData();
    const form: Form = {};
    for (const [key, value] of data.entries()) {
      const seen = form[key];
      // Pushed in place: a copy per repeat made a body of 40,000 repeats of one field take 26 s of the event loop.
      if (seen === undefined) form[key] = value;
      else if (Array.isArray(seen)) seen.push(value);
      else form[key] = [seen, value];
    }
    return form;
  } catch {
    return {};
  }
};
