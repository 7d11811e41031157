"""Gin Rummy's speed against its peers, RLCard and OpenSpiel, as ratios measured in the same run.

Run from the repository root::

    python -m benchmarks.bench_gin_rummy [--seconds S] [--hands N] [--out benchmarks/RESULTS.md]

Measurements (each runs for a fixed time budget after a short warm-up, timed by
``benchmarks.harness``, everything seeded):

1. Environment throughput under uniform-random legal play, in agent decisions per second
   (chance events such as dealing and stock draws are not counted as steps, but their cost
   is inside the timed loop): ours (PettingZoo AEC ``gin_rummy_v0.env()``), OpenSpiel's
   ``gin_rummy`` game with the observation tensor built at every decision, RLCard's
   ``gin-rummy`` env, interleaved in one group.
2. Minimum deadwood of 10-card hands, in calls per second, on two fixed hand sets (random
   hands and meld-rich hands): ours (``rummy_envs.games.gin_rummy.deadwood``, uncached and cached),
   RLCard (``get_best_meld_clusters`` + ``get_deadwood_count``), OpenSpiel
   (``GinRummyUtils.min_deadwood``). All three must agree on every hand before timing.

The results are printed and written as Markdown into the ``bench_gin_rummy`` section of
``--out`` (the other scripts' sections are kept). Not run in CI; ``pip install -e ".[bench]"``
installs the peers.
"""

from __future__ import annotations

import argparse
import random
import sys
import traceback
from collections.abc import Callable

import numpy as np

from benchmarks.harness import (GIN_KEY, OURS_ENV_METHOD, Rate, Row, Runner, Setup, Target, Unit, add_game_figures,
                                gin_runner, machine_line, measure_group, parse, parser, publish, ratio, report,
                                results_table, targets_table)

MODULE = "bench_gin_rummy"
RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"  # our suit order: card id = suit * 13 + rank
OPENSPIEL_SUIT_ORDER = "SCDH"  # OpenSpiel card int = suit * 13 + rank with suits s, c, d, h
PEER_KEYS = ("env_openspiel", "env_rlcard")
HAND_SETS = {"random": "random hands", "meld": "meld-rich hands"}
TARGETS = (
    Target(GIN_KEY, "env_openspiel", 1.0, "env steps/s >= 1.0x OpenSpiel's loop"),
    Target(GIN_KEY, "env_rlcard", 2.0, "env steps/s >= 2x RLCard's env"),
    Target("dw_meld_ours", "dw_meld_rlcard", 4.0, "deadwood (meld-rich hands, uncached) >= 4x RLCard"),
)
PEERS_METHOD = ("- OpenSpiel: `pyspiel.load_game(\"gin_rummy\")`, `np.asarray(state.observation_tensor(), np.float32)` "
                "at every decision, chance nodes sampled from `state.chance_outcomes()` (uniform, checked). RLCard: "
                "`rlcard.make(\"gin-rummy\")`, choice over `state[\"legal_actions\"]` keys until `env.is_over()`. "
                "Both choose uniformly over the legal actions via `random.Random(seed).choice`, as ours does.")


# --------------------------------------------------------------------------------------
# 1. the peers' environments


def openspiel_env_unit(seed: int) -> tuple[Unit, None]:
    """A unit plays one OpenSpiel gin_rummy game by uniform-random legal play, the observation
    tensor built at every decision (what an RL loop reads)."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    choice = rng.choice
    randrange = rng.randrange
    asarray = np.asarray
    f32 = np.float32
    checked = {"chance_nodes": 0}

    def play_one_game() -> int:
        state = game.new_initial_state()
        steps = 0
        check = checked["chance_nodes"] < 2000
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                if check:
                    # Gin rummy's chance outcomes (deal, stock draws) are uniform; sampling by
                    # index is then exact. Checked on the first chance nodes of the run.
                    probs = [p for _a, p in outcomes]
                    if max(probs) - min(probs) > 1e-12:
                        raise RuntimeError("OpenSpiel gin_rummy chance outcomes are not uniform")
                    checked["chance_nodes"] += 1
                state.apply_action(outcomes[randrange(len(outcomes))][0])
            else:
                asarray(state.observation_tensor(), dtype=f32)  # what an RL loop reads, then dropped
                state.apply_action(choice(state.legal_actions()))
                steps += 1
        return steps

    return play_one_game, None


def rlcard_env_unit(seed: int) -> tuple[Unit, None]:
    """A unit plays one game of RLCard's gin-rummy env by uniform-random legal play."""
    import rlcard

    env = rlcard.make("gin-rummy", config={"seed": seed})
    rng = random.Random(seed)
    choice = rng.choice

    def play_one_game() -> int:
        state, _pid = env.reset()
        steps = 0
        while not env.is_over():
            state, _pid = env.step(choice(list(state["legal_actions"].keys())))
            steps += 1
        return steps

    return play_one_game, None


