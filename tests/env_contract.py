"""PettingZoo's own API and seeding checks, parametrized over option sets, for any env."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pettingzoo.test import api_test, seed_test

ignore_unknown_reset_option = pytest.mark.filterwarnings("ignore:ignoring unknown reset option")


def pettingzoo_checks(make_env: Callable[..., Any], option_sets: dict[str, dict[str, Any]]) -> tuple[Callable, Callable]:
    """``(test_api_test, test_seed_test)`` for a test module to bind at module level."""

    @ignore_unknown_reset_option
    @pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
    @pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
    @pytest.mark.parametrize("name", list(option_sets))
    def test_api_test(name: str) -> None:
        api_test(make_env(**option_sets[name]), num_cycles=300)

    @ignore_unknown_reset_option
    @pytest.mark.parametrize("name", list(option_sets))
    def test_seed_test(name: str) -> None:
        seed_test(lambda: make_env(**option_sets[name]), num_cycles=300)

    return test_api_test, test_seed_test
