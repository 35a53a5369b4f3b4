"""The analytic side of the roofline: FLOPs and minimum DRAM bytes worked out on paper, placed on a GPU's roofs.

`workloads` counts (pure arithmetic, each formula documented), `points` reads counts made elsewhere, `place` puts
a count on a GPU's roofs, `match` sets counts beside measured kernel groups. Nothing here reads ncu output.
"""
