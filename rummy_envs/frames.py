"""Pictures of a game: ``render_mode="rgb_array"`` frames.

A game's env describes a position as a ``Scene`` (the seats' hands, the rows of cards on the
table and in the piles, a few lines of text); ``FrameCanvas`` draws any scene of one game
and option set into an array of one fixed shape (H, W, 3), uint8, so a video's frames all
match. Cards are drawn once per canvas (white faces with the rank and a drawn suit pip,
hearts and diamonds red, clubs and spades black; a joker purple with a star; a card hidden
from the viewer as a blue back) and pasted, so a frame costs about a millisecond. Too many
cards for a row overlap; too many rows for the table end with a "+k more" note. Pillow
draws everything with its bundled font: no system font is needed. Texts are drawn once and
kept (``TEXT_CACHE`` of them), since most of a frame's words recur.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from rummy_envs import cards as C

CARD_W, CARD_H = 36, 50
GAP = 4
GROUP_GAP = 12
MARGIN = 10
LABEL_H = 16
LINE_H = 16
HAND_H = LABEL_H + CARD_H + 6
ROW_H = CARD_H + 8
ROW_LABEL_W = 120
FELT = (22, 94, 58)
TEXT = (240, 240, 232)
HIGHLIGHT = (255, 214, 90)
RED, BLACK, PURPLE = (200, 30, 40), (20, 20, 24), (120, 40, 170)
BACK_BLUE, BACK_LINE = (40, 70, 160), (120, 150, 230)


@dataclass(frozen=True)
class Hand:
    """One seat's cards: their ids, or only their number when the viewer may not see them."""

    label: str
    cards: tuple[int, ...] | None
    count: int
    to_move: bool = False


@dataclass(frozen=True)
class Row:
    """A labelled row of the table: groups of face-up cards (the melds of a seat, or one
    pile), then ``hidden`` cards face down (a stock)."""

    label: str
    groups: tuple[tuple[int, ...], ...] = ()
    hidden: int = 0


def pile(label: str, cards: tuple[int, ...] | list[int] = (), hidden: int = 0) -> Row:
    """A row of one group: a pile, a stock (``hidden`` cards), a single meld."""
    return Row(label, (tuple(cards),) if cards else (), hidden)


@dataclass(frozen=True)
class Scene:
    """A position as a picture shows it."""

    title: str
    hands: tuple[Hand, ...]
    rows: tuple[Row, ...]
    lines: tuple[str, ...]

    def to_dict(self) -> dict:
        """The scene as plain JSON values, cards written as cards (``7H``, ``TD``, ``JK``) and a
        hand the viewer may not see as ``cards: null``: what the replay viewer and the play
        page draw."""
        return {"title": self.title,
                "hands": [{"label": h.label, "cards": None if h.cards is None else _card_texts(h.cards),
                           "count": h.count, "to_move": h.to_move} for h in self.hands],
                "rows": [{"label": r.label, "groups": [_card_texts(g) for g in r.groups], "hidden": r.hidden}
                         for r in self.rows],
                "lines": list(self.lines)}


def _card_texts(cards: tuple[int, ...]) -> list[str]:
    return [C.format_card(card) for card in cards]


@dataclass(frozen=True)
class FrameSize:
    """What fixes a frame's shape: seats, table rows and text lines (a scene with more rows
    or lines than these shows the first ones and a note)."""

    seats: int
    rows: int
    lines: int
    width: int = 960

    @property
    def shape(self) -> tuple[int, int, int]:
        height = MARGIN * 3 + LINE_H + self.seats * HAND_H + self.rows * ROW_H + self.lines * LINE_H
        return height, self.width, 3


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


TEXT_CACHE = 1024
"""Texts kept drawn (as masks at most the frame's width by 20 pixels: under 20 MB in all);
a frame's labels and most of its lines recur, and FreeType takes about half a millisecond a
text here."""


