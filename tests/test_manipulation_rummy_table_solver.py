"""The Manipulation Rummy table solver against an integer-programming oracle, and against
the plain statement of the rules it answers fast (``commit``: ``table_is_legal``,
``commit_is_legal``, ``options_by_search``; hypothesis over small tables and commits).

Random tables are built from random legal melds (1 and 2 decks), some of their cards
turned into jokers, with random hands and random moves already made, so the cases reach
freed jokers waiting, hand jokers, replacements and tables that are briefly illegal.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_envs import cards as C
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games.manipulation_rummy import commit as plain
from rummy_envs.games.manipulation_rummy import solver_compiled, solver_layers, solver_steps, solver_witness
from rummy_envs.games.manipulation_rummy import table_solver as TS
from tests.manipulation_rummy_table_oracle import candidate_melds, moves, oracle_is_legal, oracle_options

ZERO = (0,) * 52


def counts_of(text: str) -> tuple[int, ...]:
    counts = [0] * 52
    for card in C.parse(text):
        counts[card] += 1
    return tuple(counts)


def problem_of(table: str, hand: str, jokers: str = "", hand_jokers: int = 0, max_copies: int | None = 2) -> TS.CommitProblem:
    """A commit at its start: ``jokers`` lists the identities the table's jokers declare."""
    joker_counts = counts_of(jokers)
    table_counts = tuple(a + b for a, b in zip(counts_of(table), joker_counts))
    return TS.CommitProblem(
        table=table_counts,
        jokers_at=joker_counts,
        spare_naturals=counts_of(table),
        hand=counts_of(hand),
        hand_jokers=hand_jokers,
        free_jokers=0,
        need_hand_card=True,
        max_copies=max_copies,
    )


