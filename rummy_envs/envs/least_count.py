"""least_count_v0: the PettingZoo AEC environment over ``rummy_envs.games.least_count``."""

from __future__ import annotations

from itertools import compress
from typing import Any

import numpy as np

from rummy_envs import cards as C
from rummy_envs.frames import FrameSize, Scene, pile
from rummy_envs.envs.base import RummyEnv, Segment, make_layout
from rummy_envs.games import least_count as L

IDS = L.NUM_IDS
_PHASES = len(L.Phase)
_TURN_START, _PICK, _GAME_OVER = L.Phase.TURN_START, L.Phase.PICK, L.Phase.GAME_OVER


class LeastCountEnv(RummyEnv):
    """Least Count for 2-10 players as an AEC environment.

    Keyword options are the rules options of ``LeastCountConfig`` (docs/least_count.md#options),
    ``num_players`` among them, plus ``render_mode``, ``reward`` ("points" | "win_loss"),
    ``reward_scale``, ``illegal_action`` ("raise" | "terminate") and ``rich_info`` (the round
    results in the infos). In a match an eliminated player's agent is terminated and leaves
    ``agents`` while the others play on.
    """

    metadata = {"name": "least_count_v0", "render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": False}
    num_actions = L.NUM_ACTIONS
    state_class = L.LeastCountState

    def __init__(self, render_mode: str | None = None, reward: str = "points", reward_scale: float = 1.0,
                 illegal_action: str = "raise", rich_info: bool = False, render_seat: int | None = None, **rules: Any) -> None:
        self.config = cfg = self._rules_config(rules)
        super().__init__(num_players=cfg.num_players, render_mode=render_mode, reward=reward,
                         reward_scale=reward_scale, illegal_action=illegal_action, rich_info=rich_info,
                         render_seat=render_seat)
        off = {name: s.offset for name, s in self.layout.items()}
        self._stock_index, self._turns_index = off["stock_size"], off["turns"]
        self._pile_offsets = (off["hand"], off["open_set"], off["pending_discard"], off["dead_pile"])
        self._slot_offsets = tuple(off["hand_slots"] + i * IDS for i in range(L.MAX_HAND))
        self._phase_offset, self._cut_offset = off["phase"], off["cut_card"]
        n = cfg.num_players
        self._seats = [[(p + k) % n for k in range(n)] for p in range(n)]  # relative order, me first
        # Where each observer sees each absolute seat's per-seat entries (known cards, hand size,
        # eliminated, turn done, to move, dealer), so the encoder walks the engine's per-seat
        # lists in seat order.
        blocks = (("known", IDS), ("hand_sizes", cfg.hand_size + 1), ("eliminated", 1), ("turn_done", 1),
                  ("to_move", 1), ("dealer", 1))
        self._seat_offsets = [tuple([off[name] + (q - p) % n * size for q in range(n)] for name, size in blocks)
                              for p in range(n)]
        self._deck_size, self._max_turns, self._limit = cfg.deck_size, cfg.max_turns_per_round, cfg.elimination_score
        self._total_slots = [tuple(zip(range(off["totals"], off["totals"] + n), seats)) for seats in self._seats]
        self._known_offset = off["known"]  # my own known cards come first
        # The bytes of a buffer (4 a float) that a discard clears, my hand's slots, and zeros for them.
        self._slot_bytes = slice(4 * off["hand_slots"], 4 * (off["hand_slots"] + L.MAX_HAND * IDS))
        self._zero_slots = bytes(4 * L.MAX_HAND * IDS)
        self._zero_bytes = bytes(4 * self.observation_size)
        self._copies = cfg.max_copies > 1  # two decks or jokers: a pile may hold an id twice
        # Each seat's observation as last encoded, and the game and number of moves it shows.
        self._buffers = [np.zeros(self.observation_size, np.float32) for _ in range(n)]
        self._encoded: list[tuple[L.LeastCountState, int] | None] = [None] * n
        self._view_buffers()

    def _view_buffers(self) -> None:
        """Views of the seats' buffers: their floats, set entry by entry (as cheap as a byte of
        a bytearray, with no conversion pass afterwards), and their bytes, cleared in one go."""
        self._float_views = [memoryview(buffer) for buffer in self._buffers]
        self._byte_views = [view.cast("B") for view in self._float_views]

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and deep-copied without the views of the encoder's buffers, which
        ``__setstate__`` makes again over the copy's own buffers."""
        state = self.__dict__.copy()
        del state["_float_views"], state["_byte_views"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._view_buffers()

    # -- layout and encoding -------------------------------------------------------------------
    def observation_layout(self) -> dict[str, Segment]:
        """Named segments of the observation vector, in order (seats relative: me first)."""
        cfg = self.config
        n, copies = cfg.num_players, float(cfg.max_copies)
        return make_layout([
            ("hand", IDS, copies, "count of each card id in my hand (52: jokers)"),
            ("hand_slots", L.MAX_HAND * IDS, 1.0, "one-hot card id at each position of my sorted hand (DISCARD)"),
            ("open_set", IDS, copies, "the previous player's discard, which may be picked from"),
            ("pending_discard", IDS, copies, "what the player to move has just discarded (PICK phase)"),
            ("dead_pile", IDS, copies, "count of each card id in the dead pile"),
            ("cut_card", IDS, 1.0, "one-hot cut card (cut_joker): every card of its rank is worth 0"),
            ("known", n * IDS, copies, "cards each seat picked from an open set and still holds, per seat"),
            ("hand_sizes", n * (cfg.hand_size + 1), 1.0, "per seat: one-hot number of cards in its hand"),
            ("totals", n, np.inf, "each seat's match total / elimination_score"),
            ("eliminated", n, 1.0, "1 for each seat out of the match"),
            ("turn_done", n, 1.0, "1 for each seat that finished a turn this round (it may declare)"),
            ("stock_size", 1, 1.0, "cards in the closed deck / deck size"),
            ("turns", 1, 1.0, "turns played this round / max_turns_per_round"),
            ("phase", _PHASES, 1.0, "one-hot phase: " + ", ".join(p.name for p in L.Phase)),
            ("to_move", n, 1.0, "one-hot seat to move (none once over)"),
            ("dealer", n, 1.0, "one-hot seat of the dealer"),
        ])

    def _encode(self, player: int) -> np.ndarray:
        """A copy of ``player``'s buffer brought up to date. Only the moves since the buffer was
        last encoded matter: none, or just the player's own discard (half of all the
        observations of a game: the discard touches a few segments) or own declaration that
        ended the game, cost little; anything else encodes the whole buffer again."""
        g = self.game
        played = len(g.history)
        encoded = self._encoded[player]
        if encoded is None or encoded[0] is not g or encoded[1] != played:
            if encoded is None or encoded[0] is not g or encoded[1] != played - 1:
                self._encode_all(player)
            elif g.phase is _PICK and g.current_player == player:
                self._encode_own_discard(player)
            elif g.phase is _GAME_OVER and g.history[-1] == L.DECLARE and g.hand_results[-1].declarer == player:
                self._encode_own_declaration(player)
            else:
                self._encode_all(player)
            self._encoded[player] = (g, played)
        return self._buffers[player].copy()

    def _encode_own_discard(self, player: int) -> None:
        """Update ``player``'s buffer, encoded at the start of its turn, after its discard:
        which moves cards from its hand to the pending discard (and out of its known cards)
        and the phase to PICK; nothing else changes."""
        g = self.game
        obs = self._float_views[player]
        hand, pending = g.hands[player], g.pending
        obs[self._phase_offset + _TURN_START] = 0.0
        obs[self._phase_offset + _PICK] = 1.0
        my_size = self._seat_offsets[player][1][player]
        obs[my_size + len(hand) + len(pending)] = 0.0
        obs[my_size + len(hand)] = 1.0
        hand_offset, _, pending_offset, _ = self._pile_offsets
        known_offset = self._known_offset  # my own known cards come first
        for card in pending:
            obs[hand_offset + card] -= 1.0
            obs[pending_offset + card] += 1.0
            if obs[known_offset + card]:  # one copy of a known card played is known no more
                obs[known_offset + card] -= 1.0
        self._byte_views[player][self._slot_bytes] = self._zero_slots
        for slot_offset, card in zip(self._slot_offsets, hand):
            obs[slot_offset + card] = 1.0

    def _encode_own_declaration(self, player: int) -> None:
        """Update ``player``'s buffer, encoded at the start of its turn, after it declared and
        that ended the game: the phase, the seat to move (none), the totals and the
        eliminations change; the cards stay where they were."""
        g = self.game
        obs = self._float_views[player]
        obs[self._phase_offset + _TURN_START] = 0.0
        obs[self._phase_offset + _GAME_OVER] = 1.0
        _, _, eliminated, _, to_move, _ = self._seat_offsets[player]
        obs[to_move[player]] = 0.0
        self._encode_totals(player, obs)
        for offset, out in zip(eliminated, g.out_round):
            obs[offset] = 1.0 if out else 0.0

    def _encode_all(self, player: int) -> None:
        """Encode ``player``'s whole buffer from the game."""
        g = self.game
        obs = self._float_views[player]
        self._byte_views[player][:] = self._zero_bytes
        known, sizes, eliminated, turn_done, to_move, dealer = self._seat_offsets[player]
        obs[self._phase_offset + g.phase] = 1.0
        obs[dealer[g.dealer]] = 1.0
        if g.current_player >= 0:
            obs[to_move[g.current_player]] = 1.0
        if g.cut_card >= 0:
            obs[self._cut_offset + g.cut_card] = 1.0
        for offset, cards in zip(sizes, g.hands):
            obs[offset + len(cards)] = 1.0
        for offset in compress(turn_done, g.turn_done):
            obs[offset] = 1.0
        if any(g.out_round):
            for offset in compress(eliminated, g.out_round):
                obs[offset] = 1.0
        hand_offset, open_offset, pending_offset, dead_offset = self._pile_offsets
        hand = g.hands[player]
        if self._copies:  # two decks or jokers: a pile may hold an id twice
            for slot_offset, card in zip(self._slot_offsets, hand):
                obs[slot_offset + card] = 1.0
            for card in hand:
                obs[hand_offset + card] += 1.0
            for card in g.open_set:
                obs[open_offset + card] += 1.0
            for card in g.pending:
                obs[pending_offset + card] += 1.0
            for card in g.dead:
                obs[dead_offset + card] += 1.0
            if any(g.known):
                for offset, cards in zip(known, g.known):
                    for card in cards:
                        obs[offset + card] += 1.0
        else:  # one of each id: ones, which are cheaper to write than sums
            for slot_offset, card in zip(self._slot_offsets, hand):
                obs[slot_offset + card] = 1.0
                obs[hand_offset + card] = 1.0
            for card in g.open_set:
                obs[open_offset + card] = 1.0
            for card in g.pending:
                obs[pending_offset + card] = 1.0
            for card in g.dead:
                obs[dead_offset + card] = 1.0
            if any(g.known):
                for offset, cards in zip(known, g.known):
                    for card in cards:
                        obs[offset + card] = 1.0
        if any(g.totals):
            self._encode_totals(player, obs)
        obs[self._stock_index] = len(g.stock) / self._deck_size
        obs[self._turns_index] = g.turns / self._max_turns

    def _encode_totals(self, player: int, obs: memoryview) -> None:
        """Write each seat's match total / elimination_score, seats relative to ``player``."""
        totals, limit = self.game.totals, self._limit
        for index, q in self._total_slots[player]:
            obs[index] = totals[q] / limit

    def _state_parts(self) -> list[tuple[str, int, float, str]]:
        """After player 0's observation: every seat's hand (53 counts each, absolute seats),
        the closed deck from its top ((card id + 1) / 53 per position), and the seat to move."""
        cfg = self.config
        return [("hands", cfg.num_players * IDS, float(cfg.max_copies), "count of each card id per seat (absolute seats)"),
                ("stock", cfg.deck_size, 1.0, "the closed deck from its top: (card id + 1) / 53 per position"),
                ("to_move", cfg.num_players, 1.0, "one-hot seat to move (none once over)")]

    def _state_extra(self) -> np.ndarray:
        g = self.game
        size = self.config.deck_size
        hands = np.zeros((g.n, IDS), np.float32)
        for q in range(g.n):
            np.add.at(hands[q], g.hands[q], 1.0)
        stock = np.zeros(size, np.float32)
        if g.stock:
            stock[:len(g.stock)] = np.add(g.stock[::-1], 1) / IDS
        to_move = np.zeros(g.n, np.float32)
        if g.current_player >= 0:
            to_move[g.current_player] = 1.0
        return np.concatenate([hands.ravel(), stock, to_move])

    # -- engine glue ---------------------------------------------------------------------------
    def _seats_out(self) -> set[int]:
        """Seats eliminated from the match."""
        out_round = self.game.out_round
        return {q for q, out in enumerate(out_round) if out} if any(out_round) else set()

    def action_to_str(self, action: int) -> str:
        return L.action_to_str(action)

    def str_to_action(self, text: str) -> int:
        return L.str_to_action(text)

    def _hand_info(self, player: int) -> dict[str, Any]:
        info = self.game.hand_results[-1].as_dict()
        info["hand_number"] = len(self.game.hand_results)
        info["seat"] = player
        return {"hand_result": info}

    # -- frames ------------------------------------------------------------------------------
    def _frame_size(self) -> FrameSize:
        return FrameSize(seats=self.config.num_players, rows=4, lines=3)

    def _scene(self, views: list[Any], seat: int | None) -> Scene:
        """Every hand (its count when shown), the open set, the discard just made, the dead
        pile and the closed deck, the cut card, the totals and the eliminated seats."""
        me = 0 if seat is None else seat
        seen, n = views[me], self.config.num_players
        dealer = (me + seen.dealer) % n
        out = self._by_seat(seen.eliminated, me)
        notes = [(" (dealer)" if q == dealer else "") + (" out" if out[q] else "")
                 + (f", count {views[q].count}" if seat is None or q == seat else "") for q in range(n)]
        rows = [pile("open set", seen.open_set), pile("just discarded", seen.pending_discard),
                pile("dead pile", seen.dead_pile), pile("closed deck", hidden=seen.stock_size)]
        totals = self._by_seat(seen.totals, me)
        cut = "-" if seen.cut_card is None else C.format_card(seen.cut_card)
        lines = ["totals: " + ", ".join(f"player_{q} {totals[q]}" for q in range(n)),
                 f"cut card {cut}; turns {seen.turns}", self._move_line(seat)]
        return Scene(self._frame_title(views, seat, f"round {seen.round_number}"),
                     self._frame_hands(views, seat, self._by_seat(seen.hand_sizes, me), notes), tuple(rows),
                     tuple(lines))

    def _render_text(self, symbols: bool) -> str:
        g = self.game
        fmt = lambda cs: C.format(cs, symbols) or "-"  # noqa: E731
        cut = f"  cut card {C.format_card(g.cut_card, symbols)}" if g.cut_card >= 0 else ""
        lines = [f"{self.metadata['name']}  round {g.round_index + 1}  phase {g.phase.name}  dealer player_{g.dealer}  "
                 f"turns {g.turns}{cut}"]
        for q in range(g.n):
            arrow = "->" if g.current_player == q else "  "
            status = f"out after round {g.out_round[q]}" if g.out_round[q] else f"count {g.count(q)}"
            known = f", known {fmt(g.known[q])}" if g.known[q] else ""
            lines.append(f"{arrow} player_{q}: {fmt(g.hands[q])}  ({status}, total {g.totals[q]}{known})")
        lines.append(f"   open set: {fmt(g.open_set)}   just discarded: {fmt(g.pending)}   "
                     f"dead pile: {len(g.dead)}   closed deck: {len(g.stock)}")
        if g.hand_results and (g.is_terminal() or self.config.episode == "match"):
            r = g.hand_results[-1]
            declarer = f" by player_{r.declarer}" if r.declarer >= 0 else ""
            out = f", eliminated {['player_' + str(q) for q in r.eliminated]}" if r.eliminated else ""
            lines.append(f"   last round: {r.kind}{declarer}, counts {r.counts}, points {r.points}{out}")
        if g.is_terminal() and self.config.episode == "match":
            lines.append(f"   winners: {['player_' + str(q) for q in g.winners] or 'none (round cap)'}")
        return "\n".join(lines)
