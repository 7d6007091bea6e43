// The entry point of a fuzz target: libFuzzer's in the fuzz preset; elsewhere a replay driver
// that feeds every file under the directories (or files) given on the command line.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz.hpp"

#ifdef SREH_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz_one({reinterpret_cast<const char*>(data), size});
  return 0;
}
#else
int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p{argv[i]};
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::exists(p)) {
      files.push_back(p);
    }
  }
  for (const auto& f : files) {
    std::ifstream in{f, std::ios::binary};
    std::string text{std::istreambuf_iterator<char>{in}, {}};
    fuzz_one(text);
  }
  // The closing line CTest's reader and a person both understand.
  std::printf("%zu passed, 0 failed\n", files.size());
  return files.empty() ? 1 : 0; // an empty corpus means the test lost its inputs
}
#endif
