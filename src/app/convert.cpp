// minisgd-convert IN.libsvm OUT.bin [--format fp32|bf16|...] [--features N] [--layout L]
// Converts a LIBSVM file once into a binary file (docs/data.md), dense rows or compressed sparse
// rows, that every later run reads in parallel at disk speed. Runs on any number of MPI ranks
// (each parses its part).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "minisgd/app/collective.hpp"
#include "minisgd/app/last_resort.hpp"
#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/config/config.hpp"
#include "minisgd/core/atomic_file.hpp"
#include "minisgd/data/binary_format.hpp"
#include "minisgd/data/text_loader.hpp"
#include "minisgd/precision/dispatch.hpp"
#include "minisgd/version.hpp"

namespace {

int convert_main(int argc, char** argv) {
  minisgd::comm::MpiCommunicator world(MPI_COMM_WORLD);
  CLI::App app{"minisgd-convert: a LIBSVM file to minisgd's binary data format"};
  std::string in, out, format = "fp32", layout = "auto";
  std::int64_t features = 0;
  app.add_option("input", in, "LIBSVM text file")->required();
  app.add_option("output", out, "binary file to write (atomically)")->required();
  app.add_option("--format", format, "element format the values are rounded to (precision.data)");
  app.add_option("--features", features, "number of features d (0: the largest index)");
  app.add_option("--layout", layout,
                 "dense rows, compressed sparse rows, or auto: sparse below "
                 "10% nonzeros")
      ->check(CLI::IsMember({"auto", "dense", "sparse"}));
  app.set_version_flag("--version", std::string("minisgd-convert ") + MINISGD_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (world.rank() == 0) app.exit(e);
    return e.get_exit_code() == 0 ? 0 : int(minisgd::kBadInput);
  }
  minisgd::Config c;
  c.model.loss = minisgd::Loss::linear;  // labels are stored as they are; runs check them
  c.data.layout = layout == "dense"    ? minisgd::Layout::dense
                  : layout == "sparse" ? minisgd::Layout::sparse
                                       : minisgd::Layout::automatic;
  std::int64_t rows = 0;
  minisgd::collectively(world, std::cerr, [&] {
    namespace P = minisgd::precision;
    try {
      c.precision.plan[P::Knob::data] = P::parse_format(format);
    } catch (const std::invalid_argument& e) {
      throw minisgd::InputError(std::string("--format: ") + e.what());
    }
    // A bad output path is the caller's input (exit 2), found before anything is parsed.
    if (const std::string why = minisgd::replace_problem(out); !why.empty())
      throw minisgd::InputError(why);
    P::with_compiled_type(P::container(c.precision.plan[P::Knob::data]), [&](auto tag) {
      rows = minisgd::convert_libsvm<typename decltype(tag)::type>(c, in, out, features, world);
    });
  });
  if (world.rank() == 0)
    std::cout << "minisgd-convert: " << in << " -> " << out << " (" << rows << " rows, " << format
              << (minisgd::binary_form(minisgd::InputFile(out)) == minisgd::BinaryForm::csr
                      ? ", compressed sparse rows"
                      : ", dense rows")
              << ")" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  minisgd::install_last_resorts();
  int code = 0;
  try {
    code = convert_main(argc, argv);
  } catch (const minisgd::Abort& a) {
    code = a.code;
  } catch (const std::exception& e) {
    minisgd::fail_unexpectedly(e.what());
  }
  MPI_Finalize();
  return code;
}
