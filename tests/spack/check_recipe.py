#!/usr/bin/env python3
# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""Checks the Spack recipe against the project's CMake options, without Spack.

Loads spack/spack_repo/minisgd/packages/minisgd/package.py with a stub of Spack's directive
API, evaluates cmake_args() for every value of every boolean variant (one flipped at a time,
with and without CUDA), and checks that

  * every variant reaches the build: it feeds a CMake option through define_from_variant, or
    it is a backend variant propagated to Kokkos (BACKEND_VARIANTS) and used in a depends_on;
  * every MINISGD_* name the recipe defines is an option of the project's CMake files;
  * every user-facing option(MINISGD_...) in the CMake files has a variant, except the
    internal ones in INTERNAL_OPTIONS;
  * every +name / ~name in a when= or conflicts() names a declared variant (a typo there
    silently switches a dependency off);
  * the stand-alone test stage (the recipe's test_* methods, `spack test run minisgd`), run
    against a stub install prefix laid out as the CMake install rules lay it out, runs every
    class-S deck of the source tree at 1 and 2 ranks and fails on a run that is not VALID.

Usage: check_recipe.py <source root>. Python 3 standard library only; exits 1 on a finding.
"""
import contextlib
import itertools
import os
import pathlib
import re
import sys
import tempfile
import types

sys.dont_write_bytecode = True  # never leave __pycache__ in the source tree

RECIPE = "spack/spack_repo/minisgd/packages/minisgd/package.py"

# Variants that select a Kokkos backend: minisgd takes its backends from the Kokkos it finds,
# so these go to Kokkos (depends_on) rather than to a CMake option of minisgd.
BACKEND_VARIANTS = {
    "serial": "Kokkos' Serial backend: kokkos+serial",
    "openmp": "Kokkos' OpenMP backend: kokkos+openmp",
    "threads": "Kokkos' C++ threads backend: kokkos+threads",
    "sycl": "Kokkos' SYCL backend: kokkos+sycl",
    "openmptarget": "Kokkos' OpenMPTarget backend: kokkos+openmptarget",
    "cuda": "Kokkos' CUDA backend: kokkos+cuda (CudaPackage)",
    "cuda_arch": "the GPU architecture of Kokkos' CUDA backend (CudaPackage)",
    "rocm": "Kokkos' HIP backend: kokkos+rocm (ROCmPackage)",
    "amdgpu_target": "the GPU architecture of Kokkos' HIP backend (ROCmPackage)",
}

# User-facing options are those a site may want to change; these are not.
INTERNAL_OPTIONS = {
    "MINISGD_TEST_RANKS": "the MPI rank counts of the test suite",
    "MINISGD_HEART_SCALE": "where the test suite finds LIBLINEAR's heart_scale",
    "MINISGD_SOURCE_DIR": "the checkout ci/gpu_host_check builds (CI only)",
    "MINISGD_TESTS_DEVICE_ONLY": "the CUDA compile check's subset of the tests (CI only)",
}


class Recorder:
    """What the directives in the class body and cmake_args() say."""

    def __init__(self):
        self.variants = {}  # name -> default
        self.whens = []  # every when= and conflicts() spec, for the variant names they use
        self.depends = []  # (spec, when)
        self.conflicts = []  # (spec, when)


REC = Recorder()


def _directive_module():
    m = types.ModuleType("spack.package")

    def variant(name, default=None, description="", values=None, multi=False, when=None, **kw):
        # Spack refuses to load a package with a variant of a reserved name (spack.variant's
        # reserved_names): the whole repository then fails, not just this package.
        if name in ("arch", "architecture", "dev_path", "namespace", "operating_system", "os",
                    "patches", "platform", "target", "commit"):
            raise SystemExit(f"spack recipe: variant '{name}' is a name Spack reserves")
        REC.variants[name] = default
        REC.whens.append(when or "")

    def depends_on(spec, when=None, type=None, **kw):
        REC.depends.append((spec, when or ""))
        REC.whens.append(when or "")

    def conflicts(spec, when=None, msg=None):
        REC.conflicts.append((spec, when or ""))
        REC.whens.extend([spec, when or ""])

    def ignore(*args, **kwargs):
        pass

    for name, fn in {"variant": variant, "depends_on": depends_on, "conflicts": conflicts}.items():
        setattr(m, name, fn)
    for name in ("version", "license", "maintainers", "requires", "patch", "provides",
                 "resource", "extends", "build_system"):
        setattr(m, name, ignore)
    # What the stand-alone test methods use (run by check_test_stage with stubs of its own).
    m.join_path = os.path.join
    m.which = lambda *names, path=None, required=False: STAGE.executable(names, path)
    m.test_part = STAGE.test_part
    m.InstallError = type("InstallError", (Exception,), {})
    m.SkipTest = type("SkipTest", (Exception,), {})
    m.__all__ = [n for n in vars(m) if not n.startswith("_")]
    return m


class _Anything:
    """spec['mpi'].prefix.bin.mpiexec and the like: any attribute, printable as a path."""

    def __init__(self, path="/stub"):
        self._path = path

    def __getattr__(self, name):
        return _Anything(self._path + "/" + name)

    def __str__(self):
        return self._path


class StubSpec:
    def __init__(self, values):
        self.values = values  # variant -> value

    def __getitem__(self, dep):
        return _Anything("/stub/" + dep)

    def satisfies(self, constraint):
        for term in constraint.split():
            if term.startswith("+"):
                ok = self.values.get(term[1:]) is True
            elif term.startswith("~"):
                ok = self.values.get(term[1:]) is False
            elif "=" in term:
                key, val = term.split("=", 1)
                ok = str(self.values.get(key)) == val
            else:
                ok = True  # a package name or version range: not what this check is about
            if not ok:
                return False
        return True


class Prefix(str):
    """Spack's install prefix: prefix.bin.minisgd is <prefix>/bin/minisgd."""

    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))


