"""Recorded hands: the deal, the random stream and every action in R10 names, so a hand can be
replayed exactly and saved as an animated GIF or an HTML page with a step slider."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nertz_env.config import NertzConfig
from nertz_env.game import Game
from nertz_env.render import render_rgb, render_text


@dataclass
class Recording:
    """One hand: the config, each player's deck (R10), the game's random stream at the deal
    (for R6 races) and, per tick, each player's action name."""

    config: dict[str, Any]
    decks: list[list[str]]
    rng: int
    actions: list[list[str]] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Recording:
        return cls(**json.loads(text))


def start_recording(game: Game) -> Recording:
    """Begin a recording of ``game``, which must have just been dealt."""
    if game.tick != 0:
        raise ValueError("start_recording needs a freshly dealt game (tick 0)")
    cfg = game.config.to_dict()
    if cfg["speed"] is not None:
        cfg["speed"] = list(cfg["speed"])
    return Recording(config=cfg, decks=game.dealt_decks(), rng=int(game.state.rng[0]))


def replay(recording: Recording) -> list[dict[str, Any]]:
    """Replay a recording exactly; one frame per tick (the deal first): the snapshot and the
    race results of the tick that led to it."""
    cfg = dict(recording.config)
    if cfg.get("speed") is not None:
        cfg["speed"] = tuple(cfg["speed"])
    game = Game(NertzConfig(**cfg))
    game.reset(decks=recording.decks)
    game.state.rng[0] = recording.rng
    frames = [{"snapshot": game.snapshot(), "events": None, "actions": None}]
    for names in recording.actions:
        game.step([game.catalogue.index(n) for n in names])
        events = {"collision": game.state.collision[0].tolist(), "won_race": game.state.won_race[0].tolist()}
        frames.append({"snapshot": game.snapshot(), "events": events, "actions": list(names)})
    return frames


def save_replay(recording: Recording, path: str | Path, fps: float = 4.0, every: int = 1) -> Path:
    """Write a recorded hand as ``.gif`` (Pillow) or ``.html`` (a page with a step slider)."""
    path = Path(path)
    frames = replay(recording)[::every]
    if path.suffix.lower() == ".gif":
        from PIL import Image

        images = [Image.fromarray(render_rgb(f["snapshot"], f["events"])) for f in frames]
        size = (max(i.width for i in images), max(i.height for i in images))
        images = [i if i.size == size else _pad(i, size) for i in images]
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    elif path.suffix.lower() in (".html", ".htm"):
        path.write_text(_html(frames))
    else:
        raise ValueError(f"unknown replay format {path.suffix!r}; accepted: .gif or .html")
    return path


def _pad(img, size):
    from PIL import Image

    out = Image.new("RGB", size, (22, 96, 52))
    out.paste(img, (0, 0))
    return out


def _html(frames: Sequence[dict[str, Any]]) -> str:
    pages = []
    for f in frames:
        text = html.escape(render_text(f["snapshot"]))
        for suit in ("D", "H"):
            for r in "A23456789TJQK":
                text = text.replace(f"{r}{suit}", f'<span class="red">{r}{suit}</span>')
        acts = ", ".join(f"player_{p}: {a}" for p, a in enumerate(f["actions"])) if f["actions"] else "the deal"
        pages.append(f"<div class='act'>{html.escape(acts)}</div><pre>{text}</pre>")
    data = json.dumps(pages)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Nertz replay</title>
<style>body{{font-family:sans-serif;background:#165f34;color:#fff}} pre{{background:#fff;color:#111;padding:8px}}
.red{{color:#c8141e}} .act{{margin:6px 0}}</style></head><body>
<h3>Nertz replay</h3><input id="s" type="range" min="0" max="{len(frames) - 1}" value="0" style="width:80%">
<span id="n">0</span><div id="f"></div>
<script>const F={data};const s=document.getElementById('s');
function show(){{document.getElementById('f').innerHTML=F[s.value];
document.getElementById('n').textContent='frame '+s.value;}}
s.oninput=show;show();</script></body></html>"""
