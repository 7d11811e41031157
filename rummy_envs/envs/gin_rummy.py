"""gin_rummy_v0: the PettingZoo AEC environment over ``rummy_envs.games.gin_rummy``."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_envs import cards as C
from rummy_envs.envs.base import RummyEnv, Segment, bits_to_array, make_layout
from rummy_envs.frames import FrameSize, Row, Scene, pile
from rummy_envs.games import gin_rummy as G
from rummy_envs.options import check_bool

N = C.NUM_CARDS
_PHASES = len(G.Phase)
_FULL_STOCK = C.NUM_CARDS - 2 * G.HAND_SIZE - 1


class GinRummyEnv(RummyEnv):
    """Two-player Gin Rummy (standard or Oklahoma) as an AEC environment.

    Keyword options are the rules options of ``GinConfig`` (docs/gin_rummy.md#options) plus
    ``render_mode``, ``reward`` ("points" | "win_loss"), ``reward_scale``,
    ``illegal_action`` ("raise" | "terminate"), ``rich_info`` (the hand results in the infos)
    and ``observe_opponent_hand`` (oracle only).
    """

    metadata = {"name": "gin_rummy_v0", "render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": False}
    num_actions = G.NUM_ACTIONS
    state_class: type[G.GinState] = G.GinState

    def __init__(self, render_mode: str | None = None, reward: str = "points", reward_scale: float = 1.0,
                 illegal_action: str = "raise", rich_info: bool = False, render_seat: int | None = None,
                 observe_opponent_hand: bool = False,
                 num_players: int = 2, **rules: Any) -> None:
        if num_players != G.NUM_PLAYERS:
            raise ValueError(f"option num_players={num_players!r} is invalid; {self.metadata['name']} is for 2 players")
        check_bool("observe_opponent_hand", observe_opponent_hand)
        self.config = self._rules_config(rules)
        self.observe_opponent_hand = observe_opponent_hand
        super().__init__(num_players=2, render_mode=render_mode, reward=reward, reward_scale=reward_scale,
                         illegal_action=illegal_action, rich_info=rich_info,
                         render_seat=render_seat)
        self._off = {name: s.offset for name, s in self.layout.items()}

    # -- layout and encoding -------------------------------------------------------------------
    def observation_layout(self) -> dict[str, Segment]:
        """Named segments of the observation vector, in order (seats relative: me first)."""
        parts = [
            ("hand", N, 1.0, "my cards"),
            ("top_discard", N, 1.0, "the face-up top card of the discard pile"),
            ("discard_pile", N, 1.0, "every card in the discard pile"),
            ("my_discards", N, 1.0, "cards I discarded this hand"),
            ("opponent_discards", N, 1.0, "cards the opponent discarded this hand"),
            ("opponent_known", N, 1.0, "cards known in the opponent's hand (taken from the pile, not since discarded)"),
            ("stock_size", 1, 1.0, f"cards left in the stock / {_FULL_STOCK}"),
            ("phase", _PHASES, 1.0, "one-hot phase: " + ", ".join(p.name for p in G.Phase)),
            ("knock_limit", 1, 10.0, "this hand's knock limit / 10 (Oklahoma: set by the upcard)"),
            ("doubled", 1, 1.0, "1 if this hand's scores are doubled (Oklahoma spade upcard)"),
            ("opening", 3, 1.0, "I am the dealer; the non-dealer passed the upcard; the dealer passed it"),
            ("knocker", 2, 1.0, "I knocked; the opponent knocked"),
            ("knocker_melds", 3 * N, 1.0, "the knocker's melds (3 slots, with layoffs) once visible to me"),
            ("knocker_deadwood", N, 1.0, "the knocker's unmelded cards once laid out"),
            ("my_melds", N, 1.0, "melds I declared in the showdown"),
        ]
        parts += self._score_parts()
        if self.observe_opponent_hand:
            parts.append(("opponent_hand", N, 1.0, "the opponent's hand (oracle experiments only)"))
        return make_layout(parts)

    def _encode(self, player: int) -> np.ndarray:
        g = self.game
        off = self._off
        opp = 1 - player
        # One Python int holds every 0/1 segment; it is unpacked to floats in one go.
        bits = (
            g.hands[player] << off["hand"]
            | g.discarded[player] << off["my_discards"]
            | g.discarded[opp] << off["opponent_discards"]
            | g.known[opp] << off["opponent_known"]
            | 1 << (off["phase"] + g.phase)
            | (g.dealer == player) << off["opening"]
            | g.passed[0] << (off["opening"] + 1)
            | g.passed[1] << (off["opening"] + 2)
        )
        if g.pile:
            bits |= 1 << (off["top_discard"] + g.pile[-1]) | C.to_mask(g.pile) << off["discard_pile"]
        if g.knocker >= 0:
            bits |= self._showdown_bits(player)
        if self.observe_opponent_hand:
            bits |= g.hands[opp] << off["opponent_hand"]
        obs = bits_to_array(bits, self.observation_size)
        obs[off["stock_size"]] = len(g.stock) / _FULL_STOCK
        obs[off["knock_limit"]] = g.knock_limit / 10.0
        obs[off["doubled"]] = g.multiplier == 2
        self._write_scores(obs, player)
        return obs

    def _score_parts(self) -> list[tuple[str, int, float, str]]:
        """Segments of the match score (none in hand mode)."""
        if self.config.episode != "match":
            return []
        return [("scores", 4, np.inf, "my total / target, opponent total / target, my hands won / 10, opponent's / 10")]

    def _write_scores(self, obs: np.ndarray, player: int) -> None:
        if "scores" in self._off:
            target, opp = self.config.target_score, 1 - player
            totals, wins = self.game.match.totals, self.game.match.wins
            start = self._off["scores"]
            obs[start : start + 4] = (totals[player] / target, totals[opp] / target, wins[player] / 10.0, wins[opp] / 10.0)

    def _showdown_bits(self, player: int) -> int:
        """The showdown segments, as much of it as ``player`` may see (``visible_showdown``)."""
        off = self._off
        shown, dead, mine = self.game.visible_showdown(player)
        bits = 1 << (off["knocker"] + (0 if self.game.knocker == player else 1))
        for slot, meld in enumerate(shown):
            bits |= meld << (off["knocker_melds"] + slot * N)
        bits |= dead << off["knocker_deadwood"]
        for meld in mine:
            bits |= meld << off["my_melds"]
        return bits

    def _state_parts(self) -> list[tuple[str, int, float, str]]:
        """After player 0's observation: both hands and the stock as card sets, the player to move."""
        return [("hand_0", N, 1.0, "player_0's cards"), ("hand_1", N, 1.0, "player_1's cards"),
                ("stock", N, 1.0, "the cards in the stock"), ("to_move", 2, 1.0, "one-hot seat to move (none once over)")]

    def _state_extra(self) -> np.ndarray:
        g = self.game
        extra = np.zeros(3 * N + 2, np.float32)
        for i, mask in enumerate((g.hands[0], g.hands[1], C.to_mask(g.stock))):
            extra[[i * N + c for c in C.from_mask(mask)]] = 1.0
        if g.current_player >= 0:
            extra[3 * N + g.current_player] = 1.0
        return extra

    # -- engine glue ---------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        return G.action_to_str(action)

    def str_to_action(self, text: str) -> int:
        return G.str_to_action(text)

    def _score_lines(self) -> list[str]:
        g = self.game
        if self.config.episode != "match":
            return []
        return [f"   match totals: {g.match.totals}  hands won: {g.match.wins}"]

    # -- frames ------------------------------------------------------------------------------
    def _frame_size(self) -> FrameSize:
        return FrameSize(seats=2, rows=6, lines=3 + self._frame_score_line_count())

    def _frame_score_line_count(self) -> int:
        return 1 if self.config.episode == "match" else 0

    def _scene(self, views: list[G.GinView], seat: int | None) -> Scene:
        """Both hands, the discard pile and stock, and at the showdown the knocker's melds and
        deadwood and the defender's melds and layoffs, as far as the viewer may see them."""
        g = self.game
        seen = views[0 if seat is None else seat]
        me = 0 if seat is None else seat
        sizes = [len(views[q].hand) if q == me else seen.opponent_hand_size for q in range(2)]
        dealer = me if seen.is_dealer else 1 - me
        notes = [" (dealer)" if q == dealer else "" for q in range(2)]
        rows = [pile("discard pile", seen.discard_pile), pile("stock", hidden=seen.stock_size)]
        result = seen.hand_results[-1] if seen.hand_results else None
        over = result is not None and seen.phase == G.Phase.GAME_OVER
        if seen.knocker is not None:
            knocker = me if seen.knocker == 0 else 1 - me
            rows.append(Row(f"player_{knocker}'s melds", tuple(seen.knocker_melds)))
            rows.append(pile("deadwood", seen.knocker_deadwood))
            if over:  # the defender's melds and layoffs are shown when the hand ends
                melds, laid = result.defender_melds, [card for card, *_ in result.layoffs]
            elif seat is None or seat != knocker:
                melds, laid = views[1 - knocker].my_melds, [card for card, _slot in views[1 - knocker].layoffs]
            else:
                melds, laid = (), []
            rows.append(Row(f"player_{1 - knocker}'s melds", tuple(map(tuple, melds))))
            rows.append(pile("layoffs", laid))
        scores = seen.scores if me == 0 else seen.scores[::-1]
        lines = [f"knock limit {seen.knock_limit}{'  (doubled)' if seen.multiplier == 2 else ''}  hand {g.hand_index + 1}"
                 f"  scores player_0 {scores[0]}, player_1 {scores[1]}", *self._frame_score_lines(seen, me),
                 self._result_line(result), self._move_line(seat)]
        return Scene(self._frame_title(views, seat, f"hand {g.hand_index + 1}"),
                     self._frame_hands(views, seat, sizes, notes), tuple(rows), tuple(lines))

    @staticmethod
    def _result_line(result: G.HandResult | None) -> str:
        """The last finished hand: how it ended and what each player scored (seats absolute)."""
        if result is None:
            return "last hand: -"
        return f"last hand: {result.kind}, points player_0 {result.points[0]}, player_1 {result.points[1]}"

    def _frame_score_lines(self, view: G.GinView, me: int) -> list[str]:
        """The match lines of a frame (hands won in match mode)."""
        if self.config.episode != "match":
            return []
        won = view.hands_won if me == 0 else view.hands_won[::-1]
        return [f"hands won: player_0 {won[0]}, player_1 {won[1]}"]

    def _move_seen(self, name: str, mover: int, seat: int) -> str:
        """The knock card goes face down; a defender's melds and layoffs show when the hand ends."""
        if name.startswith("KNOCK("):
            return "KNOCK (face down)"
        if name.startswith(("MELD(", "LAYOFF(")) and self.game.knocker == seat and not self.game.is_terminal():
            return name.partition("(")[0]
        return name

    def _render_text(self, symbols: bool) -> str:
        g = self.game
        fmt = lambda cs: C.format(cs, symbols) or "-"  # noqa: E731
        lines = [f"{self.metadata['name']}  hand {g.hand_index + 1}  phase {g.phase.name}  "
                 f"dealer player_{g.dealer}  knock limit {g.knock_limit}{'  (doubled)' if g.multiplier == 2 else ''}"]
        for p in range(2):
            arrow = "->" if g.current_player == p else "  "
            lines.append(f"{arrow} player_{p}: {fmt(C.from_mask(g.hands[p]))}  (deadwood {G.deadwood(g.hands[p])})")
        lines.append(f"   discard pile: {fmt(g.pile)}   stock: {len(g.stock)}")
        lines += self._score_lines()
        if g.hand_results and (g.is_terminal() or self.config.episode == "match"):
            r = g.hand_results[-1]
            lines.append(f"   last hand: {r.kind}, points {r.points}, deadwood {r.deadwood}"
                         + (f", knocker melds {[fmt(m) for m in r.knocker_melds]}" if r.knocker >= 0 else ""))
        return "\n".join(lines)
