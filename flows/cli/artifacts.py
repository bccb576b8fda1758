"""`gameforge artifacts ...`: inspect and maintain the artifact store (list, show, plot, export
and import, verify, trust, check, repair, remove, gc)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gameforge.flows.cli.common import (
    DaskOpt,
    KeyArg,
    PlainProgress,
    RichProgress,
    StoreOpt,
    WriteStoreOpt,
    check_folder,
    console,
    describe_failure,
    err_console,
    fail,
    human_bytes,
    ledger,
    say,
    user_errors,
)
from gameforge.flows.cli.plot import artifacts_plot

if TYPE_CHECKING:
    from gameforge.artifacts.runs import UnfinishedBuild

artifacts_app = typer.Typer(no_args_is_help=True, help="Inspect and maintain the artifact store.")


@artifacts_app.command("ls")
def artifacts_ls(
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="JSON array on stdout.")] = False,
) -> None:
    """List artifacts by game.

    Each with its key, the parameters that tell it from its siblings, status (complete or
    partial), size, and when built (on a terminal wide enough)."""
    from rich import box

    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.queries import list_artifacts
    from gameforge.stages.reporting import inline

    rows = list_artifacts(ArtifactStore(store))
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table(
        title=f"artifacts in {store}",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,  # one space between columns: 80 columns hold the key and status
    )
    # wide enough for every key and game name whole: the parameters fold instead
    names = [r["key"] for r in rows] + [r["game"] or "" for r in rows]
    table.add_column("game / key", no_wrap=True, min_width=max(map(len, names), default=10))
    table.add_column("parameters", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("size", no_wrap=True, justify="right")
    wide = console.width >= 110  # the build time fits beside the rest
    if wide:
        table.add_column("created", no_wrap=True)
    # the parameters get what the whole key, status and size leave (each label whole)
    statuses = [status_text(row) for row in rows] + ["status"]
    sizes = [human_bytes(row["bytes"]) for row in rows] + ["size"]
    room = console.width - max(map(len, names), default=10) - max(map(len, statuses))
    room -= max(map(len, sizes)) + 3 + (21 if wide else 0)  # and the spaces, the build time
    game: Any = ()  # no group yet
    for row in sorted(rows, key=lambda r: (r["game"] or "~", r["key"])):
        if row["game"] != game:
            game = row["game"]
            table.add_row(Text(game or "(unknown: partial builds)", style="bold"))
        labels = packed([f"{k}={inline(v)}" for k, v in row["labels"].items()], room) or "-"
        status = status_text(row)
        cells = [row["key"], labels, status, human_bytes(row["bytes"])]
        if wide:
            cells.append((row["created"] or "-").replace("+00:00", "Z"))
        style = None if row["status"] == "complete" else "yellow"
        table.add_row(*(Text(c) for c in cells), style=style)
    console.print(table)


def status_text(row: dict[str, Any]) -> str:
    """An `artifacts ls` row's status: complete, or partial with the chunks finished so far."""
    from gameforge.artifacts.runs import share

    status = str(row["status"])
    if row.get("progress"):  # chunks finished of all the chunked arrays so far
        done, total = (sum(pair) for pair in zip(*row["progress"].values(), strict=True))
        status += f" {share(done, total)}"
    return status


def packed(words: list[str], width: int) -> str:
    """`words` joined by spaces, a new line where the next would pass `width` (never split)."""
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _show_unfinished(build: UnfinishedBuild, as_json: bool) -> None:
    """`artifacts show` for a build started and never committed: how far, and what next."""
    from gameforge.artifacts.runs import share

    if as_json:
        sys.stdout.write(json.dumps(build.as_dict(), indent=2) + "\n")
        return
    stage = build.key.rsplit("-", 1)[0]
    version = f" v{build.recipe['version']}" if build.recipe else ""
    console.print(
        f"[bold]{build.key}[/]  stage {stage}{version}: unfinished (started, never committed)"
    )
    if build.recipe:
        say(f"  started by code {build.recipe.get('code_version') or 'unknown'}")
        content = ", ".join(f"{k}={v!r}" for k, v in (build.recipe.get("params") or {}).items())
        say(f"  parameters: {content or '-'}")
        for name, upstream in (build.recipe.get("inputs") or {}).items():
            say(f"  input {name}: {upstream}")
    for name, (done, total) in build.progress.items():
        say(f"  {name}: {done:,} of {total:,} chunks finished ({share(done, total)})")
    if not build.progress:
        say("  no chunk finished")
    run = build.run
    if run is not None:
        status = run.shown_status()
        say(f"  run {run.run_id} ({status}): {run.command}")
        if status == "running":
            say("  its run is still going; once it has stopped:")
    if build.outdated:
        say(f"  not resumable by this code: {build.outdated_text()}; resume it with that code")
    elif build.resume and build.recipe is None:  # a build from before recipes were recorded
        say(f"  resume (with the code that started it; its version was not recorded): "
            f"{build.resume}")  # fmt: skip
    elif build.resume:
        say(f"  resume: {build.resume}")
    say(f"  discard: {build.discard}")


