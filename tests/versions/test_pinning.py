"""Which indexed version answers for a locked version: exact, else the nearest lower release of the same
major.minor, else the default; never a silent substitution."""

from __future__ import annotations

import pytest

from docs_mcp_core.versions.pinning import indexed_span, pin_version

SQLMODEL = ["0.0.14", "0.0.20", "0.0.24"]


def test_the_locked_version_itself() -> None:
    pin = pin_version("sqlmodel", "0.0.20", SQLMODEL)
    assert (pin.label, pin.exact, pin.notice) == ("0.0.20", True, None)


@pytest.mark.parametrize(
    "locked, indexed, label",
    [
        ("1.2.0", ["v1.2", "v1.3"], "v1.2"),  # one version, spelled two ways
        ("v2.4.1", ["2.4.1", "2.5.0"], "2.4.1"),  # a Go or npm tag against a PyPI-style label
        ("1.4.2+local", ["1.4.2", "1.5"], "1.4.2"),  # a local build is its public version
        ("v2.0.0+incompatible", ["2.0.0"], "2.0.0"),
    ],
)
def test_spellings_of_one_version_are_exact(locked: str, indexed: list[str], label: str) -> None:
    pin = pin_version("lib", locked, indexed)
    assert (pin.label, pin.exact, pin.notice) == (label, True, None)


def test_the_nearest_lower_release_of_the_same_major_minor() -> None:
    pin = pin_version("httpx", "0.27.2", ["0.26.0", "0.27.0", "0.27.1", "0.27.3", "0.28.1"])
    assert (pin.label, pin.exact) == ("0.27.1", False)
    assert pin.notice == (
        "httpx 0.27.2 is locked; indexed versions are 0.26.0–0.28.1; answering from 0.27.1 "
        "(the nearest lower release of 0.27.x)"
    )
    pin = pin_version("sqlmodel", "0.0.22", SQLMODEL)  # 0.0.x is one line
    assert pin.label == "0.0.20" and pin.notice is not None and "(the nearest lower release of 0.0.x)" in pin.notice


def test_nothing_lower_in_the_line_answers_from_the_default_and_says_so() -> None:
    pin = pin_version("sqlmodel", "0.0.9", SQLMODEL)
    assert (pin.label, pin.exact) == ("0.0.24", False)
    assert (
        pin.notice == "sqlmodel 0.0.9 is locked; indexed versions are 0.0.14–0.0.24; answering from 0.0.24 (the newest)"
    )
    pin = pin_version("lib", "3.1.0", ["2.9", "3.2", "main"], default="main")  # only a higher 3.x: no
    assert pin.label == "main"
    assert pin.notice == "lib 3.1.0 is locked; indexed versions are 2.9, 3.2, main; answering from main (the default)"
    pin = pin_version("lib", "2.0.0rc1", ["1.9", "2.0.0"])  # 2.0.0 is later than its release candidate
    assert pin.label == "2.0.0" and pin.notice is not None and pin.notice.endswith("answering from 2.0.0 (the newest)")
    pin = pin_version("lib", "a1b2c3d", ["1.0", "1.1"])  # not a version at all
    assert pin.label == "1.1" and not pin.exact and pin.notice is not None


def test_no_lock_means_the_default_and_no_notice() -> None:
    assert pin_version("sqlmodel", None, SQLMODEL) == pin_version("sqlmodel", None, SQLMODEL, default=None)
    pin = pin_version("sqlmodel", None, SQLMODEL)
    assert (pin.label, pin.locked, pin.exact, pin.notice) == ("0.0.24", None, False, None)
    assert pin_version("sqlmodel", None, SQLMODEL, default="0.0.14").label == "0.0.14"
    assert pin_version("sqlmodel", "0.0.9", []).label is None


def test_the_span_names_what_is_indexed() -> None:
    assert indexed_span(["0.0.24", "0.0.14", "0.0.20"]) == "0.0.14–0.0.24"
    assert indexed_span(["1.3", "1.2"]) == "1.2, 1.3"
    assert indexed_span(["main"]) == "main"
    assert indexed_span([]) == "none"
