"""The gin engine as the engine contract (``rummy_envs.games.base``) has it, where gin is
particular: determinizations keep every card whose place the seat knows, and
``GinState.sample_from_view`` rebuilds, from one seat's view alone, a state that shows that
seat the same view (every field), holds every card once, has the same legal actions for the
seat to move, rebuilds every public field of the state, plays on to the end, and deals the
hidden cards into each zone as often as ``sample_determinization`` does; at random points of
random play under every rule set, for both seats, in every phase including the explicit
showdown and the end of the game (docs/gin_rummy.md#sampling-from-a-view)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from rummy_envs import cards as C
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinConfig, GinState, Phase
from env_contract import play_out, snapshots
from test_gin_rummy_env import GIN, RULE_SETS, check_determinization, check_state, hidden_variants, knocky
from test_gin_rummy_rules import make_deck

# The fields of a state dict a seat can read off its view (hands and the knock card only in
# part: see public_part); what no seat knows (seed, initial_deck, first_dealer, history) and
# the defender's undeclared cards at the end ("remaining") are left out.
PUBLIC_KEYS = ("game", "options", "hand_index", "dealer", "phase", "current_player", "discard_pile", "upcard",
               "knock_limit", "multiplier", "known", "discarded", "turns", "passed", "knocker", "big_gin", "match",
               "hand_results", "truncated")


def test_determinization_keeps_cards_the_opponent_took():
    """The non-dealer takes the upcard KD, then the dealer takes the discarded 2S: each one's
    taken card stays in that hand in every sample, and hidden cards do move."""
    state = GinState(GinConfig(), seed=0,
                     deck=make_deck("AC 2C 3C 4D 5D 6D 7H 8H 9H 2S", "3S 3D 5C 7C 8C JC QH KH KS QS", "KD"), dealer=1)
    for name in ("TAKE_DISCARD", "DISCARD(2S)", "TAKE_DISCARD"):
        state.apply(G.str_to_action(name))
    rng = random.Random(0)
    moved = 0
    for _ in range(30):
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            opp = 1 - p
            taken = C.parse_card("KD" if opp == 0 else "2S")
            assert det.hands[opp] >> taken & 1
            moved += det.hands[opp] != state.hands[opp]
        check_determinization(state, rng)
    assert moved > 50


# ---------------------------------------------------------------------------------------
# Sampling a state from a view
# ---------------------------------------------------------------------------------------


def points_of_play(rules: dict, games: int, seed: int) -> list[GinState]:
    """Snapshots of knocky games under ``rules`` (showdown and 50th-card states always), and
    each game's final state. (Matches are long: ``snapshots`` spreads its picks over hands.)"""
    points = snapshots(GIN, rules, games, seed=seed, every=1.0 if rules.get("episode") == "match" else 0.1, per_game=8)
    rng = random.Random(seed)
    for i in range(games):
        state = GinState(GIN.config(rules), seed * 1000 + i)
        while not state.is_terminal():
            state.apply(knocky(state, rng))
        points.append(state)
    return points


def public_part(state: GinState, p: int) -> dict:
    """What of ``state``'s dict seat ``p`` knows: the public fields, its own hand, the cards of
    the other hand it has seen, its own knock card and the taken card of the seat to move."""
    d = state.to_dict()
    opp = 1 - p
    seen = state.visible_cards(p) & state.hands[opp]
    if state.is_terminal() and state.knocker >= 0:  # the showdown's result shows both hands
        seen = state.hands[opp]
    out = {key: d[key] for key in PUBLIC_KEYS}
    out["hand"], out["opponent_seen"] = d["hands"][p], C.format(C.from_mask(seen))
    out["taken_card"] = d["taken_card"]
    out["my_knock_card"] = d["knock_card"] if state.knocker == p else None
    if state.knocker >= 0 and (state.knocker == 1 - p or state.is_terminal()):
        out["showdown"] = [d[key] for key in ("knocker_melds", "meld_extents", "defender_melds", "layoffs")]
    elif state.knocker == p and state.config.knocker_arrangement == "explicit":
        out["showdown"] = d["knocker_melds"]
    return out


