#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every relative link of the documentation leads somewhere: docs/*.md, the top-level
*.md files and helm/spinlane/README.md.

    test-links.py [FILE.md ...]     (default: the files above)

For each Markdown link or image outside code (inline code, fenced and indented blocks):
a relative target must exist in the tree; an anchor (`file.md#x` or `#x`) must be a
heading of that Markdown file under GitHub's rules for heading ids (the rendered text
lower-cased, everything but letters, digits, spaces, '-' and '_' dropped, each space a
'-', a repeated id suffixed -1, -2, ...) or an explicit <a name|id="x">. Links with a
scheme (https:, mailto:) are not fetched. Exit 0 pass, 1 fail (each broken link printed
with file:line).
"""

import os
import re
import sys
import unicodedata

SRC = os.environ.get("SPINLANE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
ANCHOR_TAG = re.compile(r"<a\s+[^>]*?(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
# [text](target "title") and ![alt](target); the text may hold one level of brackets
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")


def inline_text(s):
    """The text GitHub renders for a heading's inline Markdown (what its id is made of)."""
    s = re.sub(r"`([^`]*)`", r"\1", s)                       # code spans
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)         # links and images: their text
    s = re.sub(r"<[^>]+>", "", s)                            # inline HTML
    s = re.sub(r"(\*\*|__)(.+?)\1", r"\2", s)                # strong
    s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", s)  # emphasis with *
    s = re.sub(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)", r"\1", s)          # emphasis with _
    return s


def slug(text):
    """GitHub's heading id (github-slugger): lower case; drop what is not a letter, a
    digit, a mark, '-', '_' or a space; each space becomes '-'."""
    out = []
    for ch in inline_text(text).strip().lower():
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LNM":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def code_mask(lines):
    """Per line: True inside a fenced code block (the fences included)."""
    mask, fence = [], None
    for ln in lines:
        m = FENCE.match(ln)
        if fence:
            mask.append(True)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not ln.strip()[len(m.group(1)):]:
                fence = None
        elif m:
            fence = m.group(1)
            mask.append(True)
        else:
            mask.append(False)
    return mask


def indented_blocks(lines):
    """Indented code blocks: a run of lines indented 4+ after a blank line, outside lists
    is what GitHub shows as code; the docs use them for commands. Lines of such a run
    (blank lines inside it included) are code."""
    code = [False] * len(lines)
    i = 0
    while i < len(lines):
        if (i == 0 or not lines[i - 1].strip()) and lines[i].startswith("    ") and lines[i].strip() and \
                not re.match(r"\s*([-*+]|\d+[.)])\s", lines[i]):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                code[j] = True
                j += 1
            i = j
        else:
            i += 1
    return code


def anchors_of(path, cache={}):
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fenced = code_mask(lines)
    ids, seen = set(), {}
    for i, ln in enumerate(lines):
        if fenced[i]:
            continue
        for a in ANCHOR_TAG.findall(ln):
            ids.add(a)
        text = None
        m = HEADING.match(ln)
        if m:
            text = m.group(2)
        elif i > 0 and SETEXT.match(ln) and lines[i - 1].strip() and not fenced[i - 1] and \
                not HEADING.match(lines[i - 1]) and (ln.strip()[0] == "=" or not lines[i - 1].lstrip().startswith(("-", "*", "|"))):
            text = lines[i - 1].strip()
        if text is None:
            continue
        s = slug(text)
        n = seen.get(s, 0)
        seen[s] = n + 1
        ids.add(s if n == 0 else "%s-%d" % (s, n))
    cache[path] = ids
    return ids


def strip_code_spans(ln):
    return re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), ln)


def check_file(path):
    """The broken links of one Markdown file, as "file:line: target: why"."""
    bad = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fenced = code_mask(lines)
    indented = indented_blocks(lines)
    rel = os.path.relpath(path, SRC)
    for i, ln in enumerate(lines):
        if fenced[i] or indented[i]:
            continue
        text = strip_code_spans(ln)
        targets = LINK.findall(text)
        m = REFDEF.match(text)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t):
                continue  # https:, mailto: ...: not fetched
            file_part, _, anchor = t.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if file_part.startswith("/"):
                target = os.path.normpath(os.path.join(SRC, file_part.lstrip("/")))
            if not os.path.exists(target):
                bad.append("%s:%d: %s: no such file %s" % (rel, i + 1, t, os.path.relpath(target, SRC)))
                continue
            if anchor and target.endswith(".md") and os.path.isfile(target):
                if anchor not in anchors_of(target):
                    bad.append("%s:%d: %s: no heading or anchor '%s' in %s" % (rel, i + 1, t, anchor, os.path.relpath(target, SRC)))
    return bad


def default_files():
    files = [os.path.join(SRC, f) for f in sorted(os.listdir(SRC)) if f.endswith(".md")]
    docs = os.path.join(SRC, "docs")
    files += [os.path.join(docs, f) for f in sorted(os.listdir(docs)) if f.endswith(".md")]
    files.append(os.path.join(SRC, "helm", "spinlane", "README.md"))
    return files


def self_test():
    """The slug rules on headings of known GitHub ids (a rule that cannot fail fails)."""
    cases = {
        "2. Node pool, kubelet and labels": "2-node-pool-kubelet-and-labels",
        "`kernel_args` — boot arguments the agent writes": "kernel_args--boot-arguments-the-agent-writes",
        "Which CPUs the driver runs on": "which-cpus-the-driver-runs-on",
        "Hugepages: whose hugetlbfs?": "hugepages-whose-hugetlbfs",
        "2.4 `SMTAlignmentError`": "24-smtalignmenterror",
        "**Bold** and *em* [link](x.md)": "bold-and-em-link",
        "Per-node configs": "per-node-configs",
    }
    bad = []
    for text, want in cases.items():
        if slug(text) != want:
            bad.append("slug(%r) = %r, want %r" % (text, slug(text), want))
    return bad


def main(argv):
    files = [os.path.abspath(a) for a in argv[1:]] or default_files()
    bad = self_test()
    n = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            n += len(LINK.findall(fh.read()))
        bad += check_file(f)
    for b in bad:
        print("FAIL: " + b)
    print("%d file(s), %d link(s), %d broken" % (len(files), n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
