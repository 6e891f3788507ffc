#!/usr/bin/env python3
"""The rank colors of assets/report.css stay apart for every viewer: the 16
colors --c0..--c15 of the light and the dark scheme, as seen with normal color
vision and simulated protanopia, deuteranopia and tritanopia (Machado, Oliveira
and Fernandes 2009, severity 1.0, applied in linear sRGB), are at least
MIN_DE apart in CIELAB (ΔE*ab) pairwise, and each has a contrast of at least
3:1 against its background (WCAG 2 relative luminance), as marks need.

usage: palette_check.py CSS_FILE
"""
import math
import re
import sys

MIN_DE = {"normal": 18.0, "protan": 10.0, "deutan": 10.0, "tritan": 10.0}
MIN_CONTRAST = 3.0
MACHADO = {
    "protan": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deutan": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritan": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def linear(hexcolor):
    v = [int(hexcolor[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in v]


def mul(m, v):
    return [sum(m[i][j] * v[j] for j in range(3)) for i in range(3)]


def lab(lin):
    x, y, z = mul([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]], lin)
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29
         for t in (x / 0.95047, y / 1.0, z / 1.08883)]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))


def luminance(lin):
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def block_vars(text):
    return dict(re.findall(r"--([a-z0-9-]+):\s*(#[0-9a-fA-F]{6})", text))


def main():
    css = open(sys.argv[1], encoding="utf-8").read()
    light = block_vars(css[css.index(":root"):css.index("@media (prefers-color-scheme: dark)")])
    dark_at = css.index("@media (prefers-color-scheme: dark)")
    dark = block_vars(css[dark_at:css.index("}", css.index(":root", dark_at))])
    failed = 0
    for scheme, v in (("light", light), ("dark", dark)):
        colors = [v.get(f"c{i}") for i in range(16)]
        if None in colors:
            print(f"FAIL {scheme}: --c0..--c15 not all defined")
            failed += 1
            continue
        bg = luminance(linear(v["bg"]))
        for i, c in enumerate(colors):
            lum = luminance(linear(c))
            contrast = (max(lum, bg) + 0.05) / (min(lum, bg) + 0.05)
            if contrast < MIN_CONTRAST:
                print(f"FAIL {scheme}: --c{i} {c} has contrast {contrast:.2f} against {v['bg']}")
                failed += 1
        for view in ("normal", "protan", "deutan", "tritan"):
            pts = [lab(linear(c)) if view == "normal" else
                   lab([min(1, max(0, x)) for x in mul(MACHADO[view], linear(c))]) for c in colors]
            d, i, j = min((math.dist(pts[i], pts[j]), i, j) for i in range(16) for j in range(i))
            ok = d >= MIN_DE[view]
            print(f"{'ok  ' if ok else 'FAIL'} {scheme} {view}: closest pair --c{j} {colors[j]} / --c{i} {colors[i]} "
                  f"ΔE {d:.1f} (at least {MIN_DE[view]})")
            failed += not ok
    print(f"palette_check: {'ok' if failed == 0 else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
