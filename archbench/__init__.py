"""archbench: reproducible cross-architecture crypto benchmarks.

The package is laid out as the pipeline it runs::

    matrix -> bases -> images -> run -> results -> reports

``matrix`` parses matrix.yml, ``bases`` makes the per-architecture root
file systems, ``images`` builds the benchmark images, ``run`` executes the
harness inside them, ``results`` stores what came back and ``reports``
renders tables. ``pipeline`` plans and drives the stages; ``tasks.py`` at
the repository root is the only place that knows invoke, and ``cli`` holds
the bodies of its tasks.
"""

__version__ = "0.1.0"