def check_sample(state: GinState, p: int, rng: random.Random) -> GinState:
    """One state sampled from seat ``p``'s view, with the checks every sample must pass."""
    view = state.player_view(p)
    sampled = GinState.sample_from_view(view, rng)
    where = f"seat {p}, phase {state.phase.name}"
    assert type(sampled) is GinState and sampled.player_view(p) == view, where
    check_state(sampled)
    assert public_part(sampled, p) == public_part(state, p), where
    assert sampled.current_player == state.current_player
    if state.current_player == p:
        assert sampled.legal_actions() == state.legal_actions(), where
    assert sampled.seed == 0 and sampled.history == [] and sampled.initial_deck is None
    assert GinState.from_dict(sampled.to_dict()).to_dict() == sampled.to_dict()
    return sampled


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_sample_from_view_shows_the_same_view_and_plays_on(name):
    rng = random.Random(len(name))
    points = points_of_play(RULE_SETS[name], games=4, seed=31)
    phases = Counter(state.phase for state in points)
    assert phases[Phase.GAME_OVER] == 4 and phases[Phase.DISCARD] and phases[Phase.DRAW]
    for state in points:
        for p in (0, 1):
            sampled = check_sample(state, p, rng)
            play_out(GIN, sampled, rng, f"sampled for seat {p} in {state.phase.name}")


def test_sample_from_view_in_every_showdown_phase():
    """The explicit showdown, seen by the knocker (the defence hidden) and by the defender,
    with the knocker's arrangement declared or chosen by ``auto_best``."""
    rng = random.Random(5)
    seen = Counter()
    for rules in ({"knocker_arrangement": "explicit", "layoff_mode": "explicit"}, {"layoff_mode": "explicit"},
                  {"knocker_arrangement": "explicit", "big_gin_bonus": 31, "stock_end_rule": "opponent_last_chance"}):
        for state in snapshots(GIN, rules, 30, seed=8, special_only=True, per_game=6):
            for p in (0, 1):
                play_out(GIN, check_sample(state, p, rng), rng, f"seat {p} in {state.phase.name}")
                seen[state.phase, "knocker" if state.knocker == p else "defender"] += 1
    for phase in (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF):
        assert seen[phase, "knocker"] >= 5 and seen[phase, "defender"] >= 5, seen
    assert seen[Phase.LAST_CHANCE, "defender"] >= 5, seen


def zones(state: GinState, p: int) -> dict[int, str]:
    """Where each card hidden from seat ``p`` lies: the other hand, the stock or the knock card."""
    opp = 1 - p
    out = {card: "stock" for card in state.stock}
    out |= {card: "hand" for card in C.from_mask(state.hands[opp] & ~state.visible_cards(p))}
    if state.knocker == opp and state.knock_card >= 0:
        out[state.knock_card] = "knock card"
    return out


def largest_zone_gap(a: list[dict[int, str]], b: list[dict[int, str]]) -> float:
    """The largest total-variation distance, over cards, between where two samplers put it."""
    def shares(samples: list[dict[int, str]]) -> dict[int, Counter]:
        out: dict[int, Counter] = {}
        for sample in samples:
            for card, zone in sample.items():
                out.setdefault(card, Counter())[zone] += 1 / len(samples)
        return out

    sa, sb = shares(a), shares(b)
    assert sa.keys() == sb.keys(), "the two samplers hide different cards"
    return max(0.5 * sum(abs(sa[c][z] - sb[c][z]) for z in sa[c].keys() | sb[c].keys()) for c in sa)


def test_sample_from_view_deals_like_sample_determinization():
    """For both seats of states with known and face-up cards (a taken upcard, a knock, the
    explicit showdown under ``auto_best``): each hidden card lands in the other hand, the
    stock or the knock card as often from the view as from the true state."""
    rng = random.Random(11)
    states = [s for s in snapshots(GIN, {"layoff_mode": "explicit"}, 12, seed=2, every=0.05, per_game=3)
              if not s.is_terminal()][:6]
    assert any(s.knocker >= 0 for s in states) and any(s.known[0] | s.known[1] for s in states)
    for state in states:
        for p in (0, 1):
            view = state.player_view(p)
            from_view = [zones(GinState.sample_from_view(view, rng), p) for _ in range(300)]
            from_state = [zones(state.sample_determinization(p, rng), p) for _ in range(300)]
            assert largest_zone_gap(from_view, from_state) < 0.15, (state.phase.name, p)


