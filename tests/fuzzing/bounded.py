"""The default suite's slice of the fuzzer (tests/test_fuzz.py, tests/test_fuzz_new.py): one judge that
asserts the contract, and one deterministic hypothesis test per family of cases."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fuzzing.case import Case
from fuzzing.harness import Outcome, judge
from fuzzing.seeds import Seed, load_seeds

#: the seeds of the bounded run: the corpus captures (at most ~60 KB each), not the MB-sized third-party ones
SEEDS = load_seeds(thirdparty=False, max_chars=80_000)
#: a hang guard, not a timing threshold: the long run measures time per KB
HANG_S = 20.0

#: makes one case of a family: (rng, seeds, case number, family) -> Case
Generator = Callable[[random.Random, tuple[Seed, ...], int, str], Case]


def check(case: Case, root: Path) -> Outcome:
    """Run ``case`` in ``root`` and fail the test, with what broke, unless the contract holds."""
    out = judge(case, case.materialize(root), HANG_S)
    assert out.ok, (
        f"contract broken: {out.failure} (area {out.area}, rc={out.rc})\n"
        f"case: {'; '.join(case.what)}\nlast line: {out.last_line}\n{out.detail}"
    )
    return out


def family_test(generate: Generator, family: str, examples: int, what: str = "") -> Callable[..., None]:
    """A test of ``examples`` cases of ``family``, the same ones on every run (derandomized)."""

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(rng=st.randoms(use_true_random=False))
    def test(rng: random.Random, tmp_path_factory: pytest.TempPathFactory) -> None:
        check(generate(rng, SEEDS, 1, family), tmp_path_factory.getbasetemp() / f"fuzz-{family}")

    test.__name__ = f"test_contract_holds_for_{family}"
    test.__doc__ = f"{examples} generated cases of the {what}family {family!r} keep the error contract."
    return test
