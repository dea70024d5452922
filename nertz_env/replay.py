"""Recorded hands: the deal, the random stream and every action in R10 names, so a hand can be
replayed exactly and saved as an animated GIF or a web page that draws the table with card
pictures, with play, pause and step controls."""

from __future__ import annotations

import json
import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nertz_env import engine
from nertz_env.config import NertzConfig, is_int, option_names
from nertz_env.game import Game, table_digest
from nertz_env.render import move_text, render_rgb
from nertz_env.replay_html import frame_view, page


@dataclass
class Recording:
    """One hand: the config (every ``NertzConfig`` option, as ``to_dict`` gives them; a recording
    of an older release may leave out the options it did not have, ``OLDER_FORMATS``), each
    player's deck (R10), the game's random stream at the deal (for R6 races) and, per tick, each
    player's action name."""

    config: dict[str, Any]
    decks: list[list[str]]
    rng: int
    actions: list[list[str]] = field(default_factory=list)
    names: list[str] | None = None  # who played each seat, for the replay's labels

    def __post_init__(self) -> None:
        """Refuse, by field, what no recording holds (a saved one may come from anywhere)."""
        if not isinstance(self.config, dict):  # its values are checked by NertzConfig on replay
            raise ValueError(
                f"recording config must be a dict of NertzConfig options, not a {type(self.config).__name__}"
            )
        if not _strings_by_row(self.decks):
            raise ValueError("recording decks must be a list of lists of card names (R10), one per player")
        _check_config_keys(self.config)
        if isinstance(self.rng, bool) or not isinstance(self.rng, int) or not 1 <= self.rng < 2**64:
            raise ValueError(  # 0 is xorshift's fixed point, refused by set_state too (checks.check_table)
                f"recording rng must be an integer from 1 to 2**64 - 1 (a random stream is a nonzero word, as "
                f"start_recording saves it), got {self.rng!r}"
            )
        if not _strings_by_row(self.actions):
            raise ValueError("recording actions must be a list of ticks, each a list of action names (R10)")
        if self.names is not None and not _strings_by_row([self.names]):
            raise ValueError(f"recording names must be None or a list of strings, got {self.names!r}")
        self._marks: dict[bytes, int] = {}  # tables get_state saved, by digest: the ticks recorded then (mark)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Recording:
        """A recording from ``to_json``'s text; unknown or missing fields are refused by name."""
        try:
            fields = json.loads(text)
        except (TypeError, ValueError) as e:
            raise ValueError(f"a recording is the JSON text of Recording.to_json: {e}") from e
        if not isinstance(fields, dict):
            raise ValueError(f"a recording is a JSON object, got {type(fields).__name__}")
        known = ("config", "decks", "rng", "actions", "names")
        unknown = sorted(set(fields) - set(known))
        missing = [k for k in known[:3] if k not in fields]
        if unknown or missing:
            raise ValueError(f"recording fields: unknown {unknown}, missing {missing}; accepted: {', '.join(known)}")
        return cls(**fields)


# The options a recording of an older release leaves out, because that release had none of them;
# it played them at today's defaults. 0.1.0 (to_json of the same fields) had all but these three.
OLDER_FORMATS = {"0.1.0": ("block_moves", "aces_to_work", "match_end")}


def _check_config_keys(config: dict[str, Any]) -> None:
    """The recording's config names every ``NertzConfig`` option (``to_dict``'s keys) and nothing
    else, or exactly the options of an older release (``OLDER_FORMATS``): an option left out would
    replay at its default, another hand than the one recorded."""
    known = set(option_names())
    unknown = sorted(repr(k) for k in config if k not in known)
    if unknown:
        raise ValueError(f"recording config has unknown option(s) {', '.join(unknown)}; "
                         f"accepted: {', '.join(sorted(known))}")  # fmt: skip
    missing = [k for k in option_names() if k not in config]
    if missing and not any(set(missing) == set(left_out) for left_out in OLDER_FORMATS.values()):
        older = "; ".join(f"a recording of {v} leaves out exactly {', '.join(k)}" for v, k in OLDER_FORMATS.items())
        raise ValueError(f"recording config lacks option(s) {', '.join(missing)}: a recording names every NertzConfig "
                         f"option (NertzConfig.to_dict()'s keys), or {older}")  # fmt: skip