@artifacts_app.command("show")
def artifacts_show(
    key: KeyArg,
    store: StoreOpt = "store",
    as_json: Annotated[bool, typer.Option("--json", help="Raw metadata as JSON.")] = False,
) -> None:
    """Explain an artifact: its stage, parameters, inputs, arrays and lineage."""
    from gameforge.artifacts.runs import unfinished_build
    from gameforge.artifacts.store import ArtifactStore, StoreError, dumps
    from gameforge.stages.registry import current_version
    from gameforge.stages.reporting import summary_lines

    artifacts = ArtifactStore(store)
    try:
        full = artifacts.resolve(key)
    except StoreError:  # an interrupted build may exist only in partial/ (as `ls` lists it)
        building = [e.key for e in artifacts.entries() if e.status == "partial"]
        full = next((k for k in building if k.startswith(key)), key) if key else key
    unfinished = unfinished_build(artifacts, full, current_version)
    if unfinished is not None:
        _show_unfinished(unfinished, as_json)
        return
    try:
        meta = artifacts.show(key)
    except StoreError as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(dumps(meta) + "\n")
        return
    console.print(f"[bold]{meta['key']}[/]  stage {meta['stage']} v{meta['version']}")
    for line in _provenance_lines(meta, artifacts.trust_record(meta["key"])):
        say(line)
    console.print(f"  path {meta['path']} ({human_bytes(meta['bytes'])})")
    console.print("  parameters:")
    for name, value in meta["params"].items():
        console.print(f"    {name} = {value!r}", highlight=False)
    console.print("  inputs:" + ("" if meta["inputs"] else " none"))
    for name, upstream in meta["inputs"].items():
        console.print(f"    {name} <- {upstream}")
    console.print("  arrays:")
    for name, info in meta["arrays"].items():
        shape = "x".join(map(str, info["shape"]))
        unchecked = (
            ""
            if info.get("chunk_checksums")
            else " (chunks unchecked: written before chunk checksums)"
        )
        console.print(
            f"    {name}: {info['dtype']} [{shape}] checksum {info['checksum']}{unchecked}"
        )
    if meta.get("summary"):
        console.print("  summary:")
        for line in summary_lines(meta["summary"], "    "):
            say(line)
    if meta["stage"] == "cfr":
        from gameforge.stages.poker.best_response import measured_exploitability
        from gameforge.stages.poker.lbr import lower_bound_text

        known = measured_exploitability(artifacts, meta["dependents"])
        if "exact_key" in known:
            console.print(
                f"  real-game exploitability: {known['exact_mbb_per_game']:.3f} mbb/g (exact, "
                f"{known['exact_key']})",
                highlight=False,
            )
        for lbr_key, mean, lower, deals in known.get("lbr", []):
            console.print(
                f"  LBR ({lbr_key}, {deals:,} deals x 2 seats): {lower_bound_text(mean, lower)}",
                highlight=False,
                markup=False,
            )
            if "exact_key" in known:  # LBR is a best response restricted: never above exact
                exact = known["exact_mbb_per_game"]
                verdict = (
                    "at or above it, as it must be"
                    if exact >= lower
                    else "BELOW it: one of the two is wrong, or this is the 1-in-20 draw"
                )
                say(f"    the exact figure ({exact:.1f}) against its lower bound: {verdict}")
        if not known:
            console.print(
                f"  real-game exploitability: not computed (gameforge strategy br {meta['key']})",
                highlight=False,
            )
    if meta["dependents"]:
        console.print("  used by: " + ", ".join(meta["dependents"]))


