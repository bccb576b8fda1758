"""Hearts figures: the logged games' DegSQ labels, the nu-SVR risk models, a FALCON learner's
growth and the learners' evaluation curves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gameforge.artifacts import Artifact
from gameforge.engines.common.stats import wilson_interval
from gameforge.flows.plots.common import (
    Plotter,
    figure,
    integer_ticks,
    key_footnote,
    legend_below,
    reference_line,
    stage_title,
)

TRICKS = 13
POSITIONS = 4  # seat in the trick, 0 = leader
PAR_RATIO = "par 0.25 (a quarter of the 26 points)"


def _rules_text(p: dict[str, Any]) -> str:
    """The rule options that differ from the paper's game, or "the paper's rules"."""
    changes = []
    if p.get("passing"):
        changes.append(f"passing {p['passing']}")
    if p.get("moon"):
        changes.append("shooting the moon")
    for name in ("two_clubs_leads", "must_break_hearts", "no_points_first_trick"):
        if name in p and not p[name]:
            changes.append(f"no {name.replace('_', ' ')}")
    return ", ".join(changes) or "the paper's rules"


def _games_axis(ax, most: float, which: str = "x") -> None:  # type: ignore[no-untyped-def]
    """Counts from 0 (learning games, nodes) on a symmetric-log axis: ticks at 0 and powers of
    ten, in plain numbers."""
    top = max(float(most), 1.0)
    ticks = [0.0] + [10.0**k for k in range(0, 8) if 10.0**k <= top * 1.01]
    if ticks[-1] < top * 0.99:
        # the top itself is labelled; a power of ten under a third of a decade below it would
        # print on top of it (1,000 and 1,356), so the top takes its place
        if len(ticks) > 2 and top < 2.5 * ticks[-1]:
            ticks.pop()
        ticks.append(top)
    labels = [f"{t:,.0f}" for t in ticks]
    if which == "x":
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xticks(ticks, labels)
        ax.set_xlim(0, top * 1.5)
    else:
        ax.set_yscale("symlog", linthresh=1)
        ax.set_yticks(ticks, labels)
        ax.set_ylim(0, top * 1.5)
    ax.minorticks_off()