def peer_runners(seed: int) -> list[Runner]:
    """OpenSpiel's and RLCard's gin envs (keys ``PEER_KEYS``), rates in steps/s."""
    return [Runner(Rate("env_openspiel", "OpenSpiel gin_rummy (+obs tensor)", "steps/s"),
                   lambda: openspiel_env_unit(seed)),
            Runner(Rate("env_rlcard", "RLCard gin-rummy env", "steps/s"), lambda: rlcard_env_unit(seed))]


# --------------------------------------------------------------------------------------
# 2. deadwood


def random_hands(n: int, rng: random.Random) -> list[tuple[int, ...]]:
    """``n`` distinct hands of 10 distinct cards, uniformly random."""
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        hand = tuple(sorted(rng.sample(range(52), 10)))
        if hand not in seen:
            seen.add(hand)
            out.append(hand)
    return out


def _random_meld(rng: random.Random) -> set[int]:
    if rng.random() < 0.5:
        length = rng.choice((3, 3, 4, 5))
        suit = rng.randrange(4)
        start = rng.randrange(13 - length + 1)
        return {suit * 13 + r for r in range(start, start + length)}
    rank = rng.randrange(13)
    suits = rng.sample(range(4), rng.choice((3, 3, 4)))
    return {s * 13 + rank for s in suits}


def meld_rich_hands(n: int, rng: random.Random) -> list[tuple[int, ...]]:
    """``n`` distinct hands: 2-3 disjoint random runs/sets, then random filler up to 10 cards."""
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        want = rng.choice((2, 3))
        cards: set[int] = set()
        placed = 0
        for _ in range(100):
            if placed == want:
                break
            meld = _random_meld(rng)
            if meld & cards or len(cards) + len(meld) > 10:
                continue
            cards |= meld
            placed += 1
        if placed < 2:
            continue
        rest = [c for c in range(52) if c not in cards]
        cards.update(rng.sample(rest, 10 - len(cards)))
        hand = tuple(sorted(cards))
        if hand not in seen:
            seen.add(hand)
            out.append(hand)
    return out


def ours_deadwood_fn() -> tuple[Callable[[list[int]], int], Callable[[], None]]:
    from rummy_envs import melds
    from rummy_envs.games.gin_rummy import deadwood

    return deadwood, melds.max_cover.cache_clear