@functools.lru_cache(maxsize=TEXT_CACHE)
def _text_mask(text: str, size: int) -> Image.Image:
    """``text`` drawn white on black at ``size`` points: a mask to paste in any colour."""
    font = _font(size)
    _left, _top, right, bottom = font.getbbox(text)
    mask = Image.new("L", (max(1, right), max(1, bottom)))
    ImageDraw.Draw(mask).text((0, 0), text, fill=255, font=font)
    return mask


def _put_text(image: Image.Image, xy: tuple[float, float], text: str, colour: tuple[int, int, int],
              size: int = 13) -> None:
    mask = _text_mask(text, size)
    x, y = round(xy[0]), round(xy[1])
    image.paste(colour, (x, y, x + mask.width, y + mask.height), mask)


def _pip(draw: ImageDraw.ImageDraw, suit: int, cx: float, cy: float, r: float, colour: tuple[int, int, int]) -> None:
    """A suit pip drawn as shapes (clubs, diamonds, hearts, spades), centred at (cx, cy)."""
    if suit == 1:  # diamond
        draw.polygon([(cx, cy - r), (cx + r * 0.75, cy), (cx, cy + r), (cx - r * 0.75, cy)], fill=colour)
        return
    if suit == 0:  # club: three round lobes and a stem
        s = r * 0.4
        for dx, dy in ((0, -r * 0.52), (-r * 0.52, r * 0.08), (r * 0.52, r * 0.08)):
            draw.ellipse([cx + dx - s, cy + dy - s, cx + dx + s, cy + dy + s], fill=colour)
        draw.polygon([(cx, cy - r * 0.1), (cx + r * 0.3, cy + r), (cx - r * 0.3, cy + r)], fill=colour)
        return
    s = r * 0.52
    if suit == 2:  # heart: two lobes over a point
        for dx in (-r * 0.45, r * 0.45):
            draw.ellipse([cx + dx - s, cy - r * 0.35 - s, cx + dx + s, cy - r * 0.35 + s], fill=colour)
        draw.polygon([(cx - r * 0.95, cy - r * 0.2), (cx + r * 0.95, cy - r * 0.2), (cx, cy + r)], fill=colour)
        return
    # spade: a point over two lobes, and a stem
    for dx in (-r * 0.45, r * 0.45):
        draw.ellipse([cx + dx - s, cy + r * 0.2 - s, cx + dx + s, cy + r * 0.2 + s], fill=colour)
    draw.polygon([(cx - r * 0.95, cy + r * 0.05), (cx + r * 0.95, cy + r * 0.05), (cx, cy - r)], fill=colour)
    draw.polygon([(cx, cy + r * 0.2), (cx + r * 0.35, cy + r), (cx - r * 0.35, cy + r)], fill=colour)


@functools.cache
def card_image(card: int | None) -> Image.Image:
    """A card's face (``card`` an id, ``C.JOKER`` a joker) or its back (``None``), drawn at
    four times the size and scaled down, so edges are smooth."""
    k = 4
    w, h = CARD_W * k, CARD_H * k
    image = Image.new("RGB", (w, h), FELT)
    draw = ImageDraw.Draw(image)
    box = [0, 0, w - 1, h - 1]
    if card is None:
        draw.rounded_rectangle(box, radius=4 * k, fill=BACK_BLUE)
        for x in range(-h, w, 6 * k):
            draw.line([(x, 0), (x + h, h)], fill=BACK_LINE, width=k)
        draw.rounded_rectangle(box, radius=4 * k, outline=(235, 235, 235), width=2 * k)
        return image.resize((CARD_W, CARD_H), Image.LANCZOS)
    draw.rounded_rectangle(box, radius=4 * k, fill=(252, 252, 248), outline=(90, 90, 90), width=k)
    if card == C.JOKER:
        draw.text((10 * k, 10 * k), "JK", fill=PURPLE, font=_font(12 * k), anchor="mm")
        star = [(22 * k + r * k * np.cos(a), 34 * k + r * k * np.sin(a))
                for i in range(10) for r, a in [((10 if i % 2 == 0 else 4), -np.pi / 2 + i * np.pi / 5)]]
        draw.polygon(star, fill=PURPLE)
    else:
        suit, rank = divmod(card, C.NUM_RANKS)
        colour = RED if suit in (1, 2) else BLACK
        text = "10" if rank == 9 else C.RANK_CHARS[rank]
        draw.text((9 * k, 10 * k), text, fill=colour, font=_font(13 * k), anchor="mm")  # the corner index,
        _pip(draw, suit, 9 * k, 23 * k, 5 * k, colour)  # seen where cards overlap
        _pip(draw, suit, 22 * k, 36 * k, 9 * k, colour)
    return image.resize((CARD_W, CARD_H), Image.LANCZOS)


