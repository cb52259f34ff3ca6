"""Checks that every lit test runs only Python code whose imports the default
`scripts/bootstrap.sh` provides.

  check_script_deps.py SRC_ROOT [TEST_ROOT]

The modules a test may import are the standard library's, those of the
`python3-*` packages in the bootstrap's default package list (not those its
--golden or --bench options add), and those named by the test's
`REQUIRES:` features (a test with `REQUIRES: torch` may import torch; lit
skips it where torch is absent). For each test under TEST_ROOT (default
SRC_ROOT/test, `Inputs` folders excluded as lit excludes them) the check
reads the RUN lines: the code of `python -c "..."`, every Python script they
name (`%S/...`, `%p/...`, `%seqc_src_root/...`), the scripts a named shell
script runs, and, recursively, the project's own modules those scripts
import. An import inside `try: ... except ImportError` is optional and not
counted. Prints one line per offending import and exits 1, else prints the
number of tests and scripts checked.
"""
import ast
import os
import re
import sys

TEST_SUFFIXES = (".test", ".mlir", ".seq")
ABSENT_OK = ("ImportError", "ModuleNotFoundError", "Exception")


def bootstrap_modules(root):
    """The modules of the python3-* packages the default bootstrap installs:
    the first `packages=( ... )` list of scripts/bootstrap.sh."""
    path = os.path.join(root, "scripts", "bootstrap.sh")
    with open(path) as f:
        text = f.read()
    match = re.search(r"^packages=\((.*?)^\)", text, re.S | re.M)
    if not match:
        sys.exit("check_script_deps: no packages=( ... ) list in %s" % path)
    words = re.sub(r"#.*", "", match.group(1)).split()
    return {w[len("python3-"):].replace("-", "_") for w in words
            if w.startswith("python3-")}


def run_lines(path):
    """The test's RUN commands (continuation lines joined) and its REQUIRES
    features."""
    commands, requires, current = [], set(), None
    with open(path, errors="replace") as f:
        for line in f:
            match = re.search(r"\b(RUN|REQUIRES):(.*)$", line)
            if not match:
                continue
            kind, body = match.group(1), match.group(2).strip()
            if kind == "REQUIRES":
                requires.update(f.strip() for f in body.split(","))
                continue
            current = body if current is None else current + " " + body
            if current.endswith("\\"):
                current = current[:-1]
            else:
                commands.append(current)
                current = None
    if current is not None:
        commands.append(current)
    return commands, requires


class Imports(ast.NodeVisitor):
    """Top-level module names a module imports unconditionally."""

    def __init__(self):
        self.names = []
        self.guarded = 0

    def visit_Try(self, node):
        optional = any(
            h.type is None or any(
                isinstance(n, ast.Name) and n.id in ABSENT_OK
                for n in ast.walk(h.type))
            for h in node.handlers)
        self.guarded += optional
        for child in node.body:
            self.visit(child)
        self.guarded -= optional
        for child in node.handlers + node.orelse + node.finalbody:
            self.visit(child)

    visit_TryStar = visit_Try

    def visit_Import(self, node):
        if not self.guarded:
            self.names += [(a.name.split(".")[0], node.lineno)
                           for a in node.names]

    def visit_ImportFrom(self, node):
        if not self.guarded and node.level == 0 and node.module:
            self.names.append((node.module.split(".")[0], node.lineno))


def is_python(path):
    if path.endswith(".py"):
        return True
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def is_shell(path):
    if path.endswith(".sh"):
        return True
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return False
    return first.startswith(b"#!") and (b"bash" in first or b"/sh" in first)