def _built_line(provenance: dict[str, Any]) -> str:
    resumed = ""
    if "attempts" in provenance:
        resumed = (
            f"; {provenance['attempts']} attempts: wall {provenance['wall_s_all_attempts']} s, "
            f"CPU {provenance['cpu_s_all_attempts']} s in all, each killed one to its last "
            "checkpoint"
        )
    return (
        f"built {provenance.get('started')} -> {provenance.get('finished')} "
        f"(wall {provenance.get('wall_s')} s, CPU {provenance.get('cpu_s')} s{resumed}) on "
        f"{provenance.get('host')}, gameforge {provenance.get('gameforge_version')}, "
        f"code {provenance.get('code_version')}"
    )


def _provenance_lines(meta: dict[str, Any], trust: dict[str, Any] | None) -> list[str]:
    """Where an artifact came from (built here or imported) and whether it is trusted."""
    provenance = meta.get("provenance")
    if not provenance:
        return [
            f"  built {meta.get('created')} -> {meta.get('finished')} ({meta.get('duration_s')} s) "
            f"on {meta.get('host')}, code {meta.get('code_version', '?')} "
            "(before provenance was recorded)"
        ]
    if provenance.get("kind") != "imported":
        lines = ["  " + _built_line(provenance)]
        peak = (meta.get("memory") or {}).get("peak_rss_bytes")
        if peak:  # process-wide: under --parallel-nodes it holds the stages run alongside
            lines.append(f"  peak memory {human_bytes(int(peak))} (resident, the building process)")
    else:
        exported = provenance.get("exported")
        source = _built_line(exported) if exported else "made before provenance was recorded"
        if exported and exported.get("kind") == "imported":
            source = f"itself imported from {exported.get('file')} ({exported.get('sha256')})"
        lines = [
            f"  imported {provenance.get('imported')} on {provenance.get('host')} from "
            f"{provenance.get('file')} (sha256 {provenance.get('sha256')})",
            f"    the exporter's copy: {source}",
        ]
        if trust is None:
            key = meta["key"]
            lines.append(
                f"  trust: none yet, so no run uses it (`gameforge artifacts trust {key}`, or "
                f"`gameforge artifacts check {key} --recompute`)"
            )
    if trust is not None:
        how = "vouched for" if trust.get("how") == "vouched" else "verified by recomputing"
        detail = ""
        if trust.get("how") == "recomputed":
            compared = trust.get("chunks") or {}
            detail = "; ".join(
                f"{name} chunks {', '.join(map(str, ids))}" for name, ids in compared.items()
            ) or ("whole: " + ", ".join(trust.get("arrays") or []))
            detail = f" ({detail}" + (f", seed {trust['seed']})" if trust.get("seed") else ")")
        lines.append(f"  trust: {how} {trust.get('when')} on {trust.get('host')}{detail}")
    return lines


artifacts_app.command("plot")(artifacts_plot)


@artifacts_app.command("export")
def artifacts_export(
    keys: Annotated[list[str], typer.Argument(help="Artifact keys (unique prefixes will do).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the export files.")],
    store: StoreOpt = "store",
    with_inputs: Annotated[
        bool, typer.Option("--with-inputs", help="Also export every upstream artifact.")
    ] = False,
) -> None:
    """Write self-describing files (one tar per artifact) that `import` reads."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.artifacts.transfer import export_artifacts

    check_folder(out, "--out")  # export writes one file per artifact into it
    try:
        written = export_artifacts(ArtifactStore(store), keys, out, with_inputs)
    except user_errors() as exc:
        fail(str(exc))
    for path in written:
        console.print(f"wrote {path} ({human_bytes(path.stat().st_size)})", highlight=False)


@artifacts_app.command("import")
def artifacts_import(
    files: Annotated[list[Path], typer.Argument(help="Files written by `artifacts export`.")],
    store: WriteStoreOpt = "store",
    trust: Annotated[
        bool,
        typer.Option(
            "--trust",
            help="Vouch for the files' source (one you control): runs use them at once.",
        ),
    ] = False,
) -> None:
    """Import exported artifacts, verifying their keys and checksums first.

    They stay untrusted, used by no run, until `artifacts trust` or `artifacts check
    --recompute` (or `--trust` here)."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.artifacts.transfer import import_artifacts

    try:
        results = import_artifacts(ArtifactStore(store), files, trust=trust)
    except user_errors() as exc:
        fail(str(exc))
    for key, status in results:
        console.print(f"{status}: {key}")
    fresh = [key for key, status in results if status == "imported"]
    if fresh and not trust:
        say(
            f"{len(fresh)} imported untrusted: no run uses them until `gameforge artifacts trust "
            "KEY` (you vouch for the source) or `gameforge artifacts check KEY --recompute`"
        )
    # the imported artifacts count as used until a gc that keeps fewer runs forgets this one
    nodes = {
        key: {"key": key, "cached": status != "imported", "seconds": 0.0} for key, status in results
    }
    ledger(store).record_done("import", nodes, "gameforge " + " ".join(sys.argv[1:]))


