#!/usr/bin/env python3
"""md_links.py - every relative link of some markdown files resolves.

    md_links.py [--within DIR]... FILE.md...

For each file, every inline link or image `[text](target)` and every
reference definition `[name]: target` outside code (fenced or indented
blocks, inline code spans) whose target is not a URL (http:, https:,
mailto:, file:, ...) must name a file or directory that exists, relative
to the file's own directory (symbolic links followed). A `#anchor` must be
a heading of the target markdown file (or of the file itself for a bare
`#anchor`), as GitHub makes the anchor: the heading's text without its
markup, lower-cased, characters other than letters, digits, `-`, `_` and
spaces dropped, spaces made `-`, `-1`, `-2`, ... on repeats; an HTML
`id="..."` or `name="..."` counts too. With --within, the resolved target
must also lie under one of those directories (an installed doc tree).

Prints one line per broken link (FILE:LINE: TARGET: why) and a summary;
exit 0 when all resolve, 1 otherwise, 2 on usage errors.
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ID = re.compile(r"""<[^>]*\b(?:id|name)=["']([^"']+)["']""")


def prose_lines(text):
    """(line number, line) of the lines outside code blocks, inline code removed."""
    fence = None
    prev_blank = True
    in_indented = False
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            prev_blank = False
            continue
        if m:
            fence = m.group(1)
            continue
        if not stripped:
            prev_blank = True
            continue
        indented = line.startswith("    ") or line.startswith("\t")
        if indented and (prev_blank or in_indented):
            in_indented = True
            prev_blank = False
            continue
        in_indented = False
        prev_blank = False
        yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)


def slug(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # emphasis underscores, not snake_case
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    path = os.path.realpath(path)
    if path not in _anchors:
        seen, found = {}, set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fence = None
        for line in text.split("\n"):
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
            if fence:
                if m and m.group(1)[0] == fence[0]:
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            for a in HTML_ID.findall(line):
                found.add(a)
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else f"{s}-{k}")
        _anchors[path] = found
    return _anchors[path]


def main(argv):
    within, files = [], []
    it = iter(argv)
    for a in it:
        if a == "--within":
            d = next(it, None)
            if d is None:
                print("usage: md_links.py [--within DIR]... FILE.md...", file=sys.stderr)
                return 2
            within.append(os.path.realpath(d))
        else:
            files.append(a)
    if not files:
        print("usage: md_links.py [--within DIR]... FILE.md...", file=sys.stderr)
        return 2
    bad, checked = 0, 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        base = os.path.dirname(os.path.abspath(f))
        for n, line in prose_lines(text):
            targets = LINK.findall(line)
            r = REFDEF.match(line)
            if r:
                targets.append(r.group(1))
            for t in targets:
                if SCHEME.match(t) or t.startswith("//"):
                    continue
                checked += 1
                path, _, anchor = t.partition("#")
                where = os.path.join(base, path) if path else os.path.abspath(f)
                why = None
                if not os.path.exists(where):
                    why = "no such file"
                elif within and not any(
                        os.path.realpath(where) == d or os.path.realpath(where).startswith(d + os.sep)
                        for d in within):
                    why = f"resolves to {os.path.realpath(where)}, outside {' '.join(within)}"
                elif anchor:
                    if not where.endswith(".md") or os.path.isdir(where):
                        why = "an anchor into a file that is not markdown"
                    elif anchor not in anchors(where):
                        why = f"no heading makes the anchor #{anchor}"
                if why:
                    bad += 1
                    print(f"{f}:{n}: {t}: {why}")
    print(f"md_links: {len(files)} files, {checked} relative links, {bad} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