def is_legal_meld(meld: tuple[int, ...]) -> bool:
    """A group or sequence, checked directly from the rules."""
    ranks = [card % 13 for card in meld]
    suits = [card // 13 for card in meld]
    if len(meld) in (3, 4) and len(set(ranks)) == 1 and len(set(suits)) == len(meld):
        return True
    if len(meld) < 3 or len(set(suits)) != 1:
        return False
    positions = ranks[:-1] + [13 if ranks[-1] == 0 and len(meld) > 1 and ranks[-2] == 12 else ranks[-1]]
    return positions == list(range(positions[0], positions[0] + len(meld))) and len(meld) <= 13


def random_case(rng: random.Random) -> TS.CommitProblem:
    """A random commit in progress, with the copy limit of the deck count."""
    num_decks = rng.choice((1, 2))
    num_jokers = rng.choice((0, 1, 2)) if num_decks == 2 else rng.choice((0, 1))
    max_copies = num_decks if rng.random() < 0.85 else None
    stock = Counter({card: num_decks for card in range(52)})
    table: Counter = Counter()
    for meld in rng.sample(candidate_melds(), rng.randrange(0, 7)):
        if all(stock[card] >= 1 for card in meld) and len(meld) <= 7:
            stock.subtract(meld)
            table.update(meld)
    jokers_at: Counter = Counter()
    table_cards = list(table.elements())
    for _ in range(num_jokers):
        if table_cards and rng.random() < 0.6:
            card = table_cards.pop(rng.randrange(len(table_cards)))
            jokers_at[card] += 1
            stock[card] += 1
    naturals = table - jokers_at
    spare = Counter(naturals)
    hand = Counter(rng.sample(list(stock.elements()), rng.randrange(1, 12)))
    hand_jokers = num_jokers - sum(jokers_at.values()) if rng.random() < 0.7 else 0
    problem = TS.CommitProblem(
        table=tuple(table[c] for c in range(52)),
        jokers_at=tuple(jokers_at[c] for c in range(52)),
        spare_naturals=tuple(spare[c] for c in range(52)),
        hand=tuple(hand[c] for c in range(52)),
        hand_jokers=hand_jokers,
        free_jokers=0,
        need_hand_card=True,
        max_copies=max_copies,
    )
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        options = [nxt for kind in moves(problem).values() for nxt in kind.values()]
        if options:
            problem = rng.choice(options)
    return problem


def check_arrangement(counts: tuple[int, ...], max_copies: int | None) -> None:
    melds = TS.arrange(counts, max_copies)
    if not TS.is_legal(counts, max_copies):
        assert melds is None
        return
    assert melds is not None
    assert all(is_legal_meld(meld) for meld in melds), [C.format(m) for m in melds]
    assert Counter(card for meld in melds for card in meld) == Counter({c: n for c, n in enumerate(counts) if n})


def test_spec_tables():
    """Spec section 3 and scenario M2(d): groups, sequences, the ace, no wrap, no twins."""
    assert TS.is_legal(counts_of("QH KH AH"), 1)
    assert TS.is_legal(counts_of("AH 2H 3H"), 1)
    assert not TS.is_legal(counts_of("KH AH 2H"), 2)
    assert not TS.is_legal(counts_of("8S 8S 8H"), 2)
    assert TS.is_legal(counts_of("8S 8H 8D 8S 8H 8C"), 2)
    assert not TS.is_legal(counts_of("8S 8H 8D 8S 8H 8C"), 1)
    assert not TS.is_legal(counts_of("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC AC"), 2)
    assert TS.is_legal(counts_of("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"), 2)
    assert not TS.is_legal(counts_of("4S 5S 7S"), 2)
    assert TS.is_legal(ZERO, 1)


def test_arrangement_of_full_suit_is_two_sequences():
    melds = TS.arrange(counts_of("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"), 2)
    assert melds is not None and len(melds) == 2 and all(is_legal_meld(m) for m in melds)


def test_m1_rearrangement_makes_room():
    """M1: 6C leaves the run 3C-6C to group with 6H 6D; KS can never go down."""
    options = TS.commit_options(problem_of("3C 4C 5C 6C 9S 9H 9D", "6H 6D KS"))
    assert options.feasible and not options.commit
    assert options.place == C.to_mask(C.parse("6H 6D"))
    after = counts_of("3C 4C 5C 6C 6H 6D 9S 9H 9D")
    assert TS.is_legal(after, 2)
    assert sorted(C.format(m) for m in TS.arrange(after, 2)) == ["3C 4C 5C", "6C 6D 6H", "9D 9H 9S"]


def test_m2_taking_the_middle_of_a_run_is_illegal():
    """M2(a): 6S cannot leave 4S-7S for 6H 6D: nothing can go down."""
    options = TS.commit_options(problem_of("4S 5S 6S 7S", "6H 6D"))
    assert options == TS.NOTHING
    assert not TS.is_legal(counts_of("4S 5S 6S 7S 6H 6D"), 2)


def test_m3_joker_replacement_from_the_hand():
    """M3: 8D replaces JK(=8D), which then becomes 7S with 5S 6S."""
    problem = problem_of("7D 9D", "8D 5S 6S QC", jokers="8D")
    options = TS.commit_options(problem)
    eight, five, six, queen = C.parse("8D 5S 6S QC")
    assert options.replace_from_hand == 1 << eight
    assert options.place == C.to_mask([eight, five, six])
    assert options.replace_from_table == 0
    freed = moves(problem)["replace_from_hand"][eight]
    after = TS.commit_options(freed)
    assert not after.commit  # the freed joker must be placed first
    seven = C.parse("7S")[0]
    assert after.freed_as >> seven & 1
    placed_five = TS.commit_options(moves(freed)["place"][five])
    assert placed_five.freed_as >> seven & 1
    done = moves(moves(moves(freed)["place"][five])["place"][six])["freed_as"][seven]
    assert TS.commit_options(done).commit
    # re-declaring the joker while 8D stays in the hand is impossible: no natural 8D on the table
    assert not TS.commit_options(replace(problem, hand=counts_of("5S 6S QC"))).replace_from_table


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="52"):
        TS.is_legal([0] * 51)
    problem = problem_of("7D 9D", "8D")
    with pytest.raises(ValueError, match="jokers_at"):
        TS.commit_options(replace(problem, jokers_at=counts_of("KS")))
    with pytest.raises(ValueError, match="CommitProblem.hand must hold 52"):
        TS.commit_options(replace(problem, hand=problem.hand[:51]))
    with pytest.raises(ValueError, match="CommitProblem.spare_naturals must hold 52 counts >= 0"):
        TS.commit_options(replace(problem, spare_naturals=(-1,) + problem.spare_naturals[1:]))
    with pytest.raises(ValueError, match="hand_jokers and free_jokers"):
        TS.commit_options(replace(problem, free_jokers=-1))
    assert TS.commit_options(problem).place == 1 << C.parse("8D")[0] and TS.commit_options(problem).commit is False