class TestStage:
    """Stubs of which() and test_part() for the recipe's test methods: every command is
    recorded, and answers with `output` (exit status 0)."""

    def __init__(self):
        self.runs = []  # argument lists
        self.output = ""

    def executable(self, names, path):
        def run(*args, output=None, error=None, **kw):
            self.runs.append([str(a) for a in args])
            return self.output if str in (output, error) else None
        return run

    @contextlib.contextmanager
    def test_part(self, pkg, name, purpose=""):
        yield


STAGE = TestStage()


class CMakePackage:
    def __init__(self, spec):
        self.spec = spec
        self.defined = []  # (cmake name, variant or None)

    def __getitem__(self, dep):  # self["kokkos"].kokkos_cxx: the dependency's package
        return _Anything("/stub/" + dep)

    def define(self, name, value):
        self.defined.append((name, None))
        return f"-D{name}={value}"

    def define_from_variant(self, name, variant=None):
        variant = variant or name.lower()
        if variant not in REC.variants:
            raise SystemExit(f"{RECIPE}: define_from_variant('{name}', '{variant}'): "
                             f"no variant '{variant}'")
        self.defined.append((name, variant))
        return f"-D{name}={self.spec.values.get(variant)}"


class CudaPackage:
    cuda_arch_values = ("70", "80", "90")


class ROCmPackage:
    amdgpu_targets = ("gfx90a", "gfx942")


class Kokkos:
    """What the recipe takes from the builtin Kokkos recipe: its devices, as
    {variant: [default, when, description]}."""

    devices_variants = {
        "cuda": [False, None, "Whether to build CUDA backend"],
        "openmp": [False, None, "Whether to build OpenMP backend"],
        "threads": [False, None, "Whether to build the C++ threads backend"],
        "serial": [False, None, "Whether to build serial backend"],
        "rocm": [False, None, "Whether to build HIP backend"],
        "sycl": [False, None, "Whether to build the SYCL backend"],
        "openmptarget": [False, "@:5.0", "Whether to build the OpenMPTarget backend"],
    }


def load_recipe(root):
    spack = types.ModuleType("spack")
    spack.package = _directive_module()
    build_systems = "spack_repo.builtin.build_systems"
    modules = {"spack": spack, "spack.package": spack.package}
    kokkos = "spack_repo.builtin.packages.kokkos"
    for name in ("spack_repo", "spack_repo.builtin", build_systems,
                 "spack_repo.builtin.packages", kokkos):
        modules[name] = types.ModuleType(name)
        modules[name].__path__ = []  # a package, so that its submodules import
    modules[build_systems + ".cmake"] = types.SimpleNamespace(CMakePackage=CMakePackage)
    modules[build_systems + ".cuda"] = types.SimpleNamespace(CudaPackage=CudaPackage)
    modules[build_systems + ".rocm"] = types.SimpleNamespace(ROCmPackage=ROCmPackage)
    modules[kokkos + ".package"] = types.SimpleNamespace(Kokkos=Kokkos)
    sys.modules.update(modules)
    # CudaPackage's and ROCmPackage's own variants, as Spack declares them.
    REC.variants.update({"cuda": False, "cuda_arch": "none",
                         "rocm": False, "amdgpu_target": "none"})
    source = (root / RECIPE).read_text()
    namespace = {"__name__": "minisgd_recipe"}
    exec(compile(source, str(root / RECIPE), "exec"), namespace)
    return namespace["Minisgd"]


def cmake_options(root):
    """option(MINISGD_...), cmake_dependent_option(MINISGD_...) and cache variables
    set(MINISGD_... CACHE ...) in the CMake files."""
    pattern = re.compile(r"^\s*(?:(?:cmake_dependent_)?option\(\s*(MINISGD_\w+)"
                         r"|set\(\s*(MINISGD_\w+)\s[^)]*?\bCACHE\b)", re.M | re.I)
    files = [p for p in root.rglob("*") if p.name == "CMakeLists.txt" or p.suffix == ".cmake"]
    options = {}
    for path in files:
        if "build" in path.relative_to(root).parts[:1]:
            continue
        for m in pattern.finditer(path.read_text()):
            options[m.group(1) or m.group(2)] = path.relative_to(root)
    return options


