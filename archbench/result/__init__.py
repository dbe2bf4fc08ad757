"""Results: harness documents and stored ``archbench-result`` files, one concern per module.

Lower modules never import higher ones (no cycles):

* :mod:`~archbench.result.base`: the frozen base model that keeps unknown keys;
* :mod:`~archbench.result.row`: one measured row and the appendix vocabulary;
* :mod:`~archbench.result.document`: the harness document (``archbench-harness`` v1);
* :mod:`~archbench.result.paths`: run ids, safe file names, atomic writes;
* :mod:`~archbench.result.versions`: the stored format's versions and migration;
* :mod:`~archbench.result.model`: the stored result and the run manifest;
* :mod:`~archbench.result.loading`: reading and validating documents and files;
* :mod:`~archbench.result.merge`: pooling the container runs of ``--repeat K``;
* :mod:`~archbench.result.store`: the results directory (save, list, load).

The package is pure: it never imports ``docker``. This ``__init__`` imports
nothing; :mod:`archbench.results` is the public facade.
"""
