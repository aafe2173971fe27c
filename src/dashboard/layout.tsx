import { raw } from "hono/html";
import type { Child, FC, PropsWithChildren } from "hono/jsx";

export type Section = "overview" | "jobs" | "dead" | "schedules";

const NAV: ReadonlyArray<[Section, string, string]> = [
  ["overview", "", "Overview"],
  ["jobs", "/jobs", "Jobs"],
  ["dead", "/dead-letters", "Dead letters"],
  ["schedules", "/schedules", "Schedules"],
];

export const Document: FC<PropsWithChildren<{ title: string; base: string }>> = ({ title, base, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{`${title} · pgtick`}</title>
        <link rel="stylesheet" href={`${base}/style.css`} />
      </head>
      <body>{children}</body>
    </html>
  </>
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
}

export const Page: FC<PropsWithChildren<PageProps>> = ({ title, base, section, csrf, notice, alert, children }) => (
  <Document title={title} base={base}>
    <a class="skip" href="#main">
      Skip to content
    </a>
    <header class="top">
      <a class="brand" href={`${base}/`}>
        pgtick
      </a>
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
    <main id="main">
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
