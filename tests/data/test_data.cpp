// Data: LIBSVM parsing and its errors, the binary cache, the shuffle and the partition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <type_traits>

#include "minisgd/core/errors.hpp"
#include "minisgd/core/huge_pages.hpp"
#include "minisgd/data/partition.hpp"
#include "minisgd/data/raw_data.hpp"
#include "minisgd/data/share.hpp"

using namespace minisgd;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path, std::int64_t features = 0) {
  try {
    read_libsvm(path, features);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Libsvm, ParsesSparseRowsLabelsAndComments) {
  const auto p = write_temp("ok.libsvm", "+1 1:0.5 3:-2 # comment\n\n-1 2:1e-3\n0 \n");
  const RawData d = read_libsvm(p, 0);
  ASSERT_EQ(d.rows, 3);
  EXPECT_EQ(d.cols, 3);  // inferred from the largest index
  EXPECT_EQ(d.labels, (std::vector<double>{1, -1, 0}));
  EXPECT_EQ(d.row_ptr, (std::vector<std::int64_t>{0, 2, 3, 3}));
  EXPECT_EQ(d.col, (std::vector<std::int64_t>{0, 2, 1}));
  EXPECT_EQ(d.val, (std::vector<double>{0.5, -2, 1e-3}));
  EXPECT_EQ(d.line, (std::vector<std::int64_t>{1, 3, 4}));
  EXPECT_EQ(read_libsvm(p, 10).cols, 10);  // given features win
}

TEST(Libsvm, MalformedLinesNameFileAndLine) {
  const auto p = [](const std::string& body) { return write_temp("bad.libsvm", body); };
  EXPECT_EQ(
      error_of(p("1 1:2\nabc 1:2\n")),
      ::testing::TempDir() + "bad.libsvm:2: expected a numeric label at the start of the line");
  EXPECT_EQ(error_of(p("1 1:2\n1 1:2\n-1 3=4\n")),
            ::testing::TempDir() + "bad.libsvm:3: expected index:value, got '3=4'");
  EXPECT_EQ(error_of(p("1 0:2\n")), ::testing::TempDir() + "bad.libsvm:1: feature index 0 < 1");
  EXPECT_EQ(error_of(p("1 2:1 1:2\n")),
            ::testing::TempDir() + "bad.libsvm:1: feature indices must be strictly increasing");
  EXPECT_EQ(error_of(p("1 2:x\n")), ::testing::TempDir() + "bad.libsvm:1: bad value for feature 2");
  EXPECT_EQ(error_of(p("1 5:1\n"), 4),
            ::testing::TempDir() + "bad.libsvm:1: feature index 5 exceeds data.features = 4");
  EXPECT_EQ(error_of(::testing::TempDir() + "missing.libsvm"),
            ::testing::TempDir() + "missing.libsvm: cannot open data file");
}

TEST(Libsvm, RefusesNonFiniteNumbersAndBinaryData) {
  const auto p = [](const std::string& body) { return write_temp("nonfinite.libsvm", body); };
  const std::string at = ::testing::TempDir() + "nonfinite.libsvm:";
  EXPECT_EQ(error_of(p("1 1:2\n-1 1:nan 2:1\n")),
            at + "2: value nan of feature 1 is not a finite number");
  EXPECT_EQ(error_of(p("1 3:-inf\n")), at + "1: value -inf of feature 3 is not a finite number");
  EXPECT_EQ(error_of(p("1 1:1\n1 1:1\ninf 1:2\n")), at + "3: label inf is not a finite number");
  EXPECT_EQ(error_of(p("1 1:1e999\n")), at + "1: bad value for feature 1");
  // A line that starts with a NUL byte and goes on with binary data is not a blank line.
  EXPECT_EQ(error_of(p(std::string("1 1:1\n\0\x13\x88garbage\n", 17))),
            at + "2: NUL byte in a text data file (binary data?)");
}

TEST(Libsvm, PlusSignsAndWindowsLineEndsParse) {
  const auto p = write_temp("plus.libsvm", "+1 1:+0.5 2:.25\r\n-1 1:1\r\n");
  const RawData d = read_libsvm(p, 0);
  EXPECT_EQ(d.labels, (std::vector<double>{1, -1}));
  EXPECT_EQ(d.val, (std::vector<double>{0.5, 0.25, 1}));
}

TEST(Libsvm, ValuesAreTheDoublesOfStrtod) {
  // Every printf form a LIBSVM writer uses, and numbers beyond the quick path (more than 19
  // digits, exponents beyond ±22, significands over 2^53), each checked bitwise against strtod.
  std::mt19937_64 g(11);
  const char* forms[] = {"%.9g", "%.17g", "%g", "%.3e", "%.15e", "%.6f", "%.1f", "%+.12g"};
  std::string text, token;
  std::vector<std::string> tokens;
  char buf[64];
  for (int row = 0; row < 4000; ++row) {
    text += row % 2 ? "+1" : "-1";
    for (int j = 1; j <= 10; ++j) {
      const int kind = int(g() % 5);
      double x = std::ldexp(double(g() >> 11), int(g() % 80) - 90);
      if (kind == 1) x = -x;
      if (kind == 2) x = std::ldexp(x, int(g() % 400) - 200);
      if (kind == 3) x = double(std::int64_t(g() % 20001) - 10000) / 100;
      std::snprintf(buf, sizeof buf, forms[g() % 8], x);
      token = buf;
      if (kind == 4)
        token = g() % 2 ? "0.000000000000000000000123456789" : "123456789012345678901e-3";
      tokens.push_back(token);
      text += " " + std::to_string(j) + ":" + token;
    }
    text += row % 3 ? "\n" : "  # comment\n";
  }
  const RawData d = read_libsvm(write_temp("numbers.libsvm", text), 10);
  ASSERT_EQ(d.val.size(), tokens.size());
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const double expected = std::strtod(tokens[k].c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&d.val[k], &expected, sizeof expected), 0)
        << tokens[k] << " read as " << d.val[k];
  }
}

