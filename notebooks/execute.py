"""Execute the notebooks top to bottom and save them with their outputs: how the committed
notebooks are made (``python notebooks/execute.py``), and what the tests run at a tiny size
(``--quick``, which sets ``RUMMY_NOTEBOOK_QUICK=1``, into a scratch folder).

Each notebook runs in a fresh kernel whose working directory is a scratch folder, so the
runs and tournaments it writes never land in the repository; matplotlib keeps the kernel's
inline backend, so every figure is saved in the notebook as a PNG output. The wall time of
each notebook is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
TIMEOUT_S = 600  # per cell


@contextmanager
def kernel_environment(quick: bool) -> Iterator[None]:
    """The environment a kernel starts with: this checkout first on the import path, the
    quick flag as asked, and no ``MPLBACKEND`` (the kernel's inline backend, whatever the
    caller uses); the caller's environment is restored afterwards."""
    saved = dict(os.environ)
    os.environ.pop("MPLBACKEND", None)
    os.environ.pop("RUMMY_NOTEBOOK_QUICK", None)
    if quick:
        os.environ["RUMMY_NOTEBOOK_QUICK"] = "1"
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved.get("PYTHONPATH")]))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def execute(path: Path, into: Path, quick: bool, workdir: Path) -> float:
    """Run the notebook at ``path`` in ``workdir`` and write it, outputs included, to the
    folder ``into``; returns the seconds it took."""
    book = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    with kernel_environment(quick):
        nbclient.NotebookClient(book, timeout=TIMEOUT_S, kernel_name="python3",
                                resources={"metadata": {"path": str(workdir)}}).execute()
    seconds = time.perf_counter() - start
    into.mkdir(parents=True, exist_ok=True)
    nbformat.write(book, into / path.name)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Execute the notebooks and save them with their outputs.")
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all), e.g. quickstart")
    parser.add_argument("--quick", action="store_true", help="the tiny sizes the tests use")
    parser.add_argument("--into", type=Path, default=HERE, help="where the executed notebooks go (default: in place)")
    args = parser.parse_args(argv)
    chosen = [p for p in NOTEBOOKS if not args.names or p.stem in args.names]
    unknown = set(args.names) - {p.stem for p in NOTEBOOKS}
    if unknown:
        print(f"unknown notebook(s) {', '.join(sorted(unknown))}; known: {', '.join(p.stem for p in NOTEBOOKS)}",
              file=sys.stderr)
        return 2
    for path in chosen:
        with tempfile.TemporaryDirectory(prefix=f"{path.stem}-") as workdir:
            seconds = execute(path, args.into, args.quick, Path(workdir))
        print(f"{path.stem}: {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
