"""Host pools: the matrix's ``pools:``, which members a pooled target may run on, pinning,
and the run's one queue that shares a pool's targets among its members and moves a lost
member's target to another (``archbench.run.schedule._Dispatch``, without an engine: its
decisions are pure; the integration test runs it against two engines behind real sshd)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archbench.errors import EngineError, MatrixError
from archbench.matrix import Matrix, parse
from archbench.platforms import Arch
from archbench.run import TargetOutcome, TargetPlan, connect_engines, pin, plan
from archbench.run.schedule import _Dispatch, lost_connection

MATRIX = """
version: 1
bases: {deb: {source: bootstrap, suite: trixie}}
profiles: {slim: {packages: [gcc]}}
hosts:
  arm-a: {url: "ssh://bench@arm-a.example.org"}
  arm-b: {url: "ssh://bench@arm-b.example.org", max_parallel_runs: 2}
  x86: {url: "ssh://bench@x86.example.org"}
pools:
  arm: [arm-a, arm-b]
  rented: [arm-a, x86, local]
targets:
  - {name: a1, arch: arm64, base: deb, host: arm}
  - {name: a2, arch: arm64, base: deb, host: arm}
  - {name: a3, arch: arm64, base: deb, host: arm}
  - {name: r, arch: riscv64, base: deb, host: rented, emulate: true}
  - {name: n, arch: amd64, base: deb, host: rented}
  - {name: solo, arch: arm64, base: deb, host: arm-a}
