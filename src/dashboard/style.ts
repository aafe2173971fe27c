/** The whole stylesheet, served at `style.css` (a constant, so the CSP can say style-src 'self'). */
export const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;--accent:#0a58ca;--ok:#1a7f37;--bad:#b42318;--warn:#9a6700;
  font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);line-height:1.45}
*{box-sizing:border-box}
body{margin:0}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:6px;z-index:2}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:4px 16px;padding:10px 16px;background:#24292f;color:#fff}
header.top .brand{font-weight:700;color:#fff;text-decoration:none;margin-right:8px}
header.top nav{display:flex;flex-wrap:wrap;gap:4px}
header.top nav a{color:#fff;text-decoration:none;padding:6px 10px;border-radius:6px}
header.top nav a[aria-current=page]{background:#57606a}
header.top form{margin-left:auto}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.5rem;margin:8px 0 16px}h1,h2,h3,td,th,a{overflow-wrap:break-word}
h2{font-size:1.15rem;margin:24px 0 8px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:12px}
.card .n{font-size:1.6rem;font-weight:700}
.card .l{color:var(--muted);font-size:.9rem}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.93rem}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88rem}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:10px;overflow:auto;white-space:pre-wrap;word-break:break-word;max-height:420px}
.err{color:var(--bad)}th.err{color:inherit}
.muted{color:var(--muted)}
.clip{max-width:360px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
form.inline{display:inline}
.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin-bottom:12px}.filters>div{min-width:0;max-width:100%}.filters select{width:100%}
.filters label,.field label{display:block;font-size:.85rem;color:var(--muted)}
input,select,textarea{font:inherit;padding:6px 8px;border:1px solid #8c959f;border-radius:6px;background:#fff;color:var(--fg);max-width:100%}
textarea{width:100%;min-height:180px;font-family:ui-monospace,Menlo,Consolas,monospace}
button{font:inherit;padding:6px 12px;border-radius:6px;border:1px solid #1f2328;background:#f6f8fa;color:var(--fg);cursor:pointer;min-height:36px}
button.primary{background:#1f6feb;border-color:#1f6feb;color:#fff}
button.danger{background:#fff;border-color:var(--bad);color:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.notice{padding:10px 12px;border-radius:6px;border:1px solid #8ac4a0;background:#e6f4ea;margin-bottom:12px}
.alert{padding:10px 12px;border-radius:6px;border:1px solid #e5a3a3;background:#fdecea;margin-bottom:12px}
.field-error{color:var(--bad);font-size:.9rem;margin:4px 0 0;padding-left:18px}
body[data-stale]::before,body[data-ended]::before{display:block;padding:6px 12px;background:#fff4e5;border-bottom:1px solid var(--warn);color:#7a4b00}
body[data-stale]::before{content:"Not up to date: the last refresh failed (the server or the database did not answer). Retrying."}
body[data-ended]::before{content:"Not up to date: the session has ended (logged out here or in another tab, or expired). Reload the page to log in again."}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:.8rem;border:1px solid var(--line);background:#fff}
.badge.running{border-color:#1f6feb;color:#0a58ca}.badge.succeeded{border-color:var(--ok);color:var(--ok)}.badge.dead{border-color:var(--bad);color:var(--bad)}.badge.paused{border-color:var(--warn);color:var(--warn)}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;word-break:break-word}
.login{max-width:380px;margin:10vh auto;padding:24px;border:1px solid var(--line);border-radius:10px;background:var(--panel)}
.login input{width:100%;margin:4px 0 12px}
figure{margin:12px 0}
section.card{margin-bottom:16px}section.card h2{margin-top:0}
.ch{display:grid;grid-template-columns:48px minmax(0,1fr);margin:6px 0 14px}
.ch figcaption,.ch .u{grid-column:1/3}
.ch .u,.ch .x{font-size:.75rem;color:var(--muted)}
.ch .x{grid-column:2;display:flex;justify-content:space-between}
.ya{font-size:11px;fill:#57606a}
.plot{border-left:1px solid #8c959f;border-bottom:1px solid #8c959f;background:#fff}
.gl{stroke:#d8dee4}
.sm{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:0 20px}
.tabs{display:flex;flex-wrap:wrap;gap:4px;margin:4px 0 8px}
.tabs a{padding:4px 10px;border:1px solid var(--line);border-radius:6px;text-decoration:none}
.tabs a[aria-current=page]{background:var(--fg);color:#fff}
th.bar,td.bar{width:30%;min-width:120px}
.scale{display:flex;justify-content:space-between;font-weight:400;font-size:.7rem;color:var(--muted)}
.p95{fill:#9ec5fe}.p50{fill:#0a58ca}
.menu-t,.menu-b{display:none}
.badge.retried,.badge.requeued,.badge.reclaimed{border-color:var(--warn);color:var(--warn)}.badge.dead_lettered{border-color:var(--bad);color:var(--bad)}
.tl{list-style:none;padding:0 0 0 14px;border-left:2px solid var(--line);margin:8px 0 8px 6px}.tl li{padding:4px 0 8px}.tl li[aria-current]{font-weight:600}
.log{list-style:none;padding:0;font-size:.9rem}.log li{padding:2px 0;word-break:break-word}.lv.warn{color:var(--warn)}.lv.error{color:var(--bad)}
.legend{display:flex;gap:16px;font-size:.85rem;flex-wrap:wrap}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.s-ok{background:#2da44e;fill:#2da44e}.s-fail{background:#d4a72c;fill:#d4a72c}.s-dead{background:#cf222e;fill:#cf222e}
.s-run{background:#1f6feb;fill:#1f6feb}.s-due{background:#8c959f;fill:#8c959f}.s-wait{background:#bf8700;fill:#bf8700}
.pager{display:flex;gap:12px;margin:12px 0}
@media (max-width:640px){main{padding:10px}.clip{max-width:160px}
.menu-b{display:block;order:1;padding:4px 10px;border:1px solid #8c959f;border-radius:6px;cursor:pointer}
.menu-t{display:block;position:absolute;opacity:0;width:1px;height:1px;margin:0}
.menu-t:focus-visible+.menu-b{outline:3px solid #ffbf47}
header.top form{order:2}
header.top nav{display:none;order:3;width:100%;flex-direction:column}
.menu-t:checked~nav{display:flex}
table.stack thead{display:none}
table.stack,.stack tbody,.stack tr,.stack td{display:block;width:auto}
.stack tr{border-bottom:1px solid var(--line);padding:6px 0}
.stack td{border:0;padding:2px 4px;text-align:left;max-width:100%;overflow-wrap:anywhere}
h1,h2,h3{overflow-wrap:anywhere}
.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.85rem}}
`;
