"""The harness's command line (harness/abh/cli.py): the values its flags accept."""

from __future__ import annotations

import argparse

import pytest
from abh import cli


@pytest.mark.parametrize(
    ("text", "value"),
    [("1024,2048", [1024, 2048]), ("4096", [4096]), (" 512 , 16384", [512, 16384])],
)
def test_parse_rsa_bits_accepts(text: str, value: list[int]) -> None:
    assert cli.parse_rsa_bits(text) == value


@pytest.mark.parametrize(
    "text", ["", "1024,1024", "256", "20000", "2048,x", ",".join(["1024"] * 17)]
)
def test_parse_rsa_bits_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_rsa_bits(text)


@pytest.mark.parametrize("text", ["1", "0.25", "1e3", "30.0"])
def test_parse_seconds_accepts(text: str) -> None:
    assert cli.parse_seconds(text) == float(text)


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "1e7", "", "soon"])
def test_parse_seconds_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_seconds(text)
