#include "minisgd/app/checkpoint.hpp"

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "minisgd/app/collective.hpp"
#include "minisgd/core/atomic_file.hpp"
#include "minisgd/core/errors.hpp"
#include "minisgd/data/line_blocks.hpp"
#include "minisgd/report/checkpoint_file.hpp"

namespace minisgd {
namespace {

/// Runs f on rank 0 only and tells every rank whether it threw: the others throw E with a
/// message that points at rank 0's, so every rank leaves together and none waits in a
/// collective rank 0 never reaches.
template <class E, class F>
void on_root(comm::MpiCommunicator& world, F&& f) {
  std::string why;
  int failed = 0;
  if (world.rank() == 0) try {
      f();
    } catch (const std::exception& e) {
      why = e.what();
      failed = 1;
    }
  MPI_Bcast(&failed, 1, MPI_INT, 0, world.native());
  if (failed) throw E(world.rank() == 0 ? why : std::string("checkpoint failed on rank 0"));
}

/// The deck names its data files by path: a restart also checks that they hold what they
/// held at the checkpoint (data.content, data.test_content; sampled_fingerprint).
CheckpointIdentity identity(const Config& c, int ranks) {
  CheckpointIdentity id = checkpoint_identity(c, ranks);
  std::error_code ec;
  if (c.data.source != DataSource::synthetic && std::filesystem::exists(c.data.path, ec))
    id.deck["data"]["content"] = sampled_fingerprint(c.data.path);
  if (!c.data.test_path.empty() && std::filesystem::exists(c.data.test_path, ec))
    id.deck["data"]["test_content"] = sampled_fingerprint(c.data.test_path);
  return id;
}

int byte_count(std::size_t n) {
  if (n > std::size_t(INT_MAX)) throw RuntimeFailure("checkpoint: a rank's state exceeds 2 GiB");
  return int(n);
}

}  // namespace

void write_checkpoint(const Config& c, comm::MpiCommunicator& world, std::int64_t iteration,
                      const std::string& state) {
  injected_failure("checkpoint", world.rank());
  const int p = world.size(), root = world.rank() == 0;
  int mine = byte_count(state.size());
  std::vector<int> sizes(root ? p : 0), offsets(root ? p : 0);
  MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, world.native());
  std::string all;
  if (root) {
    std::size_t total = 0;
    for (int r = 0; r < p; ++r) {
      offsets[r] = byte_count(total);
      total += std::size_t(sizes[r]);
    }
    all.resize(total);
  }
  MPI_Gatherv(state.data(), mine, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0,
              world.native());
  on_root<RuntimeFailure>(world, [&] {
    std::vector<std::string> states;
    for (int r = 0; r < p; ++r) states.push_back(all.substr(offsets[r], sizes[r]));
    const std::string image = encode_checkpoint(identity(c, p), iteration, states);
    write_file_atomically(c.output.checkpoint.path, [&](std::ostream& f) {
      f.write(image.data(), std::streamsize(image.size()));
    });
  });
}

std::string read_checkpoint(const Config& c, comm::MpiCommunicator& world) {
  const int p = world.size();
  DecodedCheckpoint d;
  on_root<InputError>(world, [&] {
    const std::string& path = c.run.restart;
    // A FIFO would block rank 0 (and every rank with it), /dev/zero would never end.
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
      throw InputError("run.restart: " + path + ": not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("run.restart: " + path + ": cannot open checkpoint");
    std::ostringstream buf;
    buf << in.rdbuf();
    d = decode_checkpoint(buf.str(), path, identity(c, p));
  });
  std::vector<int> sizes, offsets;
  std::string all;
  if (world.rank() == 0)
    for (const std::string& s : d.states) {
      sizes.push_back(byte_count(s.size()));
      offsets.push_back(byte_count(all.size()));
      all += s;
    }
  int mine = 0;
  MPI_Scatter(sizes.data(), 1, MPI_INT, &mine, 1, MPI_INT, 0, world.native());
  std::string state(std::size_t(mine), '\0');
  MPI_Scatterv(all.data(), sizes.data(), offsets.data(), MPI_BYTE, state.data(), mine, MPI_BYTE, 0,
               world.native());
  return state;
}

}  // namespace minisgd