def test_is_legal_agrees_with_integer_program_on_random_multisets():
    rng = random.Random(7)
    for _ in range(60):
        size = rng.randrange(3, 16)
        max_copies = rng.choice((1, 2))
        counts = [0] * 52
        base = rng.randrange(52)
        for _ in range(size):  # clustered, so that many are legal
            card = (base + rng.choice((-14, -13, -12, -1, 0, 1, 2, 13, 26))) % 52
            counts[card] = min(max_copies, counts[card] + 1)
        counts = tuple(counts)
        assert TS.is_legal(counts, max_copies) == oracle_is_legal(counts, max_copies), C.format([c for c, n in enumerate(counts) for _ in range(n)])
        check_arrangement(counts, max_copies)


@pytest.mark.parametrize("seed", range(100))
def test_commit_options_agree_with_oracle(seed):
    problem = random_case(random.Random(seed))
    assert TS.commit_options(problem) == oracle_options(problem)
    check_arrangement(problem.table, problem.max_copies)


@pytest.mark.parametrize("seed", range(60))
def test_array_layers_agree_with_oracle(seed, monkeypatch):
    """The same answers when every layer after the ace-low steps runs as numpy arrays (the
    solver keeps small layers in dicts, so the default cases rarely reach the arrays)."""
    monkeypatch.setattr(solver_layers, "_VECTOR_FROM", 0)
    problem = random_case(random.Random(seed))
    assert solver_layers._Commit(problem).solve() == oracle_options(problem)
    assert solver_layers._legal.__wrapped__(problem.table) == oracle_is_legal(problem.table, None)


def test_arrange_without_a_copy_limit_deals_groups_of_distinct_suits():
    """With no copy limit a rank may hold a card four times: its groups number the largest
    copy count (here four), not a quarter of its cards, and each has distinct suits."""
    counts = counts_of("7C 7D 7H 7C 7D 7S 7C 7H 7S 7C 7D 7H")
    melds = TS.arrange(counts, None)
    assert sorted(C.format(m) for m in melds) == ["7C 7D 7H", "7C 7D 7H", "7C 7D 7S", "7C 7H 7S"]


def test_array_layers_keep_sets_held_only_in_a_later_word(monkeypatch):
    """Two decks: a kept-ace vector past the 64th (the club, the heart and both spade aces
    kept for the high ends, 1 + 9 + 2 * 27) lives in the second word of an array layer's
    sets; a state holding only such vectors is alive (the random cases seldom reach one)."""
    monkeypatch.setattr(solver_layers, "_VECTOR_FROM", 0)
    table, hand = Counter(C.parse("QC KC AC QH KH AH QS KS AS QS KS AS")), Counter(C.parse("JS JC"))
    problem = TS.CommitProblem(table=tuple(table[c] for c in range(52)), jokers_at=(0,) * 52,
                               spare_naturals=tuple(table[c] for c in range(52)),
                               hand=tuple(hand[c] for c in range(52)), hand_jokers=0, free_jokers=0,
                               need_hand_card=True, max_copies=2)
    assert solver_layers._Commit(problem).solve() == oracle_options(problem)


