#!/usr/bin/env python3
"""Two rules of the source tree that a compiler does not check (docs/layout.md maps the tree):

  lengths   no function in src/ is longer than --max lines (from its signature to its closing brace),
            except those listed in tools/function_length_exceptions.txt with the reason;
  includes  the layers include downwards only (core <- host, cuda <- petsc), and within a layer no
            two modules (a .hpp/.cuh with its .cpp/.cu) include each other, directly or around a cycle.

    check_structure.py lengths [--max 80] [--exceptions FILE] [ROOT]
    check_structure.py includes [ROOT]
    check_structure.py self-test

ROOT is the repository (default: the folder above this script). Exits 1 and names each offence.
No dependency beyond Python 3: the C++/CUDA scan strips comments, literals and preprocessor lines, then
matches braces; a brace opens a function when the text before it has a parameter list and is not a
control statement, a namespace, a class or an initializer.
"""
import argparse
import os
import re
import sys

SOURCE_EXT = (".cpp", ".cu", ".hpp", ".cuh", ".h", ".c")
# Which layer may include which (src/<layer>/...): a layer includes itself and the ones listed.
LAYERS = {"core": {"core"}, "host": {"core", "host"}, "cuda": {"core", "cuda"}, "petsc": {"core", "host", "cuda", "petsc"}}
NOT_FUNCTION_HEADS = re.compile(r"^(namespace|class|struct|union|enum|extern|if|for|while|switch|do|else|try|catch|return|"
                                r"case|default)\b")