@artifacts_app.command("verify")
def artifacts_verify(
    keys: Annotated[list[str] | None, typer.Argument(help="Keys to check (default: all).")] = None,
    store: StoreOpt = "store",
    recompute: Annotated[
        bool,
        typer.Option(
            "--recompute",
            help="Also recompute a sample of the artifacts built by other code than this.",
        ),
    ] = False,
    sample: Annotated[
        int, typer.Option("--sample", min=1, help="Artifacts per stage to recompute.")
    ] = 1,
) -> None:
    """Re-check every array's checksum; exit 1 naming any corrupted artifact.

    --recompute also rebuilds a sample of the artifacts whose recorded code version is not this
    one and compares them bit for bit: a stage changed without a version bump fails, named."""
    from gameforge.artifacts.store import ArtifactStore

    artifacts = ArtifactStore(store)
    try:  # a mistyped key is refused, not reported as a corrupted artifact
        keys = [artifacts.resolve(key) for key in keys or ()]
    except user_errors() as exc:
        fail(str(exc))
    report = artifacts.verify(keys or None)
    bad = {k: v for k, v in report.items() if v}
    for key, problems in report.items():
        if problems:
            console.print(f"[red]corrupted[/] {key}: " + "; ".join(problems), highlight=False)
        else:
            console.print(f"[green]ok[/] {key}")
    console.print(f"{len(report) - len(bad)} ok, {len(bad)} corrupted")
    if bad:
        raise typer.Exit(1)
    if recompute:
        _recompute_other_code(artifacts, list(report), sample)


def _recompute_other_code(artifacts: Any, keys: list[str], per_stage: int) -> None:
    """Recompute checks of up to `per_stage` artifacts of each stage that other code built."""
    from gameforge.stages.recompute import DEFAULT_CHUNKS, recorded_code_version
    from gameforge.stages.runner import code_version

    running = code_version()
    metas = artifacts.metas()
    chosen: dict[str, list[str]] = {}
    for key in keys:
        meta = metas.get(key) or artifacts.open(key).meta
        recorded = recorded_code_version(artifacts, key, meta)  # never an archive's claim
        if recorded != running and artifacts.trusted(key, meta):
            picked = chosen.setdefault(meta["stage"], [])
            if len(picked) < per_stage:
                picked.append(key)
    sampled = [key for picked in chosen.values() for key in picked]
    if not sampled:
        say(f"every artifact was built by this code ({running}): nothing to recompute")
        return
    say(f"recomputing {len(sampled)} artifacts built by other code than {running}")
    reports = _recompute_checks(artifacts, sampled, DEFAULT_CHUNKS, False, None)
    failed = sorted({r.stage for r in reports if not r.passed})
    if failed:
        fail(
            f"{', '.join(failed)}: output changed at the same stage version (bump the version, "
            "see docs/architecture.md)"
        )
    say(f"{len(reports)} recomputed, all equal")