@pytest.mark.parametrize("vector_from", [solver_layers._VECTOR_FROM, 0])
def test_king_filters_are_read_from_the_state_entered(vector_from, monkeypatch):
    """The backward pass skips the king step's kept-ace filter: sound only while every
    edge into a state filters alike, the filter read from that state's runs of the suit
    (2+ cards need an ace, 3+ may take one)."""
    monkeypatch.setattr(solver_layers, "_VECTOR_FROM", vector_from)
    codes = Counter()
    for seed in range(150):
        forward = solver_layers._Commit(random_case(random.Random(seed))).forward()
        if forward is None:
            continue
        passes, final = forward
        layers = [layer for layer, _ in passes[1:]] + [final]
        for step, ((_, edges), entered) in enumerate(zip(passes, layers)):
            position, suit, _ = solver_steps._identity(step)
            if position != solver_steps.ACE_HIGH - 1:
                continue
            if isinstance(edges, list):
                pairs = [(nxt, transform) for _, _, nxt, transform, _ in edges]
            else:
                pairs = zip(entered.states[edges.dst].tolist(), edges.transform.tolist())
            for nxt, transform in pairs:
                _, short2, long = solver_steps._unpack_runs(nxt >> solver_steps._RUN_BITS * suit & 0x1FF)
                assert transform == solver_steps._filter_code(suit, short2, short2 + long), (seed, step)
                codes[transform] += 1
    assert len(codes) >= 8 and sum(codes.values()) > 500


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 3100))
def test_commit_options_agree_with_oracle_many(seed):
    problem = random_case(random.Random(seed))
    assert TS.commit_options(problem) == oracle_options(problem)
    check_arrangement(problem.table, problem.max_copies)


def test_after_makes_each_move_as_the_oracle_does():
    """``after`` (for agents planning a commit) agrees with the oracle's own move effects."""
    checked = 0
    for seed in range(150):
        problem = random_case(random.Random(seed))
        for kind, options in moves(problem).items():
            for card, expected in options.items():
                assert TS.after(problem, kind, card) == expected, (seed, kind, card)
                checked += 1
    assert checked > 500
    problem = problem_of("7D 9D", "8D")
    with pytest.raises(ValueError, match="joker_as: no joker"):
        TS.after(problem, "joker_as", 0)
    with pytest.raises(ValueError, match="place 0: nothing there"):
        TS.after(problem, "place", 0)
    with pytest.raises(ValueError, match="unknown move"):
        TS.after(problem, "discard", 0)


# -- the solver against the plain statement of the rules ------------------------------------
@st.composite
def small_melds(draw) -> list[int]:
    """A random group or sequence (an ace high at position 13; one running past it is cut
    short, so not always a meld)."""
    rank = draw(st.integers(0, 12))
    if draw(st.booleans()):
        return [suit * 13 + rank for suit in draw(st.lists(st.integers(0, 3), min_size=3, max_size=4, unique=True))]
    suit = draw(st.integers(0, 3))
    return [suit * 13 + (rank + k) % 13 for k in range(draw(st.integers(3, 5))) if rank + k <= 13]


@st.composite
def small_tables(draw, most_melds: int = 3) -> tuple[tuple[int, ...], int | None]:
    """Identity counts of a few random groups and sequences, give or take a card, with a
    copy limit."""
    counts = [0] * 52
    for _ in range(draw(st.integers(0, most_melds))):
        for card in draw(small_melds()):
            counts[card] += 1
    for card in draw(st.lists(st.integers(0, 51), max_size=2)):
        counts[card] = max(0, counts[card] + draw(st.sampled_from((-1, 1))))
    return tuple(counts), draw(st.sampled_from((1, 2, None)))


