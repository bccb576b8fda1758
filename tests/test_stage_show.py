"""`gameforge stage show NAME`: a stage's inputs and every parameter with its type, default,
execution-only mark and description, nothing cut at 80 columns."""

from __future__ import annotations

from typer.testing import CliRunner

from gameforge.stages.registry import ParamRow, get_stage, stage_parameters

COLUMNS = ("name", "type", "default", "exec", "description")


def show(name: str, columns: int = 80) -> tuple[int, str]:
    """`gameforge stage show NAME` in-process at this terminal width: exit code and output."""
    from gameforge.flows.cli import app

    done = CliRunner().invoke(app, ["stage", "show", name], env={"COLUMNS": str(columns)})
    return done.exit_code, done.output


def table_rows(out: str) -> list[dict[str, str]]:
    """The parameter table's rows, each cell's wrapped lines joined: the header line gives
    where each column starts, a blank line ends a row."""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["name", "type"])
    starts = [lines[header].index(column) for column in COLUMNS]
    rows: list[dict[str, str]] = []
    cells: dict[str, list[str]] = {}
    for line in [*lines[header + 2 :], ""]:
        if line.strip():
            for column, start, end in zip(COLUMNS, starts, [*starts[1:], None], strict=True):
                cells.setdefault(column, []).append(line[start:end].strip())
        elif cells:
            rows.append({column: " ".join(filter(None, parts)) for column, parts in cells.items()})
            cells = {}
    return rows


def squeezed(text: str) -> str:
    """Text without whitespace: a folded or wrapped cell reads the same."""
    return "".join(text.split())


def assert_shown_whole(name: str, out: str) -> list[ParamRow]:
    """Every parameter of the stage is a row with its whole name, type, default, execution
    mark and description, and no line is wider than 80 columns."""
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "…" not in out
    params = stage_parameters(get_stage(name))
    rows = table_rows(out)
    assert [row["name"] for row in rows] == [p.name for p in params], out
    for param, row in zip(params, rows, strict=True):
        assert squeezed(row["type"]) == squeezed(param.type), (param, row)
        assert squeezed(row["default"]) == squeezed(param.default), (param, row)
        assert row["exec"] == ("yes" if param.execution_only else ""), (param, row)
        assert squeezed(row["description"]) == squeezed(param.description), (param, row)
    return params


def test_stage_show_prints_every_parameter_of_cfr_uncut_at_80_columns():
    """cfr: version, description, its optional inputs with their upstream stages, and the
    parameter table, whose long descriptions and defaults wrap instead of being cut."""
    code, out = show("cfr")
    assert code == 0, out
    cfr = get_stage("cfr")
    assert out.splitlines()[0] == f"cfr  version {cfr.version}"
    assert cfr.description in out
    assert "middle_buckets <- hsd-buckets | potential-buckets (optional)" in out
    params = {p.name: p for p in assert_shown_whole("cfr", out)}
    rows = {row["name"]: row for row in table_rows(out)}
    assert rows["game"]["default"].replace(" ", "") == "'holdem.limit.2p.reverse_blinds'"
    assert rows["iterations"]["default"] == "100000"
    assert rows["checkpoint_seconds"]["exec"] == "yes" and rows["seed"]["exec"] == ""
    seconds = params["seconds"].description
    assert len(seconds) > 150 and rows["seconds"]["description"] == seconds
    # a wide terminal gives the type and default their whole width
    code, wide = show("cfr", columns=200)
    assert code == 0 and "'holdem.limit.2p.reverse_blinds'" in wide
    assert [row["description"] for row in table_rows(wide)] == [
        p.description for p in params.values()
    ]


def test_stage_show_marks_many_inputs_and_shows_every_stage_whole():
    """A many-input lists its numbered names; every shipped stage's table is whole at 80
    columns (hearts' long names and bools, blokus' Literal types, nlhe's list defaults)."""
    from gameforge.stages.registry import MODULE_OF

    code, out = show("league")
    assert code == 0 and "players.0, players.1, ... <- cfr (one or more)" in out
    for name in MODULE_OF:
        code, out = show(name)
        assert code == 0, out
        if get_stage(name).params_model.model_fields:
            assert_shown_whole(name, out)
        else:
            assert "parameters: none" in out


def test_stage_show_refuses_an_unknown_stage_in_one_line():
    """An unknown name: the one `error:` line listing the valid stages, exit status 2."""
    code, out = show("no-such-stage")
    assert code == 2
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: unknown stage 'no-such-stage' (valid: ")
    assert "cfr" in lines[0] and "Traceback" not in out