@artifacts_app.command("trust")
def artifacts_trust(
    keys: Annotated[list[str], typer.Argument(help="Imported artifacts you vouch for.")],
    store: StoreOpt = "store",
    note: Annotated[str, typer.Option("--note", help="Why, kept in the record.")] = "",
) -> None:
    """Vouch for imported artifacts, so that runs use them; the record says who, when, why."""
    from gameforge.artifacts.store import ArtifactStore

    artifacts = ArtifactStore(store)
    try:
        for key in keys:
            full = artifacts.resolve(key)
            if artifacts.trusted(full) and artifacts.trust_record(full) is None:
                say(f"{full} was built here: trusted already")
                continue
            artifacts.trust(full, "vouched", **({"note": note} if note else {}))
            say(f"trusted {full} (vouched for; `artifacts show` lists it)")
    except user_errors() as exc:
        fail(str(exc))


@artifacts_app.command("check")
def artifacts_check(
    key: KeyArg,
    recompute: Annotated[
        bool,
        typer.Option("--recompute", help="Rebuild it from its recorded recipe and compare."),
    ] = False,
    chunks: Annotated[
        int, typer.Option("--chunks", min=1, help="Chunks of a chunked stage to recompute.")
    ] = 3,
    whole: Annotated[bool, typer.Option("--all", help="Recompute the whole artifact.")] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Which chunks (default: a fresh seed, printed).")
    ] = None,
    store: StoreOpt = "store",
) -> None:
    """Rebuild an artifact from its recorded recipe and compare it, bit for bit.

    The stage runs from the recorded parameters and inputs in a scratch area: N seeded chunks of
    each chunked pass, or the whole artifact. A pass marks it verified (an import becomes
    trusted); a difference names the array, chunk and index, and exits 1. Runs on this
    machine; the store is not written but for the record."""
    from gameforge.artifacts.store import ArtifactStore

    if not recompute:
        fail("check needs --recompute (`gameforge artifacts verify KEY` checks the checksums)")
    artifacts = ArtifactStore(store)
    [report] = _recompute_checks(artifacts, [key], chunks, whole, seed)
    if not report.passed:
        fail(f"{report.key} is not what its recipe computes ({report.seconds:.1f} s)")


def _recompute_checks(
    artifacts: Any, keys: list[str], chunks: int, whole: bool, seed: int | None
) -> list[Any]:
    """Recompute checks of `keys` on this machine, each reported as it ends; a pass recorded."""
    from gameforge.flows.runtime import dask_executor, import_run_libraries
    from gameforge.stages.recompute import recompute_check
    from gameforge.stages.runner import failed_at

    reports = []
    try:
        import_run_libraries()
        with (
            RichProgress() if console.is_terminal else PlainProgress() as progress,
            dask_executor(None, log=progress.echo) as executor,
        ):
            for key in keys:
                report = recompute_check(
                    artifacts, key, chunks, whole, seed, executor, progress, progress.echo
                )
                _report_check(report)
                if report.passed:
                    artifacts.trust(report.key, "recomputed", **report.as_dict())
                reports.append(report)
    except user_errors() as exc:
        fail(str(exc))
    except Exception as exc:
        where = failed_at(exc)
        fail(where.line(exc) if where is not None else describe_failure(exc))
    return reports


def _report_check(report: Any) -> None:
    """What a recompute check compared, and its verdict."""
    skipped = set(report.skipped)  # what the tolerance leaves out is not said to be compared
    for name, ids in report.chunks.items():
        if name not in skipped:
            ids_text = ", ".join(map(str, ids))
            say(f"{report.key}: compared {name} chunks {ids_text} (seed {report.seed})")
    compared = [name for name in report.arrays if name not in skipped]
    if compared:
        note = f" ({report.note})" if report.note else ""
        say(f"{report.key}: compared whole {', '.join(compared)}{note}")
    tol = report.tolerance
    if report.skipped and tol is not None:
        say(f"{report.key}: not compared, {', '.join(report.skipped)}: {tol.reason}")
    elif tol is not None and tol.rtol is not None:
        say(f"{report.key}: {tol.arrays or 'all'} within rtol {tol.rtol:g}: {tol.reason}")
    for mismatch in report.mismatches:
        err_console.print(
            f"[bold red]differs:[/] {report.key} {escape(mismatch.line())}",
            highlight=False,
            soft_wrap=True,
        )
    if report.passed:
        say(f"verified {report.key}: what its recipe computes ({report.seconds:.1f} s); recorded")