def test_sample_from_view_reads_nothing_hidden():
    """States that differ only in what a seat cannot see give that seat the same view, and so
    the same samples (seeded alike)."""
    rng = random.Random(13)
    compared = 0
    for state in snapshots(GIN, RULE_SETS["explicit"], 6, seed=4, every=0.2, per_game=4):
        for p in (0, 1):
            for _, variant in hidden_variants(state, p, rng):
                other = GinState.from_dict(variant)
                a = GinState.sample_from_view(state.player_view(p), random.Random(1))
                b = GinState.sample_from_view(other.player_view(p), random.Random(1))
                assert a.to_dict() == b.to_dict()
                compared += 1
    assert compared > 20


def test_a_match_score_no_play_could_reach_is_refused():
    """Wins beyond the hands a match may last, and a winner's total more than one hand past
    the target, are refused naming the match (found by the state-dict census)."""
    config = GinConfig(episode="match")
    d = GinState(config, 3).to_dict()
    GinState.from_dict({**d, "match": {"totals": [0, 0], "wins": [3, 4], "winner": -1}})
    with pytest.raises(ValueError, match="'match': more hands won than max_hands_per_match=200"):
        GinState.from_dict({**d, "match": {"totals": [0, 0], "wins": [150, 51], "winner": -1}})
    over = {**d, "phase": "GAME_OVER", "current_player": -1}
    with pytest.raises(ValueError, match="'match': the winner's total is past what one hand"):
        GinState.from_dict({**over, "match": {"totals": [10**9, 0], "wins": [9, 0], "winner": 0}})


def test_a_recorded_hand_without_a_knocker_reads_as_none():
    """A hand result may leave out ``knocker`` (a dead hand has none): it reads as -1, and the
    dict is the same state as the one that wrote it."""
    rng = random.Random(2)
    state = GinState(GinConfig(episode="match", target_score=60), 4)
    while not any(r.knocker == -1 for r in state.hand_results):
        state.apply(rng.choice(state.legal_actions()))
    d = state.to_dict()
    for record in d["hand_results"]:
        if record["knocker"] == -1:
            del record["knocker"]
    assert GinState.from_dict(d).to_dict() == state.to_dict()


def test_a_view_whose_total_reaches_the_target_exactly_shows_the_match_won():
    """The match a view shows (what sampling rebuilds) is won by a total equal to the target,
    not only above it; below it nobody has won."""
    import dataclasses

    from rummy_envs.games.gin_rummy.match import StandardMatch

    state = GinState(GinConfig(episode="match", target_score=25), seed=2)
    view = state.player_view(1)
    for mine, theirs, winner in ((25, 24, 1), (24, 25, 0), (40, 3, 1), (24, 0, -1)):
        match = StandardMatch.from_view(dataclasses.replace(view, scores=(mine, theirs)))
        assert match.winner == winner, (mine, theirs)


def test_a_knock_card_once_discarded_face_up_is_known_to_the_defender():
    """A card discarded face up stays in the pile or in a hand that took it, in sight; when
    the knocker knocks with one, the defender knows the face-down card. Sampled worlds keep
    it there (never in the stock, where the state dicts refuse a discarded card)."""
    found = 0
    for seed in range(40):
        state, rng = GinState(GinConfig(), seed), random.Random(seed)
        while not state.is_terminal():
            state.apply(knocky(state, rng))
        card, defender = state.knock_card, 1 - state.knocker
        if state.knocker < 0 or card < 0 or not (state.discarded[0] | state.discarded[1]) >> card & 1:
            continue
        found += 1
        for k in range(5):
            assert GinState.sample_from_view(state.player_view(defender), random.Random(k)).knock_card == card
            assert state.sample_determinization(defender, random.Random(k)).knock_card == card
    assert found >= 2
