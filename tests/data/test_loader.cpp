// The parallel loaders: every rank keeps only its share, and the share is the same at every
// P (compared with the same load on one rank, MPI_COMM_SELF); errors name the global line;
// the binary formats (dense and CSR) round-trip and refuse damaged files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "minisgd/comm/mpi_communicator.hpp"
#include "minisgd/data/binary_io.hpp"
#include "minisgd/data/generate.hpp"
#include "minisgd/data/loader.hpp"
#include "minisgd/data/raw_data.hpp"
#include "minisgd/data/synthetic.hpp"
#include "minisgd/data/text_loader.hpp"
#include "support/test_support.hpp"

using namespace minisgd;

namespace {

std::string temp(const std::string& name) {
  return ::testing::TempDir() + "minisgd_loader_" + name;
}

Config data_deck(const std::string& data, const std::string& decomposition, bool intercept = true) {
  return test::deck("data: " + data + "\nmodel: {loss: logistic, intercept: " +
                    (intercept ? "true" : "false") + "}\nsolver: {decomposition: " + decomposition +
                    ", batch_size: 10}\nprecision: {preset: fp64}\n");
}

/// Element (q, j) of the whole matrix (position q, global column j) from a P-rank share,
/// compared with the one-rank load `all`. Returns the number of mismatches. (The batch size
/// of data_deck, 10, is not a multiple of 3 or 4: ranks hold unequal parts of each batch.)
template <class T>
int mismatches(const Dataset<T>& mine, const Dataset<T>& all) {
  const Partition& p = mine.part;
  auto X = Kokkos::create_mirror_view_and_copy(HostSpace(), mine.X);
  auto A = Kokkos::create_mirror_view_and_copy(HostSpace(), all.X);
  auto y = Kokkos::create_mirror_view_and_copy(HostSpace(), mine.y);
  auto b = Kokkos::create_mirror_view_and_copy(HostSpace(), all.y);
  int bad = 0;
  for (std::int64_t l = 0; l < p.local_rows(); ++l) {
    const std::int64_t q = p.position(l);
    bad += y(l) != b(q);
    for (std::int64_t j = 0; j < p.local_cols(); ++j)
      bad += std::memcmp(&X(l, j), &A(q, p.col_begin() + j), sizeof(T)) != 0;
  }
  return bad;
}

/// Two shares of the same partition differ in this many labels and elements.
template <class T>
int differences(const Dataset<T>& a, const Dataset<T>& b) {
  auto X = Kokkos::create_mirror_view_and_copy(HostSpace(), a.X);
  auto Y = Kokkos::create_mirror_view_and_copy(HostSpace(), b.X);
  auto y = Kokkos::create_mirror_view_and_copy(HostSpace(), a.y);
  auto z = Kokkos::create_mirror_view_and_copy(HostSpace(), b.y);
  if (X.extent(0) != Y.extent(0) || X.extent(1) != Y.extent(1)) return -1;
  int bad = 0;
  for (std::size_t l = 0; l < X.extent(0); ++l) {
    bad += y(l) != z(l);
    for (std::size_t j = 0; j < X.extent(1); ++j)
      bad += std::memcmp(&X(l, j), &Y(l, j), sizeof(T)) != 0;
  }
  return bad;
}

/// A LIBSVM file of `rows` rows with comments, blank lines and "+1" labels (rank 0 writes).
std::string write_libsvm(const std::string& name, int rows, int features,
                         const std::string& bad_line = "", int bad_at = -1) {
  const std::string path = temp(name);
  if (test::world_rank() == 0) {
    std::ofstream out(path);
    std::mt19937 gen(7);
    std::uniform_real_distribution<double> u(-2, 2);
    out << "# generated\n";
    for (int r = 0, line = 2; r < rows; ++r, ++line) {
      if (line == bad_at) {
        out << bad_line << "\n";
        continue;
      }
      if (r % 17 == 5) {
        out << "\n";
        ++line;
      }
      out << (r % 3 ? "+1" : "-1");
      for (int j = 1; j <= features; ++j)
        if ((r + j) % 3 != 0) out << " " << j << ":" << u(gen);
      out << (r % 11 == 0 ? " # note\n" : "\n");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

}  // namespace

TEST(Generate, ShareIsTheSameAtEveryRankCount) {
  comm::MpiCommunicator world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  for (const std::string decomposition : {"row", "column"})
    for (const std::string kind : {"synth", "linear-synth", "poisson-synth"}) {
      Config c = data_deck(
          "{source: synthetic, synthetic: {kind: " + kind + ", rows: 1200, features: 37}}",
          decomposition);
      c.model.loss = kind == "synth"          ? Loss::logistic
                     : kind == "linear-synth" ? Loss::linear
                                              : Loss::poisson;
      const auto mine = generate<float>(c, world);
      const auto all = generate<float>(c, self);
      EXPECT_EQ(mismatches(mine, all), 0) << decomposition << " " << kind;
      const auto mine64 = generate<double>(c, world);
      EXPECT_EQ(mismatches(mine64, generate<double>(c, self)), 0) << decomposition << " " << kind;
    }
}

// The documented distribution (docs/data.md): entries are levels in [-510, 510] (sums of four
// uniform bytes, centred) times feature_scale / 147.8, so mean 0, variance feature_scale²,
// no correlation between columns; labels follow the loss. 5-sigma bounds on 60 000 entries.
TEST(Generate, EntriesAndLabelsFollowTheDocumentedDistribution) {
  comm::MpiCommunicator self(MPI_COMM_SELF);
  for (const std::string kind : {"synth", "linear-synth", "poisson-synth"}) {
    Config c =
        data_deck("{source: synthetic, synthetic: {kind: " + kind + ", rows: 6000, features: 10}}",
                  "row", false);
    c.model.loss = kind == "synth"          ? Loss::logistic
                   : kind == "linear-synth" ? Loss::linear
                                            : Loss::poisson;
    const auto ds = generate<double>(c, self);
    auto X = Kokkos::create_mirror_view_and_copy(HostSpace(), ds.X);
    auto y = Kokkos::create_mirror_view_and_copy(HostSpace(), ds.y);
    const double n = double(X.extent(0)), unit = 1.0 / 147.80054127;
    double sum = 0, sq = 0, cross = 0, ysum = 0, ysq = 0, worst = 0;
    for (std::size_t i = 0; i < X.extent(0); ++i) {
      ysum += y(i);
      ysq += y(i) * y(i);
      for (std::size_t j = 0; j < X.extent(1); ++j) {
        const double level = X(i, j) / unit;
        worst = std::max(worst, std::abs(level - std::nearbyint(level)));
        sum += X(i, j);
        sq += X(i, j) * X(i, j);
        if (j + 1 < X.extent(1)) cross += X(i, j) * X(i, j + 1);
        EXPECT_LE(std::abs(X(i, j)), 510 * unit * (1 + 1e-6));
      }
    }
    const double entries = n * double(X.extent(1));
    EXPECT_LT(worst, 1e-3) << kind << ": entries are not multiples of the level unit";
    EXPECT_NEAR(sum / entries, 0.0, 5 / std::sqrt(entries)) << kind;
    EXPECT_NEAR(sq / entries, 1.0, 5 * std::sqrt(1.7 / entries)) << kind;
    EXPECT_NEAR(cross / (entries - n), 0.0, 5 / std::sqrt(entries - n)) << kind;
    const double mean = ysum / n, var = ysq / n - mean * mean;
    if (kind == "synth") {  // ±1, balanced: the margins are symmetric about 0
      EXPECT_DOUBLE_EQ(var + mean * mean, 1.0);
      EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(n));
    } else if (kind == "linear-synth") {  // y = x·w* + noise: Var y = ‖w*‖² + noise²
      const SyntheticShape shape = synthetic_shape(c.data.synthetic);
      const SyntheticGenerator gen(c.run.seed, shape, c.data.synthetic.noise);
      const double w_scale = shape.margin_std / std::sqrt(double(shape.features));
      double expected = c.data.synthetic.noise * c.data.synthetic.noise;
      for (std::int64_t j = 0; j < shape.features; ++j)
        expected += std::pow(gen.true_weight(j) * w_scale / SyntheticGenerator::kWeightUnits, 2);
      EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(expected / n));
      EXPECT_NEAR(var, expected, 5 * expected * std::sqrt(2 / n));
    } else {  // counts with rate e^z, z of std 0.5: mean about e^(0.125)
      EXPECT_NEAR(mean, std::exp(0.125), 0.1);
    }
  }
}

// Stored through the rounding of precision.data, the generated share is the fp64 one rounded.
TEST(Generate, Bf16ShareIsTheRoundedFp64Share) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  Config c =
      data_deck("{source: synthetic, synthetic: {kind: synth, rows: 600, features: 29}}", "column");
  const auto wide = generate<double>(c, world);
  c.precision.plan[precision::Knob::data] = precision::parse_format("bf16");
  const auto narrow = generate<precision::bf16>(c, world);
  auto X = Kokkos::create_mirror_view_and_copy(HostSpace(), wide.X);
  auto B = Kokkos::create_mirror_view_and_copy(HostSpace(), narrow.X);
  int bad = 0;
  for (std::size_t i = 0; i < X.extent(0); ++i)
    for (std::size_t j = 0; j < X.extent(1); ++j)
      bad += precision::to_float(B(i, j)) !=
             precision::to_float(precision::convert<precision::bf16>(X(i, j)));
  EXPECT_EQ(bad, 0);
}

