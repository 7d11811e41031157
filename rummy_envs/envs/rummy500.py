"""rummy500_v0: the PettingZoo AEC environment over ``rummy_envs.games.rummy500``."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_envs import cards as C
from rummy_envs.frames import FrameSize, Row, Scene, pile
from rummy_envs.envs.base import RummyEnv, Segment, bits_to_array, make_layout
from rummy_envs.games import rummy500 as R

N = C.NUM_CARDS
IDS = R.NUM_IDS
_PHASES = len(R.Phase)


class Rummy500Env(RummyEnv):
    """Rummy 500 for 2-8 players as an AEC environment.

    Keyword options are the rules options of ``Rummy500Config`` (see docs/rummy500.md#options),
    ``num_players`` among them, plus ``render_mode``, ``reward`` ("points" | "win_loss"),
    ``reward_scale``, ``illegal_action`` ("raise" | "terminate") and ``rich_info`` (the hand
    results in the infos).
    """

    metadata = {"name": "rummy500_v0", "render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": False}
    num_actions = R.NUM_ACTIONS
    state_class = R.Rummy500State

    def __init__(self, render_mode: str | None = None, reward: str = "points", reward_scale: float = 1.0,
                 illegal_action: str = "raise", rich_info: bool = False, render_seat: int | None = None, **rules: Any) -> None:
        self.config = self._rules_config(rules)
        cfg = self.config
        self.meld_slots = cfg.deck_size // 3  # no more melds fit the cards
        super().__init__(num_players=cfg.num_players, render_mode=render_mode, reward=reward,
                         reward_scale=reward_scale, illegal_action=illegal_action, rich_info=rich_info,
                         render_seat=render_seat)
        self._off = off = {name: s.offset for name, s in self.layout.items()}
        n = cfg.num_players
        self._seats = [[(p + k) % n for k in range(n)] for p in range(n)]  # relative order, me first
        self._known_shifts = [off["known"] + k * IDS for k in range(n)]
        self._credit_shifts = [off["table_credit"] + k * N for k in range(n)]
        self._ace_base = off["meld_ace_high"]
        self._per_card = 1.0 / cfg.deck_size

    # -- layout and encoding -------------------------------------------------------------------
    def observation_layout(self) -> dict[str, Segment]:
        """Named segments of the observation vector, in order (seats relative: me first)."""
        cfg = self.config
        n, copies, decks, slots = cfg.num_players, float(cfg.max_copies), float(cfg.decks), self.meld_slots
        return make_layout([
            ("hand", IDS, copies, "count of each card id in my hand (52: jokers)"),
            ("pending", N, 1.0, "natural cards in the pending group of the player to move"),
            ("pending_jokers", N, 1.0, "identities declared for jokers in the pending group"),
            ("top_discard", IDS, 1.0, "the top card of the discard pile"),
            ("discard_pile", IDS, copies, "count of each card id in the discard pile"),
            ("pile_order", cfg.deck_size, 1.0, "the pile from the bottom: (card id + 1) / 53 per position, 0 above the top"),
            ("known", n * IDS, copies, "cards each seat took from the pile and still holds, per seat"),
            ("table_credit", n * N, decks, "table cards (identities) credited to each seat"),
            ("table_jokers", N, decks, "identities held by jokers on the table"),
            ("melds", slots * N, 1.0, "the identities of each table meld, by slot (the LAY_OFF slot)"),
            ("meld_ace_high", slots, 1.0, "1 for a sequence whose ace is high"),
            ("hand_sizes", n, 1.0, "cards in each seat's hand / deck size"),
            ("stock_size", 1, 1.0, "cards in the stock / deck size"),
            ("phase", _PHASES, 1.0, "one-hot phase: " + ", ".join(p.name for p in R.Phase)),
            ("to_move", n, 1.0, "one-hot seat to move (none once over)"),
            ("dealer", n, 1.0, "one-hot seat of the dealer"),
            ("target", IDS, 1.0, "the card that must go on the table this turn (deep take, or a must-use top card)"),
            ("banned", IDS, 1.0, "the card that may not be discarded this turn (the top card just taken)"),
            ("scores", n, np.inf, "match totals / target_score where positive (0 in hand mode)"),
            ("score_deficits", n, np.inf, "minus the match totals / target_score where negative"),
        ])

    def _encode(self, player: int) -> np.ndarray:
        g = self.game
        off = self._off
        n = g.n
        seats = self._seats[player]
        hand = g.hands[player]
        # One Python int holds every first copy at its offset and is unpacked to floats in one
        # go; second copies (two decks) go in a second int added on top; jokers are counts.
        bits = (hand[0] << off["hand"]
                | (g.pending & ~g.pending_jokers) << off["pending"]
                | g.pending_jokers << off["pending_jokers"]
                | 1 << (off["phase"] + g.phase)
                | 1 << (off["dealer"] + (g.dealer - player) % n)
                | g.table_jokers[0] << off["table_jokers"])
        seconds = hand[1] << off["hand"] | g.table_jokers[1] << off["table_jokers"]
        if g.current_player >= 0:
            bits |= 1 << (off["to_move"] + (g.current_player - player) % n)
        if g.target >= 0:
            bits |= 1 << (off["target"] + g.target)
        if g.banned >= 0:
            bits |= 1 << (off["banned"] + g.banned)
        pile = g.pile
        pile_jokers = 0
        if pile:
            bits |= 1 << (off["top_discard"] + pile[-1])
            once = twice = 0
            for card in pile:
                if card == R.JOKER:
                    pile_jokers += 1
                else:
                    bit = 1 << card
                    twice |= once & bit
                    once |= bit
            bits |= once << off["discard_pile"]
            seconds |= twice << off["discard_pile"]
        for shift, q in zip(self._known_shifts, seats):
            known = g.known[q]
            bits |= known[0] << shift
            seconds |= known[1] << shift
        for shift, q in zip(self._credit_shifts, seats):
            credited = g.credited[q]
            bits |= credited[0] << shift
            seconds |= credited[1] << shift
        slots_base = off["melds"]
        for slot, meld in enumerate(g.melds):
            bits |= meld.cards << (slots_base + slot * N)
            if meld.hi == 13:
                bits |= 1 << (self._ace_base + slot)
        obs = bits_to_array(bits, self.observation_size)
        if seconds:
            obs += bits_to_array(seconds, self.observation_size)
        if hand[2]:
            obs[off["hand"] + R.JOKER] = hand[2]
        if pile_jokers:
            obs[off["discard_pile"] + R.JOKER] = pile_jokers
        for shift, q in zip(self._known_shifts, seats):
            if g.known[q][2]:
                obs[shift + R.JOKER] = g.known[q][2]
        if pile:
            start = off["pile_order"]
            obs[start:start + len(pile)] = pile
            obs[start:start + len(pile)] += 1.0
            obs[start:start + len(pile)] /= IDS
        sizes = g.sizes
        start = off["hand_sizes"]
        obs[start:start + n] = [sizes[q] * self._per_card for q in seats]
        obs[off["stock_size"]] = len(g.stock) * self._per_card
        totals = g.totals
        if any(totals):
            target = self.config.target_score
            start, deficits = off["scores"], off["score_deficits"]
            obs[start:start + n] = [max(totals[q], 0) / target for q in seats]
            obs[deficits:deficits + n] = [max(-totals[q], 0) / target for q in seats]
        return obs

    def _state_parts(self) -> list[tuple[str, int, float, str]]:
        """After player 0's observation: every seat's hand (53 counts each, absolute seats),
        the stock from its top ((card id + 1) / 53 per position), and the seat to move."""
        cfg = self.config
        return [("hands", cfg.num_players * IDS, float(cfg.max_copies), "count of each card id per seat (absolute seats)"),
                ("stock", cfg.deck_size, 1.0, "the stock from its top: (card id + 1) / 53 per position"),
                ("to_move", cfg.num_players, 1.0, "one-hot seat to move (none once over)")]

    def _state_extra(self) -> np.ndarray:
        g = self.game
        size = self.config.deck_size
        hands = np.zeros((g.n, IDS), np.float32)
        for q in range(g.n):
            np.add.at(hands[q], g.hand_cards(q), 1.0)
        stock = np.zeros(size, np.float32)
        stock[:len(g.stock)] = np.add(g.stock[::-1], 1) / IDS if g.stock else 0.0
        to_move = np.zeros(g.n, np.float32)
        if g.current_player >= 0:
            to_move[g.current_player] = 1.0
        return np.concatenate([hands.ravel(), stock, to_move])

    # -- engine glue ---------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        return R.action_to_str(action)

    def str_to_action(self, text: str) -> int:
        return R.str_to_action(text)

    # -- frames ------------------------------------------------------------------------------
    def _frame_size(self) -> FrameSize:
        return FrameSize(seats=self.config.num_players, rows=3 + self.config.num_players, lines=3)

    def _scene(self, views: list[Any], seat: int | None) -> Scene:
        """Every hand, the discard pile, the stock, the pending group and each seat's melds
        (jokers drawn as jokers), the scores and the turn's target and banned card."""
        me = 0 if seat is None else seat
        seen, n = views[me], self.config.num_players
        dealer = (me + seen.dealer) % n
        notes = [" (dealer)" if q == dealer else "" for q in range(n)]
        rows = [pile("discard pile", seen.discard_pile), pile("stock", hidden=seen.stock_size),
                pile("pending group", (*seen.pending, *[C.JOKER] * len(seen.pending_jokers)))]
        melds: list[list[tuple[int, ...]]] = [[] for _ in range(n)]
        for meld in seen.melds:
            jokers = list(meld.jokers)
            cards = []
            for card in meld.cards:
                if card in jokers:
                    jokers.remove(card)
                    card = C.JOKER
                cards.append(card)
            melds[(me + meld.owner) % n].append(tuple(cards))
        rows += [Row(f"player_{q}'s melds", tuple(melds[q])) for q in range(n)]
        scores = self._by_seat(seen.scores, me)
        fmt = lambda card: "-" if card is None else C.format_card(card)  # noqa: E731
        lines = ["scores: " + ", ".join(f"player_{q} {scores[q]}" for q in range(n)),
                 f"must place {fmt(seen.target)}, may not discard {fmt(seen.banned)}; turns {seen.turns}",
                 self._move_line(seat)]
        return Scene(self._frame_title(views, seat, f"hand {seen.hand_number}"),
                     self._frame_hands(views, seat, self._by_seat(seen.hand_sizes, me), notes), tuple(rows),
                     tuple(lines))

    def _render_text(self, symbols: bool) -> str:
        g = self.game
        fmt = lambda cs: C.format(cs, symbols) or "-"  # noqa: E731
        lines = [f"{self.metadata['name']}  hand {g.hand_index + 1}  phase {g.phase.name}  dealer player_{g.dealer}  "
                 f"turns {g.turns}" + (f"  daily deal {g.daily_date}" if g.daily_date else "")]
        for q in range(g.n):
            arrow = "->" if g.current_player == q else "  "
            lines.append(f"{arrow} player_{q}: {fmt(g.hand_cards(q))}  ({g.sizes[q]} cards, "
                         f"{g.table_points()[q]} on the table)")
        for slot, meld in enumerate(g.melds):
            cards = " ".join(C.format_card(c, symbols) + ("*" if meld.jokers >> c & 1 else "") +
                             f"/{meld.credit[c]}" for c in meld.ordered())
            lines.append(f"   meld {slot} ({'set' if meld.is_set else 'sequence'} of player_{meld.owner}): {cards}")
        if g.pending:
            lines.append(f"   pending: {fmt(C.from_mask(g.pending & ~g.pending_jokers))}  jokers as: "
                         f"{fmt(C.from_mask(g.pending_jokers))}")
        lines.append(f"   discard pile: {fmt(g.pile)}   stock: {len(g.stock)}")
        if g.target >= 0 or g.banned >= 0:
            lines.append(f"   must place: {fmt([g.target] if g.target >= 0 else [])}   "
                         f"may not discard: {fmt([g.banned] if g.banned >= 0 else [])}")
        if self.config.episode == "match":
            lines.append(f"   match totals: {g.totals}")
        if g.hand_results and (g.is_terminal() or self.config.episode == "match"):
            r = g.hand_results[-1]
            lines.append(f"   last hand: {r.kind}, points {r.points} (table {r.table_points}, hand {r.hand_points})")
        return "\n".join(lines)