@st.composite
def small_commits(draw) -> TS.CommitProblem:
    """A commit on a small table with at most three hand naturals, a meld or cards next to
    a table card (its rank, or its suit one rank off), and one joker (on the table, declared
    as one of its identities, or in the hand), after up to two placements (half of them
    among those the solver offers)."""
    table, max_copies = draw(small_tables(most_melds=2))
    jokers_at = [0] * 52
    on_table = [card for card in range(52) if table[card]]
    joker = draw(st.sampled_from(("none", "table", "hand", "hand")))
    if joker == "table" and on_table:
        jokers_at[draw(st.sampled_from(on_table))] = 1
    near = sorted({n for card in on_table for n in (card - 13, card - 1, card + 1, card + 13) if 0 <= n < 52})
    if draw(st.booleans()):
        hand = Counter(draw(small_melds())[:3])
    else:
        hand = Counter(draw(st.lists(st.sampled_from(near) if near else st.integers(0, 51), max_size=3)))
    problem = TS.CommitProblem(
        table=table, jokers_at=tuple(jokers_at), spare_naturals=tuple(t - j for t, j in zip(table, jokers_at)),
        hand=tuple(hand[card] for card in range(52)), hand_jokers=int(joker == "hand"), free_jokers=0,
        need_hand_card=True, max_copies=max_copies,
    )
    for _ in range(draw(st.integers(0, 2))):  # mostly moves the solver offers, so most cases stay feasible
        possible = list(plain.possible_moves(problem))
        options = TS.commit_options(problem)
        offered = [(move, card) for move, card in possible if getattr(options, move) >> card & 1]
        if possible:
            problem = plain.after(problem, *draw(st.sampled_from(offered if offered and draw(st.booleans()) else possible)))
    return problem


@settings(max_examples=300, deadline=None)
@given(small_tables())
def test_is_legal_is_the_plain_table_rule(case):
    counts, max_copies = case
    assert TS.is_legal(counts, max_copies) == plain.table_is_legal(counts, max_copies)


@settings(max_examples=50, deadline=None, derandomize=True)  # fixed cases: the oracle's brute force
@given(small_commits())                                      # blows up on a rare drawn one (minutes)
def test_commit_options_are_the_plain_commit_and_mask_rules(problem):
    assert TS.commit_options(problem) == plain.options_by_search(problem)


@pytest.mark.parametrize("seed", range(100))
def test_commit_is_the_plain_commit_rule(seed):
    """``CommitOptions.commit`` is ``commit_is_legal`` on the oracle's larger random cases."""
    problem = random_case(random.Random(seed))
    assert TS.commit_options(problem).commit == plain.commit_is_legal(problem)


def test_plain_meld_rule():
    """Groups of 3-4 distinct suits, sequences of 3-13 of one suit with the ace low or high
    (``is_meld`` takes the cards in any order), nothing else."""
    legal = ["8S 8H 8D", "8S 8H 8D 8C", "AH 2H 3H", "QH KH AH", "AH KH QH JH", "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"]
    illegal = ["8S 8H", "8S 8S 8H", "8S 8H 8D 8C 8S", "KH AH 2H", "4S 5S 7S", "4S 5S 6H", "AC 2C 3C AC",
               "AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"]
    assert all(plain.is_meld(C.parse(text)) for text in legal)
    assert not any(plain.is_meld(C.parse(text)) for text in illegal)


# -- the compiled programme against the pure one ----------------------------------------------
def compiled_options(problem: TS.CommitProblem) -> TS.CommitOptions:
    return solver_compiled.commit_options_compiled(problem, solver_compiled.problem_counts(problem))


def along_commits(seeds: range, moves_each: int = 3):
    """Random cases and the commits that follow them by random moves."""
    for seed in seeds:
        rng = random.Random(seed)
        problem = random_case(rng)
        yield problem
        for _ in range(moves_each):
            options = [nxt for kind in moves(problem).values() for nxt in kind.values()]
            if not options:
                break
            problem = rng.choice(options)
            yield problem


@pytest.mark.parametrize("block", range(4))
def test_compiled_programme_answers_as_the_pure_one(block):
    """``solver_compiled`` (what ``commit_options`` and ``is_legal`` run) gives the pure
    solver's answers on random commits (freed jokers, hand jokers, no copy limit)."""
    solved = 0
    for problem in along_commits(range(250 * block, 250 * (block + 1))):
        assert compiled_options(problem) == solver_layers._Commit(problem).solve(), problem
        if max(problem.table) <= solver_compiled.MOST_COPIES:
            assert (solver_compiled.is_legal_compiled.__wrapped__(problem.table)
                    == solver_layers._legal.__wrapped__(problem.table))
        solved += 1
    assert solved > 600


