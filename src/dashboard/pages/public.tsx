/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import { MIN_PASSWORD, MIN_SECRET } from "../dashboard-settings.js";
import { Document } from "../layout.js";

/** The login form; `error` is a fixed text from the login route (never echoed input). */
export const LoginPage: FC<{ base: string; next: string; error?: string }> = ({ base, next, error }) => (
  <Document title="Log in" base={base}>
    <main id="main" class="login">
      <h1>pgtick dashboard</h1>
      {error ? (
        <p class="alert" role="alert" id="login-error">
          {error}
        </p>
      ) : null}
      <form method="post" action={`${base}/login`}>
        <input type="hidden" name="next" value={next} />
        <label for="password">Dashboard password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          autofocus
          aria-describedby={error ? "login-error" : undefined}
        />
        <button class="primary" type="submit">
          Log in
        </button>
      </form>
    </main>
  </Document>
);

export const UnconfiguredPage: FC<{ base: string; problem: string }> = ({ base, problem }) => (
  <Document title="Dashboard not configured" base={base}>
    <main id="main">
      <h1>The dashboard is not configured</h1>
      <p class="alert" role="alert">
        {problem} The dashboard stays closed until it has a password.
      </p>
      <p>Set these environment variables where this app runs, then redeploy or restart it:</p>
      <dl class="kv">
        <dt>
          <code>DASHBOARD_PASSWORD</code>
        </dt>
        <dd>Required. The password operators log in with, at least {MIN_PASSWORD} characters.</dd>
        <dt>
          <code>DASHBOARD_SECRET</code>
        </dt>
        <dd>
          Optional. Signs the session cookie, at least {MIN_SECRET} random characters (for example the output of{" "}
          <code>openssl rand -base64 32</code>). When unset, a key is derived from the password, so changing the password logs
          everyone out.
        </dd>
        <dt>
          <code>DASHBOARD_SESSION_TTL</code>
        </dt>
        <dd>Optional. How long a login lasts, such as 8h. Default 12h.</dd>
        <dt>
          <code>DASHBOARD_CLIENT_IP_HEADER</code>
        </dt>
        <dd>
          Optional. The header your own proxy sets to the client's address, which the login throttle counts failures by.
          Leave it unset on Vercel, Cloudflare and plain Node, which it reads on its own.
        </dd>
      </dl>
    </main>
  </Document>
);

type NoticeProps = { base: string; title: string; message: string };

/** A page that only says why, with one way on. */
const NoticePage: FC<NoticeProps & { href: string; label: string }> = ({ base, title, message, href, label }) => (
  <Document title={title} base={base}>
    <main id="main">
      <h1>{title}</h1>
      <p class="alert" role="alert">
        {message}
      </p>
      <p>
        <a href={href}>{label}</a>
      </p>
    </main>
  </Document>
);

/** A page the dashboard could not make (the database did not answer): said in HTML, with the way back. */
export const FailedPage: FC<NoticeProps> = (props) => <NoticePage {...props} href={`${props.base}/`} label="Try the overview again" />;

/** A request refused before anything was done (a form from elsewhere, one too large): the way back is to log in again. */
export const RefusedPage: FC<NoticeProps> = (props) => <NoticePage {...props} href={`${props.base}/login`} label="Log in again" />;
