"""``rummy play GAME --opponent NAME``: a person plays an agent in the terminal.

The env's own render shows every hand, so during play the human's screen is drawn from
``player_view`` (what that seat may see) by a per-game ``GameScreen``, with a generic
fallback for games that have none; the full ``env.render()`` appears once the episode is
over. Moves are typed as a word and its arguments (``discard 7h``, ``meld 7s 7h 7d``,
``layoff 5h 1``, ``draw``) and mapped onto the env's ``str_to_action`` names
(``DISCARD(7H)``, ``MELD(7S 7H 7D)``, ``LAYOFF(5H,1)``, ``DRAW_STOCK``); a game's aliases
supply the short words. Wrong input gets a one-line hint and never reaches the env.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import rummy_envs
from agents import Agent, make_agent, registered_agents
from agents.gin_rummy import remaining_mask
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import INFO_KEYS
from rummy_envs.games.gin_rummy import GinView
from rummy_envs.view_text import cards_text, field_text, view_fields

PREFERRED_OPPONENTS = ("heuristic", "novice", "random")
HELP_WORDS = ("help", "h", "?")
QUIT_WORDS = ("quit", "q", "exit")
HINT_TAIL = "type help for the legal moves"


# -- typed moves -------------------------------------------------------------------------------
class MoveReader:
    """Translates typed moves to action ids and back, over one env's action names.

    ``word arg arg`` becomes ``NAME(arg arg)``, or ``NAME(arg,arg)`` where the env's names
    for ``NAME`` separate their arguments by commas; ``NAME`` is the alias of ``word`` or
    the word upper-cased. A move typed in the env's own form (``DISCARD(7H)``) passes through.
    """

    def __init__(self, env: Any, aliases: dict[str, str]) -> None:
        self.env = env
        self.aliases = {word.lower(): name.upper() for word, name in aliases.items()}
        self.words = {name: word for word, name in reversed(list(self.aliases.items()))}  # first alias wins
        self.separators: dict[str, str] = {}  # action name -> separator of its arguments, in id order
        for action in range(env.num_actions):
            head, _, rest = env.action_to_str(action).partition("(")
            self.separators.setdefault(head, "," if "," in rest else " ")
        self.vocabulary = [self.words.get(name, name.lower()) for name in self.separators]

    def typed(self, action: int) -> str:
        """The typed form of an action: ``LAYOFF(5H,1)`` -> ``layoff 5h 1``."""
        head, _, rest = self.env.action_to_str(action).partition("(")
        args = rest.removesuffix(")").replace(",", " ").split()
        return " ".join([self.words.get(head, head.lower()), *args]).lower()

    def read(self, text: str) -> int:
        """The action id typed as ``text`` (a move, or its action id as a number); ValueError
        saying why it cannot be read, and what a move typed without its arguments needs."""
        text = text.strip()
        if text.isdigit():
            action = int(text)
            if action >= self.env.num_actions:
                raise ValueError(f"action id {action} is out of range (0..{self.env.num_actions - 1})")
            return action
        if "(" in text:
            return self.env.str_to_action(text)
        word, *args = text.split()
        name = self.aliases.get(word.lower(), word.upper())
        try:
            return self.env.str_to_action(f"{name}({self.separators.get(name, ' ').join(args)})" if args else name)
        except ValueError as exc:
            if name not in self.separators:
                raise ValueError(f"unknown move {word!r} (moves: {', '.join(self.vocabulary)})") from None
            if not args and self.takes_arguments(name):
                raise ValueError(f"{word.lower()!r} is incomplete: say which, as in {self.example_of(name)!r}") from None
            raise ValueError(f"cannot read {text!r}: {exc}") from None

    def takes_arguments(self, name: str) -> bool:
        """Does the action ``name`` come with arguments (a card, cards, a slot)?"""
        return any(self.env.action_to_str(a).startswith(name + "(") for a in range(self.env.num_actions))

    def example_of(self, name: str) -> str:
        """The typed form of the first action named ``name`` (``knock ac``)."""
        return self.typed(next(a for a in range(self.env.num_actions) if self.env.action_to_str(a).startswith(name + "(")))


# -- screens -----------------------------------------------------------------------------------
def _cards(cards: Sequence[int]) -> str:
    return cards_text(cards)


def _melds(melds: Sequence[Sequence[int]]) -> str:
    return "  ".join(f"[{slot}] {_cards(m)}" for slot, m in enumerate(melds)) or "-"


# Info keys not shown with each hand: the end-of-game ones and the batchable INFO_KEYS (which
# repeat the hand result's points and the scores).
_END_KEYS = ("hand_result", "final_scores", *INFO_KEYS)


def generic_table(view: Any, seats: list[str]) -> str:
    """Every public field of a player view (a frozen dataclass), for games without a screen."""
    lines = [f"--- you are {seats[0]}; others: {', '.join(seats[1:])} ---"]
    lines += [f"{name}: {text}" for name, text in view_fields(view)]
    return "\n".join(lines)


def generic_hand_result(info: dict[str, Any], seats: list[str]) -> str:
    """A finished hand's info entries (the hand result's, then any other), one per line."""
    items = [*info.get("hand_result", {}).items(), *((k, v) for k, v in info.items() if k not in _END_KEYS)]
    return "\n".join(["=== hand over ===", *(f"  {key}: {field_text(key, value)}" for key, value in items if key != "seat")])


def plain_move(name: str, mine: bool, before: Any, after: Any) -> str:
    """Moves of games without hidden moves are shown as the env names them."""
    return name


@dataclass(frozen=True)
class GameScreen:
    """What the human sees of one game, all from their own player view.

    ``table(view, seats)``: the table before the human's move, ``seats`` relative (the
    human first); ``hand_result(info, seats)``: the human's info at a hand's end, ``seats``
    absolute; ``move(name, mine, before, after)``: how a move reads, given the human's
    views around it (it must hide what the human may not see); ``aliases``: typed word ->
    action name.
    """

    aliases: dict[str, str] = field(default_factory=dict)
    table: Callable[[Any, list[str]], str] = generic_table
    hand_result: Callable[[dict[str, Any], list[str]], str] = generic_hand_result
    move: Callable[[str, bool, Any, Any], str] = plain_move


# -- the gin games -----------------------------------------------------------------------------
def gin_table(view: GinView, seats: list[str]) -> str:
    """The gin table from one player's view: the opponent's hidden cards are only counted."""
    me, opp = seats
    doubled = "  (doubled)" if view.multiplier == 2 else ""
    lines = [f"--- phase {view.phase.name}  knock limit {view.knock_limit}{doubled}  stock {view.stock_size} ---"]
    dealer = (", dealer", "") if view.is_dealer else ("", ", dealer")
    lines.append(f"{opp}{dealer[1]}: {view.opponent_hand_size} cards, known: {_cards(view.opponent_known)};"
                 f" discarded: {_cards(view.discarded[1])}")
    top = "-" if view.top_discard is None else C.format_card(view.top_discard)
    lines.append(f"discard pile: {_cards(view.discard_pile)}  (top {top})")
    if view.knocker is not None:
        lines.append(f"knocked: {(me, opp)[view.knocker]}; knocker's melds: {_melds(view.knocker_melds)};"
                     f" knocker's deadwood: {_cards(view.knocker_deadwood)}")
        if view.knocker == 1:
            laid = ", ".join(f"{C.format_card(card)} on [{slot}]" for card, slot in view.layoffs) or "-"
            lines.append(f"your melds: {_melds(view.my_melds)}; your layoffs: {laid}")
    hand = C.to_mask(view.hand)
    if view.knocker is not None:
        rest = remaining_mask(view)
        note = f"unmelded: {_cards(C.from_mask(rest))} (deadwood {M.gin_mask_value(rest)})"
    elif len(view.hand) > 10:
        note = f"best discard leaves deadwood {min(M.min_deadwood(hand & ~(1 << c)) for c in view.hand)}"
    else:
        note = f"deadwood {M.min_deadwood(hand)}"
    lines.append(f"{me}{dealer[0]}: {_cards(view.hand)}  [{note}]")
    if view.taken_card is not None:
        lines.append(f"you took {C.format_card(view.taken_card)} this turn")
    lines.append(f"your discards: {_cards(view.discarded[0])}")
    if any(view.scores) or any(view.hands_won):
        lines.append(f"scores: {me} {view.scores[0]}, {opp} {view.scores[1]};"
                     f" hands won: {view.hands_won[0]}-{view.hands_won[1]}")
    return "\n".join(lines)


def gin_move(name: str, mine: bool, before: GinView, after: GinView) -> str:
    """A gin move as the human may see it: the opponent's knock card is face down, and a
    defender's melds and layoffs stay hidden from the knocker until the hand ends."""
    if mine:
        drawn = set(after.hand) - set(before.hand)
        return f"{name}, you drew {_cards(sorted(drawn))}" if name == "DRAW_STOCK" else name
    if name.startswith("KNOCK("):
        return "KNOCK (discarding face down)"
    if before.knocker == 0 and name.startswith(("MELD(", "LAYOFF(")):
        return f"{name.partition('(')[0]} (shown when the hand ends)"
    return name


