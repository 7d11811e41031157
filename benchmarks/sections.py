"""Each benchmark script owns one marked section of benchmarks/RESULTS.md."""

from __future__ import annotations

from pathlib import Path


def write_section(path: Path, begin: str, end: str, section: str) -> None:
    """Replace the text from ``begin`` to ``end`` in ``path`` by ``section`` (which carries
    both markers), or append it when the file has no such section yet."""
    text = path.read_text() if path.exists() else ""
    if begin in text:
        text = text[: text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)
