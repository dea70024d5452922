"""A recorded hand as one self-contained web page: the table drawn with card pictures (inline SVG,
laid out as ``render_rgb`` draws it), the agents' names, the tick, each player's move and the
races won or lost (R6), with play, pause, step and a slider. No Pillow and no network needed.

The page reads its query string: ``?frame=N`` opens frame N, ``?steps=N`` presses "step" N times
on load, ``?play=1`` starts playing; ``document.body.dataset.frame`` is the frame shown.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any


def frame_view(snapshot: dict[str, Any], events: dict[str, list[bool]] | None, moves: Sequence[str]) -> dict:
    """What the page draws of one frame: the visible cards only (tops, work piles, foundations)."""
    players = []
    for p, pl in enumerate(snapshot["players"]):
        nertz_owner = pl.get("nertz_owners", [p] * len(pl["nertz"]))
        work_owner = pl.get("work_owners", [[p] * len(w) for w in pl["work"]])
        players.append({
            "nertz": [pl["nertz"][-1] if pl["nertz"] else None, len(pl["nertz"]),
                      nertz_owner[-1] if pl["nertz"] and nertz_owner[-1] != p else None],
            "waste": [pl["waste"][-1] if pl["waste"] else None, len(pl["waste"])],
            "stock": len(pl["stock"]),
            "work": [[[c, o if o != p else None] for c, o in zip(w, wo)] for w, wo in zip(pl["work"], work_owner)],
        })
    races = [("W" if events and events["won_race"][p] else "") + ("X" if events and events["collision"][p] else "")
             for p in range(len(players))]
    return {
        "tick": snapshot["tick"], "scores": snapshot["scores"], "callers": snapshot["callers"],
        "end": snapshot["end_reason"] if snapshot["ended"] else None,
        "found": [[f["cards"][-1][1], f["cards"][-1][0], f["complete"]] for f in snapshot["foundations"]],
        "players": players, "moves": list(moves), "races": races,
    }


def page(views: Sequence[dict], names: Sequence[str], title: str = "Nertz replay") -> str:
    """The HTML page for frame ``views`` (``frame_view``) of players ``names``."""
    data = json.dumps({"names": list(names), "frames": list(views)}, separators=(",", ":"))
    return _TEMPLATE.replace("%TITLE%", html.escape(title)).replace("%DATA%", data.replace("</", "<\\/"))


_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%TITLE%</title>
<style>
body{font-family:system-ui,sans-serif;background:#0f4a28;color:#fff;margin:12px}
h1{font-size:18px;margin:0 0 8px}
#bar{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin-bottom:8px}
button{font-size:15px;padding:3px 10px;border-radius:5px;border:1px solid #9cc;background:#1c6b3d;color:#fff}
#slider{width:360px} #tick{font-weight:bold;min-width:150px}
#moves{font-family:ui-monospace,monospace;font-size:13px;margin:6px 0;line-height:1.45}
#moves .who{color:#ffe680} .won{color:#8f8} .lost{color:#f99}
svg{background:#16603a;border-radius:8px;max-width:100%;height:auto}
</style></head>
<body data-frame="0">
<h1>%TITLE%</h1>
<div id="bar">
<button id="first" title="first frame">&#x21E4; first</button>
<button id="back" title="step back (left arrow)">&#x25C0; back</button>
<button id="play" title="play or pause (space)">&#x25B6; play</button>
<button id="step" title="step (right arrow)">step &#x25B6;</button>
<button id="last" title="last frame">last &#x21E5;</button>
<input id="slider" type="range" min="0" value="0">
<span id="tick"></span>
<label>speed <select id="speed"><option value="1000">1/s</option><option value="400" selected>2.5/s</option>
<option value="150">7/s</option><option value="50">20/s</option></select></label>
</div>
<div id="moves"></div>
<svg id="table" xmlns="http://www.w3.org/2000/svg"></svg>
<script>
const D = %DATA%;
const W = 44, H = 60, FAN = 26, PILE = W + FAN * 6, ROW = H + 44;
const GLYPH = {C: "\\u2663", D: "\\u2666", H: "\\u2665", S: "\\u2660"};
const svg = document.getElementById("table"), slider = document.getElementById("slider");
let at = 0, timer = null;
slider.max = D.frames.length - 1;
function el(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  svg.appendChild(e); return e;
}
function card(x, y, name, owner) {
  const red = "DH".includes(name[1]), ink = red ? "#c8141e" : "#111", rank = name[0] === "T" ? "10" : name[0];
  el("rect", {x: x, y: y, width: W, height: H, rx: 5, fill: "#fafaf5", stroke: "#333", class: "card"});
  el("text", {x: x + 4, y: y + 16, fill: ink, "font-size": 15, "font-weight": "bold"}, rank);
  el("text", {x: x + 4, y: y + 33, fill: ink, "font-size": 16}, GLYPH[name[1]]);
  el("text", {x: x + W - 5, y: y + H - 5, fill: ink, "font-size": 24, "text-anchor": "end"}, GLYPH[name[1]]);
  if (owner !== null && owner !== undefined)
    el("text", {x: x + W - 4, y: y + 12, fill: "#777", "font-size": 10, "text-anchor": "end"}, owner);
}
function slot(x, y) { el("rect", {x: x, y: y, width: W, height: H, rx: 5, fill: "none", stroke: "#9c9"}); }
function label(x, y, text, color) { el("text", {x: x, y: y, fill: color || "#fff", "font-size": 12}, text); }
function player(f, p, y) {
  const pl = f.players[p], race = f.races[p];
  let head = D.names[p] + "   score " + (f.scores[p] >= 0 ? "+" : "") + f.scores[p];
  if (f.callers.includes(p)) head += "   NERTZ!";
  label(16, y + 13, head, "#fff");
  if (f.moves.length) label(250, y + 13, f.moves[p], race ? (race.includes("W") ? "#8f8" : "#f99") : "#ffe680");
  y += 20; let x = 16;
  if (pl.nertz[0]) card(x, y, pl.nertz[0], pl.nertz[2]); else slot(x, y);
  label(x, y + H + 13, "nertz " + pl.nertz[1], "#ffe680"); x += W + 26;
  if (pl.waste[0]) card(x, y, pl.waste[0], null); else slot(x, y);
  label(x, y + H + 13, "waste " + pl.waste[1]); x += W + 26;
  if (pl.stock) el("rect", {x: x, y: y, width: W, height: H, rx: 5, fill: "#2a3f96", stroke: "#eee", class: "back"});
  else slot(x, y);
  label(x, y + H + 13, "stock " + pl.stock); x += W + 26;
  pl.work.forEach((pile, j) => {
    if (!pile.length) slot(x, y);
    const fan = pile.length <= 7 ? FAN : (PILE - W) / (pile.length - 1);
    pile.forEach((c, k) => card(Math.round(x + k * fan), y, c[0], c[1]));
    label(x, y + H + 13, "work" + j, "#cde"); x += PILE + 12;
  });
}
function draw() {
  const f = D.frames[at], n = f.players.length, piles = f.players[0].work.length;
  const width = 16 + 3 * (W + 26) + piles * (PILE + 12) + 4, per = Math.floor((width - 32) / (W + 6));
  const fh = 34 + Math.max(1, Math.ceil(f.found.length / per)) * (H + 8), top = Math.ceil(n / 2);
  svg.innerHTML = "";
  svg.setAttribute("viewBox", "0 0 " + width + " " + (8 + n * ROW + fh));
  svg.setAttribute("width", width);
  let y = 8;
  for (let p = 0; p < top; p++) { player(f, p, y); y += ROW; }
  label(16, y + 16, "foundations" + (f.found.length ? "" : ": none yet"), "#fff");
  f.found.forEach((c, i) => {
    const fx = 16 + (i % per) * (W + 6), fy = y + 24 + Math.floor(i / per) * (H + 8);
    card(fx, fy, c[0], c[1]);
    const mid = {x: fx + W / 2, y: fy + H / 2, fill: "#0a0", "font-size": 22, "text-anchor": "middle"};
    if (c[2]) el("text", mid, "\\u2713");
  });
  y += fh;
  for (let p = top; p < n; p++) { player(f, p, y); y += ROW; }
  const best = Math.max(...f.scores), won = D.names.filter((_, p) => f.scores[p] === best).join(", ");
  document.getElementById("tick").textContent = "tick " + f.tick + " / " + D.frames[D.frames.length - 1].tick +
    (f.end ? "  (hand over: " + f.end + "; " + (won.includes(",") ? "tied: " : "winner: ") + won + ")" : "");
  const moves = document.getElementById("moves");
  moves.innerHTML = "";
  if (!f.moves.length) moves.textContent = "the deal";
  f.moves.forEach((m, p) => {
    const line = document.createElement("div"), who = document.createElement("span");
    who.className = "who"; who.textContent = D.names[p] + ": ";
    line.appendChild(who); line.appendChild(document.createTextNode(m));
    if (f.races[p]) line.className = f.races[p].includes("W") ? "won" : "lost";
    moves.appendChild(line);
  });
  slider.value = at;
  document.body.dataset.frame = at;
}
function go(k) { at = Math.max(0, Math.min(D.frames.length - 1, k)); draw(); }
function toggle() {
  const b = document.getElementById("play");
  if (timer) { clearInterval(timer); timer = null; b.innerHTML = "&#x25B6; play"; return; }
  if (at === D.frames.length - 1) go(0);
  b.innerHTML = "|| pause";
  timer = setInterval(() => { if (at >= D.frames.length - 1) toggle(); else go(at + 1); },
                      +document.getElementById("speed").value);
}
document.getElementById("first").onclick = () => go(0);
document.getElementById("back").onclick = () => go(at - 1);
document.getElementById("step").onclick = () => go(at + 1);
document.getElementById("last").onclick = () => go(D.frames.length - 1);
document.getElementById("play").onclick = toggle;
slider.oninput = () => go(+slider.value);
document.addEventListener("keydown", e => {
  if (e.key === "ArrowRight") go(at + 1); else if (e.key === "ArrowLeft") go(at - 1);
  else if (e.key === " ") { e.preventDefault(); toggle(); }
});
const q = new URLSearchParams(location.search);
go(+(q.get("frame") || 0));
for (let i = 0; i < +(q.get("steps") || 0); i++) document.getElementById("step").click();
if (q.get("play")) toggle();
</script></body></html>
"""
