#!/usr/bin/python3
# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""Validates minisgd reports against docs/report.schema.json, and checks the schema rejects
broken ones.

    validate_reports.py SCHEMA REPORT.json...

Every REPORT.json must exist and validate. Then, from the first of them, broken reports:
each key of the report and of its provenance and result objects removed in turn or given a
value of another type, an unknown top-level key added and another schema_version must each
FAIL: a schema that accepts them guards nothing. Needs Debian's python3-jsonschema.
"""
import copy
import json
import pathlib
import sys

sys.dont_write_bytecode = True
try:
    import jsonschema
except ImportError:
    sys.exit("validate_reports.py needs the jsonschema module (Debian: python3-jsonschema, "
             "installed by ci/install_deps.sh; run it with /usr/bin/python3)")


# Keys a report may lack (docs/output.md); every other key it holds must be required.
# result.run_rule: written by every run since run.min_seconds, optional so that reports of
# schema_version 1 written before it stay valid.
OPTIONAL = {"comm_emulation", "study", "result.test_loss", "result.run_rule"}
# Objects whose keys are all checked one by one.
OBJECTS = ("build", "build.options", "kokkos", "blas", "mpi", "ranks_per_node",
           "threads_per_rank", "problem", "data_load", "result", "result.time_to_target",
           "compression", "fom")


def other_type(value):
    """A value of another JSON type."""
    if value is None:
        return []  # no key that may be null may be an array
    if isinstance(value, bool):
        return "text"
    if isinstance(value, (int, float)):
        return "text"
    if isinstance(value, str):
        return 12
    return [] if isinstance(value, dict) else {}


def broken_variants(report):
    """(what was done, report) pairs the schema must reject: the list comes from the report,
    not from the schema, so a key the schema stops requiring is caught."""
    def at(r, path):
        for part in path.split(".") if path else []:
            r = r[part]
        return r
    for path in ("",) + OBJECTS:
        for key in list(at(report, path)):
            name = f"{path}.{key}" if path else key
            if name in OPTIONAL:
                continue
            r = copy.deepcopy(report)
            del at(r, path)[key]
            yield f"'{name}' removed", r
            r = copy.deepcopy(report)
            at(r, path)[key] = other_type(at(r, path)[key])
            yield f"'{name}' of another type", r
    r = copy.deepcopy(report)
    r["unknown_key"] = 1
    yield "unknown top-level key added", r
    r = copy.deepcopy(report)
    r["schema_version"] = r["schema_version"] + 1
    yield "another schema_version", r


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    schema = json.loads(pathlib.Path(sys.argv[1]).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []
    reports = []
    for path in map(pathlib.Path, sys.argv[2:]):
        if not path.is_file():
            failures.append(f"{path}: missing (the run that writes it failed or did not run)")
            continue
        report = json.loads(path.read_text())
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
        for e in errors:
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            failures.append(f"{path}: {where}: {e.message}")
        if not errors:
            reports.append(report)
    if reports:
        accepted = [what for what, r in broken_variants(reports[0]) if validator.is_valid(r)]
        failures += [f"the schema accepts a broken report: {what}" for what in accepted]
    for f in failures:
        print(f"FAIL: {f}")
    print(f"{len(reports)} of {len(sys.argv) - 2} report(s) valid against {sys.argv[1]}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