TEST(Generate, RefusesAProblemTooLargeForMemoryUpFront) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const Config c =
      data_deck("{source: synthetic, synthetic: {kind: synth, rows: 100000000000}}", "row");
  try {
    generate<float>(c, world);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes per rank"), std::string::npos) << e.what();
  }
}

TEST(Libsvm, ShareIsTheSameAtEveryRankCountAndFollowsTheShuffle) {
  comm::MpiCommunicator world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  const std::string path = write_libsvm("share.libsvm", 300, 9);
  const RawData raw = read_libsvm(path, 0);
  for (const std::string decomposition : {"row", "column"}) {
    const Config c = data_deck("{source: libsvm, path: " + path + ", cache: false}", decomposition);
    LoadStats stats;
    // Small blocks: many exchange rounds, ranks with different numbers of blocks.
    const auto mine = load_libsvm<double>(c, path, true, 0, world, stats, "", 700);
    const auto all = load_libsvm<double>(c, path, true, 0, self, stats);
    EXPECT_EQ(mismatches(mine, all), 0) << decomposition;
    ASSERT_EQ(all.part.rows, raw.rows);
    // The one-rank load against the file read sequentially: position q holds row order[q].
    const auto order = shuffled_order(raw.rows, c.run.seed, true);
    auto A = Kokkos::create_mirror_view_and_copy(HostSpace(), all.X);
    int bad = 0;
    for (std::int64_t q = 0; q < raw.rows; ++q) {
      const std::int64_t r = order[q];
      std::vector<double> dense(raw.cols + 1, 0.0);
      dense[raw.cols] = 1.0;  // intercept
      for (auto k = raw.row_ptr[r]; k < raw.row_ptr[r + 1]; ++k) dense[raw.col[k]] = raw.val[k];
      for (std::int64_t j = 0; j <= raw.cols; ++j) bad += A(q, j) != dense[j];
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST(Libsvm, ErrorsNameTheGlobalLineAtEveryRankCount) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const std::string& bad :
       {std::string("1 1:nan"), std::string("-1 2:x"), std::string("\0\x01\x02junk", 7)}) {
    const std::string path = write_libsvm("bad.libsvm", 400, 6, bad, 377);
    const Config c = data_deck("{source: libsvm, path: " + path + ", cache: false}", "row");
    LoadStats stats;
    try {
      load_libsvm<float>(c, path, true, 0, world, stats, "", 500);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ":377: ", 0), 0u) << e.what();
    }
  }
}

