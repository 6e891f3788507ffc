#!/bin/sh
# Analyze computes and never formats a number with its unit (docs/architecture.md, "Analyze
# computes; render words and formats"): its sentences carry durations, sizes and percentages
# as typed values (tools/analyze/numbers.h) that render writes with the one formatter. This
# fails when a string literal in tools/analyze/*.c holds a floating printf conversion followed
# by a unit ("%.3f ms", "%.1f s", "%.2f GiB", "%.0f µs") or a "%%". (An integer echoed with
# its unit, such as an option given in ns, is the user's own number and passes.)

allowed=""
fail=0
for f in "$root"/tools/analyze/*.c; do
  case " $allowed " in *" $(basename "$f") "*) continue ;; esac
  # string literals only: drop block-comment lines and trailing comments first
  hits=$(sed -e 's|/\*.*\*/||' -e '/^[[:space:]]*\(\/\*\|\*\|\/\/\)/d' "$f" |
    grep -n '"[^"]*\(%%\|%[-+ #0-9.*]*L*[fgeE] *\(ms\|ns\|s\|µs\|\\xc2\\xb5s\|[KMGT]iB\|B\)\b\)')
  if [ -n "$hits" ]; then
    echo "tools/analyze/$(basename "$f") formats a number with its unit (use TL_DUR, TL_BYTES, TL_PCT, ... of numbers.h):"
    echo "$hits"
    fail=1
  fi
done
[ $fail = 0 ] && echo "analyze formats no number with a unit"
exit $fail
