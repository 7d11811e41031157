"""``rummy play``: whole games typed by a scripted human, wrong input, help, quitting,
options, and that the human's screen never shows the opponent's hidden cards."""

from __future__ import annotations

import io
import random
import re
from collections.abc import Callable

import pytest

from agents import RandomAgent
from rummy_envs import cards as C
from rummy_envs.games import gin_rummy as G
from training import play

CARD_TOKEN = re.compile(r"\b[A2-9TJQK][CDHS]\b", re.IGNORECASE)
HINT = "type help for the legal moves"
MAX_PROMPTS = 2000  # a scripted human gives up (fails the test) rather than loop for ever


def legal_moves(text: str) -> list[str]:
    """The moves of the last ``legal moves:`` line printed."""
    line = [line for line in text.splitlines() if line.startswith("legal moves: ")][-1]
    return line.removeprefix("legal moves: ").split(", ")


class ScriptedHuman:
    """An ``input_fn`` that types ``help``, then one of the moves it lists (knocks first)."""

    def __init__(self, out: io.StringIO, seed: int = 0,
                 on_prompt: Callable[[str], None] | None = None,
                 on_help: Callable[[list[str]], None] | None = None) -> None:
        self.out, self.rng = out, random.Random(seed)
        self.on_prompt, self.on_help = on_prompt, on_help
        self.asked_help = False
        self.prompts = 0

    def __call__(self, prompt: str) -> str:
        self.prompts += 1
        assert self.prompts < MAX_PROMPTS, "the game keeps asking"
        if self.on_prompt:
            self.on_prompt(self.out.getvalue())
        if not self.asked_help:
            self.asked_help = True
            return "help"
        self.asked_help = False
        moves = legal_moves(self.out.getvalue())
        if self.on_help:
            self.on_help(moves)
        knocks = [m for m in moves if m.startswith(("gin", "knock"))]
        return self.rng.choice(knocks or moves)


@pytest.fixture
def envs(monkeypatch) -> list:
    """Every env ``play.main`` builds, so a test can look at the game behind the screen."""
    made = []
    real = play.make_env

    def make(game, options):
        made.append(real(game, options))
        return made[-1]

    monkeypatch.setattr(play, "make_env", make)
    return made


def run(argv: list[str], input_fn: Callable[[str], str] | None = None, seed: int = 0, **hooks) -> tuple[int, str]:
    out = io.StringIO()
    code = play.main(argv, input_fn=input_fn or ScriptedHuman(out, seed, **hooks), out=out)
    return code, out.getvalue()


def hidden_cards(env, human: int) -> set[str]:
    """The opponent's cards the human may not see now: its hand less known and shown cards."""
    game, view = env.unwrapped.game, env.unwrapped.player_view(f"player_{human}")
    shown = set(view.opponent_known) | set(view.knocker_deadwood) | {c for m in view.knocker_melds for c in m}
    return {C.format_card(c) for c in C.from_mask(game.hands[1 - human]) if c not in shown}


def shown_cards(text: str) -> set[str]:
    return {t.upper() for t in CARD_TOKEN.findall(text)}


# -- whole games -------------------------------------------------------------------------------
@pytest.mark.parametrize("game, seat", [("gin_rummy", 0), ("hollywood_gin", 1)])
def test_a_scripted_hand_plays_to_the_end(envs, game, seat):
    code, text = run([game, "--opponent", "random", "--seat", str(seat), "--seed", "5", "--option", "knock_limit=30"])
    assert code == 0
    env = envs[0]
    assert env.unwrapped.game.is_terminal() and any(env.unwrapped.game.scores()), "a scored hand"
    opponent = f"player_{1 - seat}"
    assert re.search(rf"^{opponent} \(random\): [A-Z_]+", text, re.MULTILINE), "the opponent's moves are printed"
    assert "=== hand 1 over" in text and "=== game over ===" in text
    assert env.unwrapped.render() in text, "the full table is shown once the episode is over"
    scores = env.unwrapped.game.scores()
    final = re.search(r"^final scores: player_0 \(\w+\) (-?\d+), player_1 \(\w+\) (-?\d+)", text, re.MULTILINE)
    assert [int(s) for s in final.groups()] == list(scores)
    rewards = re.search(r"^total reward: player_0 \(\w+\) (\S+), player_1 \(\w+\) (\S+)$", text, re.MULTILINE)
    mean = sum(scores) / 2
    assert [float(r) for r in rewards.groups()] == pytest.approx([s - mean for s in scores])


