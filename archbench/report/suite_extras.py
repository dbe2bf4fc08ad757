"""Tables of the other suites: openssl speed scaling and curves, libsodium order statistics, GnuPG.

* ``openssl speed -multi N`` scaling: aggregate ops/s of N processes over
  the single-process figure on the same machine;
* NIST vs Brainpool curves of equal size class (P-256/brainpoolP256r1,
  P-384/brainpoolP384r1, P-521/brainpoolP512r1), the comparison of the tinc
  seed (``tinc-sptps-speed-curves.txt``: about 5x on optimised OpenSSL);
* libsodium best / Nth best / mean / worst per operation, as pycryptopp
  reported its benchmarks (``pycryptopp-low-power-bench.txt``);
* GnuPG decryption per device and algorithm with bandwidth, as the
  ``gnupg-token-decrypt-bench.txt`` seed plots it.

Numbers are formatted by the caller's formatters (:data:`Formatter`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from archbench.analysis import order_statistics
from archbench.report.model import Machine, Table
from archbench.result import NS_PER_MS
from archbench.suites import suite_title

NIST_BRAINPOOL_PAIRS: Final = (
    ("P-256", "brainpoolP256r1"),
    ("P-384", "brainpoolP384r1"),
    ("P-521", "brainpoolP512r1"),
)
"""Curves of the same size class compared in the tinc seed."""

TIME_OPERATIONS: Final = frozenset({"key_generation"})
"""Operations shown as ms per operation everywhere (slow, and users think of them as time)."""

Formatter = Callable[[float], str]

_Key = tuple[str, int, str, str, int, str]
"""(scheme, key_bits or 0, param, operation, processes, device)."""


def row_key(record: dict[str, Any]) -> _Key:
    """The row of an other suite's cross-machine table a record belongs to."""
    return (
        str(record["scheme"]),
        int(record["key_bits"] or 0),
        str(record["param"] or ""),
        str(record["operation"]),
        int(record["processes"]),
        str(record["device"]),
    )


def row_unit(record: dict[str, Any]) -> str:
    """How a row's speed is shown: ``ops/s``, ``MB/s`` (bulk rows) or ``ms`` (per operation).

    Decided by the row's kind, never by its value, so one row has one unit on every machine.
    """
    if record.get("bytes_per_op") is not None and record["suite"] != "gnupg":
        return "MB/s"
    if record["operation"] in TIME_OPERATIONS or record["suite"] == "gnupg":
        return "ms"
    return "ops/s"


def row_value(record: dict[str, Any]) -> float:
    """The row's speed in :func:`row_unit`: ops/s, MB/s or ms per operation (median)."""
    unit = row_unit(record)
    if unit == "MB/s":
        return float(record["mb_per_s"])
    if unit == "ms":
        return float(record["per_op_ns"]) / NS_PER_MS
    return float(record["ops_per_s"])


def multi_scaling_table(
    machines: Sequence[Machine], fmt: Formatter, ratio: Formatter
) -> Table | None:
    """``openssl speed -multi N`` against the single process, per machine and row.

    Scaling = aggregate ops/s of N processes / ops/s of one process (ideal: N
    on N free cores). The 1-minute load average at the start of the run is
    shown beside it: scaling well below N with a load near the core count
    means the cores were shared, not that the machine does not scale. None
    when no machine has both figures.
    """
    rows = []
    for m in machines:
        load = m.result.harness.setup.load_average
        load_text = f"{load[0]:.2f}" if load else "–"
        records = [r for r in m.records if r["suite"] == "openssl-speed" and r["valid"]]
        single = {row_key(r)[:4]: r for r in records if int(r["processes"]) == 1}
        for r in records:
            processes = int(r["processes"])
            partner = single.get(row_key(r)[:4])
            if processes == 1 or partner is None:
                continue
            one, many = row_value(partner), row_value(r)
            rows.append(
                (
                    m.name,
                    str(r["label"]),
                    str(r["operation"]),
                    row_unit(r),
                    fmt(one),
                    str(processes),
                    fmt(many),
                    ratio(many / one),
                    f"{m.result.harness.setup.cores} / {load_text}",
                )
            )
    if not rows:
        return None
    return Table(
        label="tab:suite-openssl-speed-multi",
        caption=(
            "openssl speed: one process against -multi N (aggregate of N processes); "
            "scaling = N-process figure / single-process figure, ideally N on N idle cores; "
            "cores / load is the CPU count and the 1-minute load average when the run began "
            "(a load near the core count means the processes shared cores)"
        ),
        header=(
            "Machine",
            "Scheme",
            "Operation",
            "Unit",
            "1 process",
            "N",
            "N processes",
            "Scaling",
            "Cores / load",
        ),
        align="llllrrrrr",
        groups=(tuple(rows),),
        small=True,
    )