TEST(Libsvm, CommentsEndTheDataButMayNotHoldNulBytes) {
  using namespace std::string_literals;  // keeps the NUL byte
  const auto p = write_temp("comment.libsvm", "1 1:2#c\n-1 2:3\t# c\n1 1:1 # c\0c\n"s);
  EXPECT_EQ(error_of(p), p + ":3: NUL byte in a text data file (binary data?)");
  const RawData d = read_libsvm(write_temp("comment.libsvm", "1 1:2#c\n-1\t2:3\t# c\n"), 0);
  EXPECT_EQ(d.val, (std::vector<double>{2, 3}));
  EXPECT_EQ(d.col, (std::vector<std::int64_t>{0, 1}));
}

TEST(Partition, ShuffleIsAPermutationAndDeterministic) {
  const auto a = shuffled_order(1000, 7, true);
  std::vector<std::int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_EQ(a, shuffled_order(1000, 7, true));
  EXPECT_NE(a, shuffled_order(1000, 8, true));
  EXPECT_NE(a, iota);
  EXPECT_EQ(shuffled_order(1000, 7, false), iota);
}

// Any batch at any P: rank r holds ⌊b/P⌋ or ⌈b/P⌉ rows of every batch as one block of local
// rows, every position (the rows after the last whole batch too) lives on exactly one rank,
// and position() inverts local_index().
TEST(Partition, RowBatchesSplitIntoFloorOrCeilContiguousBlocks) {
  const std::int64_t m = 103;
  for (std::int64_t b : {1, 3, 7, 12, 64, 103}) {
    for (int P : {1, 2, 3, 4, 5}) {
      SCOPED_TRACE("b " + std::to_string(b) + ", P " + std::to_string(P));
      std::vector<int> holder(m, -1);
      std::int64_t rows = 0, batch_rows = 0;
      for (int p = 0; p < P; ++p) {
        const Partition part{Decomposition::row, p, P, m, 5, b};
        const std::int64_t lb = part.local_batch();
        EXPECT_TRUE(lb == b / P || lb == (b + P - 1) / P) << lb;
        batch_rows += lb;
        rows += part.local_rows();
        std::vector<bool> used(part.local_rows(), false);
        for (std::int64_t q = 0; q < m; ++q) {
          const std::int64_t l = part.local_index(q);
          if (l < 0) continue;
          EXPECT_EQ(part.owner(q), p);
          EXPECT_EQ(holder[q], -1) << "position " << q << " on two ranks";
          holder[q] = p;
          ASSERT_LT(l, part.local_rows());
          EXPECT_FALSE(used[l]);
          used[l] = true;
          EXPECT_EQ(part.position(l), q);
          const std::int64_t t = q / b;
          if (t < m / b) {  // in batch t: inside this rank's block of it
            EXPECT_GE(l, part.batch_first(t));
            EXPECT_LT(l, part.batch_first(t) + lb);
          }
        }
      }
      EXPECT_EQ(batch_rows, b);
      EXPECT_EQ(rows, m);
      EXPECT_EQ(std::count(holder.begin(), holder.end(), -1), 0);
    }
  }
}

