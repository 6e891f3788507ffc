#!/bin/sh
# One formatting style for every C and C++ file (STYLE.md, as git and libuv do): the checked-in
# .clang-format. Fails listing the files clang-format would change; skipped (77) without
# clang-format. Reformat with: git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format -i
root=${1:-.}
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
cd "$root" || exit 1
bad=""
for f in $(git ls-files '*.c' '*.h' '*.cpp' 2>/dev/null || find tools lib common include tests bench samples python -name '*.[ch]'); do
  clang-format --style=file "$f" | cmp -s - "$f" || bad="$bad $f"
done
if [ -n "$bad" ]; then
  echo "not in the .clang-format style:$bad"; exit 1
fi
echo "every C file in the .clang-format style"
