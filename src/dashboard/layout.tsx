/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { raw } from "hono/html";
import type { Child, FC, PropsWithChildren } from "hono/jsx";

export type Section = "overview" | "jobs" | "runs" | "dead" | "schedules";

const NAV: ReadonlyArray<[Section, string, string]> = [
  ["overview", "", "Overview"],
  ["jobs", "/jobs", "Jobs"],
  ["runs", "/runs", "Runs"],
  ["dead", "/dead-letters", "Dead letters"],
  ["schedules", "/schedules", "Schedules"],
];

export const Document: FC<PropsWithChildren<{ title: string; base: string; script?: boolean }>> = ({ title, base, script, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{`${title} · pgtick`}</title>
        <link rel="stylesheet" href={`${base}/style.css`} />
        <link rel="icon" href={`${base}/favicon.ico`} />
        {script ? <script src={`${base}/live.js`} defer /> : null}
      </head>
      <body>{children}</body>
    </html>
  </>
);

/** A region the page's script refreshes in place (see live.ts): its id must be stable and unique. */
export const Live: FC<PropsWithChildren<{ id: string }>> = ({ id, children }) => (
  <div id={id} data-live="">
    {children}
  </div>
);

/** Hidden CSRF field every state-changing form carries. */
export const Csrf: FC<{ token: string }> = ({ token }) => <input type="hidden" name="_csrf" value={token} />;

export interface PageProps {
  readonly title: string;
  readonly base: string;
  readonly section: Section;
  readonly csrf: string;
  readonly notice?: Child;
  readonly alert?: Child;
  /**
   * The page's own address, where a form's answer is this page at the form's address (a refused
   * action): the live script puts it in the address bar and refreshes from it, not from the action.
   */
  readonly canonical?: string;
}

export const Page: FC<PropsWithChildren<PageProps>> = ({ title, base, section, csrf, notice, alert, canonical, children }) => (
  <Document title={title} base={base} script>
    <a class="skip" href="#main">
      Skip to content
    </a>
    <header class="top">
      <a class="brand" href={`${base}/`}>
        pgtick
      </a>
      {/* On a phone the nav folds behind this toggle (CSS only: the pages work without their script). */}
      <input type="checkbox" id="menu" class="menu-t" aria-label="Menu" />
      <label for="menu" class="menu-b" aria-hidden="true">
        Menu
      </label>
      <nav aria-label="Dashboard">
        {NAV.map(([key, path, label]) => (
          <a href={`${base}${path || "/"}`} aria-current={key === section ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <form method="post" action={`${base}/logout`}>
        <Csrf token={csrf} />
        <button type="submit">Log out</button>
      </form>
    </header>
    <main id="main" data-url={canonical}>
      <h1>{title}</h1>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {alert ? (
        <p class="alert" role="alert">
          {alert}
        </p>
      ) : null}
      {children}
    </main>
  </Document>
);