def test_a_hand_joker_fits_only_where_both_jokers_find_room():
    """A freed joker waits beside a hand joker, on one deck's A-Q of hearts: the freed joker
    alone fits as KH, but a hand joker placed as KH would leave the freed one homeless, so
    ``joker_as`` lacks KH (the backward pass for ends that use a hand joker)."""
    table = counts_of("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")
    problem = TS.CommitProblem(table=table, jokers_at=ZERO, spare_naturals=table, hand=ZERO, hand_jokers=1,
                               free_jokers=1, need_hand_card=False, max_copies=1)
    options = TS.commit_options(problem)
    king = 1 << C.parse("KH")[0]
    assert options.freed_as & king and not options.joker_as & king
    assert options == oracle_options(problem) == solver_layers._Commit(problem).solve()


@pytest.mark.parametrize("block", range(3))
def test_compiled_arrangement_path_is_the_pure_one(block):
    """``arrange`` reads its melds off the compiled programme's path: the pure walk's path,
    state for state, on the tables of random commits and clustered random multisets (legal
    and not, one and two decks, no copy limit)."""
    rng = random.Random(block)
    tables = [problem.table for problem in along_commits(range(200 * block, 200 * (block + 1)), moves_each=2)]
    for _ in range(200):
        counts = [0] * 52
        base = rng.randrange(52)
        for _ in range(rng.randrange(3, 30)):
            card = (base + rng.choice((-14, -13, -12, -1, 0, 1, 2, 13, 26))) % 52
            counts[card] = min(rng.choice((1, 2, 3)), counts[card] + 1)
        tables.append(tuple(counts))
    legal = 0
    for table in tables:
        path = solver_compiled.arrangement_path(table)
        assert path == TS._arrangement_path(table), C.format([c for c, n in enumerate(table) for _ in range(n)])
        legal += path is not None
    assert legal > 80 and len(tables) - legal > 80


def test_more_copies_than_the_packed_state_counts_are_refused():
    """No game puts eight cards of one identity on the table, and the packed state counts
    seven: without a copy limit, more is a clear error (and with one, an illegal table)."""
    table = counts_of(" ".join(["7H 8H 9H"] * 8))
    problem = replace(problem_of("", "TH", max_copies=None), table=table, spare_naturals=table)
    with pytest.raises(ValueError, match="at most 7 copies"):
        TS.commit_options(problem)
    with pytest.raises(ValueError, match="at most 7 copies"):
        TS.is_legal(table, None)
    assert not TS.is_legal(table, 2)
    seven = counts_of(" ".join(["7H 8H 9H"] * 7))
    assert TS.is_legal(seven, None) and TS.commit_options(replace(problem, table=seven, spare_naturals=seven)).place


def test_work_arrays_are_kept_within_their_bound(monkeypatch):
    """The work arrays stay allocated between solves, and a solve that grows them past
    ``WORKSPACE_BYTES`` leaves small ones behind (the answers unchanged)."""
    problem = problem_of("7C 8C 9C 7D 8D 9D 7H 8H 9H", "7S 8S 9S TC JC QC", jokers="TD", hand_jokers=1)
    expected = solver_layers._Commit(problem).solve()
    workspace = solver_compiled._commits
    assert compiled_options(problem) == expected
    kept = workspace.arrays[5]
    assert compiled_options(problem) == expected and workspace.arrays[5] is kept
    monkeypatch.setattr(solver_compiled, "WORKSPACE_BYTES", 1 << 10)
    monkeypatch.setattr(solver_compiled, "FIRST_ROWS", 4)
    monkeypatch.setattr(solver_compiled, "_commits", workspace := solver_compiled.Workspace())
    assert compiled_options(problem) == expected
    assert sum(array.nbytes for array in workspace.arrays) <= 1 << 20 and not workspace.arrays[1].any()


