"""Foreign formats: saved output of upstream tools and the thesis's LaTeX, read into our models.

One concern per module: :mod:`~archbench.upstream.gnunet_time` (GNUnet's
printed times), :mod:`~archbench.upstream.wording` (how each format words our
operations: the vocabulary's wording plus named aliases),
:mod:`~archbench.upstream.taler_helper`, :mod:`~archbench.upstream.gnunet_log`,
:mod:`~archbench.upstream.setup_file`, :mod:`~archbench.upstream.imported_result`,
:mod:`~archbench.upstream.log_files`, :mod:`~archbench.upstream.suite_logs`
(``invoke import`` and the suites' raw logs; public face :mod:`archbench.importer`)
and :mod:`~archbench.upstream.thesis_latex` (the thesis appendix's tables; the
reference dataset is :mod:`archbench.reference`).

The package is pure: it never imports ``docker``. This ``__init__`` imports
nothing, so each module can be imported alone.
"""
