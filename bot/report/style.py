"""The report's CSS, its one inline script (allowed by the Content-Security-Policy through its hash) and HTML
escaping.

Layer: ``bot.report`` (standard library only).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re

#: Names, ids and texts are members' words: isolated (``unicode-bidi:isolate``), so a right-to-left override
#: (U+202E) in one does not reorder what follows it (an id drawn reversed, a channel or time moved).
_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em 1.5em;color:#222;max-width:1280px;line-height:1.4}
h1{font-size:1.5em;overflow-wrap:anywhere}h2{font-size:1.25em;margin-top:1.6em}h3{font-size:1.05em;margin:1em 0 .3em}
p,li,dd{overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1.2em;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}.scores{font-size:.85em;white-space:nowrap}
.hi{color:#c0392b;font-weight:bold}details summary{cursor:pointer;color:#555}
.msg{white-space:pre-wrap;overflow-wrap:anywhere;min-width:12em;max-width:28em}
td.when{white-space:nowrap;font-size:.9em}td.act{min-width:7em}.why{min-width:16em;max-width:26em;font-size:.9em}
td.where{min-width:9em;max-width:16em;overflow-wrap:anywhere}
.raiders{columns:2 16em;padding-left:1.2em}.raiders code,pre.ids{font-size:.85em;user-select:all}
pre.ids{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;border:1px solid #ddd;padding:.4em .6em;
max-height:12em;overflow-y:auto}
.path{overflow-wrap:anywhere;min-width:12em}
svg text{font-size:12px;fill:#333}svg{display:block;max-width:100%;height:auto}svg.timeline text{font-size:14px}
.cards{display:flex;flex-wrap:wrap;gap:.5em;padding:0}
.cards span{border:1px solid #ccc;border-radius:6px;padding:.5em 1em}
.banner{background:#fff7e0;border:1px solid #e0c060;border-radius:6px;padding:.5em 1em}
.incident{border-left:4px solid #c0392b;padding-left:.8em;margin:1em 0}
.thread{border-left-color:#8e44ad}
abbr,[title]{text-decoration:none}.id{color:#666;font-size:.85em}
span[title],span.id,code.id,.msg{unicode-bidi:isolate}
#toggle-texts{font:inherit;padding:.4em 1em;margin:.3em 0}
@media (max-width:600px){body{padding:.5em .7em;font-size:15px}th,td{padding:3px 5px}
.msg{min-width:0;max-width:none}td.when{font-size:.8em}.why{min-width:0}
table.msgs,table.msgs tbody,table.msgs tr,table.msgs td{display:block;width:100%;max-width:none;min-width:0}
table.msgs thead{display:none}table.msgs tr{border:1px solid #ccc;border-radius:6px;margin:0 0 .6em;padding:.2em 0}
table.msgs td{border:0;border-bottom:1px solid #eee;white-space:normal}table.msgs td:last-child{border-bottom:0}
table.msgs td::before{content:attr(data-label);display:block;font-size:.75em;color:#666;text-transform:uppercase}}
"""

#: The only script: the "show all texts" button (opens or closes every message text at once).
_SCRIPT = (
    "(function(){var b=document.getElementById('toggle-texts');if(!b)return;b.hidden=false;"
    "b.addEventListener('click',function(){var o=b.getAttribute('aria-pressed')!=='true';"
    "document.querySelectorAll('details.text').forEach(function(d){d.open=o;});"
    "b.setAttribute('aria-pressed',o?'true':'false');b.textContent=o?'Hide all texts':'Show all texts';});})();"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()



_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def _esc(value: object) -> str:
    text = "" if value is None else str(value)
    return html.escape(_CONTROL.sub("\ufffd", text), quote=True)
