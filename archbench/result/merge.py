"""Pooling the K container runs of ``invoke bench --repeat K`` into one result per target.

This module is pure: it never imports ``docker``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from archbench.errors import ResultsError
from archbench.result.model import Result


def repeat_groups(results: Sequence[Result]) -> dict[tuple[str, str, str], list[Result]]:
    """``results`` by (run id, target name, metric), in order of first appearance.

    One group holds the files of one target's ``--repeat K`` container runs
    (its time and its instruction counts apart).
    """
    groups: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.run_id, r.target.name, r.metric), []).append(r)
    return groups


def merge_repeats(results: Sequence[Result]) -> list[Result]:
    """Merge the K container runs of ``--repeat K`` into one result per target.

    Results are grouped by (run id, target name). A group of one is returned
    unchanged. Otherwise the first run's result is kept with, in each row,
    the samples of all runs concatenated (run order, rescaled to the first
    run's ``ops_per_block`` where calibration chose another size) and
    ``run_medians_ns`` holding each run's median block time in ns, so reports
    can show the between-run spread next to the within-run spread. Order of
    first appearance is kept.

    Raises:
        ResultsError: the runs of one target measured different rows, so
            their samples cannot be pooled.
    """
    merged: list[Result] = []
    for (run_id, name, _), group in repeat_groups(results).items():
        if len(group) == 1:
            merged.append(group[0])
            continue
        group.sort(key=lambda r: r.execution.repeat_index if r.execution else 1)
        first = group[0]
        rows = []
        for i, row in enumerate(first.harness.rows):
            same = [g.harness.rows[i] if i < len(g.harness.rows) else None for g in group]
            key = (row.scheme, row.key_bits, row.operation)
            if any(o is None or (o.scheme, o.key_bits, o.operation) != key for o in same):
                raise ResultsError(
                    f"run {run_id}, target {name}: the repeated runs measured different rows "
                    f"at row {i} ({row.scheme} {row.operation}); render them "
                    "separately with 'invoke report --run' per run"
                )
            # Calibration may choose another block size in each container run;
            # samples are rescaled to the first run's block size (per-op time x
            # ops_per_block) so they pool.
            scaled = [
                [max(1, round(x * row.ops_per_block / o.ops_per_block)) for x in o.samples_ns]
                for o in same
                if o is not None
            ]
            pooled = tuple(x for run in scaled for x in run)
            medians = tuple(float(statistics.median(run)) for run in scaled)
            # Counts are rescaled to the first run's block size like the times.
            counts = [
                [max(1, round(c * row.ops_per_block / o.ops_per_block)) for c in o.instructions]
                for o in same
                if o is not None and o.instructions is not None
            ]
            instructions = (
                tuple(c for run in counts for c in run) if len(counts) == len(group) else None
            )
            valid = all(o is not None and o.valid for o in same)
            reason = next((o.invalid_reason for o in same if o is not None and not o.valid), None)
            rows.append(
                row.model_copy(
                    update={
                        "samples_ns": pooled,
                        "run_medians_ns": medians,
                        "run_sizes": tuple(len(run) for run in scaled),
                        "valid": valid,
                        "invalid_reason": reason,
                        "instructions": instructions,
                        # One run's interval and noise do not describe the pool.
                        "median_ci": None,
                        "ci_reached": None,
                        "noise": None,
                    }
                )
            )
        harness = first.harness.model_copy(update={"rows": tuple(rows)})
        merged.append(first.model_copy(update={"harness": harness}))
    return merged