def test_a_solve_that_runs_out_of_room_grows_its_arrays_and_goes_on(monkeypatch):
    """Work arrays of a few rows: the solves stop for room again and again (the states,
    edges, hash table, sets and filters all grow) and still answer as the pure programme."""
    monkeypatch.setattr(solver_compiled, "FIRST_ROWS", 4)
    workspace = solver_compiled.Workspace()
    aces_high = problem_of("QC KC AC QH KH AH QS KS AS QS KS AS", "JS JC")  # 81 kept-ace vectors: 3 words
    for problem in [*along_commits(range(30)), aces_high]:
        limit = problem.max_copies if problem.max_copies is not None else 7
        answer = workspace.solve(solver_compiled.problem_counts(problem), problem.hand_jokers, problem.free_jokers,
                                 problem.need_hand_card, limit, True)
        expected = solver_layers._Commit(problem).solve()
        assert answer[0] == expected.feasible and (not answer[0] or answer[1] == expected.place), problem
    assert workspace.arrays[5].shape[0] >= 256 and workspace.arrays[6].shape[1] == 3


def test_a_solve_resumes_the_last_forward_pass_and_answers_as_a_fresh_one():
    """Along random commits each solve starts its forward pass where the data its steps
    read first differ from the last solve's, and answers as a solve from the first step."""
    resumed = []
    fresh = solver_compiled.Workspace()
    for problem in along_commits(range(40), moves_each=5):
        counts = solver_compiled.problem_counts(problem)
        limit = problem.max_copies if problem.max_copies is not None else 7
        args = (counts, problem.hand_jokers, problem.free_jokers, problem.need_hand_card, limit, True)
        answer = solver_compiled._commits.solve(*args)
        fresh.arrays[1][:] = 0  # forget the last solve: start at the first step
        assert answer[:-1] == fresh.solve(*args)[:-1], problem
        assert compiled_options(problem) == solver_layers._Commit(problem).solve()
        resumed.append(answer[-1])
    assert sum(step > 0 for step in resumed) >= 40 and max(resumed) >= 32


def test_a_solve_does_not_resume_across_a_change_of_the_jokers_that_can_be_freed():
    """With a joker on the table at TD, a hand holding TD can free it for 2C 3C; one
    holding JD cannot. Solving the second right after the first must not keep the first's
    early layers, cut for a budget without that joker."""
    without = problem_of("7D 8D 9D", "JD 2C 3C", jokers="TD")
    with_natural = problem_of("7D 8D 9D", "TD 2C 3C", jokers="TD")
    clubs = 1 << C.parse("2C")[0] | 1 << C.parse("3C")[0]
    assert not compiled_options(without).place & clubs
    assert compiled_options(with_natural).place & clubs == clubs
    assert compiled_options(with_natural) == solver_layers._Commit(with_natural).solve()


# -- the witness search ----------------------------------------------------------------------
DENSE_TABLE = ("AC 3C 4C 5C 5C 6C 6C 7C 8C 9C TC JC QC QC AD 4D 5D 9D 9D JD QD KD AH 4H 5H 7H 8H 9H 9H JH KH "
               "4S 4S 5S 5S 6S 7S 8S 9S 9S JS QS KS")
DENSE_HAND = ("2C 4C 7C 8C 9C TC JC KC KC 2D 2D 4D 6D 7D 7D 8D TD QD KD 2H 3H 4H 6H 7H 8H TH TH QH QH KH AS 3S 3S "
              "6S 7S 8S JS QS")
"""A position of three-player random play (two decks, two jokers): the full programme
walks about 350,000 states for its mask."""


def witness_answers(monkeypatch) -> list[bool]:
    """Send every commit mask to the witness search first, with its whole budget
    (``NODE_BUDGET``); the list records, call by call, whether it answered (True) or gave up."""
    answered: list[bool] = []
    search = solver_witness._search
    masks = search.masks

    def spy(*args):
        answer = masks(*args[:5])
        answered.append(answer is not None)
        return answer

    monkeypatch.setattr(solver_compiled, "SEARCH_PAST_STATES", 0)
    monkeypatch.setattr(search, "masks", spy)
    return answered


