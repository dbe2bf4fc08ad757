"""Reporting: the thesis appendix "Performance Measurements" and every other table, from results.

One concern per module; a render goes through them in this order:

* :mod:`~archbench.report.vocabulary`: operation names, wording and row order
  (the host side of the harness's vocabulary; a contract test keeps them equal);
* :mod:`~archbench.report.units`: units, significant figures and number formatting;
* :mod:`~archbench.report.frame`: the tidy frame and the machines, built once per render;
* :mod:`~archbench.report.model`: the table model (rows, columns, notes, flags);
* :mod:`~archbench.report.crossmachine`: the one cross-machine builder and chunker;
* :mod:`~archbench.report.sections`, :mod:`~archbench.report.schemes` (CS vs RSA),
  :mod:`~archbench.report.comparisons`,
  :mod:`~archbench.report.suites`: the tables of the appendix and of the other suites;
* :mod:`~archbench.report.chapter`: the chapter (sections, parts, intro);
* :mod:`~archbench.report.templating`, :mod:`~archbench.report.latex`,
  :mod:`~archbench.report.markdown`: escaping, Jinja2 and the two renderers;
* :mod:`~archbench.report.writer`: selection and the files of ``invoke report``.

Tables of their own: :mod:`~archbench.report.instructions` (instructions per
operation), :mod:`~archbench.report.gnunet_perf`, :mod:`~archbench.report.compare_tables`
and :mod:`~archbench.report.versions` (library versions that differ).

The package is pure: it never imports ``docker``. This ``__init__`` imports
nothing, so :mod:`archbench.export` can use the vocabulary without a cycle;
:mod:`archbench.reports` is the public facade.
"""
