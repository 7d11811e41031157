"""manipulation_rummy_v0: the PettingZoo AEC environment over ``rummy_envs.games.manipulation_rummy``."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_envs import cards as C
from rummy_envs.frames import FrameSize, Row, Scene, pile
from rummy_envs.envs.base import RummyEnv, Segment, make_layout
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games.manipulation_rummy import table_solver as TS

N = M.NUM_CARDS
IDS = M.NUM_IDS
_PHASES = len(M.Phase)
TABLE_ROWS = 4  # rows of a frame's table; melds past them end in a "+k more rows" note
TABLE_ROW_CARDS = 18  # cards a table row of a frame holds before the next meld starts a row
SOLVER_WORKSPACE_BYTES = 8 << 20
"""An env's own solver work arrays are replaced by small ones after a solve that grew them
past this (the shared ones keep up to 64 MiB): most masks need well under 1 MiB."""


class ManipulationRummyEnv(RummyEnv):
    """Manipulation Rummy (Carousel) for 2-5 players as an AEC environment.

    Keyword options are the rules options of ``ManipulationConfig`` (see
    docs/manipulation_rummy.md), ``num_players`` among them, plus ``render_mode``,
    ``reward`` ("points" | "win_loss"), ``reward_scale``, ``illegal_action``
    ("raise" | "terminate") and ``rich_info`` (the round results in the infos).
    """

    metadata = {"name": "manipulation_rummy_v0", "render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": False}
    num_actions = M.NUM_ACTIONS
    state_class = M.ManipulationState

    def __init__(self, render_mode: str | None = None, reward: str = "points", reward_scale: float = 1.0,
                 illegal_action: str = "raise", rich_info: bool = False, render_seat: int | None = None, **rules: Any) -> None:
        self.config = cfg = self._rules_config(rules)
        super().__init__(num_players=cfg.num_players, render_mode=render_mode, reward=reward,
                         reward_scale=reward_scale, illegal_action=illegal_action, rich_info=rich_info,
                         render_seat=render_seat)
        self._off = {name: s.offset for name, s in self.layout.items()}
        n = cfg.num_players
        self._seats = [[(p + k) % n for k in range(n)] for p in range(n)]  # relative order, me first
        self._per_card = 1.0 / cfg.deck_size
        self._no_placed = [0] * IDS
        # _encode writes the segments in this order: five of counts, the floats, known, limit_seen
        order = ("hand", "table", "table_jokers", "spare_naturals", "placed", "freed_jokers", "draws", "table_ops",
                 "hand_sizes", "stock_size", "phase", "to_move", "dealer", "scores", "rounds_won", "known",
                 "limit_seen")
        assert list(self.layout) == list(order) and self._off["limit_seen"] + 2 * n == self.observation_size
        floats = self._off["known"] - self._off["freed_jokers"]
        self._floats_template = [0.0] * floats
        self._no_floats = bytes(floats)
        self._no_known = bytes(n * IDS)
        self._no_limits = bytes(2 * n)
        self._solver_workspace = TS.Workspace(most_bytes=SOLVER_WORKSPACE_BYTES)

    def _new_state(self, seed: int, options: dict[str, Any]) -> M.ManipulationState:
        """The base env's new state, solving its masks in this env's own solver workspace:
        the solves of one game resume each other even when other envs solve in between."""
        state = super()._new_state(seed, options)
        state.solver_workspace = self._solver_workspace
        return state

    # -- layout and encoding -------------------------------------------------------------------
    def observation_layout(self) -> dict[str, Segment]:
        """Named segments of the observation vector, in order (seats relative: me first)."""
        cfg = self.config
        n = cfg.num_players
        jokers = float(max(cfg.total_jokers, 1))
        on_table = float(cfg.decks + cfg.total_jokers)  # a commit may pass the identity limit on its way
        return make_layout([
            ("hand", IDS, float(cfg.max_copies), "count of each card id in my hand (52: jokers)"),
            ("table", N, on_table, "cards of each identity on the table: naturals and jokers declared as it"),
            ("table_jokers", N, jokers, "jokers on the table declared as each identity"),
            ("spare_naturals", N, float(cfg.decks),
             "table naturals of each identity that may still replace a joker in the commit in progress"),
            ("placed", IDS, float(cfg.max_copies),
             "cards the player to move has put on the table from its hand in this commit (52: jokers)"),
            ("freed_jokers", 1, jokers, "freed jokers waiting to be placed"),
            ("draws", 1, 1.0, "draws of the player to move this turn / max_draws"),
            ("table_ops", 1, 1.0, "placements in the commit in progress / max_table_ops_per_turn"),
            ("hand_sizes", n, 1.0, "cards in each seat's hand / deck size"),
            ("stock_size", 1, 1.0, "cards in the stock / deck size"),
            ("phase", _PHASES, 1.0, "one-hot phase: " + ", ".join(p.name for p in M.Phase)),
            ("to_move", n, 1.0, "one-hot seat to move (none once over)"),
            ("dealer", n, 1.0, "one-hot seat of the dealer"),
            ("scores", n, np.inf, "scores / target_score: match totals (final once won; a one-round "
                                  "episode's points once it is over)"),
            ("rounds_won", n, 1.0, "rounds each seat has won / max_rounds"),
            ("known", n * IDS, float(cfg.max_copies),
             "cards each seat's hand is known to hold (placed and taken back with ABORT), per seat"),
            ("limit_seen", n * 2, 1.0, "per seat: [within, above] knock_limit as its last turn ended, "
                                       "until it draws (knock_timing end_of_turn)"),
        ])

    def _encode(self, player: int) -> np.ndarray:
        g = self.game
        n = g.n
        seats = self._seats[player]
        cfg = self.config
        # the count segments (the five at the head, and every seat's known cards) in one byte
        # string, converted once (bytes() converts a list of small counts far faster than
        # numpy does); then the floats between them in one slice
        in_commit = g.in_commit
        known = b"".join(bytes(g.known[q]) for q in seats) if any(map(any, g.known)) else self._no_known
        obs = np.frombuffer(b"".join((*map(bytes, (g.hands[player], g.naturals, g.jokers_at,
                                                   g.spare if in_commit else g.naturals,
                                                   g.placed if in_commit else self._no_placed)),
                                      self._no_floats, known, self._no_limits)), np.uint8).astype(np.float32)
        start, jokers = self._off["table"], self._off["table_jokers"]
        obs[start:start + N] += obs[jokers:jokers + N]
        floats = self._floats_template.copy()  # freed_jokers ... rounds_won, as laid out
        if in_commit:
            floats[0] = g.free_jokers
            floats[2] = g.ops / cfg.max_table_ops_per_turn
        floats[1] = g.draws / cfg.max_draws
        floats[3:3 + n] = [g.sizes[q] * self._per_card for q in seats]
        floats[3 + n] = len(g.stock) * self._per_card
        floats[4 + n + g.phase] = 1.0
        at = 4 + n + _PHASES  # to_move, dealer, scores, rounds_won
        if g.current_player >= 0:
            floats[at + (g.current_player - player) % n] = 1.0
        floats[at + n + (g.dealer - player) % n] = 1.0
        scores = g.final if g.final is not None else g.totals
        if any(scores):
            floats[at + 2 * n:at + 3 * n] = [scores[q] / cfg.target_score for q in seats]
        if any(g.rounds_won):
            floats[at + 3 * n:at + 4 * n] = [g.rounds_won[q] / cfg.max_rounds for q in seats]
        start = self._off["freed_jokers"]
        obs[start:start + len(floats)] = floats
        for k, q in enumerate(seats):
            if g.limit_seen[q] is not None:
                obs[self._off["limit_seen"] + 2 * k + (g.limit_seen[q] == "above")] = 1.0
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
        hands = np.asarray(g.hands, np.float32).ravel()
        stock = np.zeros(size, np.float32)
        if g.stock:
            stock[:len(g.stock)] = np.add(g.stock[::-1], 1) / IDS
        to_move = np.zeros(g.n, np.float32)
        if g.current_player >= 0:
            to_move[g.current_player] = 1.0
        return np.concatenate([hands, stock, to_move])

    # -- engine glue ---------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        return M.action_to_str(action)

    def str_to_action(self, text: str) -> int:
        return M.str_to_action(text)

    # -- frames ------------------------------------------------------------------------------
    def _frame_size(self) -> FrameSize:
        return FrameSize(seats=self.config.num_players, rows=2 + TABLE_ROWS + 2, lines=3)

    def _scene(self, views: list[Any], seat: int | None) -> Scene:
        """Every hand, the stock, the table as last committed (jokers drawn as jokers, a few
        melds a row), and during a commit the table now, the cards placed from the hand and the
        freed jokers; the scores and rounds won."""
        me = 0 if seat is None else seat
        seen, n = views[me], self.config.num_players
        dealer = (me + seen.dealer) % n
        notes = [" (dealer)" if q == dealer else "" for q in range(n)]
        jokers = list(seen.table_jokers)
        melds = []
        for meld in seen.arrangement:
            cards = []
            for card in meld:
                if card in jokers:
                    jokers.remove(card)
                    card = C.JOKER
                cards.append(card)
            melds.append(tuple(cards))
        rows = [pile("stock", hidden=seen.stock_size)]
        line: list[tuple[int, ...]] = []
        table_rows = []
        for meld in melds:
            if line and sum(map(len, line)) + len(meld) > TABLE_ROW_CARDS:
                table_rows.append(line)
                line = []
            line.append(meld)
        table_rows.append(line)
        rows += [Row("table" if i == 0 else "", tuple(groups)) for i, groups in enumerate(table_rows)]
        if seen.table_ops or seen.placed or seen.freed_jokers:
            rows += [pile("table now", seen.table), pile("placed now", (*seen.placed, *[C.JOKER] * seen.freed_jokers))]
        scores, won = self._by_seat(seen.scores, me), self._by_seat(seen.rounds_won, me)
        lines = ["scores: " + ", ".join(f"player_{q} {scores[q]} ({won[q]} rounds won)" for q in range(n)),
                 f"draws this turn {seen.draws}/{self.config.max_draws}, placements {seen.table_ops}"
                 f"/{self.config.max_table_ops_per_turn}", self._move_line(seat)]
        return Scene(self._frame_title(views, seat, f"round {seen.round_number}"),
                     self._frame_hands(views, seat, self._by_seat(seen.hand_sizes, me), notes), tuple(rows),
                     tuple(lines))

    def _render_text(self, symbols: bool) -> str:
        g = self.game
        cfg = self.config
        fmt = lambda cs: C.format(cs, symbols) or "-"  # noqa: E731
        lines = [f"{self.metadata['name']}  round {g.round_index + 1}  phase {g.phase.name}  dealer player_{g.dealer}  "
                 f"stock {len(g.stock)}  draws {g.draws}/{cfg.max_draws}"]
        scores = g.final if g.final is not None else g.totals
        for q in range(g.n):
            arrow = "->" if g.current_player == q else "  "
            lines.append(f"{arrow} player_{q}: {fmt(g.hand_cards(q))}  (value {g.hand_value(q)}, score {scores[q]}, "
                         f"rounds won {g.rounds_won[q]})")
        committed = g.start_jokers if g.in_commit else g.jokers_at
        lines.append("   table" + (" at the start of the commit" if g.in_commit else "") + ": "
                     + (format_arrangement(g.arrangement, committed, symbols) or "empty"))
        if g.in_commit:
            arranged = TS.arrange(g.table_counts(), g.max_copies)
            now = (format_arrangement(arranged, g.jokers_at, symbols) if arranged is not None
                   else f"{format_table(g.table_counts(), g.jokers_at, symbols)} (not legal yet)")
            lines.append(f"   table now: {now}")
            lines.append(f"   placed from the hand: {fmt(M.cards_of(g.placed))}   freed jokers: {g.free_jokers}   "
                         f"placements: {g.ops}/{cfg.max_table_ops_per_turn}")
        if g.hand_results and (g.is_terminal() or cfg.episode == "match"):
            r = g.hand_results[-1]
            ender = f" by player_{r.ender}" if r.ender >= 0 else ""
            lines.append(f"   last round: {r.kind}{ender}, values {r.values}, winners "
                         f"{['player_' + str(q) for q in r.winners]}, points {r.points}")
        if g.is_terminal() and cfg.episode == "match":
            lines.append(f"   final totals: {g.final or g.totals}  winners: "
                         f"{['player_' + str(q) for q in g.winners] or 'none (round cap)'}")
        return "\n".join(lines)


def format_arrangement(melds: Any, jokers_at: list[int], symbols: bool = False) -> str:
    """A legal arrangement as text, e.g. ``[7D 8D 9D] [5S 6S JK(=7S)]``: jokers are written
    ``JK(=identity)``, on the first copies of their identities."""
    jokers = list(jokers_at)
    return " ".join("[" + _format_cards(meld, jokers, symbols) + "]" for meld in melds)


def format_table(counts: list[int], jokers_at: list[int], symbols: bool = False) -> str:
    """The table's identities in id order, jokers written ``JK(=identity)``."""
    return _format_cards(M.cards_of(counts), list(jokers_at), symbols)


def _format_cards(cards: Any, jokers: list[int], symbols: bool) -> str:
    """Cards as text; ``jokers`` (counts per identity, used up as they are written) says
    which of them are jokers."""
    out = []
    for card in cards:
        text = C.format_card(card, symbols)
        if jokers[card]:
            jokers[card] -= 1
            text = f"JK(={text})"
        out.append(text)
    return " ".join(out)