def test_a_match_reports_every_hand_and_the_sheet(envs):
    code, text = run(["hollywood_gin", "--opponent", "novice", "--seed", "2", "--episode", "match",
                      "--option", "knock_limit=30", "--option", "target_score=40"], seed=2)
    game = envs[0].unwrapped.game
    assert code == 0 and game.is_terminal() and len(game.hand_results) > 1
    assert [int(n) for n in re.findall(r"^=== hand (\d+) over", text, re.MULTILINE)] == \
        list(range(1, len(game.hand_results) + 1))
    assert "G1" in text and "columns closed by" in text and "match winner" in text


def test_a_game_without_its_own_screen_gets_the_generic_one(envs, monkeypatch):
    monkeypatch.setattr(play, "SCREENS", {})
    code, text = run(["gin_rummy", "--opponent", "random", "--seed", "1"])
    assert code == 0 and envs[0].unwrapped.game.is_terminal()
    first = text.split("legal moves:")[0]
    assert re.search(r"^hand: ([A2-9TJQK][CDHS] ){9}[A2-9TJQK][CDHS]$", first, re.MULTILINE)
    assert re.search(r"^upcard_passed: \((True|False), (True|False)\)$", first, re.MULTILINE), "bools are no cards"
    assert "legal_actions" not in text and "=== hand over ===" in text and "=== game over ===" in text


# -- typed moves and help ----------------------------------------------------------------------
@pytest.mark.parametrize("game", ["gin_rummy", "hollywood_gin"])
def test_every_action_reads_back_from_its_typed_form(game):
    env = play.make_env(game, {})
    reader = play.MoveReader(env.unwrapped, play.SCREENS[game].aliases)
    assert all(reader.read(reader.typed(a)) == a for a in range(env.unwrapped.num_actions))


def test_moves_are_typed_as_words_and_cards():
    env = play.make_env("gin_rummy", {}).unwrapped
    read = play.MoveReader(env, play.GIN_ALIASES).read
    assert (read("draw"), read("take"), read("pass"), read("done"), read("gin")) == \
        (G.DRAW_STOCK, G.TAKE_DISCARD, G.PASS, G.DONE, G.BIG_GIN)
    assert read("discard 7h") == read("DISCARD(7H)") == env.str_to_action("DISCARD(7H)")
    assert read("Knock KD") == read("knock kd") == env.str_to_action("KNOCK(KD)")
    assert read("discard 10h") == env.str_to_action("DISCARD(TH)")
    assert read("meld 7s 7h 7d") == read("meld 7d 7h 7s") == env.str_to_action("MELD(7S 7H 7D)")
    assert read("layoff 5h 1") == read("layoff 5h,1") == env.str_to_action("LAYOFF(5H,1)")
    with pytest.raises(ValueError, match="unknown move 'fly'"):
        read("fly")
    with pytest.raises(ValueError, match="cannot parse card 'ZZ'"):
        read("discard zz")
    with pytest.raises(ValueError, match="'knock' is incomplete: say which, as in 'knock ac'"):
        read("knock")
    with pytest.raises(ValueError, match="'layoff' is incomplete: say which, as in 'layoff ac 0'"):
        read("layoff")
    assert read(str(G.KNOCK + 5)) == G.KNOCK + 5 and read(" 0 ") == G.DRAW_STOCK
    with pytest.raises(ValueError, match=r"action id 450 is out of range \(0..449\)"):
        read("450")


