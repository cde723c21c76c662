#!/usr/bin/env bash
# Dead-link check of the documentation and of the source comments that point into it. No arguments;
# run from anywhere in the clone. Exits 1 and prints one line per dead link (file:line: target: why),
# 0 when every link resolves.
#
# What it checks:
#   - README.md, docs/**/*.md, bench/**/*.md, tests/**/*.md: every relative Markdown link, inline
#     [text](target) or a reference definition [label]: target, outside code spans and fenced blocks:
#     the file or folder must exist, and a #fragment on a Markdown target (or a link to #fragment in the
#     same file) must name one of its headings (GitHub's slugs) or an HTML id/name in it.
#   - the same files, outside code spans and fenced blocks (commands there name paths on the machine
#     they ran on), and src/**, include/**, every text path bench/results/..., docs/....md[#fragment]
#     and bare result name YYYY-MM-DD-....md (a result in bench/results/).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - <<'EOF'
import os, re, sys, glob, unicodedata

ROOT = os.getcwd()
dead = []

def md_files():
    files = ['README.md']
    for top in ('docs', 'bench', 'tests'):
        files += glob.glob(f'{top}/**/*.md', recursive=True)
    return sorted(f for f in files if os.path.isfile(f))

def src_files():
    out = []
    for top in ('src', 'include'):
        for dirpath, _, names in os.walk(top):
            out += [os.path.join(dirpath, n) for n in names]
    return sorted(out)

def slug(heading):
    """GitHub's anchor for a heading: links reduced to their text, lower case, punctuation dropped
    (letters, digits, '_', '-' and spaces kept), spaces to hyphens."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)
    text = re.sub(r'<[^>]+>', '', text).strip().lower()
    text = ''.join(c for c in text if c in ' -_' or unicodedata.category(c)[0] in 'LN')
    return text.replace(' ', '-')

anchor_cache = {}
def anchors(path):
    if path not in anchor_cache:
        found, seen, fenced = set(), {}, False
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                if re.match(r'\s*(```|~~~)', line):
                    fenced = not fenced
                    continue
                if fenced:
                    continue
                m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
                if m:
                    s = slug(m.group(1))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    found.add(s if n == 0 else f'{s}-{n}')
                found.update(re.findall(r'<a\s+(?:name|id)="([^"]+)"', line))
        anchor_cache[path] = found
    return anchor_cache[path]

def check_target(where, base_dir, target, origin):
    """target: a path (relative to base_dir) with an optional #fragment."""
    path, _, frag = target.partition('#')
    full = os.path.normpath(os.path.join(base_dir, path)) if path else origin
    if not os.path.exists(full):
        dead.append(f'{where}: {target}: no such file')
        return
    if frag and full.endswith('.md') and os.path.isfile(full) and frag.lower() not in anchors(full):
        dead.append(f'{where}: {target}: no heading or anchor "{frag}" in {os.path.relpath(full)}')

RESULT_PATH = re.compile(r'(?<![\w/.-])bench/results/[A-Za-z0-9._/-]*[A-Za-z0-9_/-]')
DOC_PATH = re.compile(r'(?<![\w/.-])docs/[A-Za-z0-9._/-]+\.md(?:#[A-Za-z0-9_-]+)?')
BARE_RESULT = re.compile(r'(?<![\w/.-])\d{4}-\d{2}-\d{2}-[A-Za-z0-9._-]*\.md\b')

def check_text_paths(where, text):
    for p in RESULT_PATH.findall(text):
        check_target(where, ROOT, p, None)
    for p in DOC_PATH.findall(text):
        check_target(where, ROOT, p, None)
    for p in BARE_RESULT.findall(text):
        if not os.path.exists(os.path.join('bench/results', p)):
            dead.append(f'{where}: {p}: no such result in bench/results')

INLINE_LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')

for md in md_files():
    base = os.path.dirname(md)
    fenced = False
    with open(md, encoding='utf-8', errors='replace') as f:
        for no, line in enumerate(f, 1):
            if re.match(r'\s*(```|~~~)', line):
                fenced = not fenced
                continue
            if fenced or line.startswith('    ') and not line.lstrip().startswith(('|', '-', '*')) and not re.search(r'\]\(', line):
                continue  # fenced or indented code
            prose = re.sub(r'(`+)(.+?)\1', '', line)  # code spans out
            where = f'{md}:{no}'
            targets = INLINE_LINK.findall(prose)
            m = REF_DEF.match(prose)
            if m:
                targets.append(m.group(1))
            for t in targets:
                if not t or re.match(r'[a-zA-Z][a-zA-Z0-9+.-]*:', t) or t.startswith('/'):
                    continue  # empty, a URL (http:, mailto:) or an absolute path
                check_target(where, base, t, md)
            # text paths: outside the link targets just checked
            check_text_paths(where, INLINE_LINK.sub(lambda m: m.group(0).split('](')[0], prose))

for src in src_files():
    try:
        with open(src, encoding='utf-8') as f:
            lines = f.readlines()
    except UnicodeDecodeError:
        continue
    for no, line in enumerate(lines, 1):
        check_text_paths(f'{src}:{no}', line)

dead = list(dict.fromkeys(dead))  # a path named both as a link and in its text counts once
for d in dead:
    print(d)
checked = len(md_files()) + len(src_files())
print(f'check_links: {len(dead)} dead link(s) in {checked} files' if dead else f'check_links: every link resolves ({checked} files)',
      file=sys.stderr)
sys.exit(1 if dead else 0)
EOF
