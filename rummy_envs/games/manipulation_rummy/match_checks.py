"""What ``from_dict`` checks of the summaries in a Manipulation Rummy state dict
(docs/manipulation_rummy.md#state-dicts): the round index, totals, rounds won, final totals,
winners, truncation and dealer must be what the rounds played give, recorded in
``hand_results`` or left out by a scenario (the earliest rounds), and a finished game must
be the end of its last recorded round. Each refusal is a ``field_error`` naming the fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rummy_envs.games.manipulation_rummy.actions import Phase
from rummy_envs.games.manipulation_rummy.counts import cards_of
from rummy_envs.games.manipulation_rummy.rules import next_dealer
from rummy_envs.games.manipulation_rummy.scoring import RoundResult, match_final_totals, match_winners, round_winners
from rummy_envs.state_dicts import field_error

if TYPE_CHECKING:
    from rummy_envs.games.manipulation_rummy.state_dict import ManipulationStateDict


def check_match(s: ManipulationStateDict) -> None:
    """The summaries fit the episode and the rounds played (``round_index`` of them, plus the
    one that ended a finished game), the rounds ``hand_results`` leaves out included."""
    over = s.phase == Phase.GAME_OVER
    if s.config.episode == "hand" and s.round_index:
        raise field_error("round_index", "a one-round episode (episode='hand') plays round 0 only")
    unrecorded = s.round_index + over - len(s.hand_results)
    if unrecorded < 0:
        raise field_error(["hand_results", "round_index"], f"{len(s.hand_results)} round results, more than the "
                          f"rounds played by round index {s.round_index}{' of a finished game' if over else ''}")
    _check_tallies(s, unrecorded, over)
    _check_ending(s, over)
    _check_match_went_on(s, over)
    _check_dealer(s, unrecorded, over)
    if over:
        _check_last_round(s)


def _check_tallies(s: ManipulationStateDict, unrecorded: int, over: bool) -> None:
    """Totals and rounds won are those of the recorded rounds, plus what the rounds left out
    can add (1 to ``num_players`` winners each, points to winners only); the totals after
    each recorded round are those before it plus its points."""
    n, results = s.n, s.hand_results
    points = [r.points for r in results]
    won = [[int(q in winners) for q in range(n)] if winners else [] for winners in map(known_winners, results)]
    for name, rows, values in (("totals", points, s.totals), ("rounds_won", won, s.rounds_won)):
        recorded = [sum(row[q] for row in rows if row) for q in range(n)]
        exact = not unrecorded and all(rows)
        if (values != recorded) if exact else any(v < r for v, r in zip(values, recorded)):
            raise field_error(name, f"expected {recorded}{'' if exact else ' or more'}: what the recorded "
                                    f"hand_results give, with {unrecorded} earlier rounds not recorded")
    before = None if unrecorded else [0] * n
    for i, r in enumerate(results):
        if r.totals and r.points and before and r.totals != [b + x for b, x in zip(before, r.points)]:
            raise field_error(f"hand_results[{i}].totals", "expected the totals before the round plus its points")
        before = r.totals
    extra_wins = sum(s.rounds_won) - sum(map(sum, won))
    if all(won) and not unrecorded <= extra_wins <= n * unrecorded:
        raise field_error(["rounds_won", "round_index"], f"every round has 1 to {n} winners: {unrecorded} "
                                                         f"rounds not in hand_results cannot account for "
                                                         f"{extra_wins} more wins")
    for q in range(n):
        lost = sum(1 for row in won if row and not row[q])
        if s.rounds_won[q] > s.round_index + over - lost:
            raise field_error(["rounds_won", "round_index"], f"seat {q} won {s.rounds_won[q]} rounds, more than "
                                                             "it played without a recorded loss")
        if s.totals[q] and not s.rounds_won[q]:
            raise field_error(["totals", "rounds_won"], f"seat {q} has points but won no round (only a round's "
                                                        "winners score)")
    if results and results[-1].totals and results[-1].totals != s.totals:
        raise field_error("totals", f"expected {results[-1].totals}, the totals after the last recorded round")


def known_winners(r: RoundResult) -> list[int]:
    """The winners of a recorded round: those recorded, else the seat that went out (an out
    needs no values to name its winner); [] when not recorded."""
    return r.winners or ([r.ender] if r.kind == "out" else [])


def _check_ending(s: ManipulationStateDict, over: bool) -> None:
    """Truncation, final totals and winners fit the end of the episode: none before it; a
    hand's winners are its round's; a match ends won (final totals with the bonuses, their
    leaders the winners) or truncated at ``max_rounds`` without winners. A finished match
    whose rounds are all left out (``sample_from_view`` gives one) has neither."""
    cfg = s.config
    match_over = cfg.episode == "match" and over
    if s.truncated and not (match_over and s.round_index == cfg.max_rounds - 1):
        raise field_error(["truncated", "round_index"], "only a match (episode='match') is truncated, when its last "
                                                        "round (round_index max_rounds - 1) ends")
    if len(set(s.winners)) != len(s.winners):
        raise field_error("winners", "a seat is listed twice")
    if s.final is not None and not (match_over and not s.truncated):
        raise field_error("final", "final totals exist only once a match is won")
    leaders = match_winners(cfg, s.totals, s.rounds_won) if cfg.episode == "match" else []
    if s.truncated and leaders:
        raise field_error(["truncated", "totals"], f"seats {leaders} won the match as its last round ended")
    expected: list[int] = []
    if over and cfg.episode == "hand":
        expected = [q for q in range(s.n) if s.rounds_won[q]]
        if len({s.totals[q] for q in expected}) > 1:
            raise field_error(["totals", "rounds_won"], "the winners of a round score the same points")
    elif match_over and not s.truncated and (s.hand_results or s.final is not None):
        if not leaders:
            raise field_error(["truncated", "totals"], "a match that ends and is not truncated is won: a seat "
                                                       "reaches target_score and, with tie_break='play_on', leads "
                                                       "alone")
        final = match_final_totals(cfg, s.totals, s.rounds_won)
        if s.final != final:
            raise field_error("final", f"expected {final}: the totals with the match bonuses")
        expected = leaders
    if s.winners != expected:
        raise field_error("winners", f"expected {expected}: "
                                     + ("the leaders of the final totals" if expected and cfg.episode == "match" else
                                        "the seats that won the round" if expected else
                                        "none before the end, in a truncated match, or with the last round "
                                        "not recorded"))


def _check_match_went_on(s: ManipulationStateDict, over: bool) -> None:
    """No round of a match but one that ended it left a seat winning it: not the last round
    of a match still in play, nor any recorded round before the last."""
    cfg, results = s.config, s.hand_results
    if cfg.episode != "match":
        return
    if not over and (leaders := match_winners(cfg, s.totals, s.rounds_won)):
        raise field_error(["totals", "rounds_won"], f"seats {leaders} won the match as the last round ended, yet "
                                                    "it goes on")
    wins = list(s.rounds_won)  # the rounds won after result i, walking back
    for i in reversed(range(len(results))):
        r = results[i]
        if (i < len(results) - 1 or not over) and r.totals and match_winners(cfg, r.totals, wins):
            raise field_error(f"hand_results[{i}].totals", "this round won the match, yet the match went on")
        if not r.winners:
            return
        wins = [w - (q in r.winners) for q, w in enumerate(wins)]


def _check_dealer(s: ManipulationStateDict, unrecorded: int, over: bool) -> None:
    """The dealer is the one ``next_dealer`` gives from ``first_dealer`` over the rounds
    before this one; after a round not recorded (or recorded without its hand values) the
    winner and loser rules may give any seat."""
    n, rule = s.n, s.config.next_dealer
    before = min(unrecorded, s.round_index)  # the rounds left out before this one
    if not before:
        possible = {s.first_dealer}
    else:
        possible = {(s.first_dealer + before) % n} if rule == "left" else set(range(n))
    for r in s.hand_results[:len(s.hand_results) - over]:
        if rule != "left" and not r.values:
            possible = set(range(n))
            continue
        values = r.values or [0] * n  # "left" does not look at them
        winners = r.winners or round_winners(r.kind, r.ender, values)
        possible = {next_dealer(rule, d, values, winners) for d in possible}
    if s.dealer not in possible:
        raise field_error(["dealer", "first_dealer"], f"expected {' or '.join(map(str, sorted(possible)))}: the "
                                                      f"dealer next_dealer={rule!r} gives from the first dealer over "
                                                      "the rounds before this one")


def _check_last_round(s: ManipulationStateDict) -> None:
    """A finished game shows the end of its last round: exactly the seat that went out holds
    no card, a knocker's hand is within ``knock_limit``, and the round's recorded hands,
    values, final table and stock-out are the state's."""
    n = s.n
    last: RoundResult | None = s.hand_results[-1] if s.hand_results else None
    empty = [q for q in range(n) if not s.sizes[q]]
    if len(empty) > 1 or (last and empty != ([last.ender] if last.kind == "out" else [])):
        raise field_error("hands", "exactly the seat that went out ends the game with an empty hand")
    if last is None:
        return
    name = f"hand_results[{len(s.hand_results) - 1}]"
    if last.hands and [sorted(h) for h in last.hands] != [s.hand_cards(q) for q in range(n)]:
        raise field_error(["hands", f"{name}.hands"], "the hands are those the game's last round ended with")
    if last.values and last.values != [s.hand_value(q) for q in range(n)]:
        raise field_error(["hands", f"{name}.values"], "the hands are worth what the game's last round recorded")
    if last.kind == "knock" and s.hand_value(last.ender) > s.config.knock_limit:
        raise field_error(["hands", f"{name}.ender"], "the knocker's hand is worth at most knock_limit")
    if last.table and (sorted(c for meld in last.table for c in meld) != cards_of(s.table_counts())
                       or sorted(last.table_jokers) != cards_of(s.jokers_at)):
        raise field_error(["table_naturals", "table_jokers", f"{name}.table"],
                          "the table is the one the game's last round ended with")
    if last.kind == "stock_out" and s.stock:
        raise field_error(["stock", f"{name}.kind"], "a round that ends in a stock-out leaves no stock")