def test_help_lists_exactly_the_legal_moves(envs):
    checked = []

    def compare(moves: list[str]) -> None:
        env = envs[0].unwrapped
        reader = play.MoveReader(env, play.GIN_ALIASES)
        mask = env.observe("player_0")["action_mask"]
        assert len(moves) == len(set(moves))
        assert {reader.read(m) for m in moves} == set(mask.nonzero()[0].tolist())
        checked.append(env.game.phase)

    for seed in range(3):
        envs.clear()
        code, _ = run(["gin_rummy", "--opponent", "novice", "--seed", str(seed), "--option", "knock_limit=30",
                       "--option", "knocker_arrangement=explicit", "--option", "layoff_mode=explicit",
                       "--option", "big_gin_bonus=31"], seed=seed, on_help=compare)
        assert code == 0
    assert {G.Phase.DRAW, G.Phase.DISCARD} <= set(checked)
    assert {G.Phase.KNOCKER_MELD, G.Phase.DEFENDER_MELD, G.Phase.LAYOFF} & set(checked), "the showdown moves too"


# -- wrong input, quitting -----------------------------------------------------------------------
def test_wrong_input_gets_a_one_line_hint_and_changes_nothing(envs):
    lines_before: list[int] = []
    states: list[dict] = []
    out = io.StringIO()

    def illegal_discard() -> str:
        env = envs[0].unwrapped
        hand = env.player_view("player_0").hand
        return f"discard {C.format_card(hand[0]).lower()}"  # no discard is legal at the first prompt

    script: list[Callable[[], str] | str] = ["discard zz", "fly", "", "discard", "layoff 5h 7", "DISCARD(7H",
                                             illegal_discard, "help"]
    answers: list[str] = []

    def input_fn(prompt: str) -> str:
        assert len(states) < 20, "asked again after quit"
        text = out.getvalue()
        states.append(envs[0].unwrapped.game.to_dict())
        lines_before.append(text.count("\n"))
        if script:
            item = script.pop(0)
            answers.append(item() if callable(item) else item)
            return answers[-1]
        if len(answers) == 8:
            answers.append(legal_moves(text)[0])  # one legal move, to see that it does get through
            return answers[-1]
        return "quit"

    assert play.main(["gin_rummy", "--opponent", "random", "--seed", "3"], input_fn=input_fn, out=out) == 0
    text = out.getvalue().splitlines()
    hints = [text[n] for n in lines_before[:7]]  # the first line after each wrong input
    assert all(HINT in hint for hint in hints), hints
    assert [n - m for m, n in zip(lines_before, lines_before[1:8])] == [1] * 7, "one line per wrong input"
    assert "cannot parse card 'ZZ'" in hints[0] and "unknown move 'fly'" in hints[1]
    assert "is not legal now" in hints[6] and "DISCARD(" in hints[6]
    assert all(state == states[0] for state in states[:9]), "wrong input and help never change the game"
    assert states[9]["history"] != states[0]["history"], "the legal move after them is played"
    assert not envs[0].unwrapped.game.is_terminal()


@pytest.mark.parametrize("answer", ["quit", "q", EOFError])
def test_quit_and_end_of_input_stop_cleanly(envs, answer):
    prompts = []

    def input_fn(prompt: str) -> str:
        prompts.append(prompt)
        assert len(prompts) == 1, "asked again after quit"
        if answer is EOFError:
            raise EOFError
        return answer

    code, text = run(["gin_rummy", "--opponent", "random", "--seed", "1"], input_fn=input_fn)
    assert code == 0
    assert "quit" in text.splitlines()[-1] and "game over" not in text
    assert not envs[0].unwrapped.game.is_terminal()


# -- options -------------------------------------------------------------------------------------
@pytest.mark.parametrize("option, named", [("knock_limit=abc", "knock_limit"), ("bogus=1", "bogus"),
                                           ("variant=texas", "variant"), ("big_gin_bonus=-1", "big_gin_bonus")])