def strip_code(text):
    """The text with comments, string and character literals and preprocessor lines blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if c == "R" and text.startswith('R"', i):  # raw string R"delim( ... )delim"
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                end = n if end < 0 else end + len(m.group(1)) + 2
                out.append('""' + "\n" * text.count("\n", i, end))
                i = end
                continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def function_name(head):
    head = re.sub(r"__launch_bounds__\s*\([^)]*\)|__attribute__\s*\(\(.*?\)\)|alignas\s*\([^)]*\)", " ", head)
    head = re.sub(r"template\s*<[^{}]*?>\s*(?=[A-Za-z_])", " ", head)
    m = re.search(r"((?:[A-Za-z_~][\w]*\s*(?:<[^()]*?>)?\s*::\s*)*(?:operator\s*[^\s(]+|operator\s*\(\)|~?[A-Za-z_]\w*))\s*\(", head)
    return re.sub(r"\s+", "", m.group(1)) if m else head.strip()[:40]


def is_function_head(head):
    h = " ".join(head.split())
    if "(" not in h or ")" not in h or NOT_FUNCTION_HEADS.match(h):
        return False
    first_paren = h.index("(")
    if "=" in h[:first_paren].replace("==", "").replace("operator=", ""):
        return False  # an initializer: T x = f(...) {...} or a lambda assigned to a variable
    tail = h[h.rindex(")") + 1:]
    # after the parameter list: qualifiers, a trailing return type or a constructor's initializer list
    return re.fullmatch(r"\s*((const|noexcept|override|final|mutable|volatile|&|&&|try)\s*)*(->.*|:.*)?\s*", tail) is not None


def functions(text):
    """(name, first line, last line) of every function defined in the text, outermost only."""
    code = strip_code(text)
    found, stack = [], []  # stack of (is_function, start line, name)
    head_start = 0
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    for m in re.finditer(r"[{};]", code):
        ch, pos = m.group(), m.start()
        if ch == "{":
            inside = any(f for f, _, _ in stack)
            head = code[head_start:pos]
            if not inside and is_function_head(head):
                first = head_start + (len(head) - len(head.lstrip()))
                stack.append((True, line_of(first), function_name(head)))
            else:
                stack.append((False, 0, ""))
            head_start = pos + 1
        elif ch == "}":
            if stack:
                is_fn, start, name = stack.pop()
                if is_fn:
                    found.append((name, start, line_of(pos)))
            head_start = pos + 1
        else:
            if not any(f for f, _, _ in stack):
                head_start = pos + 1
    return found


def source_files(root):
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                yield os.path.join(d, f)


def read_exceptions(path):
    allowed = {}
    if path and os.path.exists(path):
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if line:
                where, limit = line.rsplit(None, 1) if line[-1].isdigit() else (line, "100000")
                allowed[where] = int(limit)
    return allowed


def check_lengths(root, max_lines, exceptions):
    allowed, bad, count = read_exceptions(exceptions), [], 0
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        for name, first, last in functions(open(path, encoding="utf-8", errors="replace").read()):
            count += 1
            length = last - first + 1
            limit = allowed.get(f"{rel}:{name}", max_lines)
            if length > limit:
                bad.append(f"{rel}:{first}: {name} is {length} lines (at most {limit})")
    for b in bad:
        print(b)
    print(f"{count} functions in src/, {len(bad)} longer than allowed (--max {max_lines}, exceptions: {exceptions})")
    return not bad


def includes_of(path):
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(path, encoding="utf-8", errors="replace").read(), re.M)


def check_includes(root):
    src, bad = os.path.join(root, "src"), []
    graph = {}  # module (layer/name without extension) -> modules it includes
    for path in source_files(root):
        rel = os.path.relpath(path, src)
        layer = rel.split(os.sep)[0]
        module = os.path.splitext(rel)[0]
        for inc in includes_of(path):
            target_layer = inc.split("/")[0]
            if target_layer in LAYERS and layer in LAYERS and target_layer not in LAYERS[layer]:
                bad.append(f"src/{rel}: includes {inc}: {layer} may include only {sorted(LAYERS[layer])}")
            if target_layer in LAYERS and os.path.splitext(inc)[0] != module:
                graph.setdefault(module, set()).add(os.path.splitext(inc)[0])
    # a cycle between modules: depth-first search with colours
    colour, path_stack = {}, []

    def visit(m):
        colour[m] = 1
        path_stack.append(m)
        for t in sorted(graph.get(m, ())):
            if colour.get(t) == 1:
                bad.append("include cycle: " + " -> ".join(path_stack[path_stack.index(t):] + [t]))
            elif t not in colour:
                visit(t)
        path_stack.pop()
        colour[m] = 2

    for m in sorted(graph):
        if m not in colour:
            visit(m)
    for b in bad:
        print(b)
    print(f"{len(graph)} modules in src/, {len(bad)} include offences")
    return not bad


def self_test():
    sample = "\n".join([
        "namespace a {",
        "struct S {",
        "  int f(int x) const",
        "  {",
        "    if (x) { return 1; }",          # a block inside a function
        '    const char *s = "}{";',         # braces in a literal
        "    return 0; // }",                # and in a comment
        "  }",
        "};",
        "static const int table[] = {1, 2};",
        "#define M(x) do { x; } while (0)",
        "template <typename T> __global__ void __launch_bounds__(256) k(T *p)",
        "{",
        "  auto g = [&](int i) { p[i] = 0; };",
        "}",
        "S::S(int v) : v_(v) {}",
        "}",
    ])
    got = [(n, a, b) for n, a, b in functions(sample)]
    want = [("f", 3, 8), ("k", 12, 15), ("S::S", 16, 16)]
    ok = got == want
    print("self-test:", "passed" if ok else f"FAILED: got {got}, want {want}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("check", choices=["lengths", "includes", "self-test"])
    ap.add_argument("root", nargs="?", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--max", type=int, default=80)
    ap.add_argument("--exceptions", default=None)
    a = ap.parse_args()
    if a.check == "self-test":
        ok = self_test()
    elif a.check == "lengths":
        ok = check_lengths(a.root, a.max, a.exceptions or os.path.join(a.root, "tools", "function_length_exceptions.txt"))
    else:
        ok = check_includes(a.root)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