def gin_hand_result(info: dict[str, Any], seats: list[str]) -> str:
    """A finished gin hand: who won what, the showdown, both hands when they were shown."""
    result = info["hand_result"]
    knocker, winner = result["knocker"], result["winner"]
    head = f"=== hand {result['hand_number']} over: {result['kind']}"
    if knocker >= 0:
        head += f", knocked by {seats[knocker]}"
    head += f"; {seats[winner]} scores {result['points'][winner]}" if winner >= 0 else "; nobody scores"
    lines = [head + " ==="]
    if knocker >= 0:
        deadwood = ", ".join(f"{seats[p]} {result['deadwood'][p]}" for p in (knocker, 1 - knocker))
        laid = ", ".join(f"{C.format_card(card)} on [{slot}]" for card, slot in result["layoffs"]) or "-"
        lines += [
            f"  deadwood: {deadwood}",
            f"  knocker's melds: {_melds(result['knocker_melds'])}",
            f"  defender's melds: {_melds(result['defender_melds'])}; layoffs: {laid}",
        ]
    lines += [f"  {seats[seat]}: {_cards(hand)}" for seat, hand in enumerate(result["hands"])]
    return "\n".join(lines)


def hollywood_hand_result(info: dict[str, Any], seats: list[str]) -> str:
    """A finished Hollywood hand: the gin result, the scoresheet once a column is entered,
    and the match winner once there is one."""
    sheet = info["sheet"]
    lines = [gin_hand_result(info, seats)]
    if any(map(any, sheet["entered"])):
        width = max(map(len, seats))
        lines.append(f"  {'sheet':<{width}} " + " ".join(f"{f'G{c + 1}':>5} " for c in range(3)) + "  (* entered)")
        for seat, label in enumerate(seats):
            cells = " ".join(f"{score:>5}{'*' if entered else ' '}"
                             for score, entered in zip(sheet["score"][seat], sheet["entered"][seat]))
            lines.append(f"  {label:<{width}} {cells}")
        closed = " ".join(f"G{c + 1}: {'-' if w < 0 else seats[w]}" for c, w in enumerate(sheet["closed_by"]))
        lines.append(f"  columns closed by: {closed}")
    if info["match_winner"] is not None:
        lines.append(f"  match winner: {'none (a tie)' if info['match_winner'] < 0 else seats[info['match_winner']]}")
    return "\n".join(lines)


