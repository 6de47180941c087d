// minisgd DECK.yaml [--set section.key=value ...] [--dry-run] [--kokkos-...] [--help[-kokkos]]
// A thin driver: parse the command line and the deck, then hand the configuration and the one
// world communicator over to minisgd::run.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/app/capabilities.hpp"
#include "minisgd/app/capability_check.hpp"
#include "minisgd/app/collective.hpp"
#include "minisgd/app/last_resort.hpp"
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

  CLI::App app{"minisgd: communication-efficient distributed SGD for generalized linear models",
               "minisgd"};
  app.footer("Kokkos' options (--kokkos-num-threads=N, ...): minisgd --help-kokkos");
  bool kokkos_help = false;
  app.add_flag("--help-kokkos", kokkos_help, "print Kokkos' own options and exit");
  std::string deck;
  std::vector<std::string> overrides;
  bool dry_run = false;
  app.add_option("deck", deck, "YAML input deck");
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
  if (kokkos_help) return 0;  // Kokkos printed its help as it started (main below)
  if (deck.empty()) {
    if (root) std::cerr << "minisgd: error: a deck is required (minisgd --help)" << std::endl;
    return minisgd::kBadInput;
  }

  minisgd::Config config;
  minisgd::collectively(world, std::cerr, [&] {
    config = minisgd::load_deck(deck, overrides);
    minisgd::check_capabilities(config);
  });
  if (dry_run) {
    if (root) std::cout << config.resolved->dump(2) << std::endl;
    return 0;
  }
  return minisgd::run(config, world, std::cout, std::cerr).exit_code;
}

}  // namespace

namespace {

/// Kokkos' arguments: --help is minisgd's (Kokkos would print its own forty lines first), and
/// --help-kokkos asks Kokkos for its help instead.
std::vector<char*> kokkos_arguments(int argc, char** argv) {
  static char kokkos_help[] = "--kokkos-help";
  std::vector<char*> out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i > 0 && (a == "--help" || a == "-h")) continue;
    out.push_back(a == "--help-kokkos" ? kokkos_help : argv[i]);
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  minisgd::install_last_resorts();
  minisgd::gpu::select_device_by_local_rank(MPI_COMM_WORLD, argc, argv);  // CUDA builds only
  int code = 0;
  {
    // Kokkos throws when its backend cannot start (a CUDA build whose driver is too old or sees
    // no GPU): every rank learns whether all started, so none is left waiting in a collective.
    std::optional<Kokkos::ScopeGuard> kokkos;
    std::string why;
    try {
      std::vector<char*> kargs = kokkos_arguments(argc, argv);
      int kargc = int(kargs.size()) - 1;
      kokkos.emplace(kargc, kargs.data());
    } catch (const std::exception& e) {
      why = e.what();
    }
    int started = why.empty() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &started, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!why.empty()) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::cerr << "minisgd: error: rank " << rank << ": Kokkos could not start: "
                << minisgd::printable_message(why.substr(0, why.find('\n'))) << std::endl;
    }
    if (!started)
      code = minisgd::kBadInput;
    else
      try {
        code = run_main(argc, argv);
      } catch (const minisgd::Abort& a) {
        code = a.code;
      } catch (const std::exception& e) {
        minisgd::fail_unexpectedly(e.what());
      }
  }
  MPI_Finalize();
  return code;
}
