"""abh: the archbench harness's Python package, run inside the benchmark containers.

``archbench_harness.py`` (beside this folder, the image's entry point) parses
its options with ``cli``, runs the suites of ``suites/`` (one module each, with
their helpers, the registry and the counting QEMU), describes the machine with
``setup_cpu`` and ``setup_system`` and prints the document ``document``
assembles: one ``archbench-harness`` version 1 JSON document, the whole
contract with the host (``CONTRACT.md``, ``schema-v1.json``).

Modules here import ``suites``, never the other way round. Standard library
only, under the distribution's ``python3`` (>= 3.11): the harness never imports
the host package ``archbench``, pandas or docker. The name is short for
*archbench harness* (the C drivers' macros carry the same prefix, ``ABH_``) and
is one that no host module, test helper or installed distribution uses, so on
the test path ``abh.suites.counting`` can only be the harness's. This package
holds no re-exports: callers import the module that defines a name.
"""