def test_a_bad_option_fails_naming_the_key(capsys, option, named):
    def input_fn(prompt: str) -> str:
        raise AssertionError("no game may start with a bad option")

    assert play.main(["gin_rummy", "--option", option], input_fn=input_fn, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("rummy play: error:") and named in err


@pytest.mark.parametrize("argv, named", [(["--opponent", "nobody"], "nobody"), (["--seat", "2"], "--seat 2")])
def test_a_bad_opponent_or_seat_fails(capsys, argv, named):
    assert play.main(["gin_rummy", *argv], input_fn=lambda p: "quit", out=io.StringIO()) == 2
    assert named in capsys.readouterr().err


def test_your_own_agent_as_the_opponent():
    """``--opponent module:Class`` plays a user's agent: the game runs until the human quits."""
    out = io.StringIO()
    moves = iter(["draw", "quit"])
    assert play.main(["gin_rummy", "--opponent", "my_agents:LowestLegal", "--seed", "4", "--seat", "1"],
                     input_fn=lambda prompt: next(moves), out=out) == 0
    assert "quit: the game is abandoned" in out.getvalue()


def test_an_option_without_a_value_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        play.main(["gin_rummy", "--option", "knock_limit"], input_fn=lambda p: "quit", out=io.StringIO())
    assert exit_info.value.code == 2 and "key=value" in capsys.readouterr().err


def test_option_values_are_typed(envs):
    assert [play.parse_value(v) for v in ("3", "-2", "1.5", "true", "False", "None", "null", "oklahoma")] == \
        [3, -2, 1.5, True, False, None, None, "oklahoma"]
    code, _ = run(["gin_rummy", "--episode", "match", "--option", "variant=oklahoma", "--option", "big_gin_bonus=31",
                   "--option", "undercut_on_tie=false", "--option", "target_score=50"], input_fn=lambda p: "quit")
    config = envs[0].unwrapped.config
    assert code == 0
    assert (config.episode, config.variant, config.big_gin_bonus, config.undercut_on_tie, config.target_score) == \
        ("match", "oklahoma", 31, False, 50)


@pytest.mark.parametrize("known, chosen", [(["heuristic", "novice", "random"], "heuristic"),
                                           (["novice", "random"], "novice"), (["random"], "random")])
def test_the_default_opponent_is_the_best_registered(monkeypatch, known, chosen):
    built = []
    monkeypatch.setattr(play, "registered_agents", lambda game: known)
    monkeypatch.setattr(play, "make_agent", lambda name, game, seed: built.append(name) or RandomAgent(game, seed))
    code, _ = run(["gin_rummy", "--seed", "1"], input_fn=lambda p: "quit")
    assert code == 0 and built == [chosen]


# -- hidden cards ----------------------------------------------------------------------------------
def test_the_screen_never_shows_the_opponents_hidden_cards(envs):
    seen = {"a secret knock card": 0, "the opponent's melds or layoffs against my knock": 0}
    for seed in range(40):  # until both situations have come up
        if all(seen.values()):
            break
        envs.clear()
        human = seed % 2

        def check(text: str) -> None:
            leaked = shown_cards(text) & hidden_cards(envs[0], human)
            assert not leaked, f"seed {seed}: the screen shows hidden cards {leaked}"

        code, text = run(["gin_rummy", "--opponent", "novice", "--seed", str(seed), "--seat", str(human),
                          "--option", "knock_limit=20", "--option", "knocker_arrangement=explicit",
                          "--option", "layoff_mode=explicit"], seed=seed, on_prompt=check)
        assert code == 0
        game = envs[0].unwrapped.game
        during_hand = text.split("=== hand 1 over")[0]
        if game.knocker == 1 - human:  # the knocker's hand is face up, the card it knocked with is not
            public = {c for pair in envs[0].unwrapped.player_view(f"player_{human}").discarded for c in pair}
            if game.knock_card not in public | {game.upcard}:
                assert C.format_card(game.knock_card) not in shown_cards(text)
                seen["a secret knock card"] += 1
        else:
            check(during_hand)  # the defender's hand, melds and layoffs stay hidden until the hand ends
            seen["the opponent's melds or layoffs against my knock"] += game.knocker == human and bool(
                game.defender_melds or game.layoffs)
    assert all(seen.values()), seen


def test_a_person_plays_a_search_agent_with_its_budget(envs):
    code, text = run(["gin_rummy", "--opponent", "ismcts:iterations=4", "--seat", "0", "--seed", "2",
                      "--option", "knock_limit=30"])
    assert code == 0 and envs[0].unwrapped.game.is_terminal()
    assert re.search(r"^player_1 \(ismcts\): [A-Z_]+", text, re.MULTILINE)
