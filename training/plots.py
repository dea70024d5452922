"""Figures of evaluation reports and training runs, for the notebooks and your own analysis.

Every function reads what the project already writes: the report dict of
``training.evaluate.evaluate`` (its ``summary`` rows and ``ratings``), the ``{label: (mu, sigma)}``
of ``training.evaluate.rate_pool``, and a self-play run directory (``evals.jsonl``, and its
``scalars.jsonl`` or TensorBoard scalars). matplotlib (the ``training`` extra) is imported only inside them.

>>> from training.evaluate import evaluate                      # doctest: +SKIP
>>> report = evaluate(["heuristic", "greedy", "passive", "random"], hands=200)  # doctest: +SKIP
>>> plot_summary(report)                                        # doctest: +SKIP
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nertz_env.training import scalars as scalar_log

__all__ = [
    "plot_learning_curve",
    "plot_ratings",
    "plot_scores",
    "plot_summary",
    "plot_training_scalars",
    "plot_win_shares",
    "read_evals",
    "read_scalars",
    "show_html",
]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ModuleNotFoundError("the plots need matplotlib: pip install 'nertz-env[training]'") from exc
    return plt


def _axes(ax, figsize=(6, 3.5)):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def _bars_with_ci(ax, rows: Sequence[Mapping[str, Any]], key: str, ci_key: str, label: str):
    """One bar per agent at ``row[key]``, with the 95% interval ``row[ci_key]`` as error bars."""
    names = [r["agent"] for r in rows]
    values = [r[key] for r in rows]
    low = [r[key] - r[ci_key][0] for r in rows]
    high = [r[ci_key][1] - r[key] for r in rows]
    x = range(len(rows))
    ax.bar(x, values, yerr=[low, high], capsize=5, color="#3a7d5c", ecolor="black")
    ax.set_xticks(list(x), names, rotation=20 if max(map(len, names)) > 10 else 0)
    ax.set_ylabel(label)
    ax.grid(axis="y", alpha=0.3)
    return ax


def _title(report: Mapping[str, Any], what: str, title: str | None) -> str:
    size = f"{report['players']} players, {report['deals']} deals x rotations ({report['hands_played']} hands)"
    return f"{title}: {what}\n{size}" if title else f"{what}: {size}"


def plot_win_shares(report: Mapping[str, Any], ax=None, title: str | None = None):
    """Each agent's hand win share (ties split) with its 95% interval over deals; the dashed line is
    the share of an agent no better than the others (1 / players)."""
    ax = _axes(ax)
    _bars_with_ci(ax, report["summary"], "win_share", "win_ci", "hand win share (95% CI)")
    ax.axhline(1.0 / report["players"], ls="--", color="gray", lw=1, label="1 / players")
    ax.legend(loc="best", fontsize="small")
    ax.set_title(_title(report, "win share", title), fontsize="medium")
    return ax


def plot_scores(report: Mapping[str, Any], ax=None, title: str | None = None):
    """Each agent's mean hand score (R7) with its 95% t interval over deals."""
    ax = _axes(ax)
    _bars_with_ci(ax, report["summary"], "score", "score_ci", "mean hand score (95% CI)")
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_title(_title(report, "score", title), fontsize="medium")
    return ax


def plot_summary(report: Mapping[str, Any], axes=None, title: str | None = None):
    """Win share and score side by side (``title`` heads both); returns the two axes."""
    if axes is None:
        _, axes = _pyplot().subplots(1, 2, figsize=(11, 3.8), layout="constrained")
    plot_win_shares(report, axes[0], title)
    plot_scores(report, axes[1], title)
    return axes


def plot_ratings(ratings: Mapping[str, Any], ax=None):
    """OpenSkill ratings, best first: ``mu`` with ``±sigma`` bars and the conservative ``mu - 3
    sigma`` as a dot. Takes ``rate_pool``'s ``{label: (mu, sigma)}`` or a report's ``ratings``."""
    pairs = {k: (v["mu"], v["sigma"]) if isinstance(v, Mapping) else tuple(v) for k, v in ratings.items()}
    order = sorted(pairs, key=lambda k: pairs[k][0] - 3 * pairs[k][1])
    mu = [pairs[k][0] for k in order]
    sigma = [pairs[k][1] for k in order]
    ax = _axes(ax, figsize=(6, 0.6 * len(order) + 1.2))
    y = range(len(order))
    ax.errorbar(mu, list(y), xerr=sigma, fmt="s", color="#3a7d5c", capsize=5, label="mu ± sigma")
    ax.scatter([m - 3 * s for m, s in zip(mu, sigma)], list(y), marker="o", color="#c8141e", label="mu - 3 sigma")
    ax.set_yticks(list(y), order)
    ax.set_xlabel("OpenSkill rating")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("OpenSkill ratings", fontsize="medium")
    return ax


def _run_file(run: str | Path, name: str) -> Path:
    path = Path(run)
    return path / name if path.is_dir() else path


def read_evals(run: str | Path) -> list[dict[str, Any]]:
    """The lines of a self-play run's ``evals.jsonl`` (pass the run directory or the file)."""
    path = _run_file(run, "evals.jsonl")
    if not path.exists():
        raise FileNotFoundError(f"no evaluations at {path}; train with --eval-every > 0")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_learning_curve(run: str | Path, metric: str = "win_share", ax=None):
    """The policy's periodic evaluations against each scripted rival (``evals.jsonl``): win share
    with its 95% interval shaded (or ``metric="score"``), over learner steps."""
    evals = read_evals(run)
    ax = _axes(ax)
    rivals = sorted({k for e in evals for k, v in e.items() if isinstance(v, Mapping)})
    steps = [e["global_step"] for e in evals]
    for rival in rivals:
        line = ax.plot(steps, [e[rival][metric] for e in evals], "o-", label=f"vs 3x {rival}")[0]
        if metric == "win_share":
            lo, hi = zip(*(e[rival]["win_ci"] for e in evals))
            ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2)
    config = _run_file(run, "evals.jsonl").with_name("config.json")
    if metric == "win_share" and config.exists():
        players = json.loads(config.read_text())["args"]["num_players"]
        ax.axhline(1.0 / players, ls="--", color="gray", lw=1, label=f"1 / players ({players})")
    ax.set_xlabel("learner steps")
    ax.set_ylabel(metric.replace("_", " "))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"evaluations of {Path(run).name}", fontsize="medium")
    return ax


read_scalars = scalar_log.read_scalars


def plot_training_scalars(
    run_dir: str | Path,
    tags: list[str] | tuple[str, ...] = ("charts/episode_score", "losses/entropy", "losses/value_loss"),
    axes=None,
):
    """One panel per scalar of a run (``read_scalars``), over learner steps; returns the axes."""
    scalars = read_scalars(run_dir, tags)
    if axes is None:
        _, axes = _pyplot().subplots(1, len(tags), figsize=(4 * len(tags), 3), layout="constrained", squeeze=False)
        axes = axes[0]
    for ax, tag in zip(axes, tags):
        steps, values = scalars[tag]
        ax.plot(steps, values, ".-")
        ax.set_title(tag, fontsize="medium")
        ax.set_xlabel("learner steps")
        ax.grid(alpha=0.3)
    return axes


def show_html(path: str | Path, height: int = 460):
    """An HTML file (a saved replay) shown inline in a notebook, in an iframe of its own."""
    from IPython.display import HTML

    page = html.escape(Path(path).read_text(), quote=True)
    return HTML(f'<div><iframe srcdoc="{page}" style="width:100%;height:{height}px;border:0"></iframe></div>')