"""

ARCHS = {"local": Arch.AMD64, "arm-a": Arch.ARM64, "arm-b": Arch.ARM64, "x86": Arch.AMD64}


def _err(text: str) -> str:
    with pytest.raises(MatrixError) as info:
        parse(text, "m.yml")
    return str(info.value)


def test_pools_are_parsed_with_their_members_in_order() -> None:
    m = parse(MATRIX)
    assert m.pools == {"arm": ("arm-a", "arm-b"), "rented": ("arm-a", "x86", "local")}
    assert m.members("arm") == ("arm-a", "arm-b")
    assert m.members("arm-a") == ("arm-a",) and m.members("local") == ("local",)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("host: arm}", "host: amr}", "a1).host: unknown host 'amr'; defined in 'hosts': local, "
         "arm-a, arm-b, x86, in 'pools': arm, rented; did you mean 'arm'?"),
        ("[arm-a, arm-b]", "[arm-a, arm-c]", "pools.arm[1]: unknown host 'arm-c'; defined in "
         "'hosts': local, arm-a, arm-b, x86; did you mean 'arm-b'?"),
        ("[arm-a, arm-b]", "[arm-b, arm-b]", "pools.arm[1]: host 'arm-b' is listed twice"),
        ("[arm-a, arm-b]", "[]", "pools.arm: a pool needs at least one host"),
        ("  arm: [", "  x86: [", "pools.x86: 'x86' is already a host's name"),
        ("  arm: [", "  local: [", "pools.local: 'local' is already a host's name"),
        ("pools:", "pool:", "unknown key 'pool'; allowed: version, defaults, "
         "emulated_defaults, bases, profiles, hosts, pools, targets"),
        ("pools:", "pools:\n  bad name: [x86]\n", "pools"),
    ],
)  # fmt: skip
def test_bad_pools_are_named_with_what_is_allowed(old: str, new: str, message: str) -> None:
    assert old in MATRIX
    msg = _err(MATRIX.replace(old, new, 1))
    assert msg.startswith("m.yml: invalid matrix") and message in msg, msg


def _plans(m: Matrix, archs: dict[str, Arch] | None = None) -> dict[str, TargetPlan]:
    return {p.name: p for p in plan(m, m.targets, archs or ARCHS)}


def test_a_pooled_target_may_run_on_the_members_of_its_architecture_only() -> None:
    plans = _plans(parse(MATRIX))
    a1 = plans["a1"]
    assert a1.pool is not None and a1.pool.name == "arm" and a1.hosts == ("arm-a", "arm-b")
    assert not a1.emulated and a1.remote and a1.host_name == "arm-a"
    # Native means native on every member: the amd64 members of 'rented' (this machine
    # included, which on its own would emulate) are not the riscv64 target's unless it
    # says emulate: true; then it is emulated on all of them.
    assert plans["n"].hosts == ("x86", "local") and not plans["n"].emulated
    assert plans["r"].hosts == ("arm-a", "x86", "local") and plans["r"].emulated
    assert plans["solo"].pool is None and plans["solo"].hosts == ("arm-a",)


def test_placing_a_plan_on_a_member_takes_that_members_host() -> None:
    plans = _plans(parse(MATRIX))
    on_b = plans["a1"].on("arm-b")
    assert on_b.host_name == "arm-b" and on_b.host is not None
    assert on_b.host.display == "ssh://arm-b.example.org" and on_b.pool == plans["a1"].pool
    local = plans["n"].on("local")
    assert local.host is None and not local.remote  # this machine's engine: Native kind
    assert plans["a1"].on("arm-a") is plans["a1"]


def test_a_pool_without_a_fitting_member_is_refused_with_its_members() -> None:
    m = parse(MATRIX)
    with pytest.raises(MatrixError, match=r"target a1: no member of pool arm that answers runs "
                       r"arm64 \(arm-a: amd64; arm-b: amd64\)\. Add a arm64 host to the pool, "
                       r"or 'emulate: true'"):  # fmt: skip
        plan(m, m.select(["a1"]), {**ARCHS, "arm-a": Arch.AMD64, "arm-b": Arch.AMD64})
    # A member that did not answer is left out; with none left it is the engines' fault.
    (p,) = plan(m, m.select(["a1"]), {"local": Arch.AMD64, "arm-b": Arch.ARM64})
    assert p.hosts == ("arm-b",) and p.host_name == "arm-b"
    with pytest.raises(EngineError, match=r"\(arm-a: did not answer; arm-b: did not answer\)"):
        plan(m, m.select(["a1"]), {"local": Arch.AMD64})


def test_pin_places_each_pooled_target_on_one_member_alike_every_time() -> None:
    m = parse(MATRIX)
    plans = plan(m, m.targets, ARCHS)
    pinned = pin(plans)
    assert [(p.name, p.host_name, p.pool) for p in pinned] == [
        ("a1", "arm-a", None),
        ("a2", "arm-b", None),
        ("a3", "arm-a", None),
        ("r", "x86", None),  # arm-a has two already
        ("n", "local", None),  # x86 has one, local none
        ("solo", "arm-a", None),
    ]
    assert pin(plan(m, m.targets, ARCHS)) == pinned


@settings(max_examples=200, deadline=None)
@given(
    members=st.integers(min_value=1, max_value=5),
    targets=st.integers(min_value=1, max_value=12),
)
def test_pin_spreads_a_pools_targets_evenly(members: int, targets: int) -> None:
    hosts = "".join(f"  h{i}: {{url: 'tcp://h{i}:2376'}}\n" for i in range(members))
    text = (
        "version: 1\nbases: {deb: {source: bootstrap, suite: trixie}}\n"
        "profiles: {slim: {packages: [gcc]}}\n"
        f"hosts:\n{hosts}pools:\n  p: [{', '.join(f'h{i}' for i in range(members))}]\n"
        "targets:\n"
        + "".join(f"  - {{name: t{i}, arch: amd64, base: deb, host: p}}\n" for i in range(targets))
    )
    m = parse(text)
    archs = {"local": Arch.AMD64, **{f"h{i}": Arch.AMD64 for i in range(members)}}
    pinned = pin(plan(m, m.targets, archs))
    load = [sum(p.host_name == f"h{i}" for p in pinned) for i in range(members)]
    assert sum(load) == targets and max(load) - min(load) <= 1
    assert all(p.pool is None and p.host is not None for p in pinned)


# ------------------------------------------------------------------ the run's one queue


def _dispatch(
    plans: list[TargetPlan], workers: dict[str, int], placed: dict[str, str] | None = None
) -> _Dispatch:
    return _Dispatch(plans, workers, placed or {})


def test_a_pools_members_share_its_targets_from_the_start() -> None:
    m = parse(MATRIX)
    plans = plan(m, m.select(["a1", "a2", "a3"]), ARCHS)
    d = _dispatch(plans, {"arm-a": 1, "arm-b": 2})
    first = d.next("arm-a")
    assert isinstance(first, TargetPlan) and (first.name, first.host_name) == ("a1", "arm-a")
    # arm-a is busy and arm-b is idle: arm-a's next worker (none here) would not take a2.
    second = d.next("arm-b")
    assert isinstance(second, TargetPlan) and (second.name, second.host_name) == ("a2", "arm-b")
    third = d.next("arm-b")  # arm-b's second slot; arm-a has no free worker
    assert isinstance(third, TargetPlan) and third.name == "a3"
    # Nothing pending, but arm-b's targets come to arm-a if arm-b is lost: wait.
    assert d.next("arm-a") == "wait"
    for host, p in (("arm-a", first), ("arm-b", second), ("arm-b", third)):
        d.done(host, p)
    assert d.next("arm-a") == "end" and d.next("arm-b") == "end" and d.next("arm-b") == "end"


def test_a_member_that_is_not_least_busy_leaves_the_target_to_an_idle_one() -> None:
    m = parse(MATRIX)
    plans = plan(m, m.select(["a1", "a2"]), ARCHS)
    d = _dispatch(plans, {"arm-a": 2, "arm-b": 1})
    a = d.next("arm-a")
    assert isinstance(a, TargetPlan) and a.name == "a1"
    # arm-a's second worker: arm-b has a free worker and nothing in flight, so it waits.
    assert d.next("arm-a") == "wait"
    b = d.next("arm-b")
    assert isinstance(b, TargetPlan) and (b.name, b.host_name) == ("a2", "arm-b")


def test_a_target_built_on_a_member_is_measured_there_unless_it_is_lost() -> None:
    m = parse(MATRIX)
    plans = plan(m, m.select(["a1", "a2"]), ARCHS)
    d = _dispatch(plans, {"arm-a": 1, "arm-b": 1}, {"a1": "arm-b", "a2": "arm-b"})
    assert d.next("arm-a") == "wait"  # both belong to arm-b
    got = d.next("arm-b")
    assert isinstance(got, TargetPlan) and got.name == "a1"
    assert d.lose("arm-b", got)  # arm-b stopped answering during a1: a1 is moved
    moved = d.next("arm-a")
    assert isinstance(moved, TargetPlan) and (moved.name, moved.host_name) == ("a1", "arm-a")
    d.done("arm-a", moved)
    other = d.next("arm-a")  # a2's member is lost: it goes to arm-a too
    assert isinstance(other, TargetPlan) and (other.name, other.host_name) == ("a2", "arm-a")
    assert d.next("arm-b") == "end"


def test_with_every_member_lost_the_target_ends_lost_and_unpooled_ones_fail_there() -> None:
    m = parse(MATRIX)
    plans = plan(m, m.select(["a1", "solo"]), ARCHS)
    d = _dispatch(plans, {"arm-a": 1, "arm-b": 1})
    a1 = d.next("arm-b")
    assert isinstance(a1, TargetPlan) and a1.host_name == "arm-b"
    solo = d.next("arm-a")
    assert isinstance(solo, TargetPlan) and solo.name == "solo"
    assert not d.lose("arm-a", solo)  # solo has no other host: it ends lost
    assert d.lose("arm-b", a1) is False  # arm-a is lost already: nowhere to go
    assert d.next("arm-a") == "end" and d.next("arm-b") == "end"


def test_take_waits_for_a_target_a_lost_member_hands_on() -> None:
    m = parse(MATRIX)
    plans = plan(m, m.select(["a1"]), ARCHS)
    d = _dispatch(plans, {"arm-a": 1, "arm-b": 1})
    cancel = threading.Event()
    on_a = d.take("arm-a", cancel)
    assert on_a is not None
    got: list[TargetPlan | None] = []
    waiter = threading.Thread(target=lambda: got.append(d.take("arm-b", cancel)))
    waiter.start()
    waiter.join(timeout=0.3)
    assert waiter.is_alive()  # a1 may still come to arm-b
    assert d.lose("arm-a", on_a)
    waiter.join(timeout=10)
    assert got and got[0] is not None and got[0].host_name == "arm-b"


def test_the_lost_message_of_a_pooled_target_names_the_pool() -> None:
    m = parse(MATRIX)
    (p,) = plan(m, m.select(["a1"]), ARCHS)
    outcome = TargetOutcome("a1", ok=False, message="", stage="run")
    text = lost_connection("arm-b", "ssh://arm-b", outcome, "20260101T000000Z-x", pool=p.pool)
    assert (
        "lost the connection to host arm-b (ssh://arm-b) during run and no other host of pool "
        "arm answers (arm-a)" in text
    )
    assert text.endswith("invoke bench --resume 20260101T000000Z-x")


def test_a_pool_none_of_whose_members_answers_is_refused_with_each_reason() -> None:
    # Nothing listens on ports 1 and 2 of the loopback: both logins fail at once.
    m = parse(
        MATRIX.replace('url: "ssh://bench@arm-a.example.org"', 'url: "tcp://127.0.0.1:1"')
        .replace('url: "ssh://bench@arm-b.example.org", max_parallel_runs: 2', 'url: "tcp://127.0.0.1:2"')
    )  # fmt: skip
    said: list[str] = []
    with pytest.raises(EngineError) as info:
        connect_engines(m, m.select(["a1"]), said.append)
    text = str(info.value)
    assert text.startswith("no host of pool arm answers:\n  host arm-a (tcp://127.0.0.1:1) ")
    assert "\n  host arm-b (tcp://127.0.0.1:2) does not answer" in text and said == []
    # A host a target names itself is no pool member to leave out: its failure stops the run.
    with pytest.raises(EngineError, match=r"^host arm-a \(tcp://127.0.0.1:1\) does not answer"):
        connect_engines(m, m.select(["solo"]), said.append)