TEST(Binary, ConvertedFileLoadsLikeTheTextAndBf16IsHalfTheSize) {
  comm::MpiCommunicator world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  const std::string text = write_libsvm("conv.libsvm", 500, 16);
  Config c = data_deck("{source: libsvm, path: " + text + ", cache: false}", "column");
  c.model.loss = Loss::linear;
  c.precision.plan[precision::Knob::data] = precision::parse_format("bf16");
  EXPECT_EQ(convert_libsvm<float>(c, text, temp("conv32.bin"), 0, world), 500);  // fp32 values
  EXPECT_EQ(convert_libsvm<precision::bf16>(c, text, temp("conv16.bin"), 0, world), 500);
  const auto size = [](const std::string& p) { return std::filesystem::file_size(p); };
  const auto labels_and_header = [&](const std::string& p) {
    InputFile f(p);
    BinaryHeader h{};
    EXPECT_EQ(read_header(f, h), "");
    return layout_of(h).matrix_at;
  };
  EXPECT_EQ(2 * (size(temp("conv16.bin")) - labels_and_header(temp("conv16.bin"))),
            size(temp("conv32.bin")) - labels_and_header(temp("conv32.bin")));
  c.model.loss = Loss::logistic;
  LoadStats stats;
  const auto from_text = load_libsvm<precision::bf16>(c, text, true, 0, self, stats);
  const auto from_bf16 = load_binary<precision::bf16>(c, temp("conv16.bin"), true, 0, world, stats);
  EXPECT_EQ(mismatches(from_bf16, from_text), 0);
}

