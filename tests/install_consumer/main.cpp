#include <iostream>

#include "minisgd/config/deck.hpp"
#include "minisgd/version.hpp"

int main() {
  const minisgd::Config c = minisgd::parse_deck("solver: {batch_size: 7}", "consumer");
  std::cout << "minisgd " << MINISGD_VERSION << " batch_size " << c.solver.batch_size << "\n";
  return c.solver.batch_size == 7 ? 0 : 1;
}