def _strings_by_row(rows: Any) -> bool:
    return isinstance(rows, list) and all(isinstance(r, list) and all(isinstance(x, str) for x in r) for r in rows)


def start_recording(game: Game) -> Recording:
    """Begin a recording of ``game``, which must have just been dealt."""
    if game.tick != 0:
        raise ValueError("start_recording needs a freshly dealt game (tick 0)")
    cfg = game.config.to_dict()
    if cfg["speed"] is not None:
        cfg["speed"] = list(cfg["speed"])
    return Recording(config=cfg, decks=game.dealt_decks(), rng=int(game.state.rng[0]))


def mark(recording: Recording | None, table: engine.State) -> engine.State:
    """``table``, a ``get_state`` of the env that keeps ``recording``, remembered by the recording
    (if any) as the table that its ticks recorded so far lead to, so that ``rewind`` may go back."""
    if recording is not None:
        _marks(recording)[table_digest(table)] = len(recording.actions)
    return table


def rewind(recording: Recording | None, table: engine.State) -> None:
    """Cut ``recording`` back to the ticks that led to ``table``, which an env under ``record=True``
    restores (``set_state``): a recording replays its episode from the deal (R10 decks and the
    random stream), so it can go on only from a table of its own line of play, one that ``mark``
    saw while the ticks that led to it were recorded and that are still recorded. Any other table
    is refused (it would replay as another hand), naming what is accepted."""
    ticks = None if recording is None else _marks(recording).get(table_digest(table))
    if recording is None or ticks is None or ticks > len(recording.actions):
        why = ("nothing is recorded yet: reset() deals and starts the recording" if recording is None else
               "a recording replays from its deal, so it cannot go on from another table")  # fmt: skip
        raise ValueError(f"set_state under record=True restores only a table that this env's get_state() saved during "
                         f"the recorded episode, at a tick still recorded ({why}); restore this table into an env "
                         "made without record=True")  # fmt: skip
    del recording.actions[ticks:]  # the ticks played after that table are no longer the episode's
    vars(recording)["_marks"] = {digest: k for digest, k in _marks(recording).items() if k <= ticks}


def _marks(recording: Recording) -> dict[bytes, int]:
    """``mark``'s tables of ``recording`` (one unpickled from a version without them has none)."""
    return vars(recording).setdefault("_marks", {})


def replay(recording: Recording) -> list[dict[str, Any]]:
    """Replay a recording exactly; one frame per tick (the deal first): the snapshot and the
    race results of the tick that led to it. A recording ends with the tick that ends its
    episode, and ticks after that end are refused; a recording of an episode still in play (the
    env's ``recording`` before the end) replays the ticks it holds, its last frame's snapshot
    having ``ended`` False."""
    cfg = dict(recording.config)
    if isinstance(cfg.get("speed"), list):  # JSON's list; any other value NertzConfig refuses by name
        cfg["speed"] = tuple(cfg["speed"])
    game = Game(NertzConfig(**cfg))
    game.reset(decks=recording.decks)
    game.state.rng[0] = recording.rng
    frames: list[dict[str, Any]] = [{"snapshot": game.snapshot(), "events": None, "actions": None}]
    for k, names in enumerate(recording.actions):
        if game.ended:  # R5 (R8 for a match): nothing is played after the end
            what = "match" if game.is_match else "hand"
            raise ValueError(f"recording actions: {len(recording.actions) - k} tick(s) recorded after the {what} "
                             f"ended at tick {game.tick} (action row {k}); a recording ends with the tick that "
                             f"ends the {what}")  # fmt: skip
        game.step([game.catalogue.index(n) for n in names])
        events = {"collision": game.state.collision[0].tolist(), "won_race": game.state.won_race[0].tolist()}
        frames.append({"snapshot": game.snapshot(), "events": events, "actions": list(names)})
    return frames