TEST(Binary, TruncatedCorruptedAndStaleFilesAreDetected) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const std::string text = write_libsvm("damage.libsvm", 300, 8);
  Config c = data_deck("{source: binary, path: " + temp("damage.bin") + "}", "row");
  const std::string bin = temp("damage.bin");
  const auto refused = [&](const std::string& what) {
    LoadStats stats;
    try {
      load_binary<float>(c, bin, true, 0, world, stats);
    } catch (const InputError& e) {
      return std::string(e.what()).find(what) != std::string::npos ? std::string("refused")
                                                                   : std::string(e.what());
    }
    return std::string("accepted");
  };
  convert_libsvm<float>(c, text, bin, 0, world);
  EXPECT_EQ(refused("x"), "accepted");
  const auto damage = [&](auto f) {
    if (test::world_rank() == 0) f();
    MPI_Barrier(MPI_COMM_WORLD);
  };
  damage([&] { std::filesystem::resize_file(bin, std::filesystem::file_size(bin) - 3); });
  EXPECT_EQ(refused("truncated"), "refused");
  convert_libsvm<float>(c, text, bin, 0, world);
  damage([&] {  // one bit of one value in the matrix
    std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    const char x = char(f.peek() ^ 0x10);
    f.write(&x, 1);
  });
  EXPECT_EQ(refused("fail their checksum"), "refused");

  // The cache next to a text file: built by the first run, reused, rebuilt once stale.
  const std::string cache = text + ".minisgd.bin";
  damage([&] { std::filesystem::remove(cache); });
  c = data_deck("{source: libsvm, path: " + text + "}", "row");
  LoadStats stats;
  const auto first = load_training_data<double>(c, world, stats);
  ASSERT_TRUE(std::filesystem::exists(cache));
  LoadStats again;
  const auto second = load_training_data<double>(c, world, again);
  EXPECT_EQ(again.parsed_bytes, 0u);  // read from the cache
  EXPECT_EQ(differences(second, first), 0);
  damage([&] { std::ofstream(text, std::ios::app) << "1 1:5\n"; });
  LoadStats stale;
  const auto third = load_training_data<double>(c, world, stale);
  EXPECT_GT(stale.parsed_bytes, 0u);  // the text again, not the stale cache
  EXPECT_EQ(third.part.rows, first.part.rows + 1);
}

// A header whose checksums are right but whose shape is forged (as a careless or hostile
// writer could) is refused by the size check before the shape sizes any buffer: a shape whose
// byte count wraps around 2^64, one that needs more than the file, blocks too large to buffer,
// and an element size that disagrees with the element type.
TEST(Binary, ForgedShapesAreRefusedBeforeTheyAllocate) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const std::string text = write_libsvm("forge.libsvm", 40, 6);
  Config c = data_deck("{source: binary, path: " + temp("forge.bin") + "}", "row");
  const std::string bin = temp("forge.bin");
  const auto forged = [&](auto edit, const std::string& expected) {
    convert_libsvm<float>(c, text, bin, 0, world);
    if (test::world_rank() == 0) {
      std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
      BinaryHeader h;
      f.read(reinterpret_cast<char*>(&h), sizeof h);
      edit(h);
      h.header_checksum = checksum(&h, offsetof(BinaryHeader, header_checksum));
      f.seekp(0);
      f.write(reinterpret_cast<const char*>(&h), sizeof h);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    LoadStats stats;
    try {
      load_binary<float>(c, bin, true, 0, world, stats);
      return std::string("accepted");
    } catch (const InputError& e) {
      const std::string what = e.what();
      return what.find(expected) != std::string::npos ? std::string("refused") : what;
    }
  };
  // 2^62 rows of 2^2 features of 4 bytes: 8 + 16 bytes a row wrap the 64-bit size to ~0.
  EXPECT_EQ(forged([](BinaryHeader& h) { h.rows = std::int64_t(1) << 62, h.features = 4; },
                   "more than 2^64"),
            "refused");
  EXPECT_EQ(forged([](BinaryHeader& h) { h.rows = std::int64_t(1) << 40; }, "truncated"),
            "refused");
  EXPECT_EQ(forged([](BinaryHeader& h) { h.features *= 3; }, "truncated"), "refused");
  EXPECT_EQ(forged([](BinaryHeader& h) { h.element_bytes = 2; }, "elements 2 bytes"), "refused");
  EXPECT_EQ(forged([](BinaryHeader& h) { h.element_bytes = 8; }, "elements 8 bytes"), "refused");
}

