"""The board's fast paths (a grid for upright boxes, a vectorised test for many spots) give exactly the answer of the
separating-axis test against every obstacle whose hull meets the candidate's (issue #28)."""

from __future__ import annotations

import numpy as np

from ncu_roofline.render.chart.placement import Board, Plot, box, overlaps, place_rank


def brute_force_free(plot: Plot, discs: list[tuple[float, float, float]], placed: list[np.ndarray],
                     quad: np.ndarray, margin: float = 1.0) -> bool:
    """The definition: inside the plot by `margin`, and `overlaps` false against every disc's box and placed text."""
    lo, hi = quad.min(axis=0), quad.max(axis=0)
    if lo[0] < margin or lo[1] < margin or hi[0] > plot.width - margin or hi[1] > plot.height - margin:
        return False
    others = [box(x, y, 2 * r, 2 * r) for x, y, r in discs] + placed
    return not any(overlaps(quad, other) for other in others
                   if (other.min(axis=0) < hi).all() and (other.max(axis=0) > lo).all())


def test_touching_boxes_do_not_overlap_and_a_hair_more_does():
    # Disc at (100, 100), r = 5: its box spans 95..105. A 10 x 10 box centred at 110 spans 105..115: touching.
    plot = Plot(640, 480, (0.01, 100.0), (1e9, 1e15))
    board = Board(plot, [(100.0, 100.0, 5.0)])
    assert board.free(box(110.0, 100.0, 10.0, 10.0))
    assert not board.free(box(110.0 - 1e-9, 100.0, 10.0, 10.0))  # 1e-9 px into the disc's box
    assert not board.free(box(100.0, 100.0, 4.0, 4.0))  # on the point
    assert not board.free(box(3.0, 100.0, 10.0, 10.0))  # 2 px from the left edge, 1 px margin: x from -2


def test_the_board_answers_as_the_full_test_on_crowded_boards():
    rng = np.random.default_rng(28)
    plot = Plot(480, 360, (0.01, 100.0), (1e9, 1e15))
    for trial in range(40):
        grid = trial % 2 == 0  # points on an 8 px grid: many boxes touch exactly
        n = int(rng.integers(5, 80))
        xy = rng.integers(0, 60, size=(n, 2)) * 8.0 if grid else rng.uniform(0, 480, size=(n, 2))
        discs = [(float(x), float(y), float(r)) for (x, y), r in zip(xy, rng.choice([3.0, 4.0, 5.5, 8.0], n))]
        board, placed = Board(plot, discs), []
        # a turned roof label first: the grid's upright shortcut must not be taken against it
        turned = box(240.0, 180.0, 90.0, 14.0, 37.0)
        if brute_force_free(plot, discs, placed, turned):
            board.take(turned)
            placed.append(turned)
        for _ in range(60):
            x, y = (rng.integers(0, 60, size=2) * 8.0) if grid else rng.uniform(0, 480, size=2)
            w, h = float(rng.choice([8.0, 16.0, 13.52])), float(rng.choice([8.0, 11.7]))
            quad = box(float(x), float(y), w, h)
            expected = brute_force_free(plot, discs, placed, quad)
            assert board.free(quad) == expected
            assert (board.first_free(quad[None]) == 0) == expected  # the vectorised path agrees too
            if expected:
                board.take(quad)
                placed.append(quad)


def test_a_rank_number_goes_right_of_its_point_when_that_is_free():
    # Point at (100, 100), r = 5 -> d = 5 + 1 = 6; "7" at 9 px bold: w = 0.68 * 9 + 2 = 8.12, so the centre is
    # 100 + 6 + 8.12 / 2 = 110.06, level with the point.
    plot = Plot(640, 480, (0.01, 100.0), (1e9, 1e15))
    board = Board(plot, [(100.0, 100.0, 5.0)])
    x, y = place_rank(board, "7", [(100.0, 100.0, 5.0)], 9)
    assert (round(x, 6), y) == (110.06, 100.0)
    # the same spot is now taken: a second "7" at the same point goes above it (the next spot tried)
    x2, y2 = place_rank(board, "7", [(100.0, 100.0, 5.0)], 9)
    assert (x2, round(y2, 6)) == (100.0, round(100 - (6 + 9 * 1.3 / 2), 6))
