"""The pipeline's counting stage: instructions per block for one target (``--metric instructions``).

Builds (or reuses) the counting layer over the target's benchmark image
(:mod:`archbench.build.counter`), runs the harness in it with
``--count-with`` so that the blindsig driver runs under the counting QEMU,
and stores each container run as ``<target>.instructions[.repeat-<i>].json``
(``Result.metric`` ``instructions``). The suites whose drivers archbench
owns are counted (:data:`COUNTED_SUITES`: blindsig, rsa-large, sodium); suites
that run foreign programs (openssl speed, gpg, GNUnet's perf programs, Taler's
helpers) are not.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from archbench.build import COUNTER_IN_IMAGE, Builder, ensure_counting_image
from archbench.result import Execution, Result, TargetInfo
from archbench.run import containers as run

if TYPE_CHECKING:
    from archbench.run.bookkeeping import Workspace
    from archbench.run.plan import TargetPlan

COUNTED_SUITES = ("blindsig", "rsa-large", "sodium")
"""Suites whose drivers mark their blocks (harness/suite_counting.py has the same list)."""


def count_target(
    builder: Builder,
    p: TargetPlan,
    bench_tag: str,
    bench_id: str,
    ws: Workspace,
    execution: Execution,
    target: TargetInfo,
    timed: Callable[[str], AbstractContextManager[None]],
) -> list[Path]:
    """Count ``p``'s rows of the counted suites ``p.repeat`` times; return the result paths.

    ``timed(stage)`` reports the stages ``count image`` and ``count`` to the
    progress display; ``builder.on_line`` gets notes and the harness's lines;
    ``execution`` is the timing run's, with the counting layer's image put in.

    Raises:
        BaseImageError, ImageBuildError: the counting layer cannot be built.
        HarnessError: the harness fails in the counting layer (calibration
            not exact, the driver failing under QEMU, counts that do not pair).
    """
    client = builder.client
    planned = p.suites if p.count_suites is None else p.count_suites
    enabled = list(planned.enabled())
    chosen = [name for name in enabled if name in COUNTED_SUITES]
    skipped = [name for name in enabled if name not in COUNTED_SUITES]
    if skipped:
        builder.say(
            f"instructions: {', '.join(skipped)} not counted (they run programs archbench "
            "does not own)"
        )
    if not chosen:
        builder.say(
            f"instructions: none of the counted suites ({', '.join(COUNTED_SUITES)}) is enabled"
        )
        return []
    suites = planned.only(chosen)
    with timed("count image"):
        layer = ensure_counting_image(builder, bench_tag, bench_id, p.target.arch)
    paths = []
    for index in range(1, p.repeat + 1):
        with timed("count" if p.repeat == 1 else f"count {index}/{p.repeat}"):
            doc, stderr = run.run_harness(
                client,
                layer.tag,
                p.target.arch,
                suites,
                run_id=ws.run_id,
                cpuset=p.cpuset,
                on_line=builder.on_line,
                extra_args=[
                    "--count-with",
                    COUNTER_IN_IMAGE,
                    "--count-cpu",
                    p.count_cpu,
                ],
            )
        suffix = "" if index == 1 else f".repeat-{index}"
        log = ws.log_dir / f"{p.name}.instructions{suffix}.harness.log"
        log.write_text(stderr, encoding="utf-8")
        update: dict[str, object] = {
            "repeat_index": index,
            "image_id": layer.image_id,
            "image_tag": layer.tag,
        }
        result = Result(
            run_id=ws.run_id,
            target=target,
            execution=execution.model_copy(update=update),
            harness=doc,
            metric="instructions",
        )
        paths.append(ws.store.save(result))
    return paths
