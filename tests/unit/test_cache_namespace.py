"""The cache namespace of incremental builds (``ARCHBENCH_CACHE_NAMESPACE``): a run's own
tree and ccache volumes, so that a benchmark of ``invoke bisect`` from a cold cache
(``benchmarks/bisect_speed.py``) removes nobody's volumes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from archbench.errors import ImageBuildError
from archbench.images import cache_namespace, plan_toolchain, tree_volume
from archbench.images.incremental import NAMESPACE_VARIABLE, ccache_volume
from archbench.platforms import Arch

BASE = "archbench-base/debian-trixie:amd64"
BASE_ID = "sha256:" + "1" * 64
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")


def test_no_namespace_keeps_the_names_of_before() -> None:
    assert cache_namespace({}) == "" and cache_namespace({NAMESPACE_VARIABLE: ""}) == ""
    toolchain = plan_toolchain(Arch.AMD64, BASE, BASE_ID, None, perf=False)
    key = "ab" * 32
    assert tree_volume(toolchain, key) == f"archbench-gnunet-tree-amd64-{key[:24]}"
    assert ccache_volume(toolchain) == f"archbench-ccache-{toolchain.spec.content_hash[:24]}"


@given(st.from_regex(NAME, fullmatch=True))
def test_a_namespace_prefixes_both_volumes_and_nothing_else(namespace: str) -> None:
    assert cache_namespace({NAMESPACE_VARIABLE: namespace}) == namespace
    toolchain = plan_toolchain(Arch.AMD64, BASE, BASE_ID, None, perf=False)
    key = "cd" * 32
    assert tree_volume(toolchain, key, namespace) == (f"{namespace}-{tree_volume(toolchain, key)}")
    assert ccache_volume(toolchain, namespace) == f"{namespace}-{ccache_volume(toolchain)}"


@given(st.text(min_size=1, max_size=60).filter(lambda t: NAME.fullmatch(t) is None))
def test_a_malformed_namespace_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(ImageBuildError, match=NAMESPACE_VARIABLE):
        cache_namespace({NAMESPACE_VARIABLE: value})


@pytest.mark.parametrize("value", ["Bench", "-x", "a" * 33, "a/b", "a b", "ä"])
def test_names_docker_or_a_reader_would_trip_on_are_refused(value: str) -> None:
    with pytest.raises(ImageBuildError, match="1 to 32 lowercase letters"):
        cache_namespace({NAMESPACE_VARIABLE: value})