GIN_ALIASES = {"draw": "DRAW_STOCK", "take": "TAKE_DISCARD", "gin": "BIG_GIN"}
SCREENS: dict[str, GameScreen] = {
    "gin_rummy": GameScreen(GIN_ALIASES, gin_table, gin_hand_result, gin_move),
    "hollywood_gin": GameScreen(GIN_ALIASES, gin_table, hollywood_hand_result, gin_move),
}
"""Screens by game name; a game missing here gets ``GameScreen()`` (the generic one)."""


# -- the session -------------------------------------------------------------------------------
class Quit(Exception):
    """The human asked to stop (``quit``, end of input or Ctrl-C)."""


class Session:
    """One game between the human at seat ``human`` and agents at the other seats."""

    def __init__(self, env: Any, human: str, agents: dict[str, Agent], screen: GameScreen,
                 input_fn: Callable[[str], str], out: TextIO) -> None:
        self.env, self.raw = env, env.unwrapped
        self.human, self.agents, self.screen = human, agents, screen
        self.input_fn, self.out = input_fn, out
        self.reader = MoveReader(self.raw, screen.aliases)
        seats = self.raw.possible_agents
        self.labels = [f"{a} (you)" if a == human else f"{a} ({agents[a].name})" for a in seats]
        me = seats.index(human)
        self.relative = self.labels[me:] + self.labels[:me]

    def say(self, text: str) -> None:
        print(text, file=self.out)

    def run(self, seed: int | None) -> None:
        """Play the episode to its end, or until the human quits."""
        self.env.reset(seed=seed)
        for agent in self.agents.values():
            agent.reset()
        self.say(f"{self.raw.metadata['name']}: you are {self.human}, playing {', '.join(self.relative[1:])}; "
                 "type a move, help for the legal moves, quit to stop.")
        totals = dict.fromkeys(self.raw.possible_agents, 0.0)
        final: dict[str, dict[str, Any]] = {}
        hands_done = len(self.raw.game.hand_results)
        try:
            for agent in self.env.agent_iter():
                obs, reward, terminated, truncated, info = self.env.last()
                totals[agent] += reward
                if terminated or truncated:
                    final[agent] = info
                    self.env.step(None)
                    continue
                before = self.raw.player_view(self.human)
                if agent == self.human:
                    action = self.ask(obs["action_mask"], before)
                else:
                    action = self.agents[agent].act(obs["observation"], obs["action_mask"], self.raw.player_view(agent))
                name = self.raw.action_to_str(action)
                self.env.step(action)
                mine = agent == self.human
                label = self.labels[self.raw.possible_agents.index(agent)]
                self.say(f"{label}: {self.screen.move(name, mine, before, self.raw.player_view(self.human))}")
                if len(self.raw.game.hand_results) > hands_done:
                    hands_done = len(self.raw.game.hand_results)
                    self.say(self.screen.hand_result(self.raw.infos[self.human], self.labels))
        except Quit:
            self.say("quit: the game is abandoned")
            return
        self.finish(final[self.human], totals)

    def ask(self, mask: Any, view: Any) -> int:
        """The human's next legal move; wrong input gets a one-line hint and is asked again."""
        self.say(self.screen.table(view, self.relative))
        legal = [int(a) for a in mask.nonzero()[0]]
        typed = [self.reader.typed(a) for a in legal]
        while True:
            try:
                text = self.input_fn(f"your move (e.g. {typed[0]})> ").strip()
            except (EOFError, KeyboardInterrupt):
                raise Quit from None
            if text.lower() in QUIT_WORDS:
                raise Quit
            if text.lower() in HELP_WORDS:
                self.say("legal moves: " + ", ".join(typed))
                continue
            if not text:
                self.say(f"type a move, e.g. {typed[0]}; {HINT_TAIL}")
                continue
            try:
                action = self.reader.read(text)
            except ValueError as exc:
                self.hint(str(exc), text, typed)
                continue
            if action in legal:
                return action
            why = f"{self.raw.action_to_str(action)} is not legal now (phase {self.raw.game.phase.name})"
            self.hint(why, text, typed)

    def hint(self, why: str, text: str, typed: list[str]) -> None:
        """One line: why the input was refused, a legal move of the same word if any, and help."""
        word = text.split()[0].lower()
        like = next((move for move in typed if move.split()[0] == word), None)
        self.say(f"{why}; {f'try e.g. {like!r}; ' if like else ''}{HINT_TAIL}")

    def finish(self, info: dict[str, Any], totals: dict[str, float]) -> None:
        """The whole table (nothing is hidden any more), final scores and total rewards."""
        self.say("=== game over ===")
        self.say(self.raw.render())
        scores = ", ".join(f"{label} {score}" for label, score in zip(self.labels, info["final_scores"]))
        self.say(f"final scores: {scores}{' (truncated)' if info.get('truncated') else ''}")
        self.say("total reward: " + ", ".join(f"{label} {totals[a]:+g}"
                                              for label, a in zip(self.labels, self.raw.possible_agents)))