def save_replay(
    recording: Recording, path: str | Path, fps: float = 4.0, every: int = 1, names: Sequence[str] | None = None
) -> Path:
    """Write a recorded hand as ``.gif`` (Pillow; each frame captioned with its tick and every
    player's move) or ``.html`` (a page drawing the table with card pictures, with play, pause,
    step and a slider; ``nertz_env.replay_html``). ``every`` keeps every n-th tick; ``names``
    labels the seats (default ``player_0``, ...)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".html", ".htm"):
        raise ValueError(f"unknown replay format {path.suffix!r}; accepted: .gif or .html")
    n = len(recording.decks)
    names = _check_replay_args(fps, every, names if names is not None else recording.names or None, n)
    frames = replay(recording)
    moves = [[] if f["actions"] is None else _moves(frames[k - 1]["snapshot"], f) for k, f in enumerate(frames)]
    keep = list(range(0, len(frames), every))
    if keep[-1] != len(frames) - 1:
        keep.append(len(frames) - 1)  # always end on the final table
    if suffix == ".gif":
        _gif(path, [frames[k] for k in keep], [moves[k] for k in keep], names, fps)
    else:
        views = [frame_view(frames[k]["snapshot"], frames[k]["events"], moves[k]) for k in keep]
        path.write_text(page(views, names), encoding="utf-8")
    return path


def _check_replay_args(fps: Any, every: Any, names: Any, n: int) -> list[str]:
    """``save_replay``'s arguments, before anything is replayed; returns the seat labels."""
    if not is_int(every) or every < 1:
        raise ValueError(f"invalid every={every!r}: accepted an integer >= 1 (not a bool)")
    # typeshed gives numbers.Real no reflected comparisons (0.01 <= fps): mypy's operator error is ignored
    if not isinstance(fps, numbers.Real) or isinstance(fps, bool) or not 0.01 <= fps <= 100:  # type: ignore[operator]
        raise ValueError(f"invalid fps={fps!r}: accepted a number from 0.01 to 100 (a GIF holds each frame for a "
                         "whole number of hundredths of a second, up to 655 s)")  # fmt: skip
    if names is None:
        return [f"player_{p}" for p in range(n)]
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(x, str) for x in names):
        raise ValueError(f"names must be a list of {n} strings, one per seat, got {names!r}")
    if len(names) != n:
        raise ValueError(f"names must name the {n} players, got {len(names)}")
    return list(names)


def _moves(before: dict[str, Any], frame: dict[str, Any]) -> list[str]:
    """Every player's move in the tick that led to ``frame`` (``render.move_text``, R10 names)."""
    ev = frame["events"]
    return [move_text(before, p, a, ev["won_race"][p], ev["collision"][p]) for p, a in enumerate(frame["actions"])]


def _gif(path: Path, frames: list[dict[str, Any]], moves: list[list[str]], names: list[str], fps: float) -> None:
    from nertz_env.render import _pillow

    image = _pillow()[0]
    pictures = []
    for f, m in zip(frames, moves):
        snap = f["snapshot"]
        head = f"tick {snap['tick']}" + (f"  (hand over: {snap['end_reason']})" if snap["ended"] else "")
        caption = [head] + ([f"{names[p]}: {text}" for p, text in enumerate(m)] if m else ["the deal"])
        pictures.append(image.fromarray(render_rgb(snap, f["events"], names=names, caption=caption)))
    size = (max(i.width for i in pictures), max(i.height for i in pictures))
    pictures = [i if i.size == size else _pad(i, size) for i in pictures]
    pictures[0].save(path, save_all=True, append_images=pictures[1:], duration=int(1000 / fps), loop=0)


def _pad(img, size):
    from PIL import Image

    out = Image.new("RGB", size, (22, 96, 52))
    out.paste(img, (0, 0))
    return out