def rlcard_deadwood_fn() -> tuple[Callable, Callable]:
    from rlcard.games.base import Card
    from rlcard.games.gin_rummy.utils.melding import get_best_meld_clusters
    from rlcard.games.gin_rummy.utils.utils import get_deadwood_count

    cards = [Card(suit=SUIT_CHARS[c // 13], rank=RANK_CHARS[c % 13]) for c in range(52)]

    def convert(hand: tuple[int, ...]) -> list:
        return [cards[c] for c in hand]

    def deadwood(hand: list) -> int:
        # as rlcard's round scoring does it (round.py score_player_*)
        clusters = get_best_meld_clusters(hand=hand)
        best = [] if not clusters else clusters[0]
        return get_deadwood_count(hand=hand, meld_cluster=best)

    return convert, deadwood


def openspiel_deadwood_fn() -> tuple[Callable, Callable]:
    import pyspiel

    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    to_os = [OPENSPIEL_SUIT_ORDER.index(SUIT_CHARS[c // 13]) * 13 + c % 13 for c in range(52)]
    for c in range(52):  # check the card int convention assumed above
        expect = RANK_CHARS[c % 13] + SUIT_CHARS[c // 13].lower()
        got = utils.card_string(to_os[c])
        if got != expect:
            raise RuntimeError(f"OpenSpiel card int {to_os[c]} is {got!r}, expected {expect!r}")

    def convert(hand: tuple[int, ...]) -> list[int]:
        return [to_os[c] for c in hand]

    return convert, utils.min_deadwood


def hand_value(hand: tuple[int, ...]) -> int:
    return sum(min(c % 13 + 1, 10) for c in hand)


def verify_deadwood(name: str, hands: list[tuple[int, ...]], impls: dict[str, tuple]) -> list[str]:
    """Compute every implementation's deadwood of every hand; return descriptions of mismatches."""
    results: dict[str, list[int]] = {}
    for impl, (convert, fn) in impls.items():
        converted = [convert(h) for h in hands]
        results[impl] = [int(fn(h)) for h in converted]
    problems: list[str] = []
    names = list(results)
    for i, hand in enumerate(hands):
        values = {impl: results[impl][i] for impl in names}
        if len(set(values.values())) != 1:
            text = " ".join(RANK_CHARS[c % 13] + SUIT_CHARS[c // 13] for c in hand)
            problems.append(f"{name} hand #{i} [{text}]: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    mean = sum(results[names[0]]) / len(hands) if hands else 0.0
    print(f"  verified {len(hands)} {name} across {', '.join(names)}: "
          f"{len(problems)} mismatches; mean deadwood {mean:.1f}, mean hand value "
          f"{sum(map(hand_value, hands)) / len(hands):.1f}")
    return problems


def deadwood_unit(convert: Callable, fn: Callable, hands: list[tuple[int, ...]], chunk: int, clear: Setup | None,
                  prewarm: bool = False) -> tuple[Unit, Setup | None]:
    """A unit is ``chunk`` consecutive distinct hands of the set, cycling over it.

    With ``clear`` (ours uncached) the memo is emptied, untimed, before every unit, so no
    timed call ever sees a hand already computed since the last clear (within a pass over the
    set all hands are distinct anyway). With ``prewarm`` (ours cached) every hand is computed
    once first, untimed, so the timed calls are all cache hits.
    """
    converted = [convert(h) for h in hands]
    chunks = [converted[i : i + chunk] for i in range(0, len(converted), chunk)]
    if prewarm:
        for h in converted:
            fn(h)
    state = {"next": 0}

    def unit() -> int:
        part = chunks[state["next"]]
        state["next"] = (state["next"] + 1) % len(chunks)
        for h in part:
            fn(h)
        return len(part)

    return unit, clear


def load_deadwood_implementations() -> tuple[dict[str, tuple[Callable, Callable]], dict[str, str], Setup | None]:
    """(convert, deadwood) of each implementation that loads, the errors of the others, and
    ours' memo clearing."""
    impls: dict[str, tuple[Callable, Callable]] = {}
    errors: dict[str, str] = {}
    ours_clear: Setup | None = None
    for impl, loader in (("ours", ours_deadwood_fn), ("rlcard", rlcard_deadwood_fn), ("openspiel", openspiel_deadwood_fn)):
        try:
            if impl == "ours":
                ours_fn, ours_clear = loader()
                impls[impl] = (list, ours_fn)
            else:
                impls[impl] = loader()
        except Exception:  # noqa: BLE001
            errors[impl] = traceback.format_exc()
            print(f"  {impl} deadwood unavailable:\n" + errors[impl], file=sys.stderr)
    return impls, errors, ours_clear


def measure_deadwood(args: argparse.Namespace, sets: dict[str, list[tuple[int, ...]]],
                     impls: dict[str, tuple[Callable, Callable]],
                     errors: dict[str, str], ours_clear: Setup | None) -> tuple[dict[str, Rate], list[Row]]:
    """Deadwood calls/s of every implementation on each hand set (the peers and ours
    uncached interleaved, ours cached alone after them), and the table rows."""
    rates: dict[str, Rate] = {}
    rows = []
    for name, hands in sets.items():
        print(f"  {HAND_SETS[name]}:")
        specs = [
            # key, label, implementation, untimed setup before each unit, prewarm, interleaved
            (f"dw_{name}_ours", "ours (uncached)", "ours", ours_clear, False, True),
            (f"dw_{name}_rlcard", "RLCard get_best_meld_clusters", "rlcard", None, False, True),
            (f"dw_{name}_openspiel", "OpenSpiel min_deadwood (C++)", "openspiel", None, False, True),
            # runs alone, after the others: it shares ours' memo with the uncached runner
            (f"dw_{name}_ours_cached", "ours cached (repeated hands)", "ours", None, True, False),
        ]
        together: list[Runner] = []
        alone: list[Runner] = []
        for key, label, impl, setup, prewarm, interleaved in specs:
            rate = Rate(key, label, "calls/s")
            rates[key] = rate
            if impl not in impls:
                rate.error = errors.get(impl, "unavailable")
                continue
            convert, fn = impls[impl]
            runner = Runner(rate, lambda convert=convert, fn=fn, hands=hands, setup=setup, prewarm=prewarm: deadwood_unit(
                convert, fn, hands, args.chunk, setup, prewarm))
            (together if interleaved else alone).append(runner)
        measure_group(together, args)
        for runner in alone:
            measure_group([runner], args, slices=1)
        ours, cached = rates[f"dw_{name}_ours"], rates[f"dw_{name}_ours_cached"]
        if (x := ratio(cached, ours)) is not None:
            cached.extra["vs ours uncached"] = f"{x:.2f}x"
        title = f"deadwood, {HAND_SETS[name]}"
        rows += [(title, ours, None), (title, cached, None),
                 *[(title, rates[f"dw_{name}_{peer}"], ratio(ours, rates[f"dw_{name}_{peer}"]))
                   for peer in ("rlcard", "openspiel")]]
    return rates, rows


def cross_check(args: argparse.Namespace, sets: dict[str, list[tuple[int, ...]]],
                impls: dict[str, tuple[Callable, Callable]], ours_clear: Setup | None) -> tuple[list[str], bool]:
    """The report's cross-check of the deadwood implementations (nothing timed), and whether
    they all agreed."""
    if args.skip_verify:
        return ["Skipped (--skip-verify)."], True
    mismatches: list[str] = []
    for name, hands in sets.items():
        if ours_clear is not None:
            ours_clear()
        try:
            mismatches += verify_deadwood(HAND_SETS[name], hands, impls)
        except Exception:  # noqa: BLE001
            mismatches.append(f"{HAND_SETS[name]}: verification raised\n{traceback.format_exc()}")
    if mismatches:
        print(f"\n!!! DEADWOOD MISMATCHES: {len(mismatches)} !!!", file=sys.stderr)
        return [f"**{len(mismatches)} MISMATCHES** between implementations (first 20):", "",
                *[f"- {m}" for m in mismatches[:20]]], False
    lines = [f"{', '.join(impls)} agree on every hand of both sets ({args.hands} random, {args.hands} meld-rich)."]
    if "ours" not in impls:
        lines += ["", "**Ours was not checked: it could not be loaded (see Errors).**"]
    return lines, True


def main(argv: list[str] | None = None) -> int:
    p = parser(MODULE, __doc__)
    p.add_argument("--hands", type=int, default=2000, help="hands in each deadwood set (default 2000)")
    p.add_argument("--chunk", type=int, default=100, help="hands per timed deadwood unit (default 100)")
    p.add_argument("--skip-verify", action="store_true", help="skip the deadwood cross-check")
    args = parse(p, argv, hands=40, chunk=20)
    np.random.seed(args.seed)
    machine = machine_line(("rlcard", "open_spiel"))
    print("Gin Rummy benchmark;", machine)

    print("\n[1] environment throughput (uniform-random legal play)")
    rates = measure_group([gin_runner(args.seed), *peer_runners(args.seed)], args)
    add_game_figures(rates)
    rows = [("env throughput", rates[GIN_KEY], None),
            *[("env throughput", rates[key], ratio(rates[GIN_KEY], rates[key])) for key in PEER_KEYS]]

    print("\n[2] minimum deadwood of 10-card hands")
    rng = random.Random(args.seed)
    sets = {"random": random_hands(args.hands, rng), "meld": meld_rich_hands(args.hands, rng)}
    impls, errors, ours_clear = load_deadwood_implementations()
    checked, agreed = cross_check(args, sets, impls, ours_clear)
    deadwood_rates, deadwood_rows = measure_deadwood(args, sets, impls, errors, ours_clear)
    rates.update(deadwood_rates)

    body = ["", *results_table(rows + deadwood_rows, "ours / this", blank=True), *targets_table(rates, TARGETS),
            "", "### Deadwood cross-check", "", *checked]
    method = [
        OURS_ENV_METHOD.replace("<game>", "gin_rummy"), PEERS_METHOD,
        f"- Deadwood: two fixed sets of {args.hands} distinct 10-card hands (seed {args.seed}): uniformly random "
        "hands, and meld-rich hands (2-3 disjoint random runs of 3-5 / sets of 3-4, then random filler). Cards "
        "are converted to each library's representation before timing. Ours uncached: "
        f"`rummy_envs.melds.max_cover.cache_clear()` (untimed) before every timed chunk of {args.chunk} distinct "
        "hands, so no timed call finds its hand memoised; ours cached: every hand computed once (untimed), then "
        "the set passed over repeatedly without clearing (timed alone, after the others). "
        "RLCard: `get_best_meld_clusters` + `get_deadwood_count` (as its round scoring does). OpenSpiel: "
        "`GinRummyUtils(13, 4, 10).min_deadwood` (C++). All three are checked to agree on every hand before timing.",
    ]
    lines = report(MODULE, "Gin Rummy: the env and the deadwood solver against RLCard and OpenSpiel", argv, args,
                   machine, body, method)
    code = publish(MODULE, lines, args.out, rates)
    if not agreed:
        print(f"!!! deadwood mismatches, see {args.out} !!!", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
