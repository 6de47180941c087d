# Copyright the minisgd developers. SPDX-License-Identifier: BSD-3-Clause
"""Ramble application definition of minisgd, in the form of Benchpark's repo/<app>/application.py.

Copy this directory into a Ramble application repository (or Benchpark's repo/) as
minisgd/application.py; perf/benchpark/README.md says how, and docs/procurement.md gives the
run rules the workloads follow.
"""
from ramble.appkit import *  # noqa: F401,F403 (Ramble's application DSL)


class Minisgd(ExecutableApplication):
    """minisgd: communication-efficient distributed SGD for generalized linear models (Kokkos,
    MPI). One workload per problem class of docs/procurement.md; the deck (technique) is a
    workload variable. An official run obeys run.min_seconds and prints VALID."""

    name = "minisgd"

    maintainers("minisgd-developers")

    tags("benchmark-app", "mini-app", "machine-learning", "sgd", "mpi", "network-collectives",
         "high-memory-bandwidth", "mixed-precision", "c++", "kokkos", "cuda", "hip", "openmp")

    software_spec("minisgd", pkg_spec="minisgd", package_manager="spack*")
    required_package("minisgd", package_manager="spack*")

    # What every run writes, in the experiment's run directory (docs/procurement.md, section 6).
    _outputs = (" --set run.min_seconds={min_seconds}"
                " --set output.report={experiment_run_dir}/{experiment_name}.json"
                " --set output.history={experiment_run_dir}/{experiment_name}.csv")

    # S and M: strong scaling, the deck as it is at every rank count.
    executable("strong", "minisgd {decks}/{class_name}/{deck}.yaml" + _outputs + " {extra_sets}",
               use_mpi=True)
    # L and XL, row decomposition (sgd and the compressors): rows and batch grow with P.
    executable("weak_rows",
               "minisgd {decks}/{class_name}/{deck}.yaml"
               " --set data.synthetic.rows={rows}"
               " --set solver.batch_size={batch}" + _outputs + " {extra_sets}",
               use_mpi=True)
    # L and XL CA-SGD (column decomposition): the features grow with P.
    executable("weak_columns",
               "minisgd {decks}/{class_name}/{deck}.yaml"
               " --set data.synthetic.rows={rows_per_rank}"
               " --set data.synthetic.features={features}"
               " --set solver.step_size.eta0={eta0}" + _outputs + " {extra_sets}",
               use_mpi=True)

    workload("S", executables=["strong"])
    workload("M", executables=["strong"])
    workload("L", executables=["weak_rows"])
    workload("XL", executables=["weak_rows"])
    workload("L_ca_sgd", executables=["weak_columns"])
    workload("XL_ca_sgd", executables=["weak_columns"])

    _all = ["S", "M", "L", "XL", "L_ca_sgd", "XL_ca_sgd"]
    _weak_rows = ["L", "XL"]
    _weak_cols = ["L_ca_sgd", "XL_ca_sgd"]

    workload_variable("decks", default="{minisgd_path}/share/minisgd/input_decks/classes",
                      description="The class decks (installed by the Spack package)",
                      workloads=_all)
    workload_variable("deck", default="sgd",
                      description="Technique: sgd, ca-sgd, compress-none, compress-cast, "
                                  "compress-topk, compress-qsgd, compress-global-qsgd, "
                                  "compress-aps, compress-gtopk, compress-loco",
                      workloads=_all)
    workload_variable("extra_sets", default="",
                      description="Further --set options the run rules allow "
                                  "(comm.backend=nccl, comm.gpu_aware=true, precision.gram_engine)",
                      workloads=_all)
    for _w, _cls, _secs in (("S", "S", "10"), ("M", "M", "300"), ("L", "L", "600"),
                            ("XL", "XL", "600"), ("L_ca_sgd", "L", "600"),
                            ("XL_ca_sgd", "XL", "600")):
        workload_variable("class_name", default=_cls, description="Problem class",
                          workloads=[_w])
        workload_variable("min_seconds", default=_secs,
                          description="run.min_seconds of an official run of the class "
                                      "(docs/procurement.md, section 10); larger is allowed",
                          workloads=[_w])
    workload_variable("rows_per_rank", default="1000000",
                      description="Rows per rank: 1000000 for sgd and ca-sgd, 100000 for the "
                                  "compressors; raise it to meet the sizing rule (25% of node "
                                  "memory)",
                      workloads=_weak_rows + _weak_cols)
    workload_variable("batch_per_rank", default="64",
                      description="Batch rows per rank: 64 for sgd, 48 for the compressors",
                      workloads=_weak_rows)
    workload_variable("rows", default="{rows_per_rank}*{n_ranks}",
                      description="data.synthetic.rows at P ranks", workloads=_weak_rows)
    workload_variable("batch", default="{batch_per_rank}*{n_ranks}",
                      description="solver.batch_size at P ranks", workloads=_weak_rows)
    workload_variable("features", default="64*{n_ranks}",
                      description="data.synthetic.features at P ranks (64 columns per rank)",
                      workloads=_weak_cols)
    workload_variable("eta0", default="2/{n_ranks}",
                      description="solver.step_size.eta0 at P ranks: 128/d (the decks' header)",
                      workloads=_weak_cols)

    _log = "{experiment_run_dir}/{experiment_name}.out"

    # FOM: 1.234567e+06 samples/s, time to target 0.123456 s (loss <= 0.48 at iteration 300, ...)
    figure_of_merit("Training throughput", log_file=_log,
                    fom_regex=r"^FOM:\s+(?P<fom>[0-9.]+e[+-][0-9]+) samples/s",
                    group_name="fom", units="samples/s")
    figure_of_merit("Time to target", log_file=_log,
                    fom_regex=r"^FOM:.*time to target (?P<ttt>[0-9.]+) s",
                    group_name="ttt", units="s")
    # FOM window: 93740 steps after 10 warm-up steps, 12.345678 s (max over ranks)
    figure_of_merit("FOM window", log_file=_log,
                    fom_regex=r"^FOM window: (?P<steps>[0-9]+) steps after [0-9]+ warm-up steps, "
                              r"(?P<window>[0-9.]+) s",
                    group_name="window", units="s")
    # run rule: FOM window 10.004 s >= run.min_seconds 10 s, 3127 repetition(s) of the training, ...
    figure_of_merit("Repetitions", log_file=_log,
                    fom_regex=r"^run rule: FOM window [0-9.]+ s >= run.min_seconds [0-9.e+]+ s, "
                              r"(?P<reps>[0-9]+) repetition",
                    group_name="reps", units="")
    # VALID: final loss 0.47980001, reference 0.47977776, relative gap 4.64e-05 <= tolerance 0.005
    figure_of_merit("Verdict", log_file=_log,
                    fom_regex=r"^(?P<verdict>VALID|INVALID): final loss",
                    group_name="verdict", units="")
    figure_of_merit("Final loss", log_file=_log,
                    fom_regex=r"^(?:VALID|INVALID): final loss (?P<loss>[0-9.e+-]+)",
                    group_name="loss", units="")
    figure_of_merit("Relative loss gap", log_file=_log,
                    fom_regex=r"^(?:VALID|INVALID): final loss .*relative gap (?P<gap>[0-9.e+-]+)",
                    group_name="gap", units="")

    # A result: VALID, and the minimum duration obeyed (docs/procurement.md, sections 5, 10).
    success_criteria("valid", mode="string", match=r"^VALID: final loss", file=_log)
    success_criteria("min_seconds_obeyed", mode="string",
                     match=r"^run rule: FOM window [0-9.]+ s >= run.min_seconds", file=_log)
