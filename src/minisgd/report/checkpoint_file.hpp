#pragma once
// The checkpoint file (docs/output.md, "Checkpoints"): a fixed header (magic, format version,
// ranks, minisgd version, deck hash, step), the resolved deck it belongs to as JSON, every
// rank's state (core/state_archive.hpp) and a checksum of all of it. One file, written by
// rank 0 through a rename, so a checkpoint is whole or absent.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "minisgd/config/config.hpp"

namespace minisgd {

constexpr std::uint32_t kCheckpointFormat = 1;

struct CheckpointHeader {
  char magic[8];            // "MSGDCKPT"
  std::uint32_t format;     // kCheckpointFormat
  std::uint32_t ranks;      // P
  char version[32];         // the minisgd version that wrote it
  std::uint64_t deck_hash;  // of the deck below
  std::int64_t iteration;   // steps taken when it was written
  std::uint64_t deck_bytes;
  std::uint64_t state_bytes;  // P × (8-byte length + that rank's state)
};

/// What a checkpoint must match to continue a run: the resolved deck without the keys that
/// cannot change the result (output.*, run.restart, solver.time_limit) and with the s in
/// force (solver.s: auto), the rank count and the minisgd version.
struct CheckpointIdentity {
  nlohmann::json deck;
  std::uint32_t ranks = 1;
  std::string version;
};
CheckpointIdentity checkpoint_identity(const Config& c, int ranks);

/// The file's bytes for the rank states of step `iteration`.
std::string encode_checkpoint(const CheckpointIdentity& id, std::int64_t iteration,
                              const std::vector<std::string>& states);

struct DecodedCheckpoint {
  std::int64_t iteration = 0;
  std::vector<std::string> states;  // one per rank
};

/// Checks `image` (the file read from `path`) and returns its states. Throws InputError,
/// "run.restart: PATH: why", when it is truncated or corrupt or was written for another deck,
/// rank count, format or minisgd version.
DecodedCheckpoint decode_checkpoint(const std::string& image, const std::string& path,
                                    const CheckpointIdentity& expected);

}  // namespace minisgd
