#!/bin/sh
# git's banned.h, as a test: tally's own C sources must not call sprintf, vsprintf,
# strcpy, strcat or gets (unbounded writes). Use snprintf or a length-checked copy.
root=${1:-.}
hits=$(grep -rnE '(^|[^_a-zA-Z0-9])(sprintf|vsprintf|strcpy|strcat|gets)[[:space:]]*\(' \
  "$root/lib" "$root/tools" "$root/include" "$root/samples" "$root/bench" "$root/tests" \
  --include='*.c' --include='*.h' 2>/dev/null)
if [ -n "$hits" ]; then
  echo "banned functions used:"; echo "$hits"; exit 1
fi
echo "no banned functions"
