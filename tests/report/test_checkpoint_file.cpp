// The checkpoint file (docs/output.md, "Checkpoints") and the state archive: a round trip keeps
// every byte; every truncation and every changed byte is refused; another minisgd version,
// format, rank count or deck is refused with a message that says which.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "minisgd/core/errors.hpp"
#include "minisgd/core/state_archive.hpp"
#include "minisgd/report/checkpoint_file.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

namespace {

CheckpointIdentity identity(int ranks = 3) {
  return checkpoint_identity(
      test::deck("solver: {batch_size: 4, step_size: 0.25}\noutput: {report: r.json}\n"), ranks);
}

const std::vector<std::string> kStates = {"rank zero", std::string("one\0one", 7), ""};

std::string refusal(const std::string& image, const CheckpointIdentity& id) {
  try {
    decode_checkpoint(image, "c.ckpt", id);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CheckpointFile, RoundTripKeepsEveryByte) {
  const std::string image = encode_checkpoint(identity(), 42, kStates);
  const DecodedCheckpoint d = decode_checkpoint(image, "c.ckpt", identity());
  EXPECT_EQ(d.iteration, 42);
  EXPECT_EQ(d.states, kStates);
}

TEST(CheckpointFile, EveryTruncationIsRefused) {
  const std::string image = encode_checkpoint(identity(), 7, kStates);
  for (std::size_t n = 0; n < image.size(); ++n)
    EXPECT_NE(refusal(image.substr(0, n), identity()), "accepted") << n << " bytes";
  EXPECT_EQ(refusal(image + "x", identity()).find("run.restart: c.ckpt: truncated or corrupt"), 0u);
}

TEST(CheckpointFile, EveryChangedByteIsRefused) {
  const std::string image = encode_checkpoint(identity(), 7, kStates);
  for (std::size_t i = 0; i < image.size(); ++i) {
    std::string damaged = image;
    damaged[i] = char(damaged[i] ^ 0x10);
    EXPECT_NE(refusal(damaged, identity()), "accepted") << "byte " << i;
  }
}

TEST(CheckpointFile, AnotherVersionFormatRankCountOrDeckIsRefused) {
  CheckpointIdentity other = identity();
  other.version = "0.0.1-other";
  EXPECT_EQ(refusal(encode_checkpoint(other, 7, kStates), identity()),
            std::string("run.restart: c.ckpt: written by minisgd 0.0.1-other, this is minisgd ") +
                identity().version);

  std::string image = encode_checkpoint(identity(), 7, kStates);
  CheckpointHeader h;
  std::memcpy(&h, image.data(), sizeof h);
  h.format = kCheckpointFormat + 1;
  std::memcpy(image.data(), &h, sizeof h);
  EXPECT_EQ(refusal(image, identity()),
            "run.restart: c.ckpt: checkpoint format " + std::to_string(kCheckpointFormat + 1) +
                ", this minisgd reads format " + std::to_string(kCheckpointFormat));

  EXPECT_EQ(refusal(encode_checkpoint(identity(2), 7, {"a", "b"}), identity(3)),
            "run.restart: c.ckpt: written by 2 rank(s), this run has 3");

  const CheckpointIdentity wider = checkpoint_identity(
      test::deck("solver: {batch_size: 8, step_size: 0.25}\noutput: {report: r.json}\n"), 3);
  EXPECT_EQ(refusal(encode_checkpoint(identity(), 7, kStates), wider),
            "run.restart: c.ckpt: written for another deck: solver.batch_size = 4 there, 8 here");
}

TEST(CheckpointFile, OutputKeysRestartAndTimeLimitAreNotPartOfTheDeck) {
  const std::string image = encode_checkpoint(identity(), 7, kStates);
  const CheckpointIdentity elsewhere = checkpoint_identity(
      test::deck("solver: {batch_size: 4, step_size: 0.25, time_limit: 60}\n"
                 "run: {restart: c.ckpt}\n"
                 "output: {report: other.json, checkpoint: {path: c.ckpt, every: 5}}\n"),
      3);
  EXPECT_EQ(decode_checkpoint(image, "c.ckpt", elsewhere).states, kStates);
}

TEST(StateArchive, RestoresWhatWasSavedAndRefusesWhatDoesNot) {
  Vector<double> v("v", 5);
  Kokkos::deep_copy(v, 2.5);
  std::int64_t step = 9;
  std::vector<int> list = {1, 2, 3};
  StateArchive out;
  out.value("step", step);
  out.view("v", v);
  state_vector(out, "list", list);

  Vector<double> v2("v2", 5);
  std::int64_t step2 = 0;
  std::vector<int> list2;
  StateArchive in(out.bytes());
  in.value("step", step2);
  in.view("v", v2);
  state_vector(in, "list", list2);
  in.finish();
  auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v2);
  EXPECT_EQ(step2, 9);
  EXPECT_EQ(h(4), 2.5);
  EXPECT_EQ(list2, list);

  StateArchive renamed(out.bytes());
  EXPECT_THROW(renamed.value("iteration", step2), InputError);
  StateArchive shorter(out.bytes());
  shorter.value("step", step2);
  Vector<double> v3("v3", 4);
  EXPECT_THROW(shorter.view("v", v3), InputError);
  StateArchive partly(out.bytes());
  partly.value("step", step2);
  EXPECT_THROW(partly.finish(), InputError);
}

}  // namespace
