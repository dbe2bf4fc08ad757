"""archbench: reproducible cross-architecture crypto benchmarks.

The package is laid out as the pipeline it runs, one package per stage::

    matrix -> build -> run -> result -> report

``matrix`` parses matrix.yml (its ``suites:`` are :mod:`archbench.suites`);
``build`` makes the per-architecture bases and the benchmark, cross and counter
images; ``run`` plans a run and executes the harness in containers on the
``hosts``; ``result`` stores what came back; ``report`` renders the chapter,
exports and plots. Beside the stages: ``inputs`` (bounded reading of untrusted
files, grammars, messages), ``analysis`` (statistics, comparisons, counts),
``upstream`` (foreign formats and the thesis's own figures), ``archive``
(artifact archives) and ``cli`` (the bodies of the invoke tasks; ``tasks.py``
at the repository root is the only place that knows invoke). Each package's
``__init__`` is its face: callers outside it import from there.
"""

from pathlib import Path
from typing import Final

__version__ = "0.1.0"

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
"""The repository: ``harness/``, ``images/`` and ``reports/`` beside the package."""
