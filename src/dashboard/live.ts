/**
 * The page's only script, served as `live.js` (so the CSP can say script-src 'self'). Every `ms`
 * it fetches the page it is on again (a page shown as a form's answer first takes its own address,
 * `data-url` with the query that says which page of what, so it is not the action that is fetched) and swaps in each `[data-live]` region by id: the server
 * renders the same JSX, so there is no client template. It waits while the tab is hidden,
 * leaves a region alone while it is unchanged, while focus or a text selection is in it, or while the
 * pointer rests on one of its links or buttons (a row moving under it turned a click into another row's
 * action), keeps ticked checkboxes and what was scrolled (a wide table, a long error), and stops for good once
 * the session is gone (a redirect to the login), marking the page `data-ended`. A server's failure (5xx), or
 * no answer at all (none within two refreshes: a request held by a stalled database kept the page
 * unmarked, and polling, for as long), marks it as not up to date (`data-stale`) until one succeeds; the stylesheet
 * shows both. Another answer (a 404 for a job gone, a 400 for a filter) is the page now: swapped in like a 200. Its requests carry `x-pgtick-live: 1`.
 */
const SOURCE = `(()=>{
const u=document.querySelector("main[data-url]")?.dataset.url;
if(u&&location.pathname!=u.split("?")[0])history.replaceState(null,"",u);
if(!document.querySelector("[data-live]"))return;
let t,busy;
const at=r=>{const c={},o=new Map;for(const e of[r,...r.querySelectorAll("*")]){const k=e.tagName+"."+e.className;c[k]=(c[k]||0)+1;o.set(k+c[k],e)}return o};
const poll=async()=>{
clearTimeout(t);
if(document.hidden||busy)return;
busy=1;
try{
const r=await fetch(location.href,{headers:{"x-pgtick-live":"1"},redirect:"manual",signal:AbortSignal.timeout(2*MS)});
if(r.type=="opaqueredirect"||r.status==401){document.body.setAttribute("data-ended","");return}
if(r.status>499)throw 0;
document.body.removeAttribute("data-stale");
const d=new DOMParser().parseFromString(await r.text(),"text/html");
for(const n of document.querySelectorAll("[data-live]")){
const m=d.getElementById(n.id),s=getSelection();
if(!m||n.contains(document.activeElement)||n.outerHTML==m.outerHTML||s&&!s.isCollapsed&&s.containsNode(n,true)||n.querySelector("a:hover,button:hover,label:hover,input:hover"))continue;
const on=[...n.querySelectorAll("input:checked")].map(i=>i.value),b=at(m),sc=[...at(n)].filter(([,e])=>e.scrollLeft||e.scrollTop).map(([k,e])=>[b.get(k),e.scrollLeft,e.scrollTop]);
n.replaceWith(m);
for(const i of m.querySelectorAll("input[type=checkbox]"))if(on.includes(i.value))i.checked=true;
for(const[e,x,y]of sc)if(e){e.scrollLeft=x;e.scrollTop=y}
}
}catch{document.body.setAttribute("data-stale","")}
busy=0;
if(!document.hidden)t=setTimeout(poll,MS);
};
document.addEventListener("visibilitychange",()=>document.hidden?clearTimeout(t):poll());
t=setTimeout(poll,MS);
})()`.replace(/\n/g, "");

/** The script for a refresh every `ms` (0: none, and the pages stay as loaded). */
export const liveScript = (ms: number): string => (ms > 0 ? SOURCE.replaceAll("MS", String(ms)) : "");
