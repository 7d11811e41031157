"""Gin rummy speed against peers (RLCard, OpenSpiel), and Rummy 500's and Least Count's against gin's, as ratios.

Run from the repository root::

    python -m benchmarks.bench_gin [--seconds S] [--out benchmarks/RESULTS.md]

Measurements (each runs for a fixed time budget after a short warm-up, timed with
``time.perf_counter``, everything seeded):

1. Environment throughput under uniform-random legal play, in agent decisions per second
   (chance events such as dealing and stock draws are not counted as steps, but their cost
   is inside the timed loop): ours (PettingZoo AEC ``gin_rummy_v0.env()``), OpenSpiel's
   ``gin_rummy`` game with the observation tensor built at every decision, RLCard's
   ``gin-rummy`` env.
   ``rummy500_v0.env()`` with 2 and 4 players and ``least_count_v0.env()`` with 4 and 10
   players (one-round episodes, and 4-player matches) run in the same interleaved group, so
   their ratios to gin's figure are measured under the same load.
2. Minimum deadwood of 10-card hands, in calls per second, on two fixed hand sets (random
   hands and meld-rich hands): ours (``rummy_envs.games.gin_rummy.deadwood``, uncached and cached),
   RLCard (``get_best_meld_clusters`` + ``get_deadwood_count``), OpenSpiel
   (``GinRummyUtils.min_deadwood``). All three must agree on every hand before timing.
3. Rummy 500: the cost of the exact mask of the micro-actions (the engine's legal actions,
   computed fresh) per decision, and a profile of where a random-play step spends its time.
4. Least Count: a profile of where a 4-player random-play step spends its time.

The results are printed and written as Markdown into their marked section of ``--out``
(the other scripts' sections are kept). Not run in CI.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata as _md
import os
import platform
import random
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.sections import write_section

BEGIN, END = "<!-- bench_gin:begin -->", "<!-- bench_gin:end -->"  # its section of RESULTS.md
RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"  # our suit order: card id = suit * 13 + rank
OPENSPIEL_SUIT_ORDER = "SCDH"
MAX_DECISIONS_PER_GAME = 10_000  # guard against a game that never ends  # OpenSpiel card int = suit * 13 + rank with suits s, c, d, h

TARGETS = (
    # (key of the ours row, key of the peer row, minimum ratio ours/peer, description)
    ("env_ours", "env_openspiel", 1.0, "env steps/s >= 1.0x OpenSpiel's loop"),
    ("env_ours", "env_rlcard", 2.0, "env steps/s >= 2x RLCard's env"),
    ("env_ours_hollywood", "env_openspiel", 1.0, "hollywood env steps/s >= 1.0x OpenSpiel's gin loop"),
    ("dw_meld_ours", "dw_meld_rlcard", 4.0, "deadwood (meld-rich hands, uncached) >= 4x RLCard"),
    ("env_ours_rummy500_2p", "env_ours", 0.5, "rummy500 2-player env steps/s >= 0.5x gin's"),
    ("env_ours_least_count_4p", "env_ours", 1.0, "least_count 4-player env steps/s >= gin's"),
)
RUMMY500_PLAYERS = (2, 4)
LEAST_COUNT_ROWS = (
    # (key suffix, label, options): one-round episodes (the default) at 4 and 10 players, and matches
    ("4p", "4 players", {"num_players": 4}),
    ("10p", "10 players", {"num_players": 10}),
    ("4p_match", "4 players, episode=\"match\"", {"num_players": 4, "episode": "match"}),
)


# --------------------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------------------


@dataclass
class Rate:
    """Outcome of one timed measurement."""

    key: str
    label: str
    unit: str
    count: int = 0
    seconds: float = 0.0
    units: int = 0  # games played or hand chunks processed
    error: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def rate(self) -> float | None:
        if self.error is not None or self.seconds <= 0:
            return None
        return self.count / self.seconds


Unit = Callable[[], int]  # does some work, returns how many decisions / calls it made
Setup = Callable[[], None]


class Runner:
    """Times one implementation: built and warmed up once, then timed in slices.

    Only the time inside ``unit`` is accumulated; ``before_unit`` (untimed) runs before each
    unit. A failure is recorded on the rate and the runner stops; it never raises.
    """

    def __init__(self, rate: Rate, make_unit: Callable[[], tuple[Unit, Setup | None]]):
        self.rate = rate
        self.make_unit = make_unit
        self.unit: Unit | None = None
        self.before: Setup | None = None

    def _fail(self) -> None:
        self.rate.error = traceback.format_exc()
        print(f"  {self.rate.label}: ERROR", file=sys.stderr)
        print(self.rate.error, file=sys.stderr)
        self.unit = None

    def start(self, warmup: float) -> None:
        try:
            self.unit, self.before = self.make_unit()
            end = time.perf_counter() + warmup
            while True:
                if self.before is not None:
                    self.before()
                self.unit()
                if time.perf_counter() >= end:
                    break
        except Exception:  # noqa: BLE001 - a broken implementation must not hide the others' figures
            self._fail()

    def run(self, seconds: float) -> None:
        if self.unit is None:
            return
        perf = time.perf_counter
        unit, before, rate = self.unit, self.before, self.rate
        spent = 0.0
        try:
            while spent < seconds:
                if before is not None:
                    before()
                t0 = perf()
                n = unit()
                dt = perf() - t0
                spent += dt
                rate.seconds += dt
                rate.count += n
                rate.units += 1
        except Exception:  # noqa: BLE001
            self._fail()


def measure_group(runners: list[Runner], seconds: float, warmup: float, slices: int) -> None:
    """Warm every runner up, then give each ``seconds`` of timed work in ``slices`` interleaved
    slices (order rotated every round), so slow drifts of machine load hit all alike."""
    for r in runners:
        r.start(warmup)
    for i in range(slices):
        k = i % len(runners)
        for r in runners[k:] + runners[:k]:
            r.run(seconds / slices)
    for r in runners:
        rate = r.rate
        shown = "ERROR" if rate.rate is None else f"{rate.rate:,.0f} {rate.unit}"
        print(f"  {rate.label:<36} {shown}")


# --------------------------------------------------------------------------------------
# 1. environment throughput
# --------------------------------------------------------------------------------------


def make_ours_env_unit(seed: int, game: str = "gin_rummy", **options):
    import rummy_envs

    env = rummy_envs.ENVS[game].env(**options)
    rng = random.Random(seed)
    choice = rng.choice
    state = {"game": 0}

    def play_one_game() -> int:
        env.reset(seed=seed + state["game"])
        state["game"] += 1
        steps = 0
        step = env.step
        last = env.last
        for _agent in env.agent_iter():
            obs, _rew, term, trunc, info = last()
            if term or trunc:
                step(None)
                continue
            mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
            step(int(choice(mask.nonzero()[0])))
            steps += 1
            if steps > MAX_DECISIONS_PER_GAME:
                raise RuntimeError(f"game with seed {seed + state['game'] - 1} exceeded {MAX_DECISIONS_PER_GAME} decisions")
        return steps

    return play_one_game, None


def make_openspiel_env_unit(seed: int):
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
                _obs = asarray(state.observation_tensor(), dtype=f32)
                state.apply_action(choice(state.legal_actions()))
                steps += 1
        return steps

    return play_one_game, None


def make_rlcard_env_unit(seed: int):
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


def rummy500_states(seed: int, players: int, decisions: int) -> list:
    """Engine states of uniform-random Rummy 500 games, one per decision, each cloned
    before its legal actions were computed (so a clone of it computes them afresh)."""
    from rummy_envs.games import rummy500 as R

    rng = random.Random(seed)
    config = R.Rummy500Config(num_players=players)
    out: list = []
    game = 0
    while len(out) < decisions:
        state = R.Rummy500State(config, seed + game)
        game += 1
        while not state.is_terminal() and len(out) < decisions:
            out.append(state.clone())
            state.apply(rng.choice(state.legal_actions()))
    return out


def make_rummy500_mask_unit(seed: int, players: int, chunk: int = 200):
    """A unit computes the legal actions of ``chunk`` decisions from scratch; fresh clones
    are made (untimed) before each unit."""
    states = rummy500_states(seed, players, 20 * chunk)
    chunks = [states[i:i + chunk] for i in range(0, len(states), chunk)]
    work = {"next": 0, "fresh": []}

    def before() -> None:
        work["fresh"] = [s.clone() for s in chunks[work["next"]]]
        work["next"] = (work["next"] + 1) % len(chunks)

    def unit() -> int:
        for state in work["fresh"]:
            state.legal_actions()
        return len(work["fresh"])

    return unit, before


RUMMY500_PROFILE_PARTS = (
    # (part, (file suffixes, functions whose own time counts for it; None: all of the file))
    ("mask (legal actions)", ("games/rummy500.py", ("_compute_legal", "_draw_actions", "_meld_actions", "_shapes",
                                                   "_coverings", "_commit_ok", "_take_ok", "_placeable", "_after",
                                                   "legal_actions", "_new_sequences_in"))),
    ("engine apply", ("games/rummy500.py", None)),
    ("observation encoding", ("envs/rummy500.py", None)),
    ("bits to floats", ("envs/base.py", ("bits_to_array",))),
)
LEAST_COUNT_PROFILE_PARTS = (
    ("mask (legal actions)", ("games/least_count.py", ("_compute_legal", "legal_actions", "legal_discards",
                                                       "_legal_discards_by_rank_bits", "_sequence_windows",
                                                       "_legal_discards_by_suit_or_copies", "_sets_of_ranks",
                                                       "_position_map", "_add_sets", "_add_runs", "_add_sequences",
                                                       "_add_flush", "_runs_in_row", "may_declare"))),
    ("engine apply, deal and showdown", ("games/least_count.py", None)),
    ("observation encoding", ("envs/least_count.py", None)),
    ("game seeds and keyed shuffles", (("cards.py", "envs/base.py"), ("keyed_permutation", "keyed_order",
                                                                      "keyed_word", "episode_seed"))),
    ("the benchmark's random choice of action", ("random.py", None)),
)


def profile_env(seed: int, seconds: float, game: str, parts: tuple, **options) -> tuple[dict[str, float], int]:
    """Shares of a random-play step's time (own time per function under cProfile, so the
    shares, not the rates, are meaningful) and the decisions profiled."""
    import cProfile
    import pstats

    unit, _ = make_ours_env_unit(seed, game, **options)
    profiler = cProfile.Profile()
    decisions = 0
    end = time.perf_counter() + seconds
    profiler.enable()
    while time.perf_counter() < end:
        decisions += unit()
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in stats.values())
    shares = dict.fromkeys([part for part, _ in parts] + ["PettingZoo API, rewards, numpy mask"], 0.0)
    for (path, _line, name), row in stats.items():
        for part, (suffix, names) in parts:
            if path.replace(os.sep, "/").endswith(suffix) and (names is None or name in names):
                shares[part] += row[2]
                break
        else:
            shares["PettingZoo API, rewards, numpy mask"] += row[2]
    return {part: t / total for part, t in shares.items()}, decisions


# --------------------------------------------------------------------------------------
# 2. deadwood
# --------------------------------------------------------------------------------------


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


def rlcard_deadwood_fn():
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


def openspiel_deadwood_fn():
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


def make_deadwood_unit(convert, fn, hands, chunk: int, clear: Setup | None, prewarm: bool = False):
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


# --------------------------------------------------------------------------------------
# machine description and report
# --------------------------------------------------------------------------------------


def _version(dist: str) -> str:
    try:
        return _md.version(dist)
    except _md.PackageNotFoundError:
        return "not installed"


def machine_info() -> dict[str, str]:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ours = _version("rummy-envs")
    if ours == "not installed":
        ours = _version("rummy_envs")
    if ours == "not installed":
        ours = "source tree"
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        ).stdout.strip() or "no commit"
    except (OSError, subprocess.SubprocessError):
        rev = "unknown"
    return {
        "platform": platform.platform(),
        "cpu": f"{cpu} ({os.cpu_count()} logical CPUs)",
        "load average at the start": f"{os.getloadavg()[0]:.2f} (other work slows gin more than the smaller games: "
                                     "their ratios read higher on a loaded machine)",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "rummy-envs": f"{ours} (git {rev})",
        "rlcard": _version("rlcard"),
        "open_spiel": _version("open_spiel"),
        "pettingzoo": _version("pettingzoo"),
        "numpy": _version("numpy"),
    }


def fmt_rate(r: Rate) -> str:
    return "error" if r.rate is None else f"{r.rate:,.0f}"


def rel_text(rates: dict[str, Rate], ours_key: str, key: str) -> str:
    """The 'ours / this' cell: blank on our own rows, else the ratio (n/a when not measured)."""
    if key.startswith(ours_key):
        return ""
    x = ratio(rates, ours_key, key)
    return "n/a" if x is None else f"{x:.2f}x"


def ratio(rates: dict[str, Rate], ours: str, peer: str) -> float | None:
    a, b = rates.get(ours), rates.get(peer)
    if a is None or b is None or a.rate is None or b.rate is None or b.rate == 0:
        return None
    return a.rate / b.rate


def rummy500_section(rates: dict[str, Rate], profile: tuple[dict[str, float], int] | None) -> list[str]:
    """The Rummy 500 part of the report: steps/s against gin's figure of the same run, the
    mask cost per decision and the profile's shares."""
    lines = ["", "## Rummy 500", "",
             "| measurement | players | rate | unit | / gin env steps/s | notes |", "|---|---:|---:|---|---:|---|"]
    for players in RUMMY500_PLAYERS:
        r = rates[f"env_ours_rummy500_{players}p"]
        x = ratio(rates, r.key, "env_ours")
        notes = "; ".join(f"{k} {v}" for k, v in r.extra.items())
        lines.append(f"| env throughput | {players} | {fmt_rate(r)} | {r.unit} | "
                     f"{'n/a' if x is None else f'{x:.2f}x'} | {notes} |")
    for players in RUMMY500_PLAYERS:
        r = rates[f"mask_rummy500_{players}p"]
        notes = "; ".join(f"{k} {v}" for k, v in r.extra.items())
        lines.append(f"| mask of a decision, computed fresh | {players} | {fmt_rate(r)} | {r.unit} |  | {notes} |")
    if profile is not None:
        shares, decisions = profile
        lines += ["", f"Where a 2-player random-play step spends its time (cProfile own time over {decisions:,} "
                      "decisions; shares only, as profiling slows everything):", ""]
        lines += [f"- {part}: {share:.0%}" for part, share in shares.items()]
    return lines


