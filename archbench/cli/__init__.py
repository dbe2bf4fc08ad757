"""The bodies of the invoke tasks, behind the thin ``tasks.py`` at the repository root.

``tasks.py`` declares each task's flags and is the only module that knows invoke;
it resolves ``invoke.yaml`` (:mod:`archbench.cli.config`) and hands the flags, as
the strings invoke parsed, to one function here per task:

| task | module |
| --- | --- |
| ``bench``, ``images`` | :mod:`archbench.cli.bench` |
| ``report`` | :mod:`archbench.cli.report` |
| ``compare`` | :mod:`archbench.cli.compare` |
| ``import`` | :mod:`archbench.cli.import_logs` |
| ``archive`` | :mod:`archbench.cli.archive` |
| ``doctor``, ``clean``, ``ci-matrix`` | :mod:`archbench.cli.hosts` |

Flag parsing shared by the tasks is :mod:`archbench.cli.options`; the help text of
every flag is :mod:`archbench.cli.helptext`. The bodies raise
:class:`archbench.errors.ArchbenchError` subclasses; ``tasks.py`` turns them into
exit codes.
"""