def nist_brainpool_table(
    machines: Sequence[Machine], fmt: Formatter, ratio: Formatter
) -> Table | None:
    """NIST against Brainpool curves of the same size class, single process, per machine.

    Ratio = NIST ops/s / Brainpool ops/s (the tinc seed measured about 5x for
    P-521 vs brainpoolP512r1 ECDSA signing on optimised OpenSSL). None when no
    machine has a pair.
    """
    rows = []
    for m in machines:
        records = [
            r
            for r in m.records
            if r["suite"] == "openssl-speed" and r["valid"] and int(r["processes"]) == 1
        ]
        by = {(str(r["scheme"]), str(r["param"] or ""), str(r["operation"])): r for r in records}
        for scheme, operation in sorted({(k[0], k[2]) for k in by}):
            for nist, brainpool in NIST_BRAINPOOL_PAIRS:
                a = by.get((scheme, nist, operation))
                b = by.get((scheme, brainpool, operation))
                if a is None or b is None:
                    continue
                fast, slow = row_value(a), row_value(b)
                rows.append(
                    (
                        m.name,
                        f"{scheme} {operation}",
                        f"{nist} / {brainpool}",
                        fmt(fast),
                        fmt(slow),
                        ratio(fast / slow),
                    )
                )
    if not rows:
        return None
    return Table(
        label="tab:suite-openssl-speed-nist-brainpool",
        caption=(
            "NIST vs Brainpool curves (openssl speed, one process): ops/s and the ratio "
            "NIST / Brainpool"
        ),
        header=("Machine", "Operation", "Curves", "NIST ops/s", "Brainpool ops/s", "Ratio"),
        align="lllrrr",
        groups=(tuple(rows),),
        small=True,
    )


def order_statistics_table(
    machines: Sequence[Machine], suite: str, fmt: Formatter, nth_default: int = 3
) -> Table | None:
    """Best / Nth best / mean / worst per operation, per machine (pycryptopp's report).

    Per-operation times in µs; bulk rows (``bytes_per_op``) in ns per byte.
    ``nth`` is the suite's setting in the result (``suites[suite].parameters.nth``),
    else ``nth_default``. None when no machine ran the suite.
    """
    rows = []
    nths = set()
    for m in machines:
        run = m.result.harness.suites.get(suite)
        nth = int(run.parameters.get("nth", nth_default)) if run else nth_default
        nths.add(nth)
        for row in m.result.harness.rows:
            if row.suite != suite:
                continue
            if not row.valid:
                rows.append((m.name, row.label, row.operation, "", "invalid", "", "", ""))
                continue
            stats = order_statistics(row.samples_ns, row.ops_per_block, nth)
            scale, unit = (1e3, "µs") if row.bytes_per_op is None else (row.bytes_per_op, "ns/B")
            rows.append(
                (
                    m.name,
                    row.label,
                    row.operation.replace("_", " "),
                    unit,
                    fmt(stats.best / scale),
                    fmt(stats.nth_best / scale),
                    fmt(stats.mean / scale),
                    fmt(stats.worst / scale),
                )
            )
    if not rows:
        return None
    nth_text = "/".join(str(n) for n in sorted(nths))
    return Table(
        label=f"tab:suite-{suite}-order-statistics",
        caption=(
            f"{suite_title(suite)}: best, {nth_text}. best, mean and worst per "
            "operation, as pycryptopp reported (µs per operation; ns per byte for bulk rows)"
        ),
        header=(
            "Machine",
            "Scheme",
            "Operation",
            "Unit",
            "Best",
            f"{nth_text}. best",
            "Mean",
            "Worst",
        ),
        align="llllrrrr",
        groups=(tuple(rows),),
        small=True,
    )


def gnupg_table(machines: Sequence[Machine], fmt: Formatter) -> Table | None:
    """GnuPG decryption per machine, device and algorithm: median time (ms) and MB/s.

    Bandwidth = file bytes / time of one ``gpg --decrypt`` process, as the
    gnupg-token seed computes it (its "bandwidth" column); it includes
    process start, so it is lower than what the cipher alone achieves.
    """
    rows = []
    for m in machines:
        for r in m.records:
            if r["suite"] != "gnupg" or r["operation"] != "decrypt":
                continue
            if not r["valid"]:
                rows.append((m.name, str(r["device"]), str(r["label"]), "invalid", ""))
                continue
            mb_s = r["mb_per_s"]
            rows.append(
                (
                    m.name,
                    str(r["device"]),
                    str(r["label"]),
                    fmt(float(r["per_op_ns"]) / NS_PER_MS),
                    fmt(float(mb_s)) if mb_s is not None else "–",
                )
            )
    if not rows:
        return None
    return Table(
        label="tab:suite-gnupg-decrypt",
        caption="GnuPG decryption of a random file: median time per gpg process and bandwidth",
        header=("Machine", "Device", "Algorithm", "Time (ms)", "MB/s"),
        align="lllrr",
        groups=(tuple(rows),),
        small=False,
    )


ExtraTables = Callable[[Sequence[Machine], Formatter, Formatter], list[Table | None]]
"""(machines, hardware first; speed formatter; ratio formatter) -> a suite's own tables."""

EXTRA_TABLES: Final[dict[str, ExtraTables]] = {
    "openssl-speed": lambda machines, fmt, ratio: [
        multi_scaling_table(machines, fmt, ratio),
        nist_brainpool_table(machines, fmt, ratio),
    ],
    "sodium": lambda machines, fmt, _ratio: [order_statistics_table(machines, "sodium", fmt)],
    "gnupg": lambda machines, fmt, _ratio: [gnupg_table(machines, fmt)],
}
"""The tables a suite adds after its cross-machine table; a new suite with tables of its
own adds its entry here (the cross-machine table needs nothing)."""
