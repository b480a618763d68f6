import { createHash } from 'node:crypto';

/** The dashboard's one stylesheet: small, no fonts, no external anything. */
export const STYLESHEET = `
*,*::before,*::after{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.45;color:#1b1f24;background:#f6f7f9}
body{margin:0;min-width:0;overflow-wrap:break-word}
.muted,dd,code,.error,.notice{overflow-wrap:anywhere}
a{color:#0b57d0}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
header.top{background:#14213d;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
header.top a{color:#fff;text-decoration:none}
header.top .muted{color:#d0d7e2}
header.top .brand{font-weight:700;margin-right:auto}
nav.main{display:flex;flex-wrap:wrap;gap:.25rem .75rem}
nav.main a[aria-current]{text-decoration:underline}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
.box{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:1rem;margin:0 0 1rem}
.scroll{overflow-x:auto;max-width:100%}
.scroll table{min-width:40rem}
.scroll td code,.scroll td .muted{overflow-wrap:normal}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #e3e7ec;vertical-align:top;overflow-wrap:break-word}
th{font-size:.85rem;color:#475467}
form.inline{display:inline}
label{display:block;font-weight:600;margin:.5rem 0 .2rem}
input,select,textarea{font:inherit;width:100%;max-width:32rem;padding:.4rem;border:1px solid #98a2b3;border-radius:4px;background:#fff}
textarea{min-height:5rem}
button,.button{font:inherit;display:inline-block;padding:.4rem .9rem;border-radius:4px;border:1px solid #0b57d0;background:#0b57d0;color:#fff;cursor:pointer;text-decoration:none;margin:.25rem 0}
button.secondary,.button.secondary{background:#fff;color:#0b57d0}
button.danger{background:#b42318;border-color:#b42318}
.field-error{color:#b42318;font-weight:600;margin:.2rem 0}
input[aria-invalid=true],select[aria-invalid=true],textarea[aria-invalid=true]{border-color:#b42318;border-width:2px}
.notice{background:#ecfdf3;border:1px solid #6ce9a6;padding:.75rem;border-radius:4px;margin:0 0 1rem}
.error{background:#fef3f2;border:1px solid #fda29b;padding:.75rem;border-radius:4px;margin:0 0 1rem}
.secret{font-family:ui-monospace,monospace;overflow-wrap:anywhere;background:#fff;padding:.4rem;border:1px dashed #98a2b3;display:block}
.muted{color:#667085}
.thumbs{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 .25rem}
.thumbs img{width:6rem;height:6rem;object-fit:contain;background:#fff;border:1px solid #d8dde3;border-radius:4px}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end}
.filters>div{flex:1 1 10rem}
.metrics{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.75rem}
.metric{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:.75rem}
.metric .value{font-size:1.4rem;font-weight:700}
figure.chart{margin:0 0 1rem;overflow-x:auto;max-width:100%}
.chart svg{display:block;width:100%;min-width:720px;max-width:960px;height:auto}
.pager{display:flex;gap:1rem;flex-wrap:wrap;margin:.5rem 0}
code{overflow-wrap:anywhere}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;color:#000;padding:.5rem}
`;

/** The one script: copy buttons (`data-copy` names the element whose text to copy). */
export const SCRIPT = `document.addEventListener('click',function(e){var b=e.target.closest&&e.target.closest('[data-copy]');if(!b)return;var t=document.getElementById(b.getAttribute('data-copy'));if(!t||!navigator.clipboard)return;navigator.clipboard.writeText(t.textContent.trim()).then(function(){b.textContent='Copied';});});`;

function version(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

export const STYLESHEET_PATH = `/dashboard/static/style-${version(STYLESHEET)}.css`;
export const SCRIPT_PATH = `/dashboard/static/app-${version(SCRIPT)}.js`;