@artifacts_app.command("repair")
def artifacts_repair(
    key: KeyArg,
    store: StoreOpt = "store",
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild it even if its checksums match.")
    ] = False,
    dask_address: DaskOpt = None,
) -> None:
    """Check an artifact; if corrupted, set it aside and rebuild it.

    The rebuild uses its recorded stage, parameters and inputs; dependents whose input changed
    are rebuilt too."""
    from gameforge.artifacts.store import ArtifactStore
    from gameforge.flows.repair import rebuild_key
    from gameforge.flows.runtime import dask_executor, import_run_libraries
    from gameforge.stages.runner import failed_at, run_stage

    artifacts = ArtifactStore(store)
    try:
        key = artifacts.resolve(key)  # a mistyped key is refused before a cluster starts
        import_run_libraries()
        with (
            RichProgress() if console.is_terminal else PlainProgress() as progress,
            dask_executor(dask_address, log=progress.echo) as executor,
        ):

            def run(stage: str, params: dict[str, Any], inputs: dict[str, str]) -> str:
                done = run_stage(
                    stage, params, inputs, store=artifacts, executor=executor,
                    progress=progress, log=progress.echo,
                )  # fmt: skip
                return done.key

            rebuilt = rebuild_key(artifacts, key, run, progress.echo, always=rebuild)
    except user_errors() as exc:
        fail(str(exc))
    except Exception as exc:
        where = failed_at(exc)
        if where is None:
            raise
        fail(where.line(exc))
    say(f"rebuilt {len(rebuilt)}: {', '.join(rebuilt)}" if rebuilt else "intact: nothing to do")


@artifacts_app.command("rm")
def artifacts_rm(
    key: KeyArg,
    store: StoreOpt = "store",
    force: Annotated[bool, typer.Option("--force", help="Remove even if others use it.")] = False,
) -> None:
    """Remove an artifact; refuses while other artifacts depend on it, unless --force."""
    from gameforge.artifacts.store import ArtifactStore, StoreError

    try:
        removed = ArtifactStore(store).remove(key, force=force)
    except StoreError as exc:
        fail(str(exc))
    console.print(f"removed {removed}")


@artifacts_app.command("gc")
def artifacts_gc(
    store: StoreOpt = "store",
    unreferenced: Annotated[
        bool,
        typer.Option(
            "--unreferenced",
            help="Also remove complete artifacts that no kept run (see `gameforge runs ls`) "
            "names or builds on.",
        ),
    ] = False,
    keep_last: Annotated[
        int | None,
        typer.Option(
            "--keep-last",
            min=0,
            help="With --unreferenced: keep only each flow's N newest runs (older records are "
            "forgotten).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")
    ] = False,
) -> None:
    """Remove builds no running process is working on.

    With --unreferenced, also the artifacts no kept run uses."""
    from gameforge.artifacts.runs import collect_unreferenced
    from gameforge.artifacts.store import ArtifactStore, StoreError

    if keep_last is not None and not unreferenced:
        fail("--keep-last goes with --unreferenced")
    artifacts = ArtifactStore(store)
    verb = "would be removed" if dry_run else "removed"
    if not dry_run:
        removed = artifacts.gc()
        for key in removed:
            console.print(f"removed {key}")
        console.print(f"{len(removed)} partial builds and trash entries removed")
    if not unreferenced:
        return
    try:
        done = collect_unreferenced(artifacts, keep_last, dry_run)
    except StoreError as exc:
        fail(str(exc))
    if dry_run and not ledger(store).all():
        console.print("no run records in this store: every artifact counts as unreferenced")
    for run_id in done.forgotten:
        console.print(f"{'would forget' if dry_run else 'forgot'} run {run_id}", highlight=False)
    for key, size in done.removed:
        console.print(f"{'would remove' if dry_run else 'removed'} {key} ({human_bytes(size)})",
                      highlight=False)  # fmt: skip
    for key in done.busy:
        console.print(f"left {key}: a running process holds its lock", highlight=False)
    console.print(
        f"{len(done.removed)} unreferenced artifacts {verb}, {human_bytes(done.freed)} "
        f"{'would be ' if dry_run else ''}freed",
        highlight=False,
    )
