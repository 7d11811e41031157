"""The timing shared by the speed benchmarks (one module per game, ``benchmarks/bench_<game>.py``).

- Each measured implementation is a ``Runner``: built and warmed up once (untimed), then
  timed in slices; a *unit* of work (a game, a chunk of hands) is timed with
  ``time.perf_counter`` and the rate is the work done over the time spent inside the units.
- The implementations compared with each other run in one group (``measure_group``): each
  gets the same timed budget in interleaved slices, the order rotated every round, so drifts
  of the machine's load affect them alike; a ratio is only ever taken between two rates of
  the same group, measured in the same run.
- The load average at the start, the machine and the versions head every report.
- Per-item timings (a mask, a solve) are summarised by their mean, median, 95th percentile
  and worst (``spread``).
- Each script writes the Markdown of its report into its own marked section of
  ``benchmarks/RESULTS.md`` (``write_section``), keeping the other scripts' sections.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import importlib.metadata as _md
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import rummy_envs

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path("benchmarks") / "RESULTS.md"
MAX_DECISIONS_PER_GAME = 10_000  # guard against a game that never ends
GIN_KEY = "env_gin_rummy"  # the key of our gin env's rate, the yardstick of the other games
REST = "PettingZoo API, rewards, numpy mask"  # a profile's share outside the named parts

Unit = Callable[[], int]  # does some work, returns how many decisions / calls it made
Setup = Callable[[], None]


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

    def text(self) -> str:
        return "error" if self.rate is None else f"{self.rate:,.0f}"

    def notes(self) -> str:
        return "; ".join(f"{k} {v}" for k, v in self.extra.items())


Row = tuple[str, Rate, "float | None"]  # a results table's row: the measurement, its rate, its ratio


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


def measure_group(runners: list[Runner], args: argparse.Namespace, slices: int | None = None) -> dict[str, Rate]:
    """Warm every runner up, then give each ``args.seconds`` of timed work in ``slices``
    (default ``args.slices``) interleaved slices, the order rotated every round, so slow
    drifts of machine load hit all alike. The rates by key."""
    slices = slices or args.slices
    for r in runners:
        r.start(args.warmup)
    for i in range(slices):
        k = i % len(runners)
        for r in runners[k:] + runners[:k]:
            r.run(args.seconds / slices)
    for r in runners:
        shown = "ERROR" if r.rate.rate is None else f"{r.rate.rate:,.0f} {r.rate.unit}"
        print(f"  {r.rate.label:<40} {shown}", flush=True)
    return {r.rate.key: r.rate for r in runners}


# --------------------------------------------------------------------------------------
# our envs under uniform-random legal play


def env_unit(seed: int, game: str, frames: bool = False, **options: object) -> tuple[Unit, None]:
    """A unit plays one game of ``game``'s AEC env (seeded ``seed``, ``seed + 1``, ...) by
    uniform-random legal play and returns its decisions (steps of finished agents not counted);
    with ``frames`` it draws an ``rgb_array`` frame after each decision."""
    env = rummy_envs.ENVS[game].env(**options, **({"render_mode": "rgb_array"} if frames else {}))
    choice = random.Random(seed).choice
    played = [0]

    def play_one_game() -> int:
        env.reset(seed=seed + played[0])
        played[0] += 1
        steps = 0
        step, last = env.step, env.last
        for _agent in env.agent_iter():
            obs, _rew, term, trunc, info = last()
            if term or trunc:
                step(None)
                continue
            mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
            step(int(choice(mask.nonzero()[0])))
            if frames:
                env.render()
            steps += 1
            if steps > MAX_DECISIONS_PER_GAME:
                raise RuntimeError(f"game with seed {seed + played[0] - 1} exceeded {MAX_DECISIONS_PER_GAME} decisions")
        return steps

    return play_one_game, None


def env_runner(key: str, label: str, seed: int, game: str, **options: object) -> Runner:
    """A runner of ``env_unit``, its rate in steps/s."""
    return Runner(Rate(key, label, "steps/s"), lambda: env_unit(seed, game, **options))


def gin_runner(seed: int) -> Runner:
    """Our gin env, the yardstick every game's env is measured against in the same group."""
    return env_runner(GIN_KEY, "ours gin_rummy_v0.env()", seed, "gin_rummy")


