#!/usr/bin/env python3
"""Independent reference values for tests/compare/test_significance.c.

Prints the expected values the C unit test hard-codes, computed here from the
definitions with no shared code: the exact two-sided Mann-Whitney p-value by
brute-force enumeration of every assignment of the pooled ranks (not the
recurrence the C code uses), the normal approximation with tie and continuity
corrections from the formula (as scipy.stats.mannwhitneyu, method
"asymptotic", use_continuity=True), the order-statistic interval of the
median from exact binomial sums in rational arithmetic, and Holm's adjusted
p-values. Run it to check or regenerate the constants:

    /usr/bin/python3 tests/compare/mwu_reference.py
"""
import itertools
import math
from fractions import Fraction


def u_of(x, y):
    """U of x: pairs with x > y, ties counting one half."""
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)


def exact_p(x, y):
    """Two-sided exact p by enumerating which pooled positions x takes."""
    pooled = sorted(x + y)
    n1 = len(x)
    u_obs = u_of(x, y)
    le = ge = total = 0
    for pick in itertools.combinations(range(len(pooled)), n1):
        xs = [pooled[i] for i in pick]
        ys = [pooled[i] for i in range(len(pooled)) if i not in pick]
        u = u_of(xs, ys)
        total += 1
        le += u <= u_obs
        ge += u >= u_obs
    return u_obs, min(1.0, 2.0 * min(le, ge) / total)


def normal_p(x, y):
    n1, n2 = len(x), len(y)
    n = n1 + n2
    u = u_of(x, y)
    counts = {}
    for v in x + y:
        counts[v] = counts.get(v, 0) + 1
    ties = sum(t ** 3 - t for t in counts.values())
    mu = n1 * n2 / 2.0
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    z = (abs(u - mu) - 0.5) / math.sqrt(var)
    return u, z, min(1.0, math.erfc(z / math.sqrt(2)))


def median_ci(n, conf=0.95):
    """k (1-based) and the coverage of [x(k), x(n-k+1)]."""
    a = Fraction(1 - Fraction(conf).limit_denominator(1000), 2)
    cdf, k, tail = Fraction(0), 0, Fraction(0)
    for i in range(n):
        cdf += Fraction(math.comb(n, i), 2 ** n)
        if cdf > a:
            break
        k, tail = i + 1, cdf
    return k, (float(1 - 2 * tail) if k else None)


def holm(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    adj, run = [0.0] * len(p), 0.0
    for r, i in enumerate(order):
        run = max(run, min(1.0, (len(p) - r) * p[i]))
        adj[i] = run
    return adj


def tie_data(shift):
    """The samples with ties of the normal cases (the C test builds the same)."""
    x = [float((i * 7) % 13) for i in range(25)]
    y = [float((i * 5) % 11 + shift) for i in range(30)]
    return x, y


def main():
    x = [1.1, 2.3, 3.5, 4.2, 5.9]
    y = [2.0, 6.1, 7.3, 8.8, 9.4, 10.0]
    print("exact x vs y: U=%.1f p=%.17g" % exact_p(x, y))
    print("exact y vs x: U=%.1f p=%.17g" % exact_p(y, x))
    a = [float(v) for v in (1, 2, 3, 4, 5)]
    # Tables: n1 = n2 = 5, two-sided alpha 0.05, critical U = 2.
    print("5v5 U=%.1f: p=%.17g" % exact_p(a, [3.5, 5.5, 6, 7, 8]))
    print("5v5 U=%.1f: p=%.17g" % exact_p(a, [3.5, 4.5, 6, 7, 8]))
    for shift in (2, 5):
        x, y = tie_data(shift)
        print("normal with ties, shift %d: U=%.1f z=%.17g p=%.17g" % ((shift,) + normal_p(x, y)))
    for n in (5, 6, 10, 20, 100, 1000):
        print("median CI n=%d: k=%s coverage=%s" % ((n,) + median_ci(n)))
    print("holm:", holm([0.01, 0.04, 0.03, 0.005]))
    print("geomean of 2, 0.5, 1.5:", math.exp((math.log(2) + math.log(0.5) + math.log(1.5)) / 3))


if __name__ == "__main__":
    main()