class FrameCanvas:
    """Draws scenes of one game and option set into frames of one shape."""

    def __init__(self, size: FrameSize) -> None:
        self.size = size
        self.shape = size.shape

    def draw(self, scene: Scene) -> np.ndarray:
        """``scene`` as a (H, W, 3) uint8 array of this canvas's shape."""
        height, width, _ = self.shape
        image = Image.new("RGB", (width, height), FELT)
        _put_text(image, (MARGIN, MARGIN), scene.title, TEXT, 14)
        y = MARGIN * 2 + LINE_H
        for hand in scene.hands[: self.size.seats]:
            colour = HIGHLIGHT if hand.to_move else TEXT
            _put_text(image, (MARGIN, y), f"{hand.label}  ({hand.count} cards)", colour)
            faces = list(hand.cards) if hand.cards is not None else [None] * hand.count
            self._paste_groups(image, [faces], MARGIN, y + LABEL_H, width - 2 * MARGIN)
            y += HAND_H
        rows = list(scene.rows)
        if len(rows) > self.size.rows:
            kept = self.size.rows - 1
            rows = rows[:kept] + [Row(f"+{len(rows) - kept} more rows")]
        for row in rows:
            _put_text(image, (MARGIN, y + CARD_H / 2 - 7), row.label, TEXT)
            left = MARGIN + ROW_LABEL_W
            end = self._paste_groups(image, [list(g) for g in row.groups], left, y, width - left - MARGIN - CARD_W - 90)
            if row.hidden:
                image.paste(card_image(None), (end, y))
                _put_text(image, (end + CARD_W + 6, y + CARD_H / 2 - 7), f"{row.hidden} face down", TEXT)
            y += ROW_H
        y = MARGIN * 2 + LINE_H + self.size.seats * HAND_H + self.size.rows * ROW_H
        for line in scene.lines[: self.size.lines]:
            _put_text(image, (MARGIN, y), line, TEXT)
            y += LINE_H
        return np.asarray(image, dtype=np.uint8)

    @staticmethod
    def _paste_groups(image: Image.Image, groups: list[list[int | None]], left: int, top: int, span: int) -> int:
        """Groups of cards left to right from ``left``, a wider gap between groups, the cards
        overlapping when they would pass ``span`` pixels; the x where a next card would go."""
        groups = [g for g in groups if g]
        cards = sum(len(g) for g in groups)
        if not cards:
            return left
        gaps = GROUP_GAP * (len(groups) - 1)
        step = float(CARD_W + GAP)
        if cards > 1 and (cards - 1) * step + gaps + CARD_W > span:
            step = max(2.0, (span - CARD_W - gaps) / (cards - 1))
        x = float(left)
        for group in groups:
            for face in group:
                image.paste(card_image(face), (round(x), top))
                x += step
            x += GROUP_GAP
        return round(x - step - GROUP_GAP) + CARD_W + GAP


def save_animation(frames: list[np.ndarray], path: str, fps: float = 2) -> None:
    """Write frames (``render_mode="rgb_array"`` arrays) as an animated GIF at ``path``, with
    Pillow alone (Gymnasium's ``RecordVideo`` writes MP4 through moviepy)."""
    if not frames:
        raise ValueError("save_animation needs at least one frame")
    images = [Image.fromarray(frame) for frame in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0)
