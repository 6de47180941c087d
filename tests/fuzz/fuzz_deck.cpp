// libFuzzer target: the deck reader with --set overrides (ci/fuzz.sh builds and runs it).
// Input: deck text, then optionally a NUL byte and newline-separated `section.key=value`
// overrides. Bad input must end in InputError; any other exception or a crash is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "minisgd/config/deck.hpp"
#include "minisgd/core/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string deck = input.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string::npos) {
    std::string rest = input.substr(nul + 1);
    for (std::size_t at = 0; at <= rest.size();) {
      const std::size_t nl = rest.find('\n', at);
      const std::size_t end = nl == std::string::npos ? rest.size() : nl;
      if (end > at) overrides.push_back(rest.substr(at, end - at));
      at = end + 1;
    }
  }
  try {
    minisgd::parse_deck(deck, "fuzz.yaml", overrides);
  } catch (const minisgd::InputError&) {
  }
  return 0;
}
