#!/bin/sh
# The layering of docs/architecture.md ("Who may include whom"), as a test: the tools never
# include the collector's lib/ (what both need lives in common/), and common/ includes nothing
# of the project's other folders.
root=${1:-.}
fail=0
# the headers that exist only in lib/
lib_headers=$(cd "$root/lib" && ls *.h 2>/dev/null)
for h in $lib_headers; do
  hits=$(grep -rn "#include \"$h\"" "$root/tools" --include='*.c' --include='*.h' 2>/dev/null)
  if [ -n "$hits" ]; then echo "tools/ includes lib/$h:"; echo "$hits"; fail=1; fi
done
hits=$(grep -rn 'PROJECT_SOURCE_DIR}/lib\|tally_static\|tally_shared' "$root/tools" --include='CMakeLists.txt' 2>/dev/null)
if [ -n "$hits" ]; then echo "tools/ builds against libtally:"; echo "$hits"; fail=1; fi
for f in "$root"/common/*.c "$root"/common/*.h; do
  for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
    [ -f "$root/common/$inc" ] || { echo "common/$(basename "$f") includes $inc, not in common/"; fail=1; }
  done
done
[ $fail = 0 ] && echo "layers kept: tools/ never includes lib/, common/ only itself"
exit $fail
