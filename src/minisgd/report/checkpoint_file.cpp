#include "minisgd/report/checkpoint_file.hpp"

#include <cstring>

#include <nlohmann/json.hpp>

#include "minisgd/core/errors.hpp"
#include "minisgd/data/binary_format.hpp"
#include "minisgd/version.hpp"

namespace minisgd {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'G', 'D', 'C', 'K', 'P', 'T'};

std::string text_of(const char* field, std::size_t n) {
  return std::string(field, strnlen(field, n));
}

/// "solver.s = 4 there, 8 here": the first key where two resolved decks differ.
std::string first_difference(const nlohmann::json& there, const nlohmann::json& here) {
  const nlohmann::json patch = nlohmann::json::diff(there, here);
  if (patch.empty()) return "the deck hash differs";
  const nlohmann::json::json_pointer at(patch[0]["path"].get<std::string>());
  std::string key = at.to_string().substr(1);
  for (char& ch : key)
    if (ch == '/') ch = '.';
  auto value = [&](const nlohmann::json& deck) {
    return deck.contains(at) ? deck.at(at).dump() : std::string("(absent)");
  };
  return key + " = " + value(there) + " there, " + value(here) + " here";
}

}  // namespace

CheckpointIdentity checkpoint_identity(const Config& c, int ranks) {
  CheckpointIdentity id;
  id.deck = *c.resolved;
  id.deck.erase("output");
  if (id.deck.contains("run")) id.deck["run"].erase("restart");
  if (id.deck.contains("solver")) id.deck["solver"].erase("time_limit");
  id.deck["solver"]["s"] = c.solver.s;  // the s in force (solver.s: auto decides it at set-up)
  id.ranks = std::uint32_t(ranks);
  id.version = MINISGD_VERSION;
  return id;
}

std::string encode_checkpoint(const CheckpointIdentity& id, std::int64_t iteration,
                              const std::vector<std::string>& states) {
  const std::string deck = id.deck.dump();
  CheckpointHeader h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.format = kCheckpointFormat;
  h.ranks = id.ranks;
  std::strncpy(h.version, id.version.c_str(), sizeof h.version - 1);
  h.deck_hash = checksum(deck.data(), deck.size());
  h.iteration = iteration;
  h.deck_bytes = deck.size();
  for (const std::string& s : states) h.state_bytes += 8 + s.size();
  std::string image(reinterpret_cast<const char*>(&h), sizeof h);
  image += deck;
  for (const std::string& s : states) {
    const std::uint64_t n = s.size();
    image.append(reinterpret_cast<const char*>(&n), sizeof n);
    image += s;
  }
  const std::uint64_t sum = checksum(image.data(), image.size());
  image.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return image;
}

DecodedCheckpoint decode_checkpoint(const std::string& image, const std::string& path,
                                    const CheckpointIdentity& expected) {
  auto refuse = [&](const std::string& why) {
    throw InputError("run.restart: " + path + ": " + why);
  };
  CheckpointHeader h{};
  if (image.size() < sizeof h || std::memcmp(image.data(), kMagic, sizeof kMagic) != 0)
    refuse("not a minisgd checkpoint");
  std::memcpy(&h, image.data(), sizeof h);
  if (h.format != kCheckpointFormat)
    refuse("checkpoint format " + std::to_string(h.format) + ", this minisgd reads format " +
           std::to_string(kCheckpointFormat));
  const std::uint64_t body = image.size() - sizeof h;
  if (h.deck_bytes > body || h.state_bytes > body || body != h.deck_bytes + h.state_bytes + 8)
    refuse("truncated or corrupt (" + std::to_string(image.size()) +
           " bytes, the header describes " +
           std::to_string(sizeof h + h.deck_bytes + h.state_bytes + 8) + ")");
  std::uint64_t sum = 0;
  std::memcpy(&sum, image.data() + image.size() - 8, 8);
  if (sum != checksum(image.data(), image.size() - 8)) refuse("corrupt (checksum mismatch)");
  const std::string version = text_of(h.version, sizeof h.version);
  if (version != expected.version)
    refuse("written by minisgd " + version + ", this is minisgd " + expected.version);
  if (h.ranks != expected.ranks)
    refuse("written by " + std::to_string(h.ranks) + " rank(s), this run has " +
           std::to_string(expected.ranks));
  const std::string deck = image.substr(sizeof h, h.deck_bytes);
  const std::string here = expected.deck.dump();
  if (h.deck_hash != checksum(deck.data(), deck.size())) refuse("corrupt (deck hash mismatch)");
  if (deck != here) {
    nlohmann::json there = nlohmann::json::parse(deck, nullptr, false);
    refuse("written for another deck: " + first_difference(there, expected.deck));
  }
  DecodedCheckpoint d;
  d.iteration = h.iteration;
  std::size_t at = sizeof h + h.deck_bytes;
  const std::size_t end = at + h.state_bytes;
  for (std::uint32_t r = 0; r < h.ranks; ++r) {
    std::uint64_t n = 0;
    if (end - at < 8) refuse("corrupt (rank states)");
    std::memcpy(&n, image.data() + at, 8);
    at += 8;
    if (n > end - at) refuse("corrupt (rank states)");
    d.states.push_back(image.substr(at, n));
    at += n;
  }
  if (at != end) refuse("corrupt (rank states)");
  return d;
}

}  // namespace minisgd