def against_gin(game: str, variants: Sequence[tuple[str, str, dict[str, object]]],
                args: argparse.Namespace) -> tuple[dict[str, Rate], list[Row]]:
    """Our gin env and ``game``'s under each variant (key suffix, label, env options),
    interleaved in one group: the rates by key (``env_<game>_<suffix>``), and the rows of
    the results table, each variant's with its ratio to gin's."""
    runners = [gin_runner(args.seed), *[env_runner(f"env_{game}_{suffix}", f"ours {game}_v0.env() {label}", args.seed,
                                                   game, **options) for suffix, label, options in variants]]
    rates = measure_group(runners, args)
    add_game_figures(rates)
    rows: list[Row] = [("env throughput", rate, None if key == GIN_KEY else ratio(rate, rates[GIN_KEY]))
                       for key, rate in rates.items()]
    return rates, rows


def add_game_figures(rates: dict[str, Rate]) -> None:
    """Note decisions per game and games per second on every rate of whole games."""
    for rate in rates.values():
        if rate.error is None and rate.units:
            rate.extra["decisions/game"] = f"{rate.count / rate.units:.1f}"
            rate.extra["games/s"] = f"{rate.units / rate.seconds:,.0f}"


ProfileParts = Sequence[tuple[str, tuple[Callable[[str], bool], frozenset[str] | None]]]


def files(*places: str) -> Callable[[str], bool]:
    """Whether a profiled file is one of ``places``: a folder (``games/rummy500``, a game's
    package matched whole, whatever its modules) or a file (``envs/rummy500.py``, ``random.py``)."""
    def matches(path: str) -> bool:
        path = path.replace(os.sep, "/")
        return any(f"/{place}/" in path or path.endswith(f"/{place}") for place in places)
    return matches


def profile_env(seed: int, seconds: float, game: str, parts: ProfileParts, **options: object) -> tuple[dict[str, float], int]:
    """Shares of a random-play step's time by part (each the own time of its functions under
    cProfile: the shares, not the rates, are meaningful) and the decisions profiled. A part is
    (name, (file test, function names or None for every function of those files)); the first
    part that claims a function gets it, the rest goes to ``REST``. Names of a part never
    seen are reported on stderr: a renamed function would quietly move its time elsewhere."""
    unit, _ = env_unit(seed, game, **options)
    profiler = cProfile.Profile()
    decisions = 0
    end = time.perf_counter() + seconds
    profiler.enable()
    while time.perf_counter() < end:
        decisions += unit()
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in stats.values())
    shares = dict.fromkeys([part for part, _ in parts] + [REST], 0.0)
    seen: set[str] = set()
    for (path, _line, name), row in stats.items():
        for part, (where, names) in parts:
            if where(path) and (names is None or name in names):
                shares[part] += row[2]
                seen.add(name)
                break
        else:
            shares[REST] += row[2]
    for part, (_where, names) in parts:
        if missing := sorted((names or set()) - seen):
            print(f"  profile part {part!r}: never saw {', '.join(missing)} (renamed?)", file=sys.stderr)
    return {part: t / total for part, t in shares.items()}, decisions


def profile_lines(what: str, profile: tuple[dict[str, float], int] | None) -> list[str]:
    """A profile's shares as a Markdown list (nothing when it failed)."""
    if profile is None:
        return []
    shares, decisions = profile
    return ["", f"Where a {what} random-play step spends its time (cProfile own time over {decisions:,} decisions; "
                "shares only, as profiling slows everything):", "",
            *[f"- {part}: {share:.0%}" for part, share in shares.items()]]


def try_profile(seed: int, seconds: float, game: str, parts: ProfileParts,
                **options: object) -> tuple[dict[str, float], int] | None:
    """``profile_env``, its shares printed; None (the error printed) when it fails."""
    try:
        profile = profile_env(seed, seconds, game, parts, **options)
    except Exception:  # noqa: BLE001 - the profile must not hide the figures
        print(f"  {game} profile: ERROR\n" + traceback.format_exc(), file=sys.stderr)
        return None
    for part, share in profile[0].items():
        print(f"  {part:<40} {share:.0%}")
    return profile


# --------------------------------------------------------------------------------------
# figures