# -- command line ------------------------------------------------------------------------------
def parse_value(text: str) -> Any:
    """An option value: int, float, bool (true/false), None (none/null), else the string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` from ``--option``."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), parse_value(value)


def default_opponent(game: str) -> str:
    """The strongest registered agent of ``game`` among heuristic, novice and random."""
    known = registered_agents(game)
    return next(name for name in PREFERRED_OPPONENTS if name in known)


def make_env(game: str, options: dict[str, Any]) -> Any:
    """The game's env with the rules options; ansi rendering for the end of the game and
    the rich infos (each hand's result) for the hand summaries."""
    return rummy_envs.ENVS[game].env(**{**options, "render_mode": "ansi", "rich_info": True})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rummy play", description="Play a rummy game against an agent in the terminal.",
        epilog="Moves: a word and its cards, e.g. 'draw', 'take', 'discard 7h', 'knock kd', "
               "'meld 7s 7h 7d', 'layoff 5h 1', 'gin'; 'help' lists the legal moves, 'quit' stops.")
    parser.add_argument("game", choices=sorted(rummy_envs.ENVS), help="the game to play")
    parser.add_argument("--opponent", help="agent name (default: the best of heuristic, novice, random for the game)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 or 1 (default 0)")
    parser.add_argument("--seed", type=int, help="seed of the deal and the agents (default: random)")
    parser.add_argument("--episode", choices=("hand", "match"), help="one hand or a whole match (default: the game's)")
    parser.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE",
                        help="rules option, repeatable (values: int, float, true/false, none or text)")
    return parser


def main(argv: list[str] | None = None, input_fn: Callable[[str], str] = input, out: TextIO = sys.stdout) -> int:
    """Run ``rummy play``; 0 when the game ends or the human quits, 2 on bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    options = dict(args.option)
    if args.episode:
        options["episode"] = args.episode
    try:
        env = make_env(args.game, options)
        seats = env.possible_agents
        if not 0 <= args.seat < len(seats):
            raise ValueError(f"--seat {args.seat} is invalid; {args.game} has seats 0..{len(seats) - 1}")
        opponent = args.opponent or default_opponent(args.game)
        agents = {a: make_agent(opponent, args.game, None if args.seed is None else args.seed + i)
                  for i, a in enumerate(seats) if i != args.seat}
    except ValueError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    session = Session(env, seats[args.seat], agents, SCREENS.get(args.game, GameScreen()), input_fn, out)
    session.run(args.seed)
    return 0