def least_count_section(rates: dict[str, Rate], profile: tuple[dict[str, float], int] | None) -> list[str]:
    """The Least Count part of the report: steps/s against gin's figure of the same run and
    the profile's shares."""
    lines = ["", "## Least Count", "",
             "| measurement | players | rate | unit | / gin env steps/s | notes |", "|---|---|---:|---|---:|---|"]
    for suffix, label, _options in LEAST_COUNT_ROWS:
        r = rates[f"env_ours_least_count_{suffix}"]
        x = ratio(rates, r.key, "env_ours")
        notes = "; ".join(f"{k} {v}" for k, v in r.extra.items())
        lines.append(f"| env throughput | {label} | {fmt_rate(r)} | {r.unit} | "
                     f"{'n/a' if x is None else f'{x:.2f}x'} | {notes} |")
    if profile is not None:
        shares, decisions = profile
        lines += ["", f"Where a 4-player random-play step spends its time (cProfile own time over {decisions:,} "
                      "decisions; shares only, as profiling slows everything):", ""]
        lines += [f"- {part}: {share:.0%}" for part, share in shares.items()]
    return lines


def build_report(args, info, rates: dict[str, Rate], groups, mismatches: list[str], started: str,
                 compared: list[str], profile: tuple[dict[str, float], int] | None = None,
                 least_count_profile: tuple[dict[str, float], int] | None = None) -> str:
    lines = [
        "# Gin rummy, Rummy 500 and Least Count benchmark",
        "",
        f"Generated by `python -m benchmarks.bench_gin --seconds {args.seconds:g}` on {started}.",
        "Not run in CI; `pip install -e \".[bench]\"` installs the peers.",
        "",
        "## Machine",
        "",
    ]
    lines += [f"- {k}: {v}" for k, v in info.items()]
    lines += [
        "",
        "## Results",
        "",
        "| measurement | implementation | rate | unit | ours / this | notes |",
        "|---|---|---:|---|---:|---|",
    ]
    for title, ours_key, keys in groups:
        for key in keys:
            r = rates[key]
            rel = rel_text(rates, ours_key, key)
            notes = "; ".join(f"{k} {v}" for k, v in r.extra.items())
            lines.append(f"| {title} | {r.label} | {fmt_rate(r)} | {r.unit} | {rel} | {notes} |")
    lines += rummy500_section(rates, profile)
    lines += least_count_section(rates, least_count_profile)
    lines += ["", "## Targets", "", "| target | ratio | met |", "|---|---:|---|"]
    for ours_key, peer_key, need, text in TARGETS:
        x = ratio(rates, ours_key, peer_key)
        met = "n/a (not measured)" if x is None else ("met" if x >= need else "NOT met")
        lines.append(f"| {text} | {'n/a' if x is None else f'{x:.2f}x'} | {met} |")
    lines += ["", "## Deadwood cross-check", ""]
    if mismatches:
        lines.append(f"**{len(mismatches)} MISMATCHES** between implementations (first 20):")
        lines.append("")
        lines += [f"- {m}" for m in mismatches[:20]]
    else:
        lines.append(
            f"{', '.join(compared)} agree on every hand of both sets ({args.hands} random, {args.hands} meld-rich)."
            if not args.skip_verify else "Skipped (--skip-verify)."
        )
        if "ours" not in compared and not args.skip_verify:
            lines += ["", "**Ours was not checked: it could not be loaded (see Errors).**"]
    errors: dict[str, list[str]] = {}
    for r in rates.values():
        if r.error:
            errors.setdefault(r.error, []).append(f"{r.key} ({r.label})")
    if errors:
        lines += ["", "## Errors", ""]
        for text, who in errors.items():
            lines += [", ".join(who) + ":", "", "```", text.rstrip(), "```", ""]
    lines += [
        "",
        "## Method",
        "",
        f"- Each measurement: {args.warmup:g} s untimed warm-up, then {args.seconds:g} s of timed work "
        "(`time.perf_counter`); rate = work done / time spent inside the timed units. Single process, one thread. "
        f"The implementations compared with each other run in {args.slices} interleaved slices (order rotated "
        "every round), so drifts in machine load affect them alike; ratios matter more than absolute rates.",
        "- Env throughput counts agent decisions only (not dealing or stock draws, whose cost is still inside "
        "the loop). Actions are uniform over legal actions via `random.Random(seed).choice`, for every "
        "implementation. Ours: `gin_rummy_v0.env()` (default wrappers), `env.reset(seed=i)` per game, "
        "`env.last()` every iteration, action from `obs[\"action_mask\"].nonzero()[0]`. OpenSpiel: "
        "`pyspiel.load_game(\"gin_rummy\")`, `np.asarray(state.observation_tensor(), np.float32)` at every "
        "decision, chance nodes sampled from `state.chance_outcomes()` (uniform, checked). RLCard: "
        "`rlcard.make(\"gin-rummy\")`, choice over `state[\"legal_actions\"]` keys until `env.is_over()`. "
        "Rummy 500: `rummy500_v0.env(num_players=2 or 4)`, driven exactly like ours gin, in the same interleaved group. "
        "Least Count: `least_count_v0.env(num_players=4 or 10)` (one-round episodes) and "
        "`least_count_v0.env(episode=\"match\")`, driven the same way in the same group; a step of an eliminated "
        "or finished agent (`step(None)`) is not counted.",
        "- Rummy 500 mask: engine states of uniform-random games are cloned before their legal actions are computed; "
        "each timed unit computes the legal actions of 200 such states from scratch (fresh clones made untimed). "
        "The share of a step is that time per decision over the env's time per decision.",
        f"- Deadwood: two fixed sets of {args.hands} distinct 10-card hands (seed {args.seed}): uniformly random "
        "hands, and meld-rich hands (2-3 disjoint random runs of 3-5 / sets of 3-4, then random filler). Cards "
        "are converted to each library's representation before timing. Ours uncached: "
        f"`rummy_envs.melds.max_cover.cache_clear()` (untimed) before every timed chunk of {args.chunk} distinct "
        "hands, so no timed call finds its hand memoised; ours cached: every hand computed once (untimed), then "
        "the set passed over repeatedly without clearing (timed alone, after the others). "
        "RLCard: `get_best_meld_clusters` + `get_deadwood_count` (as its round scoring does). OpenSpiel: "
        "`GinRummyUtils(13, 4, 10).min_deadwood` (C++).",
        "- All three deadwood implementations are checked to agree on every hand before timing.",
        "",
    ]
    return "\n".join(lines)