def ratio(ours: Rate | None, peer: Rate | None) -> float | None:
    """``ours``'s rate over ``peer``'s (None when either is missing or failed)."""
    if ours is None or peer is None or ours.rate is None or peer.rate is None or peer.rate == 0:
        return None
    return ours.rate / peer.rate


def ratio_text(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}x"


def spread(samples: Sequence[float]) -> dict[str, float]:
    """Mean, median, 95th percentile and worst of per-item timings."""
    ordered = sorted(samples)
    return {"mean": statistics.fmean(ordered), "median": statistics.median(ordered),
            "p95": ordered[int(0.95 * (len(ordered) - 1))], "worst": ordered[-1]}


@dataclass(frozen=True)
class Target:
    """A bar a ratio of two rates of the same run must clear."""

    ours: str
    peer: str
    need: float
    text: str


def targets_table(rates: dict[str, Rate], targets: Sequence[Target]) -> list[str]:
    lines = ["", "| target | ratio | met |", "|---|---:|---|"]
    for target in targets:
        x = ratio(rates.get(target.ours), rates.get(target.peer))
        met = "n/a (not measured)" if x is None else ("met" if x >= target.need else "NOT met")
        lines.append(f"| {target.text} | {ratio_text(x)} | {met} |")
    return lines


def results_table(rows: Sequence[Row], ratio_header: str, blank: bool = False) -> list[str]:
    """The results as a Markdown table: (measurement, rate, ratio or None) per row; with
    ``blank``, a missing ratio is left empty (a row that is not compared) rather than n/a."""
    lines = [f"| measurement | implementation | rate | unit | {ratio_header} | notes |", "|---|---|---:|---|---:|---|"]
    for measurement, rate, x in rows:
        shown = "" if x is None and blank else ratio_text(x)
        lines.append(f"| {measurement} | {rate.label} | {rate.text()} | {rate.unit} | {shown} | {rate.notes()} |")
    return lines


def errors_section(rates: dict[str, Rate]) -> list[str]:
    """The tracebacks of the failed measurements, each once."""
    errors: dict[str, list[str]] = {}
    for r in rates.values():
        if r.error:
            errors.setdefault(r.error, []).append(f"{r.key} ({r.label})")
    lines = ["", "### Errors", ""] if errors else []
    for text, who in errors.items():
        lines += [", ".join(who) + ":", "", "```", text.rstrip(), "```", ""]
    return lines


# --------------------------------------------------------------------------------------
# the machine, the command line and the report


def version(dist: str) -> str:
    try:
        return _md.version(dist)
    except _md.PackageNotFoundError:
        return "not installed"


def machine_line(peers: Sequence[str] = ()) -> str:
    """The platform, CPU, Python, our version (git commit) and the libraries', and the load
    average at the start (other work slows gin more than the smaller games: their ratios to
    gin read higher on a loaded machine)."""
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.lower().startswith("model name")), cpu)
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                                cwd=REPO).stdout.strip() or "no commit"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    libraries = ", ".join(f"{name} {version(name)}" for name in (*peers, "pettingzoo", "numpy"))
    return (f"{platform.platform()}, {cpu} ({os.cpu_count()} logical CPUs), {platform.python_implementation()} "
            f"{platform.python_version()}, rummy-envs {version('rummy-envs')} (git {commit}), {libraries}; "
            f"load average {os.getloadavg()[0]:.2f} at the start")


def parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The options every benchmark takes; ``module`` adds its own before ``parse``."""
    p = argparse.ArgumentParser(prog=f"python -m benchmarks.{module}", description=doc.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=5.0, help="timed budget per measurement (default 5)")
    p.add_argument("--warmup", type=float, default=None, help="untimed warm-up per measurement (default min(1, seconds/4))")
    p.add_argument("--slices", type=int, default=5,
                   help="interleaved timed slices per measurement, rotating between implementations (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed for games, hands and action choices (default 0)")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"Markdown output (default {RESULTS}; its section only)")
    p.add_argument("--smoke", action="store_true",
                   help="a run of seconds that checks the script works: its figures mean nothing")
    return p


def parse(p: argparse.ArgumentParser, argv: list[str] | None, **smoke: object) -> argparse.Namespace:
    """The options; ``--smoke`` sets tiny budgets (``smoke`` the module's own), and seeds the
    global generators."""
    args = p.parse_args(argv)
    if args.smoke:
        for key, value in {"seconds": 0.05, "warmup": 0.0, "slices": 1, **smoke}.items():
            setattr(args, key, value)
    if args.warmup is None:
        args.warmup = min(1.0, args.seconds / 4)
    random.seed(args.seed)
    return args


def command_line(module: str, argv: list[str] | None) -> str:
    """How the report was made, for its first line."""
    return " ".join(["python -m", f"benchmarks.{module}", *(sys.argv[1:] if argv is None else argv)])


def timing_method(args: argparse.Namespace) -> str:
    """The Method bullet of the timing itself."""
    return (f"- Each measurement: {args.warmup:g} s untimed warm-up, then {args.seconds:g} s of timed work "
            "(`time.perf_counter`); rate = work done / time spent inside the timed units. Single process, one "
            f"thread. The implementations compared with each other run in {args.slices} interleaved slices (order "
            "rotated every round), so drifts in machine load affect them alike; ratios matter more than absolute "
            "rates, and a ratio is only taken between rates of the same run.")


GIN_RATIO_METHOD = ("- The ratios to gin divide a game's steps/s by gin's, measured in the same interleaved group. "
                    "Other work slows gin more than the smaller games: on a loaded machine their ratios read higher.")
OURS_ENV_METHOD = ("- Env throughput counts agent decisions only (not dealing or stock draws, whose cost is still "
                   "inside the loop); actions are uniform over legal actions via `random.Random(seed).choice`. Ours: "
                   "`<game>_v0.env(...)` (default wrappers), `env.reset(seed=i)` per game, `env.last()` every "
                   "iteration, action from `obs[\"action_mask\"].nonzero()[0]`; a step of an eliminated or finished "
                   "agent (`step(None)`) is not counted.")


def report(module: str, title: str, argv: list[str] | None, args: argparse.Namespace, machine: str,
           body: list[str], method: list[str]) -> list[str]:
    """A report: its title, how and where it was made, the body and the method."""
    started = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return [f"## {title}", "", f"`{command_line(module, argv)}` on {started}. Machine: {machine}.", *body,
            "", "Method:", "", timing_method(args), *method]


def write_section(path: Path, begin: str, end: str, section: str) -> None:
    """Replace the text from ``begin`` to ``end`` in ``path`` by ``section`` (which carries
    both markers), or append it when the file has no such section yet."""
    text = path.read_text() if path.exists() else ""
    if begin in text:
        text = text[: text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def write_worlds_table(out: Path, module: str, title: str, intro: str, kinds: Sequence[str],
                       margins_of: Callable[[str], list[float]]) -> None:
    """The search-worlds benchmarks' report: for each kind of world, the mean margin per
    deal (``margins_of(kind)``) with its 95% interval and the seconds it took, printed as
    measured, then written as ``module``'s section of ``out`` under ``title`` and ``intro``."""
    rows = []
    for kind in kinds:
        start = time.perf_counter()
        found = margins_of(kind)
        mean = statistics.fmean(found)
        half = 1.96 * statistics.stdev(found) / len(found) ** 0.5 if len(found) > 1 else float("inf")
        seconds = time.perf_counter() - start
        rows.append(f"| {kind} | {mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}] | {seconds:.0f} |")
        print(rows[-1], flush=True)
    begin, end = markers(module)
    lines = [begin, f"## {title} (`python -m benchmarks.{module}`)", "", machine_line(), "", intro, "",
             "| worlds | margin per game | seconds |", "|---|---:|---:|", *rows, end]
    write_section(out, begin, end, "\n".join(lines))


def markers(module: str) -> tuple[str, str]:
    """The markers of ``module``'s section of RESULTS.md."""
    return f"<!-- {module}:begin -->", f"<!-- {module}:end -->"


def publish(module: str, lines: list[str], out: Path, rates: dict[str, Rate]) -> int:
    """Print the report, write it into its section of ``out``; 1 when a measurement failed."""
    begin, end = markers(module)
    text = "\n".join(lines + errors_section(rates)).rstrip()
    print("\n" + text)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_section(out, begin, end, f"{begin}\n{text}\n{end}")
    print(f"\nwrote its section of {out}")
    if any(r.error for r in rates.values()):
        print(f"!!! some measurements failed, see {out} !!!", file=sys.stderr)
        return 1
    return 0