@pytest.mark.parametrize("block", range(4))
def test_the_witness_search_answers_as_the_pure_programme(block, monkeypatch):
    """On random commits (where many entries are impossible and must be proven so) the
    witness search's masks are the pure programme's, entry for entry, and it answers on
    its own nearly always."""
    answered = witness_answers(monkeypatch)
    monkeypatch.setattr(solver_witness, "NODE_BUDGET", 200_000)
    for problem in along_commits(range(250 * block, 250 * (block + 1))):
        assert compiled_options(problem) == solver_layers._Commit(problem).solve(), problem
    assert len(answered) > 600 and sum(answered) > 0.95 * len(answered)


@pytest.mark.slow
@pytest.mark.parametrize("block", range(4, 24))
def test_the_witness_search_answers_as_the_pure_programme_many(block, monkeypatch):
    """The same on 5,000 more random commits (``-m slow``)."""
    test_the_witness_search_answers_as_the_pure_programme(block, monkeypatch)


def test_the_witness_search_answers_dense_tables_alone(monkeypatch):
    """A hoarded hand beside a dense two-deck table, and the moves of its turn: the search
    answers each mask within its budget, as the pure programme does, where the full
    programme walks over 100,000 states."""
    problem = problem_of(DENSE_TABLE, DENSE_HAND, jokers="KC", hand_jokers=1)
    assert solver_compiled.Workspace().solve(solver_compiled.problem_counts(problem), 1, 0, True, 2, True,
                                              100_000) is None
    answered = witness_answers(monkeypatch)
    rng = random.Random(5)
    for _ in range(4):
        options = compiled_options(problem)
        assert options == solver_layers._Commit(problem).solve(), problem
        problem = rng.choice([nxt for kind in moves(problem).values() for nxt in kind.values()])
    assert answered == [True] * 4


def test_a_search_that_gives_up_leaves_the_answer_to_the_full_programme(monkeypatch):
    """With no budget the search gives up at once, and the full solve it stopped at
    ``SEARCH_PAST_STATES`` states resumes where it stopped, answering as the pure programme."""
    monkeypatch.setattr(solver_compiled, "SEARCH_PAST_STATES", 10)
    monkeypatch.setattr(solver_witness, "NODE_BUDGET", 0)
    stopped = 0
    for problem in along_commits(range(40), moves_each=2):
        fresh = solver_compiled.Workspace()
        limit = problem.max_copies if problem.max_copies is not None else 7
        stopped += fresh.solve(solver_compiled.problem_counts(problem), problem.hand_jokers, problem.free_jokers,
                               problem.need_hand_card, limit, True, 10) is None
        assert compiled_options(problem) == solver_layers._Commit(problem).solve(), problem
    assert stopped > 50


def test_each_env_solves_in_its_own_workspace(monkeypatch):
    """Two envs played in turn: each game's masks are solved in its env's own work arrays
    (so its solves resume each other), with the shared arrays' answers, and a pickled state
    gets fresh ones."""
    from rummy_envs import manipulation_rummy_v0

    TS._commit_options.cache_clear()  # every mask solved here, none read from the cache
    used: list[solver_compiled.Workspace] = []
    solve = solver_compiled.Workspace.solve

    def spy(self, *args, **kwargs):
        used.append(self)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(solver_compiled.Workspace, "solve", spy)
    envs = [manipulation_rummy_v0.env(num_players=3) for _ in range(2)]
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
    rng = random.Random(0)
    solved = 0
    for _ in range(150):
        for env in envs:
            game = env.unwrapped.game
            if game.is_terminal():
                continue
            used.clear()
            legal = game.legal_actions()
            assert all(workspace is game.solver_workspace for workspace in used)
            solved += bool(used)
            if game.phase == M.Phase.MELD:
                problem = game.commit_problem()
                assert compiled_options(problem) == TS.commit_options(problem), problem
            env.step(rng.choice(legal))
    assert solved > 50 and envs[0].unwrapped.game.solver_workspace is not envs[1].unwrapped.game.solver_workspace
    copied = pickle.loads(pickle.dumps(envs[0].unwrapped.game))
    assert copied.solver_workspace is not envs[0].unwrapped.game.solver_workspace
    assert copied.legal_actions() == envs[0].unwrapped.game.legal_actions()
