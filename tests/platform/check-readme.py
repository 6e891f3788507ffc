#!/usr/bin/env python3
"""check-readme.py - the ctest "readme_links": README.md points only at files of the repository.

  - no path outside the checkout (`../shared/DESIGN.md` was one: a clone has no ../shared);
  - every Markdown link to a relative target, and every `code` span that names a path under one
    of the repository's top-level folders (docs/, tools/, tests/, samples/, ...), exists;
  - it tells a new user about `man tally` and the shell completions.
Usage: check-readme.py SOURCE_DIR
"""
import os
import re
import sys


def main():
    root = sys.argv[1]
    path = os.path.join(root, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tops = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
            and not d.startswith(".") and not d.startswith("build")}
    problems = []
    checked = 0
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1).split("#")[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        checked += 1
        if not os.path.exists(os.path.join(root, target)) or os.path.isabs(target) or target.startswith(".."):
            problems.append(f"link to {target}: not a file of the repository")
    for m in re.finditer(r"`([^`\n]+)`", text):
        for tok in m.group(1).split():
            tok = tok.rstrip(":,;.)")
            if tok.startswith("../") or tok.startswith("/work/"):
                problems.append(f"`{m.group(1)}`: {tok} is outside the repository")
                continue
            first = tok.split("/")[0]
            if "/" in tok and first in tops and not re.search(r"[*?<>{}$]|NAME|CMD", tok):
                checked += 1
                if not os.path.exists(os.path.join(root, tok)):
                    problems.append(f"`{m.group(1)}`: {tok} does not exist in the repository")
    if "man tally" not in text:
        problems.append("does not mention `man tally`")
    if "completions" not in text:
        problems.append("does not mention the shell completions")
    for p in problems:
        print(f"check-readme: README.md: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"README.md: {checked} paths and links checked, all in the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