// Without batches (a test set) and with P | b, positions are dealt cyclically: q on rank q mod P.
TEST(Partition, CyclicWhenBatchesDivideOrAreAbsent) {
  for (std::int64_t b : {0, 12}) {
    for (int P : {1, 2, 3, 4}) {
      if (b % P) continue;
      for (int p = 0; p < P; ++p) {
        const Partition part{Decomposition::row, p, P, 103, 5, b};
        for (std::int64_t q = 0; q < 103; ++q)
          EXPECT_EQ(part.local_index(q), q % P == p ? q / P : -1);
      }
    }
  }
}

TEST(Partition, ColumnsCoverEveryColumnOnce) {
  for (int P : {1, 2, 3, 4, 7}) {
    std::int64_t next = 0;
    for (int p = 0; p < P; ++p) {
      const Partition part{Decomposition::column, p, P, 50, 17};
      EXPECT_EQ(part.col_begin(), next);
      EXPECT_GE(part.local_cols(), 17 / P);
      next = part.col_end();
      EXPECT_EQ(part.local_rows(), 50);
    }
    EXPECT_EQ(next, 17);
  }
}

namespace {

// kB of the mapping holding `p` that are backed by transparent huge pages (/proc/self/smaps).
long anon_huge_kb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(':') > 8) {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      return std::atol(line.c_str() + std::strlen("AnonHugePages:"));
    }
  }
  return -1;
}

}  // namespace

// The share asks for huge pages before its first touch (core/huge_pages.hpp): where the
// kernel's transparent huge pages are not off, its 16 MiB are backed by them, and it starts
// zeroed all the same.
TEST(Share, LivesInHugePagesWhereTheKernelOffersThem) {
  if constexpr (!std::is_same_v<MemSpace, HostSpace>) GTEST_SKIP() << "device memory";
  Dataset<float> ds;
  ds.part = Partition{Decomposition::row, 0, 1, 4096, 1024, 0};
  allocate_share(ds);
  const auto h = Kokkos::create_mirror_view_and_copy(HostSpace(), ds.X);
  EXPECT_EQ(h(0, 0), 0.0f);
  EXPECT_EQ(h(4095, 1023), 0.0f);
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (mode.empty() || mode.find("[never]") != std::string::npos)
    GTEST_SKIP() << "transparent huge pages are off here: " << mode;
  // The whole huge pages inside the share: from its first 2 MiB boundary on (the advice splits
  // the mapping there).
  const std::uintptr_t huge = kHugePageBytes;
  const auto inside = (reinterpret_cast<std::uintptr_t>(ds.X.data()) + huge - 1) & ~(huge - 1);
  EXPECT_GE(anon_huge_kb(reinterpret_cast<const void*>(inside)), 2048) << "THP mode: " << mode;
}
