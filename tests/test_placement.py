"""The board's fast paths (a grid for upright boxes, a vectorised test for many spots) give exactly the answer of the
separating-axis test against every obstacle whose hull meets the candidate's (issue #28)."""

from __future__ import annotations

import numpy as np

from ncu_roofline.render.chart.placement import Board, Plot, box, boxes, overlaps, place_rank


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


def test_the_first_free_of_many_turned_spots_is_the_full_tests_on_crowded_boards():
    """Roof labels' spots (turned boxes along a diagonal) are tried one by one against the board's grid: the first
    one taken is the first that the full test against every obstacle finds free, or none alike."""
    rng = np.random.default_rng(5)
    plot = Plot(480, 360, (0.01, 100.0), (1e9, 1e15))
    found = nowhere = 0
    for trial in range(30):
        n = int(rng.integers(40, 160))
        grid = trial % 3 == 0  # points on an 8 px grid: many boxes touch exactly
        xy = rng.normal([240, 180], 50, size=(n, 2))  # a crowded middle: some roofs find no room there
        xy = np.round(xy / 8) * 8 if grid else xy
        discs = [(float(x), float(y), float(r)) for (x, y), r in zip(xy, rng.choice([3.0, 4.0, 5.5, 8.0], n))]
        board, placed = Board(plot, discs), []
        for _ in range(4):
            degrees = float(rng.choice([0.0, 37.0, 90.0, 143.5, -20.0]))
            cx, cy = rng.normal(240, 40, 12), rng.normal(180, 30, 12)
            quads = boxes(cx, cy, float(rng.choice([40.0, 90.0])), 14.0, degrees)
            expected = next((i for i, quad in enumerate(quads) if brute_force_free(plot, discs, placed, quad)), None)
            assert board.first_free(quads) == expected
            if expected is None:
                nowhere += 1
                continue
            found += 1
            board.take(quads[expected])
            placed.append(quads[expected])
    assert found > 20 and nowhere > 5


def test_a_copied_board_takes_on_its_own_and_answers_as_the_original():
    plot = Plot(480, 360, (0.01, 100.0), (1e9, 1e15))
    discs = [(100.0, 100.0, 5.0), (130.0, 100.0, 8.0)]
    board = Board(plot, discs)
    board.take(box(200.0, 200.0, 60.0, 14.0, 30.0))
    copy = board.copy()
    copy.take_upright(110.0, 90.0, 120.0, 110.0)  # the same quad, hull and flag as take(box(115, 100, 10, 20))
    assert not copy.free(box(115.0, 100.0, 4.0, 4.0)) and board.free(box(115.0, 100.0, 4.0, 4.0))
    original = Board(plot, discs)
    original.take(box(200.0, 200.0, 60.0, 14.0, 30.0))
    original.take(box(115.0, 100.0, 10.0, 20.0))
    rng = np.random.default_rng(7)
    for x, y in rng.uniform(0, 360, size=(300, 2)):
        quad = box(float(x), float(y), 12.0, 11.7)
        assert copy.free(quad) == original.free(quad)


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


# ---------------------------------------------------------------- place_rank_leader against the one-by-one search
from ncu_roofline.render.chart.placement import (  # noqa: E402
    LEADER_DISTANCES_PX,
    _leader_corners,
    leader_box,
    leader_segment,
    place_rank_leader,
    text_size,
)


def reference_rank_leader(plot: Plot, placed: list, anchors: list, font_size: float, texts: list[str]) -> tuple | None:
    """The search as it was before issue #38 (every spot tried one by one, in order), over `brute_force_free`:
    place_rank's 16 spots per anchor, anchor by anchor, then each leader distance, each anchor, eight directions,
    a spot taken when its box and its leader's box are both free. `placed` holds every obstacle (the discs' boxes
    first) and gets what it takes."""
    for index, (cx, cy, r) in enumerate(anchors):
        w, h = text_size(texts[index], font_size, "bold")
        for distance in (1.0, 5.0):
            d = r + distance
            for dx, dy in ((d + w / 2, 0), (0, -(d + h / 2)), (-(d + w / 2), 0), (0, d + h / 2),
                           (d + w / 2 - 2, -(d + h / 2 - 2)), (-(d + w / 2 - 2), -(d + h / 2 - 2)),
                           (d + w / 2 - 2, d + h / 2 - 2), (-(d + w / 2 - 2), d + h / 2 - 2)):
                quad = box(cx + dx, cy + dy, w, h)
                if brute_force_free(plot, [], placed, quad):
                    placed.append(quad)
                    return cx + dx, cy + dy, None, index
    for distance in LEADER_DISTANCES_PX:
        for index, (cx, cy, r) in enumerate(anchors):
            w, h = text_size(texts[index], font_size, "bold")
            d = r + distance
            for dx, dy in ((d + w / 2, 0), (0, -(d + h / 2)), (-(d + w / 2), 0), (0, d + h / 2),
                           (d + w / 2, -(d + h / 2)), (-(d + w / 2), -(d + h / 2)),
                           (d + w / 2, d + h / 2), (-(d + w / 2), d + h / 2)):
                x, y = cx + dx, cy + dy
                quad = box(x, y, w, h)
                if not brute_force_free(plot, [], placed, quad):
                    continue
                segment = leader_segment((cx, cy, r), (x, y), w, h)
                if segment is None or not brute_force_free(plot, [], placed, leader_box(segment), margin=0.0):
                    continue
                placed += [quad, leader_box(segment)]
                return x, y, segment, index
    return None


def test_rank_numbers_with_leaders_go_where_the_one_by_one_search_puts_them():
    """Issue #38: the leader search tests a rank's spots at once; on crowded random boards every number lands
    where trying the spots one by one against every obstacle puts it, leader included, or nowhere alike."""
    rng = np.random.default_rng(38)
    leaders = nowhere = 0
    for trial in range(8):
        plot = Plot(480.0, 360.0, (0.01, 100.0), (1e9, 1e15))
        n = int(rng.integers(40, 90))
        grid = trial % 3 == 0  # points on an 8 px grid: boxes touch exactly
        # a crowded middle with room around it: numbers that find none beside their points go off with leaders
        xy = rng.normal([240, 180], 40, size=(n, 2))
        xy = np.round(xy / 8) * 8 if grid else xy
        discs = [(float(x), float(y), float(r)) for (x, y), r in zip(xy, rng.choice([3.0, 4.0, 5.5, 8.0], n))]
        board, placed = Board(plot, discs), [box(x, y, 2 * r, 2 * r) for x, y, r in discs]
        turned = box(240.0, 180.0, 120.0, 14.0, 37.0)  # a memory roof's label
        if brute_force_free(plot, [], placed, turned):
            board.take(turned)
            placed.append(turned)
        for rank in range(1, n + 1):
            mine = [discs[i] for i in rng.choice(n, size=int(rng.integers(1, 4)), replace=False)]
            texts = [str(rank) if rng.random() < 0.8 else f"{rank}, {rank + 40}" for _ in mine]
            expected = reference_rank_leader(plot, placed, mine, 9, texts)
            got = place_rank_leader(board, str(rank), mine, 9, texts)
            if expected is None:
                assert got is None
                nowhere += 1
                continue
            assert got is not None
            assert (got.x, got.y, got.leader, got.anchor, got.text) == (*expected, texts[expected[3]])
            if expected[2] is not None:
                leaders += 1  # the leader's box the search tests is the one the board takes, corner for corner
                assert np.array_equal(np.array(_leader_corners(expected[2])), leader_box(expected[2]))
    assert leaders > 20 and nowhere > 20  # the boards were crowded enough to exercise both
