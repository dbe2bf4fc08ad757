"""The stage table of finished runs: base / image / run seconds per target.

Reads ``results/<run-id>/run.json`` (the manifest ``invoke bench`` writes at the end
of a run, with each successful target's wall time per stage in s) and prints one row
per target: its architecture, native or emulated, the seconds of each stage and their
sum, plus the RSA sizes its blindsig suite measured (emulated targets default to fewer,
see ``emulated_defaults`` in matrix.yml). No Docker needed::

    .venv/bin/python benchmarks/stage_table.py [--results results] RUN_ID [RUN_ID ...]

A base or image that was up to date shows its (short) check time, not a build time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabulate import tabulate

from archbench.errors import ResultsError
from archbench.result import ResultStore, load

STAGES = ("base", "image", "run")


def rows(store: ResultStore, run_id: str) -> list[list[str]]:
    """One row per target of ``run_id``: run, target, arch, mode, stage seconds, total, RSA bits.

    Raises:
        ResultsError: the run has no readable manifest.
    """
    manifest = store.load_manifest(run_id)
    out = []
    for target, seconds in sorted(manifest.seconds.items()):
        arch, mode, bits = "?", "?", ""
        try:
            result = load(store.path_for(run_id, target, 1))
        except ResultsError:
            pass
        else:
            arch = result.target.arch
            mode = "emulated" if result.emulated else "native"
            run = result.harness.suites.get("blindsig")
            if run is not None:
                bits = ",".join(str(b) for b in run.parameters.get("rsa_bits", []))
        stages = [f"{seconds[s]:.0f}" if s in seconds else "–" for s in STAGES]
        total = sum(seconds.get(s, 0.0) for s in STAGES)
        out.append([run_id, target, arch, mode, *stages, f"{total:.0f}", bits])
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the stage table of the given runs; 1 when a run cannot be read."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_ID")
    parser.add_argument("--results", type=Path, default=Path("results"))
    args = parser.parse_args(argv)
    store = ResultStore(args.results)
    table = []
    for run_id in args.runs:
        try:
            table += rows(store, run_id)
        except ResultsError as exc:
            print(f"stage_table: {exc}", file=sys.stderr)
            return 1
    header = ["run", "target", "arch", "mode", *(f"{s} s" for s in STAGES), "sum s", "RSA bits"]
    print(tabulate(table, headers=header, tablefmt="pipe", disable_numparse=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
