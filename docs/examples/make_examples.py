#!/usr/bin/env python3
"""Writes the sample .npy files the README's `kjudge compare` examples use, with no numpy needed.

A row-wise softmax of a 4 x 4096 matrix: the float64 golden, a float32 reference that sums
sequentially, a correct float32 candidate that sums pairwise (another order), a candidate
whose outputs went through bf16 (a precision downgrade), and an all-zeros candidate. The values
are ~2.4e-4, so KernelBench's allclose(1e-2, 1e-2) accepts the zeros and the downgrade, while
`relative` rejects both and accepts the reordered sum.
"""
import math
import random
import struct
from pathlib import Path

ROWS, COLS = 4, 4096


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def write_npy(path, code, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (
        code, ROWS, COLS)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = {"<f8": "<d", "<f4": "<f"}[code]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(b"".join(struct.pack(fmt, v) for v in values))


def pairwise_f32(xs):
    if len(xs) == 1:
        return xs[0]
    mid = len(xs) // 2
    return f32(pairwise_f32(xs[:mid]) + pairwise_f32(xs[mid:]))


def main():
    rng = random.Random(7)
    x = [[f32(rng.gauss(0.0, 1.0)) for _ in range(COLS)] for _ in range(ROWS)]
    golden, reference, reordered = [], [], []
    for row in x:
        m = max(row)
        e64 = [math.exp(v - m) for v in row]
        s64 = math.fsum(e64)
        golden += [v / s64 for v in e64]
        e32 = [f32(math.exp(f32(v - m))) for v in row]
        s = 0.0
        for v in e32:
            s = f32(s + v)
        reference += [f32(v / s) for v in e32]
        s_pair = pairwise_f32(e32)
        reordered += [f32(v / s_pair) for v in e32]
    out = Path(__file__).resolve().parent
    write_npy(out / "golden.npy", "<f8", golden)
    write_npy(out / "reference.npy", "<f4", reference)
    write_npy(out / "reordered.npy", "<f4", reordered)
    write_npy(out / "bf16.npy", "<f4", [bf16(v) for v in reference])
    write_npy(out / "zeros.npy", "<f4", [0.0] * (ROWS * COLS))


if __name__ == "__main__":
    main()