def spec_values():
    """Defaults, then each boolean variant flipped, each with CUDA off and on."""
    defaults = dict(REC.variants)
    booleans = [v for v, d in defaults.items() if isinstance(d, bool) and v != "cuda"]
    for cuda, flip in itertools.product((False, True), [None] + booleans):
        values = dict(defaults, cuda=cuda, cuda_arch="80" if cuda else "none")
        if flip:
            values[flip] = not values[flip]
        yield values


def check_test_stage(package, root):
    """Runs the test methods on a stub prefix whose share/ holds the decks where the CMake
    install rule puts them; checks every class-S deck runs at 1 and 2 ranks, and that a run
    printing INVALID (with exit status 0) fails the stage."""
    rule = re.search(r"install\(DIRECTORY input_decks/ DESTINATION \$\{CMAKE_INSTALL_DATADIR\}/(\S+)\)",
                     (root / "CMakeLists.txt").read_text())
    if not rule:
        yield "CMakeLists.txt: no install(DIRECTORY input_decks/ DESTINATION ${CMAKE_INSTALL_DATADIR}/...)"
        return
    tests = [n for n in vars(package) if n.startswith("test_") and callable(getattr(package, n))]
    if not tests:
        yield "no stand-alone test method (test_*): `spack test run minisgd` checks nothing"
        return
    s_decks = sorted(p.stem for p in (root / "input_decks/classes/S").glob("*.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        share = pathlib.Path(tmp, "share", rule.group(1))
        share.parent.mkdir(parents=True)
        share.symlink_to(root / "input_decks")
        pkg = package(StubSpec(dict(REC.variants)))
        pkg.prefix = Prefix(tmp)
        for output, must_fail in (("VALID: final loss ...", False),
                                  ("INVALID: final loss ...", True)):
            STAGE.runs, STAGE.output = [], output
            try:
                for name in tests:
                    getattr(pkg, name)()
                failed = None
            except Exception as e:  # the recipe's own error types
                failed = e
            if must_fail and not failed:
                yield "the test stage passes runs that print INVALID"
            if must_fail:
                continue
            if failed:
                yield f"the test stage fails on VALID runs: {type(failed).__name__}: {failed}"
                continue
            ran = set()
            for args in STAGE.runs:
                decks = [a for a in args if a.endswith(".yaml")]
                ranks = args[args.index("-n") + 1] if "-n" in args else "?"
                if len(decks) == 1 and any(a.endswith("/bin/minisgd") for a in args):
                    ran.add((pathlib.Path(decks[0]).stem, ranks))
            for deck, ranks in itertools.product(s_decks, ("1", "2")):
                if (deck, ranks) not in ran:
                    yield f"the test stage does not run class-S deck {deck} at {ranks} rank(s)"


def main(root):
    package = load_recipe(root)
    options = cmake_options(root)
    defined = set()
    for values in spec_values():
        pkg = package(StubSpec(values))
        pkg.cmake_args()
        names = [n for n, _ in pkg.defined]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            yield f"cmake_args() defines {sorted(dup)} more than once for {values}"
        defined.update(pkg.defined)

    for used in sorted(set(re.findall(r"(?:^|\s)[+~](\w+)", " ".join(REC.whens)))):
        if used not in REC.variants:
            yield f"when=/conflicts() use '+{used}' or '~{used}', which is no variant"

    fed = {v for _, v in defined if v}
    when_clauses = " ".join(w for _, w in REC.depends)
    for v in sorted(REC.variants):
        if v in fed:
            continue
        if v in BACKEND_VARIANTS:
            if not re.search(rf"(\+|\b){v}\b", when_clauses):
                yield f"backend variant '{v}' is not propagated by any depends_on(..., when=...)"
            continue
        yield f"variant '{v}' reaches no CMake option (define_from_variant) and is no backend variant"

    for name, variant in sorted(defined, key=lambda d: (d[0], d[1] or "")):
        if name.startswith("MINISGD_") and name not in options:
            yield (f"cmake_args() defines {name}" + (f" from variant '{variant}'" if variant else "")
                   + ", which is no option(...) of the CMake files")

    from_variant = {n for n, v in defined if v}
    for name, path in sorted(options.items()):
        if name not in from_variant and name not in INTERNAL_OPTIONS:
            yield f"{path}: option {name} has no variant (define_from_variant) in {RECIPE}"
    for name in sorted(set(INTERNAL_OPTIONS) - set(options)):
        yield f"INTERNAL_OPTIONS lists {name}, which is no option any more"
    yield from check_test_stage(package, root)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_recipe.py <minisgd source root>")
    findings = list(main(pathlib.Path(sys.argv[1]).resolve()))
    for f in findings:
        print("spack recipe:", f)
    if findings:
        sys.exit(1)
    print(f"spack recipe: {len(REC.variants)} variants, every one reaches the build; "
          "every user-facing CMake option has a variant; the test stage runs every class-S "
          "deck at 1 and 2 ranks")
