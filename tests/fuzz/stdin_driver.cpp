// Runs the fuzz target once on its standard input: AFL++ feeds inputs this
// way (its GCC instrumentation needs no libFuzzer), and the tests replay the
// corpus through it.
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main() {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  return LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}