def print_table(rates: dict[str, Rate], groups) -> None:
    print()
    print(f"{'measurement':<28} {'implementation':<34} {'rate':>14}  {'unit':<14} {'ours/this':>9}")
    print("-" * 104)
    for title, ours_key, keys in groups:
        for key in keys:
            r = rates[key]
            rel = rel_text(rates, ours_key, key)
            print(f"{title:<28} {r.label:<34} {fmt_rate(r):>14}  {r.unit:<14} {rel:>9}")
    print()
    for ours_key, peer_key, need, text in TARGETS:
        x = ratio(rates, ours_key, peer_key)
        met = "n/a" if x is None else ("met" if x >= need else "NOT MET")
        print(f"target: {text:<55} {'n/a' if x is None else f'{x:.2f}x':>8}  {met}")


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_gin", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="timed budget per measurement (default 5)")
    p.add_argument("--warmup", type=float, default=None, help="untimed warm-up per measurement (default min(1, seconds/4))")
    p.add_argument("--hands", type=int, default=2000, help="hands in each deadwood set (default 2000)")
    p.add_argument("--chunk", type=int, default=100, help="hands per timed deadwood unit (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed for hands, games and action choices (default 0)")
    p.add_argument("--out", default=os.path.join("benchmarks", "RESULTS.md"), help="Markdown output (overwritten)")
    p.add_argument("--slices", type=int, default=5,
                   help="interleaved timed slices per measurement, rotating between implementations (default 5)")
    p.add_argument("--skip-verify", action="store_true", help="skip the deadwood cross-check")
    args = p.parse_args(argv)
    if args.warmup is None:
        args.warmup = min(1.0, args.seconds / 4)

    started = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    random.seed(args.seed)
    np.random.seed(args.seed)
    info = machine_info()
    print("Gin rummy benchmark,", started)
    for k, v in info.items():
        print(f"  {k}: {v}")

    rates: dict[str, Rate] = {}
    seconds, warmup = args.seconds, args.warmup

    # 1. env throughput ------------------------------------------------------------
    print("\n[1] environment throughput (uniform-random legal play)")
    env_rows = [
        ("env_ours", "ours gin_rummy_v0.env()", make_ours_env_unit),
        ("env_ours_hollywood", "ours hollywood_gin_v0.env()",
         lambda seed: make_ours_env_unit(seed, "hollywood_gin")),
        ("env_openspiel", "OpenSpiel gin_rummy (+obs tensor)", make_openspiel_env_unit),
        ("env_rlcard", "RLCard gin-rummy env", make_rlcard_env_unit),
        *[(f"env_ours_rummy500_{n}p", f"ours rummy500_v0.env() {n} players",
           lambda seed, n=n: make_ours_env_unit(seed, "rummy500", num_players=n)) for n in RUMMY500_PLAYERS],
        *[(f"env_ours_least_count_{suffix}", f"ours least_count_v0.env() {label}",
           lambda seed, options=options: make_ours_env_unit(seed, "least_count", **options))
          for suffix, label, options in LEAST_COUNT_ROWS],
    ]
    runners = [Runner(Rate(key, label, "steps/s"), lambda maker=maker: maker(args.seed)) for key, label, maker in env_rows]
    measure_group(runners, seconds, warmup, args.slices)
    for r in runners:
        rate = r.rate
        if rate.error is None and rate.units:
            rate.extra["decisions/game"] = f"{rate.count / rate.units:.1f}"
            rate.extra["games/s"] = f"{rate.units / rate.seconds:,.0f}"
        rates[rate.key] = rate

    # 2. deadwood ------------------------------------------------------------------
    print("\n[2] minimum deadwood of 10-card hands")
    rng = random.Random(args.seed)
    sets = {"random": random_hands(args.hands, rng), "meld": meld_rich_hands(args.hands, rng)}
    set_titles = {"random": "random hands", "meld": "meld-rich hands"}

    impls: dict[str, tuple] = {}
    impl_errors: dict[str, str] = {}
    ours_clear: Setup | None = None
    for impl, loader in (("ours", ours_deadwood_fn), ("rlcard", rlcard_deadwood_fn), ("openspiel", openspiel_deadwood_fn)):
        try:
            if impl == "ours":
                ours_fn, ours_clear = loader()
                impls[impl] = (list, ours_fn)
            else:
                impls[impl] = loader()
        except Exception:  # noqa: BLE001
            impl_errors[impl] = traceback.format_exc()
            print(f"  {impl} deadwood unavailable:\n" + impl_errors[impl], file=sys.stderr)

    mismatches: list[str] = []
    if not args.skip_verify:
        for name, hands in sets.items():
            if ours_clear is not None:
                ours_clear()
            try:
                mismatches += verify_deadwood(set_titles[name], hands, impls)
            except Exception:  # noqa: BLE001
                mismatches.append(f"{set_titles[name]}: verification raised\n{traceback.format_exc()}")
        if mismatches:
            print(f"\n!!! DEADWOOD MISMATCHES: {len(mismatches)} !!!", file=sys.stderr)
            for m in mismatches[:20]:
                print("  " + m, file=sys.stderr)

    peers = ["env_openspiel", "env_rlcard"]
    groups = [("env throughput", "env_ours", ["env_ours"] + peers),
              ("hollywood env throughput", "env_ours_hollywood", ["env_ours_hollywood"] + peers)]
    for name, hands in sets.items():
        print(f"  {set_titles[name]}:")
        rows = [
            # key, label, implementation, untimed setup before each unit, prewarm, interleaved
            (f"dw_{name}_ours", "ours (uncached)", "ours", ours_clear, False, True),
            (f"dw_{name}_rlcard", "RLCard get_best_meld_clusters", "rlcard", None, False, True),
            (f"dw_{name}_openspiel", "OpenSpiel min_deadwood (C++)", "openspiel", None, False, True),
            # runs alone, after the others: it shares ours' memo with the uncached runner
            (f"dw_{name}_ours_cached", "ours cached (repeated hands)", "ours", None, True, False),
        ]
        together: list[Runner] = []
        alone: list[Runner] = []
        for key, label, impl, setup, prewarm, interleaved in rows:
            rate = Rate(key, label, "calls/s")
            rates[key] = rate
            if impl not in impls:
                rate.error = impl_errors.get(impl, "unavailable")
                continue
            convert, fn = impls[impl]
            runner = Runner(
                rate,
                lambda convert=convert, fn=fn, hands=hands, setup=setup, prewarm=prewarm: make_deadwood_unit(
                    convert, fn, hands, args.chunk, setup, prewarm
                ),
            )
            (together if interleaved else alone).append(runner)
        measure_group(together, seconds, warmup, args.slices)
        for runner in alone:
            measure_group([runner], seconds, warmup, 1)
        cached = ratio(rates, f"dw_{name}_ours_cached", f"dw_{name}_ours")
        if cached is not None:
            rates[f"dw_{name}_ours_cached"].extra["vs ours uncached"] = f"{cached:.2f}x"
        order = [f"dw_{name}_ours", f"dw_{name}_ours_cached", f"dw_{name}_rlcard", f"dw_{name}_openspiel"]
        groups.append((f"deadwood, {set_titles[name]}", f"dw_{name}_ours", order))

    # 3. Rummy 500: the mask's cost and the profile ------------------------------
    print("\n[3] rummy500: the mask of a decision, computed fresh")
    mask_runners = [Runner(Rate(f"mask_rummy500_{n}p", f"rummy500 mask, {n} players", "masks/s"),
                           lambda n=n: make_rummy500_mask_unit(args.seed, n)) for n in RUMMY500_PLAYERS]
    measure_group(mask_runners, seconds, warmup, args.slices)
    for r in mask_runners:
        rate, env_rate = r.rate, rates[f"env_ours_{r.rate.key.removeprefix('mask_')}"]
        rates[rate.key] = rate
        if rate.rate is not None:
            rate.extra["us per decision"] = f"{1e6 / rate.rate:.1f}"
            if env_rate.rate is not None:
                rate.extra["share of an env step"] = f"{env_rate.rate / rate.rate:.0%}"
    profile = None
    try:
        profile = profile_env(args.seed, seconds, "rummy500", RUMMY500_PROFILE_PARTS)
        for part, share in profile[0].items():
            print(f"  {part:<40} {share:.0%}")
    except Exception:  # noqa: BLE001 - the profile must not hide the figures
        print("  rummy500 profile: ERROR\n" + traceback.format_exc(), file=sys.stderr)

    # 4. Least Count: the profile --------------------------------------------------
    print("\n[4] least_count: where a 4-player step spends its time")
    least_count_profile = None
    try:
        least_count_profile = profile_env(args.seed, seconds, "least_count", LEAST_COUNT_PROFILE_PARTS)
        for part, share in least_count_profile[0].items():
            print(f"  {part:<40} {share:.0%}")
    except Exception:  # noqa: BLE001 - the profile must not hide the figures
        print("  least_count profile: ERROR\n" + traceback.format_exc(), file=sys.stderr)

    # 5. report --------------------------------------------------------------------
    print_table(rates, groups)
    report = build_report(args, info, rates, groups, mismatches, started, list(impls), profile, least_count_profile)
    out_dir = os.path.dirname(args.out)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    write_section(Path(args.out), BEGIN, END, f"{BEGIN}\n{report.rstrip()}\n{END}")
    print(f"\nwrote {args.out}")
    if mismatches:
        print(f"!!! {len(mismatches)} deadwood mismatches, see {args.out} !!!", file=sys.stderr)
        return 1
    if any(r.error for r in rates.values()):
        print(f"!!! some measurements failed, see {args.out} !!!", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
