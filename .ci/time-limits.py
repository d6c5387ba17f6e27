#!/usr/bin/env python3
"""Every Swift test has a time limit, checked: each `@Test` must sit in a suite whose `@Suite(...)` has a
`.timeLimit(...)` trait (the trait is recursive: nested suites and extensions of the suite's type inherit it), or
carry one itself. Without it a test that hangs cooperatively blocks the run instead of failing with its name in the
log (.ci/run bounds the whole run for hangs the trait cannot end). Run from the repository root with the folders to
check (default: Tests and loadtest/Tests); exits 1 and names each file and line of a test without a limit.
"""
import os
import re
import sys

TOKEN = re.compile(
    r"@Suite\b|@Test\b|\b(?:struct|class|enum|actor|extension)\s+(?!func\b|var\b|let\b)([A-Za-z_][\w.]*)|[{}]")


def blank(text):
    """The source with comments and string literals blanked out (newlines kept, so offsets and lines still match)."""
    out = []
    i, n = 0, len(text)
    keep = lambda s: "".join(c if c == "\n" else " " for c in s)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(keep(text[i:end]))
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep(text[i:j]))
            i = j
        elif text[i] == '"' or (text[i] == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            j = i + hashes
            quote = '"""' if text.startswith('"""', j) else '"'
            closing = quote + "#" * hashes
            j += len(quote)
            while j < n and not text.startswith(closing, j):
                j += 2 if (text[j] == "\\" and not hashes) else 1
            j = min(n, j + len(closing))
            out.append(keep(text[i:j]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def attribute_arguments(text, at):
    """The text of the parenthesized arguments right after `at` (an attribute's name), or "" without any."""
    j = at
    while j < len(text) and text[j] in " \t\n":
        j += 1
    if j >= len(text) or text[j] != "(":
        return ""
    depth, k = 0, j
    while k < len(text):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return text[j:k + 1]
        k += 1
    return text[j:]


def scan(text):
    """Yields ("type", name, has_limit, enclosing) for each type or extension, and ("test", offset, has_limit,
    enclosing) for each @Test, where `enclosing` lists the (kind, qualified name, has_limit) scopes around it."""
    scopes = []  # (kind, qualified name or None, has_limit)
    pending_suite = None
    pending_type = None
    for match in TOKEN.finditer(text):
        token = match.group(0)
        if token == "@Suite":
            pending_suite = attribute_arguments(text, match.end())
        elif token == "@Test":
            yield ("test", match.start(), ".timeLimit(" in attribute_arguments(text, match.end()), list(scopes))
        elif token == "{":
            if pending_type:
                kind, name = pending_type
                outer = [s[1] for s in scopes if s[1]]
                qualified = name if kind == "extension" else ".".join(outer[-1:] + [name])
                limited = kind != "extension" and pending_suite is not None and ".timeLimit(" in pending_suite
                scopes.append((kind, qualified, limited))
                yield ("type", qualified, limited, list(scopes[:-1]))
            else:
                scopes.append(("block", None, False))
            pending_type, pending_suite = None, None
        elif token == "}":
            if scopes:
                scopes.pop()
        else:
            kind = token.split()[0]
            pending_type = (kind, match.group(1))


def main(roots):
    files = []
    for root in roots:
        for folder, _, names in os.walk(root):
            files += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".swift")]
    sources = {path: blank(open(path, encoding="utf-8").read()) for path in sorted(files)}

    # Pass 1: which types have a limit, directly or through a type around them (by qualified name: Outer.Inner).
    limited = set()
    for text in sources.values():
        for item in scan(text):
            if item[0] == "type" and (item[2] or any(s[2] for s in item[3])):
                limited.add(item[1])

    def covered(scope):
        kind, name, has_limit = scope
        if has_limit:
            return True
        if kind == "extension" and name:
            parts = name.split(".")
            return any(".".join(parts[:i]) in limited for i in range(1, len(parts) + 1))
        return bool(name) and name in limited

    missing = []
    for path, text in sources.items():
        for item in scan(text):
            if item[0] == "test" and not item[2] and not any(covered(s) for s in item[3]):
                missing.append(f"{path}:{text.count(chr(10), 0, item[1]) + 1}")
    for place in missing:
        print(f"time limits: {place}: a @Test without a time limit (add .timeLimit to its @Suite, or to it)")
    if missing:
        return 1
    print(f"time limits: every test in {len(sources)} files has one")
    return 0


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    sys.exit(main(sys.argv[1:] or ["Tests", "loadtest/Tests"]))