def _wilson_errors(hits: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rates hits / counts and their 95% Wilson intervals as errorbar offsets [2, n]."""
    rate = hits / np.maximum(counts, 1)
    bounds = np.array(
        [wilson_interval(float(h), int(n)) for h, n in zip(hits, counts, strict=True)]
    )
    return rate, np.array([rate - bounds[:, 0], bounds[:, 1] - rate])


def plot_hearts_eval(artifact: Artifact, out: Path, hand: str | None) -> str:
    """Penalty ratio against learning games, per variant (mean over trials, band from the
    lowest to the highest trial), against rule-based and against Monte Carlo agents: the
    paper's two learning-curve figures; and the final learners' ranks in matches to 100."""
    from matplotlib.patches import Patch

    curve = np.asarray(artifact["curve"][:])  # (learner, checkpoint, vs rule-based, vs MC)
    summary = artifact.meta["summary"]
    labels = summary["learners"]
    p = artifact.params
    from gameforge.stages.hearts import learner_variants  # lazy: every figure loads this module

    variants = learner_variants(labels)
    ranks = np.asarray(artifact["ranks"][:]) if "ranks" in artifact.array_names() else None
    ncols = 3 if ranks is not None and len(ranks) else 2
    trials = sorted({len(m) for m in variants.values()})
    title = stage_title(
        artifact,
        f"{len(labels)} learners ({len(variants)} variants x {'/'.join(map(str, trials))} "
        f"trials), every snapshot over {p['games']:,} games per opponent kind\nvariants: "
        f"previous or new action set, +svr: with SVR guidance; Monte Carlo agents {p['sims']} "
        f"simulations, {_rules_text(p)}, seed {p['seed']}",
    )
    lo = min(0.2, float(curve[:, 2:].min()) - 0.01)
    hi = float(curve[:, 2:].max()) + 0.01
    with figure(out, ncols=ncols, figsize=(6.2 * ncols, 5.6), layout="constrained") as (
        fig,
        axes,
    ):
        fig.suptitle(title)
        handles: list[Any] = []
        for ax, col, name in (
            (axes[0], 2, "vs 3 rule-based agents"),
            (axes[1], 3, "vs 3 Monte Carlo agents"),
        ):
            for variant, members in variants.items():
                rows = [curve[curve[:, 0] == li] for li in members]
                x = rows[0][:, 1]
                y = np.array([r[:, col] for r in rows])
                (line,) = ax.plot(x, y.mean(axis=0), marker="o",
                                  label=f"{variant} (mean of {len(members)} trials)")  # fmt: skip
                if len(members) > 1:
                    ax.fill_between(x, y.min(axis=0), y.max(axis=0), alpha=0.15,
                                    color=line.get_color())  # fmt: skip
                if ax is axes[0]:
                    handles.append(line)
            reference_line(ax, 0.25, PAR_RATIO)
            _games_axis(ax, float(curve[:, 1].max()))
            ax.set_ylim(lo, hi)
            ax.set_xlabel("learning games N (symmetric log scale)")
            ax.set_ylabel("penalty ratio (learner's points / 26; lower is better)")
            ax.set_title(name)
            ax.grid(True, alpha=0.3)
        handles += [
            axes[0].get_lines()[-1],  # the par line
            Patch(facecolor="grey", alpha=0.15, label="band: lowest to highest trial"),
        ]
        if ncols == 3 and ranks is not None:
            _ranks_axes(axes[2], ranks, variants, int(p["rank_matches"]))
        fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 6),
                   fontsize=8, frameon=False)  # fmt: skip
        key_footnote(fig, artifact)
    table = summary["table"]
    return "; ".join(
        f"{v}: {t['vs_rule_based']:.4f} / {t['vs_monte_carlo']:.4f}" for v, t in table.items()
    )


def _ranks_axes(ax, ranks: np.ndarray, variants: dict[str, list[int]], matches: int) -> None:  # type: ignore[no-untyped-def]
    """Each trial's mean rank in matches to 100 points (dots) and the variant's mean (bar),
    against rule-based and against Monte Carlo agents."""
    from gameforge.engines.hearts.agents import MONTE_CARLO
    from gameforge.engines.hearts.game import RULE_BASED

    kinds = ((RULE_BASED, -0.17, "#1f5fbf", "vs rule-based"),
             (MONTE_CARLO, 0.17, "#c8322c", "vs Monte Carlo"))  # fmt: skip
    for v, members in enumerate(variants.values()):
        for opponent, shift, colour, label in kinds:
            got = ranks[np.isin(ranks[:, 0], members) & (ranks[:, 1] == opponent)]
            if not len(got):
                continue
            ax.scatter(np.full(len(got), v + shift), got[:, 2], s=14, color=colour, alpha=0.6,
                       label=label if v == 0 else None)  # fmt: skip
            ax.hlines(got[:, 2].mean(), v + shift - 0.12, v + shift + 0.12, color=colour,
                      linewidth=2.5)  # fmt: skip
    reference_line(ax, 2.5, "par 2.5 (the mean of ranks 1-4)")
    ax.set_xticks(range(len(variants)), list(variants))
    ax.set_xlim(-0.6, len(variants) - 0.4)
    ax.set_ylim(1, 4)
    ax.set_xlabel("variant (dots: trials; bar: their mean)")
    ax.set_ylabel("mean rank in matches to 100 points (1 best, 4 worst)")
    ax.set_title(f"final learners' rank, {matches:,} matches per trial and opponent kind")
    ax.grid(True, axis="y", alpha=0.3)
    legend_below(ax, ncol=3)


def plot_hearts_logs(artifact: Artifact, out: Path, hand: str | None) -> str:
    """What the SVR learns from: the DegSQ label balance of each (trick, seat in the trick)
    group, the share of +1 labels by trick with 95% intervals, and the penalty points."""
    meta = np.asarray(artifact["meta"][:]).astype(np.int64)  # group, label, seat
    points = np.asarray(artifact["points"][:]).astype(np.int64)
    p = artifact.params
    groups = TRICKS * POSITIONS
    decisions = np.bincount(meta[:, 0], minlength=groups)[:groups]
    positive = np.bincount(meta[:, 0], weights=meta[:, 1] > 0, minlength=groups)[:groups]
    share = positive / np.maximum(decisions, 1)
    title = stage_title(
        artifact,
        f"{p['games']:,} games of 4 Monte Carlo agents ({p['sims']} simulations), "
        f"{len(meta):,} decisions, {_rules_text(p)}, seed {p['seed']}",
    )
    with figure(out, figsize=(14, 9), layout="constrained") as (fig, _unused):
        _unused.remove()
        grid = fig.add_gridspec(2, 2, height_ratios=[1, 1.15])
        ax = fig.add_subplot(grid[0, :])
        fig.suptitle(title)
        cells = share.reshape(TRICKS, POSITIONS).T  # rows: seat in the trick; columns: trick
        image = ax.imshow(cells, cmap="Reds", vmin=0, vmax=max(0.05, float(share.max())),
                          aspect="auto")  # fmt: skip
        counts = positive.reshape(TRICKS, POSITIONS).T
        totals = decisions.reshape(TRICKS, POSITIONS).T
        for pos in range(POSITIONS):
            for trick in range(TRICKS):
                dark = cells[pos, trick] > 0.6 * max(0.05, float(share.max()))
                ax.text(trick, pos, f"{cells[pos, trick]:.2f}\n{int(counts[pos, trick])}/"
                        f"{int(totals[pos, trick])}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")  # fmt: skip
        ax.set_xticks(range(TRICKS), [str(t + 1) for t in range(TRICKS)])
        ax.set_yticks(range(POSITIONS), ["leader", "2nd", "3rd", "4th"])
        ax.set_xlabel("trick")
        ax.set_ylabel("seat in the trick")
        ax.set_title("DegSQ label balance per group: share labelled +1, and +1 labels / decisions")
        bar = fig.colorbar(image, ax=ax, shrink=0.9)
        bar.set_label("share of +1 labels\n(takes Q♠ in this or a later trick)")
        ax = fig.add_subplot(grid[1, 0])
        by_trick = positive.reshape(TRICKS, POSITIONS).sum(axis=1)
        n_trick = decisions.reshape(TRICKS, POSITIONS).sum(axis=1)
        rate, errors = _wilson_errors(by_trick, n_trick)
        ax.errorbar(np.arange(1, TRICKS + 1), rate, yerr=errors, marker="o", capsize=3,
                    label="share of +1 labels, 95% Wilson interval")  # fmt: skip
        ax.set_xticks(range(1, TRICKS + 1))
        ax.set_ylim(0, min(1.0, float((rate + errors[1]).max()) * 1.15 + 0.01))
        ax.set_xlabel("trick")
        ax.set_ylabel("share of decisions labelled +1")
        ax.set_title(f"+1 labels by trick (all seats; {int(n_trick[0]):,} decisions a trick)")
        ax.grid(True, alpha=0.3)
        legend_below(ax, ncol=1)
        ax = fig.add_subplot(grid[1, 1])
        flat = points.ravel()
        ax.hist(flat, bins=np.arange(-0.5, 27.5, 1), weights=np.full(len(flat), 1 / len(flat)),
                color="#777777", edgecolor="white")  # fmt: skip
        mean = f"mean {flat.mean():.2f} points (ratio {flat.mean() / 26:.4f})"
        ax.axvline(flat.mean(), color="black", linestyle="--", linewidth=1, label=mean)
        ax.set_xlabel("penalty points of one player in one game (26 per game)")
        ax.set_ylabel("share of player-games")
        ax.set_xlim(-0.8, 26.8)
        integer_ticks(ax.xaxis)
        ax.set_title(f"penalty points ({len(flat):,} player-games)")
        ax.grid(True, axis="y", alpha=0.3)
        legend_below(ax, ncol=1)
        key_footnote(fig, artifact)
    return (
        f"{p['games']:,} games, {len(meta):,} decisions, {float(positive.sum()) / len(meta):.4f} "
        f"labelled +1 (groups {share.min():.3f} to {share.max():.3f})"
    )


def plot_hearts_svr(artifact: Artifact, out: Path, hand: str | None) -> str:
    """The risk models checked: predictions against the actual DegSQ label on held-out rows
    and on rows of the training sample, each model's sign agreement by trick, and what each
    group's model was fitted on."""
    p = artifact.params
    summary = artifact.meta["summary"]
    samples = np.asarray(summary["samples_per_group"], np.int64)
    support = np.diff(np.asarray(artifact["sv_start"][:]))
    has_checks = "check_prediction" in artifact.array_names()
    title = stage_title(
        artifact,
        f"one nu-SVR per (trick, seat in trick): nu {p['nu']}, C {p['c']}, gamma "
        f"{p['gamma'] or '1/27'}, at most {p['per_label']:,} samples per label, seed {p['seed']}",
    )
    held = summary.get("held_out")
    if held:
        rates = [
            f"{count:,} labelled {name}, {rate:.3f} on the right side of 0"
            if rate is not None
            else f"none labelled {name} (all in the training samples)"
            for name, count, rate in (
                ("+1", held["positive"], held["true_positive_rate"]),
                ("-1", held["negative"], held["true_negative_rate"]),
            )
        ]
        title += "\nheld-out rows: " + "; ".join(rates)
    with figure(out, figsize=(14, 10), layout="constrained") as (fig, _unused):
        _unused.remove()
        grid = fig.add_gridspec(2, 2)
        top = [fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])]
        fig.suptitle(title)
        if has_checks:
            group = np.asarray(artifact["check_group"][:]).astype(np.int64)
            label = np.asarray(artifact["check_label"][:])
            trained = np.asarray(artifact["check_trained"][:]).astype(bool)
            prediction = np.asarray(artifact["check_prediction"][:]).astype(np.float64)
            _prediction_histograms(top[0], label, trained, prediction)
            _agreement_by_trick(top[1], group, label, trained, prediction)
        else:
            for ax in top:
                ax.text(0.5, 0.5, f"hearts-svr version {artifact.meta.get('version')}: this "
                        "artifact stores no\npredictions to check (version 2 and later do)",
                        ha="center", va="center", transform=ax.transAxes)  # fmt: skip
                ax.set_axis_off()
        ax = fig.add_subplot(grid[1, :])
        x = np.arange(len(samples))
        ax.bar(x, samples, color="#9ab", label="training sample (both labels)")
        ax.plot(x, support[: len(x)], "k.", label="support vectors")
        missing = np.flatnonzero(samples == 0)
        if len(missing):
            ax.plot(missing, np.zeros(len(missing)), "x", color="#c8322c", markersize=8,
                    label="no model (a label never occurs): predicts a constant")  # fmt: skip
        ax.set_xticks(np.arange(0, len(samples), POSITIONS),
                      [str(t + 1) for t in range(len(samples) // POSITIONS)])  # fmt: skip
        ax.set_xlim(-0.8, len(samples) - 0.2)
        ax.set_xlabel("group: trick (ticks at each trick's leader; 4 seats per trick)")
        ax.set_ylabel("rows")
        integer_ticks(ax.yaxis)
        ax.set_title(
            f"what each model was fitted on: {summary['groups_fitted']} of 52 groups fitted, "
            f"{summary['support_vectors']:,} support vectors"
        )
        ax.grid(True, axis="y", alpha=0.3)
        legend_below(ax, ncol=3)
        key_footnote(fig, artifact)
    return (
        f"{summary['groups_fitted']} of 52 groups fitted, {summary['support_vectors']:,} "
        f"support vectors"
        + (
            f"; held-out sign agreement +1 {_rate_or_none(held['true_positive_rate'])}, -1 "
            f"{_rate_or_none(held['true_negative_rate'])}"
            if held
            else ""
        )
    )


CHECK_KINDS = (
    (False, 1, "held out, actual +1", "#c8322c", "-"),
    (False, -1, "held out, actual -1", "#1f5fbf", "-"),
    (True, 1, "training sample, actual +1", "#c8322c", ":"),
    (True, -1, "training sample, actual -1", "#1f5fbf", ":"),
)


def _prediction_histograms(  # type: ignore[no-untyped-def]
    ax, label: np.ndarray, trained: np.ndarray, prediction: np.ndarray
) -> None:
    """Distributions of the predicted DegSQ for each (held out or trained on, actual label)."""
    lo = min(-1.5, float(prediction.min()) if len(prediction) else -1.5)
    hi = max(1.5, float(prediction.max()) if len(prediction) else 1.5)
    bins = np.linspace(lo, hi, 41)
    for in_sample, actual, name, colour, style in CHECK_KINDS:
        sel = (trained == in_sample) & ((label > 0) == (actual > 0))
        n = int(sel.sum())
        if n == 0:  # no legend entry for a series with nothing drawn (the title says none)
            continue
        ax.hist(prediction[sel], bins=bins, density=True, histtype="step", color=colour,
                linestyle=style, linewidth=1.6, label=f"{name} (n={n:,})")  # fmt: skip
    ax.axvline(0, color="grey", linestyle="--", linewidth=1,
               label="0: the learner's default threshold")  # fmt: skip
    ax.set_xlabel("predicted DegSQ (+1: takes Q♠ in this or a later trick)")
    ax.set_ylabel("density (each histogram integrates to 1)")
    ax.set_title("predicted vs actual label (rows of all 52 groups)")
    ax.grid(True, alpha=0.3)
    legend_below(ax, ncol=2)


def _agreement_by_trick(  # type: ignore[no-untyped-def]
    ax, group: np.ndarray, label: np.ndarray, trained: np.ndarray, prediction: np.ndarray
) -> None:
    """Share of rows whose prediction has the actual label's sign, by trick, with 95% Wilson
    intervals, for held-out rows and rows of the training sample."""
    trick = group // POSITIONS
    right = (prediction > 0) == (label > 0)
    x = np.arange(1, TRICKS + 1)
    for k, (in_sample, actual, name, colour, style) in enumerate(CHECK_KINDS):
        sel = (trained == in_sample) & ((label > 0) == (actual > 0))
        counts = np.bincount(trick[sel], minlength=TRICKS)[:TRICKS]
        hits = np.bincount(trick[sel], weights=right[sel], minlength=TRICKS)[:TRICKS]
        shown = counts > 0
        if not shown.any():
            continue
        rate, errors = _wilson_errors(hits[shown], counts[shown])
        ax.errorbar(x[shown] + (k - 1.5) * 0.09, rate, yerr=errors, color=colour,
                    linestyle=style, marker="o", markersize=3, capsize=2,
                    label=f"{name} ({int(counts.sum()):,} rows)")  # fmt: skip
    reference_line(ax, 0.5, "0.5: a coin")
    ax.set_xticks(x)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("trick")
    ax.set_ylabel("share with the actual label's sign")
    ax.set_title("sign agreement by trick, 95% Wilson intervals")
    ax.grid(True, alpha=0.3)
    legend_below(ax, ncol=2)


def plot_hearts_falcon(artifact: Artifact, out: Path, hand: str | None) -> str:
    """A learner's growth and play while learning: committed nodes per network at each
    snapshot, the final nodes by (trick, seat in the trick), and its penalty ratio against the
    rule-based agents it learns from (running mean)."""
    p = artifact.params
    checkpoints = np.asarray(artifact["checkpoints"][:]).astype(np.int64)
    nodes = np.array([np.asarray(artifact[f"nodes_{c}"][:]) for c in checkpoints])
    ratio = (
        np.asarray(artifact["training_ratio"][:]).astype(np.float64)
        if "training_ratio" in artifact.array_names()
        else np.zeros(0)
    )
    guidance = f"SVR guidance (threshold {p['threshold']})" if p["svr"] else "no SVR"
    title = stage_title(
        artifact,
        f"{p['actions']} action set, {guidance}, {p['readout']} readout, {p['reward']} reward, "
        f"{p['games']:,} learning games vs 3 rule-based agents\nFALCON rho {p['rho_state']}/"
        f"{p['rho_reward']}, beta {p['beta']}, epsilon {p['epsilon']}, capacity "
        f"{p['capacity']:,} per network, {_rules_text(p)}, seed {p['seed']}",
    )
    with figure(out, ncols=3, figsize=(18, 5.6), layout="constrained") as (fig, axes):
        fig.suptitle(title)
        ax = axes[0]
        ax.plot(checkpoints, nodes.sum(axis=1), marker="o", label="all 52 networks")
        ax.plot(checkpoints, nodes.max(axis=1), marker="s", label="the largest network")
        ax.plot(checkpoints, np.median(nodes, axis=1), marker="^", label="median network")
        _games_axis(ax, float(checkpoints.max()))
        ax.set_xlabel("learning games (symmetric log scale)")
        _games_axis(ax, float(nodes.sum(axis=1).max()), "y")
        ax.set_ylabel("committed nodes (category templates, symmetric log scale)")
        ax.set_title(f"nodes at {len(checkpoints)} snapshots")
        ax.grid(True, alpha=0.3)
        legend_below(ax, ncol=3)
        ax = axes[1]
        final = nodes[-1].reshape(TRICKS, POSITIONS).T
        image = ax.imshow(final, cmap="viridis", aspect="auto", vmin=0)
        for pos in range(POSITIONS):
            for trick in range(TRICKS):
                bright = final[pos, trick] > 0.6 * max(1, final.max())
                ax.text(trick, pos, str(int(final[pos, trick])), ha="center", va="center",
                        fontsize=7, color="black" if bright else "white")  # fmt: skip
        ax.set_xticks(range(TRICKS), [str(t + 1) for t in range(TRICKS)])
        ax.set_yticks(range(POSITIONS), ["leader", "2nd", "3rd", "4th"])
        ax.set_xlabel("trick")
        ax.set_ylabel("seat in the trick")
        ax.set_title(f"nodes per network after {int(checkpoints[-1]):,} games")
        fig.colorbar(image, ax=ax, shrink=0.9).set_label(f"nodes (capacity {p['capacity']:,})")
        ax = axes[2]
        if len(ratio):
            games = np.arange(1, len(ratio) + 1)
            w = max(1, min(1000, len(ratio) // 10))
            smooth = np.convolve(ratio, np.ones(w) / w, mode="valid")
            ax.plot(games[w - 1 :], smooth, color="black",
                    label=f"running mean of {w:,} games")  # fmt: skip
            reference_line(ax, 0.25, PAR_RATIO)
            ax.set_xlim(0, len(ratio) + 1)
            legend_below(ax, ncol=2)
        else:
            ax.text(0.5, 0.5, "no learning games", ha="center", va="center",
                    transform=ax.transAxes)  # fmt: skip
        ax.set_xlabel("learning game")
        ax.set_ylabel("penalty ratio while learning (points / 26)")
        integer_ticks(ax.xaxis)
        ax.set_title("play while learning (exploring, vs 3 rule-based agents)")
        ax.grid(True, alpha=0.3)
        key_footnote(fig, artifact)
    tail = ratio[-1000:]
    return f"{int(nodes[-1].sum()):,} nodes after {int(checkpoints[-1]):,} games" + (
        f", penalty ratio {tail.mean():.4f} over the last {len(tail):,}" if len(tail) else ""
    )


PLOTTERS: dict[str, Plotter] = {
    "hearts-logs": plot_hearts_logs,
    "hearts-svr": plot_hearts_svr,
    "hearts-falcon": plot_hearts_falcon,
    "hearts-eval": plot_hearts_eval,
}


def _rate_or_none(rate: float | None) -> str:
    """A held-out rate, or why there is none (the label went whole into the training sample)."""
    return "n/a (no held-out rows)" if rate is None else f"{rate:.4f}"
