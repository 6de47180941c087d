// minisgd DECK.yaml [--set section.key=value ...] [--dry-run] [--kokkos-...]
// A thin driver: parse the command line and the deck, then hand the configuration and the one
// world communicator over to minisgd::run.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "minisgd/app/capabilities.hpp"
#include "minisgd/app/capability_check.hpp"
#include "minisgd/app/collective.hpp"
#include "minisgd/app/run.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/config/deck.hpp"
#include "minisgd/core/kokkos.hpp"
#include "minisgd/version.hpp"

namespace {

int run_main(int argc, char** argv) {
  minisgd::comm::MpiCommunicator world(MPI_COMM_WORLD);
  const bool root = world.rank() == 0;

  // Kokkos' own --kokkos-* arguments are Kokkos' business, not CLI11's.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i)
    if (std::string(argv[i]).rfind("--kokkos-", 0) != 0) args.emplace_back(argv[i]);

  CLI::App app{"minisgd: communication-efficient distributed SGD for generalized linear models"};
  std::string deck;
  std::vector<std::string> overrides;
  bool dry_run = false;
  app.add_option("deck", deck, "YAML input deck")->required();
  app.add_option("--set", overrides, "override a deck key: section.key=value (repeatable)");
  app.add_flag("--dry-run", dry_run, "validate the deck, print the resolved configuration, exit");
  app.set_version_flag("--version",
                       std::string("minisgd ") + MINISGD_VERSION + " (" + MINISGD_GIT_HASH + ")");
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    // Every rank sees the same arguments, so every rank reaches the same verdict; rank 0
    // prints it (help, version or the error).
    if (root) app.exit(e);
    return e.get_exit_code() == 0 ? 0 : int(minisgd::kBadInput);
  }

  minisgd::Config config;
  minisgd::collectively(world, std::cerr, [&] {
    config = minisgd::load_deck(deck, overrides);
    minisgd::check_capabilities(config);
  });
  if (dry_run) {
    if (root) std::cout << config.resolved.dump(2) << std::endl;
    return 0;
  }
  return minisgd::run(config, world, std::cout, std::cerr).exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  minisgd::gpu::select_device_by_local_rank(MPI_COMM_WORLD, argc, argv);  // CUDA builds only
  int code = 0;
  {
    // Kokkos throws when its backend cannot start (a CUDA build whose driver is too old or sees
    // no GPU): every rank learns whether all started, so none is left waiting in a collective.
    std::optional<Kokkos::ScopeGuard> kokkos;
    std::string why;
    try {
      kokkos.emplace(argc, argv);
    } catch (const std::exception& e) {
      why = e.what();
    }
    int started = why.empty() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &started, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!why.empty()) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::cerr << "minisgd: error: rank " << rank
                << ": Kokkos could not start: " << why.substr(0, why.find('\n')) << std::endl;
    }
    if (!started)
      code = minisgd::kBadInput;
    else
      try {
        code = run_main(argc, argv);
      } catch (const minisgd::Abort& a) {
        code = a.code;
      }
  }
  MPI_Finalize();
  return code;
}