// The sparse binary form: a CSR file converted from the text loads into the same share as the
// text, sparse or dense, in both decompositions; damaged and forged files are refused; a dense
// file cannot give a sparse share.
TEST(Binary, CsrFileLoadsLikeTheTextSparseOrDense) {
  comm::MpiCommunicator world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  const std::string text = write_libsvm("csr.libsvm", 400, 12);
  const std::string bin = temp("csr.bin");
  for (const char* dec : {"row", "column"}) {
    SCOPED_TRACE(dec);
    Config c = data_deck("{source: binary, path: " + bin + ", layout: sparse}", dec);
    EXPECT_EQ(convert_libsvm<double>(c, text, bin, 0, world), 400);
    ASSERT_EQ(binary_form(InputFile(bin)), BinaryForm::csr);
    LoadStats stats;
    Config t = data_deck("{source: libsvm, path: " + text + ", layout: sparse, cache: false}", dec);
    const auto from_text = load_libsvm<double>(t, text, true, 0, world, stats);
    const auto from_bin = load_binary<double>(c, bin, true, 0, world, stats);
    ASSERT_TRUE(from_bin.sparse());
    const auto host = [](const auto& v) {
      auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), v);
      return std::vector<std::decay_t<decltype(h(0))>>(h.data(), h.data() + h.extent(0));
    };
    EXPECT_EQ(host(from_bin.csr.row_map), host(from_text.csr.row_map));
    EXPECT_EQ(host(from_bin.csr.entries), host(from_text.csr.entries));
    EXPECT_EQ(host(from_bin.csr.values), host(from_text.csr.values));
    EXPECT_EQ(host(from_bin.y), host(from_text.y));
    // Dense storage of the same CSR file: the one-rank dense load of the text, element by element.
    c.data.layout = t.data.layout = Layout::dense;
    const auto dense_bin = load_binary<double>(c, bin, true, 0, world, stats);
    const auto dense_text = load_libsvm<double>(t, text, true, 0, self, stats);
    EXPECT_EQ(mismatches(dense_bin, dense_text), 0);
  }
}

TEST(Binary, CsrDamageAndDenseFilesForSparseSharesAreRefused) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const std::string text = write_libsvm("csrdamage.libsvm", 300, 8);
  const std::string bin = temp("csrdamage.bin");
  Config c = data_deck("{source: binary, path: " + bin + ", layout: sparse}", "row");
  const auto refused = [&](const std::string& what) {
    LoadStats stats;
    try {
      load_binary<float>(c, bin, true, 0, world, stats);
    } catch (const InputError& e) {
      return std::string(e.what()).find(what) != std::string::npos ? std::string("refused")
                                                                   : std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto damage = [&](auto f) {
    MPI_Barrier(MPI_COMM_WORLD);  // every rank is done with the file
    if (test::world_rank() == 0) f();
    MPI_Barrier(MPI_COMM_WORLD);
  };
  const auto poke = [&](std::uint64_t at, const void* bytes, std::size_t n) {
    damage([&] {
      std::fstream f(bin, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(std::streamoff(at));
      f.write(static_cast<const char*>(bytes), std::streamsize(n));
    });
  };
  convert_libsvm<float>(c, text, bin, 0, world);
  EXPECT_EQ(refused("x"), "accepted");
  CsrHeader h{};
  EXPECT_EQ(read_header(InputFile(bin), h), "");
  const CsrLayout l = layout_of(h);
  damage([&] { std::filesystem::resize_file(bin, l.total - 3); });
  EXPECT_EQ(refused("truncated"), "refused");
  convert_libsvm<float>(c, text, bin, 0, world);
  const char flip = 0x10;  // one bit of one column index
  poke(l.columns_at + 4 * 7 + 1, &flip, 1);
  EXPECT_EQ(refused("fail their checksum"), "refused");
  convert_libsvm<float>(c, text, bin, 0, world);
  const std::int64_t beyond = h.entries + 1;  // a row offset past the entries
  poke(l.offsets_at + 8 * 5, &beyond, 8);
  EXPECT_EQ(refused("damaged row offsets"), "refused");
  // A forged entry count (header resealed) no longer matches the file's size.
  convert_libsvm<float>(c, text, bin, 0, world);
  CsrHeader forged = h;
  forged.entries = std::int64_t(1) << 61;
  forged.header_checksum = checksum(&forged, offsetof(CsrHeader, header_checksum));
  poke(0, &forged, sizeof forged);
  EXPECT_EQ(refused("more than 2^64"), "refused");
  c.data.layout = Layout::dense;
  convert_libsvm<float>(c, text, bin, 0, world);
  ASSERT_EQ(binary_form(InputFile(bin)), BinaryForm::dense);
  c.data.layout = Layout::sparse;
  EXPECT_EQ(refused("data.layout: sparse reads a sparse binary file"), "refused");
}
