"""The PNG rasterised from the SVG already made (`--format svg,png`) looks like the PNG drawn from the spec.

Images are compared by their pixels, decoded here with zlib (no imaging library is a dependency): same size, and
every channel of every pixel within a small tolerance of the other image's.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pandas as pd

from ncu_roofline.render.chart import chart_files
from ncu_roofline.render.analysis.chart import roofline_spec
from ncu_roofline.render.chart.context import ChartContext
from ncu_roofline.render.chart.vegalite import VL_CONVERT_VERSION

# Of 255 per channel: anti-aliasing may differ between two rasterisations, drawing may not. The PNG made from the
# SVG draws a stroke that crosses the plot's edge as the polygon it covers (render/chart/png_clips.py): the edge
# pixels of such a line may differ by up to 16, and only a few pixels in ten thousand by more than 4.
TOLERANCE = 16
RARE_TOLERANCE, RARE_SHARE = 4, 1e-4


def decode_png(data: bytes) -> np.ndarray:
    """Height × width × channels of an 8-bit, non-interlaced greyscale/RGB/RGBA PNG (what vl-convert writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length  # length, kind, body, CRC
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0, header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    stride = width * channels
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 0:  # None
            row = line
        elif kind == 1:  # Sub: each byte adds the one a pixel to its left, a running sum per channel
            row = np.cumsum(line.reshape(width, channels), axis=0).reshape(-1)
        elif kind == 2:  # Up
            row = line + previous
        else:  # Average (3) and Paeth (4) depend on the byte just decoded: one pixel at a time
            row = np.zeros(stride, dtype=np.int64)
            up = previous.astype(np.int64)
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                corner = up[i - channels] if i >= channels else 0
                if kind == 3:
                    row[i] = (line[i] + (left + up[i]) // 2) % 256
                else:
                    p = left + up[i] - corner
                    pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
                    guess = left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner
                    row[i] = (line[i] + guess) % 256
        out[y] = previous = (row % 256).astype(np.uint8)
    return out.reshape(height, width, channels)


def test_the_decoder_reads_every_filter_back():
    """A 2×2 RGB image written once per filter type by hand: every filter decodes to the same pixels."""
    pixels = np.array([[[10, 20, 30], [40, 50, 60]], [[70, 80, 90], [100, 110, 120]]], dtype=np.uint8)
    rows = pixels.reshape(2, 6).astype(int)

    def filtered(kind: int) -> bytes:
        out = b""
        for y in range(2):
            line, up = rows[y], rows[y - 1] if y else np.zeros(6, dtype=int)
            left = np.concatenate([[0, 0, 0], line[:-3]])
            corner = np.concatenate([[0, 0, 0], up[:-3]])
            if kind == 0:
                enc = line
            elif kind == 1:
                enc = line - left
            elif kind == 2:
                enc = line - up
            elif kind == 3:
                enc = line - (left + up) // 2
            else:
                guess = []
                for a, b, c in zip(left, up, corner):
                    p = a + b - c
                    guess.append(a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c)
                                 else b if abs(p - b) <= abs(p - c) else c)
                enc = line - np.array(guess)
            out += bytes([kind]) + bytes((enc % 256).tolist())
        return out

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    for kind in range(5):
        png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
               + chunk(b"IDAT", zlib.compress(filtered(kind))) + chunk(b"IEND", b""))
        assert (decode_png(png) == pixels).all(), kind


def test_png_from_the_svg_looks_like_the_png_from_the_spec():
    import vl_convert

    # Two kernels, ranks 1 and 2: 2e9 FLOP in 1 ms (2e12 FLOP/s) at AI 2, 1, 0.5; 4e9 in 2 ms at AI 20, 10, 4.
    kernels = pd.DataFrame({
        "rank": [1, 2], "kernel_name": ["void axpy(float*)", "void gemm<64>(float*)"], "grid": ["(256, 1, 1)"] * 2,
        "block": ["(128, 1, 1)"] * 2, "launches": [10, 4], "time_s": [1e-3, 2e-3], "time_share": [1 / 3, 2 / 3],
        "flop_fp64": [0.0, 0.0], "flop_fp32": [2e9, 4e9], "flop_fp16": [0.0, 0.0], "flop_tensor": [0.0, 0.0],
        "flop_total": [2e9, 4e9], "bytes_dram": [1e9, 2e8], "bytes_l2": [2e9, 4e8], "bytes_l1": [4e9, 1e9],
        "ai_dram": [2.0, 20.0], "ai_l2": [1.0, 10.0], "ai_l1": [0.5, 4.0], "flop_per_s": [2e12, 2e12],
        "peak_flop_per_s_fp32": [19.5e12] * 2, "peak_bytes_per_s_dram": [1.555e12] * 2,
        "peak_bytes_per_s_l2": [5.5e12] * 2, "peak_bytes_per_s_l1": [19e12] * 2,
        "t_sol_s": [1e9 / 1.555e12, 4e9 / 19.5e12], "bound": ["dram", "fp32"],
        "roofline_fraction": [1e9 / 1.555e12 / 1e-3, 4e9 / 19.5e12 / 2e-3],
        "headroom_s": [1e-3 - 1e9 / 1.555e12, 2e-3 - 4e9 / 19.5e12], "status": ["ok", "ok"],
    })
    spec = roofline_spec(kernels, ChartContext(gpu="NVIDIA A100-SXM4-40GB", ceiling_source="built-in table",
                                               clock="max", inputs=["step.csv"]))
    payloads = chart_files.chart_payloads(spec, ["svg", "png"])
    from_svg = decode_png(payloads["roofline.png"])
    from_spec = decode_png(vl_convert.vegalite_to_png(spec, vl_version=VL_CONVERT_VERSION,
                                                      scale=chart_files.PNG_SCALE))
    assert from_svg.shape == from_spec.shape
    difference = np.abs(from_svg.astype(int) - from_spec.astype(int)).max(axis=-1)
    assert difference.max() <= TOLERANCE
    assert (difference > RARE_TOLERANCE).sum() <= RARE_SHARE * difference.size
    # a PNG asked for alone is made the same way (its SVG drawn, not written): the same bytes
    assert chart_files.chart_payloads(spec, ["png"])["roofline.png"] == payloads["roofline.png"]
    # and it is a drawing, not a blank: several thousand pixels are not the background
    assert (from_svg[..., :3] < 200).any(axis=-1).sum() > 5_000