class Checker:
    def __init__(self, root, allowed):
        self.root = root
        self.allowed = allowed
        self.stdlib = set(sys.stdlib_module_names)
        self.local = {}  # module name -> the project's files of that name
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames
                           if not d.startswith(".") and
                           not d.startswith("build")]
            for name in filenames:
                if name.endswith(".py"):
                    self.local.setdefault(name[:-3], []).append(
                        os.path.join(dirpath, name))
            # A package (tools/python/seqc): `import seqc` runs its
            # __init__.py.
            if "__init__.py" in filenames:
                self.local.setdefault(os.path.basename(dirpath), []).append(
                    os.path.join(dirpath, "__init__.py"))
        self.imports = {}  # script -> [(module, script, line)], memoized
        self.scripts = set()

    def resolve_local(self, module, script):
        """The project's file that `import module` in `script` names: one in
        the script's own folder, else the only one of that name, else the
        nearest one to the script."""
        here = os.path.join(os.path.dirname(script), module + ".py")
        if os.path.isfile(here):
            return here
        candidates = self.local.get(module, [])
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        return max(candidates, key=lambda c: len(
            os.path.commonpath([c, script])))

    def script_imports(self, script):
        """(module, file, line) for every unconditional import of a module
        that is neither the standard library's nor the project's own,
        following the project's own modules."""
        if script in self.imports:
            return self.imports[script]
        self.imports[script] = []
        self.scripts.add(script)
        try:
            with open(script) as f:
                tree = ast.parse(f.read(), script)
        except (OSError, SyntaxError, ValueError) as error:
            sys.exit("check_script_deps: cannot read %s: %s" % (script, error))
        visitor = Imports()
        visitor.visit(tree)
        found = []
        for module, line in visitor.names:
            if module in self.stdlib or module == "__future__":
                continue
            local = self.resolve_local(module, script)
            if local:
                found += self.script_imports(local)
            else:
                found.append((module, script, line))
        self.imports[script] = found
        return found

    def shell_scripts(self, script):
        """The Python scripts a shell script names (`$root/x/y.py`, or a
        path relative to the script's folder or the project's root)."""
        with open(script, errors="replace") as f:
            text = f.read()
        out = []
        for token in set(re.findall(r"[A-Za-z0-9_./$-]+\.py\b", text)):
            token = re.sub(r"^(\$\w+)?/", "", token)
            for base in (os.path.dirname(script), self.root):
                path = os.path.normpath(os.path.join(base, token))
                if os.path.isfile(path):
                    out.append(path)
                    break
        return out

    def check_test(self, test):
        commands, requires = run_lines(test)
        allowed = self.allowed | requires
        problems = []
        here = os.path.dirname(test)
        for command in commands:
            # Inline code: python -c "...".
            for code in re.findall(r"-c\s+(\"[^\"]*\"|'[^']*')", command):
                for module in re.findall(
                        r"(?:^|[;\s])(?:import|from)\s+([A-Za-z_]\w*)",
                        code[1:-1]):
                    if module not in self.stdlib and module not in allowed:
                        problems.append("%s: RUN line imports '%s'" %
                                        (test, module))
            # Scripts named by path.
            for token in re.findall(
                    r"(%S|%p|%seqc_src_root)(/[A-Za-z0-9_./-]+)", command):
                base = self.root if token[0] == "%seqc_src_root" else here
                path = os.path.normpath(base + token[1])
                if not os.path.isfile(path):
                    continue
                scripts = []
                if is_python(path):
                    scripts = [path]
                elif is_shell(path):
                    scripts = self.shell_scripts(path)
                for script in scripts:
                    for module, where, line in self.script_imports(script):
                        if module not in allowed:
                            problems.append(
                                "%s: runs %s, which imports '%s' (%s:%d)" %
                                (test, os.path.relpath(script, self.root),
                                 module, os.path.relpath(where, self.root),
                                 line))
        return sorted(set(problems))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    root = os.path.abspath(sys.argv[1])
    tests = os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else \
        os.path.join(root, "test")
    allowed = bootstrap_modules(root)
    checker = Checker(root, allowed)
    problems, count = [], 0
    for dirpath, dirnames, filenames in os.walk(tests):
        dirnames[:] = sorted(d for d in dirnames if d != "Inputs")
        for name in sorted(filenames):
            if name.endswith(TEST_SUFFIXES):
                count += 1
                problems += checker.check_test(os.path.join(dirpath, name))
    for problem in problems:
        print("error: " + problem)
    if problems:
        print("%d import(s) that the default scripts/bootstrap.sh does not "
              "provide (%s and the standard library): install the package "
              "in the bootstrap's default list, use a NumPy reference, or "
              "mark the test `REQUIRES: <module>`" %
              (len(problems), ", ".join(sorted(allowed)) or "nothing"))
        sys.exit(1)
    print("checked %d tests and %d scripts: every import is provided" %
          (count, len(checker.scripts)))


main()
