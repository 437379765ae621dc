// tests/tools/tool_test.hpp — the fixture the tool tests share: a scratch folder
// per test, and the tessel-check / tessel-bench binaries run as a user runs
// them (through the shell, stdout and stderr captured together, exit status).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "device_buffer.hpp"

namespace tessel::tools {

struct result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

class tool_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("tessel_" + std::string(info->test_suite_name()) + "_" +
                                                     std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string quoted(const std::string& name) const { return "'" + path(name) + "'"; }
  void write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

  std::string read_bytes(const std::string& name) const {
    std::ifstream f(path(name), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  // Files in the scratch folder whose names start with '.': left-over temporaries of output_file.hpp.
  std::vector<std::string> hidden_files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      if (e.path().filename().string().rfind('.', 0) == 0) out.push_back(e.path().filename().string());
    return out;
  }

  // `shell` runs before the tool in the same shell (e.g. "ulimit -f 8;"); the tool is exec'd.
  result run(const std::string& exe, const std::string& args, const std::string& shell = "") const {
    const std::string out = path("output.txt");
    const std::string cmd = shell + " exec '" + exe + "' " + args + " > '" + out + "' 2>&1";
    const int raw = std::system(cmd.c_str());
    result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + (WIFSIGNALED(raw) ? WTERMSIG(raw) : 0);
    std::ifstream f(out);
    std::stringstream ss;
    ss << f.rdbuf();
    r.output = ss.str();
    return r;
  }
  result check(const std::string& args) const { return run(TESSEL_CHECK_EXE, args); }
  result bench(const std::string& args) const { return run(TESSEL_BENCH_EXE, args); }

  std::filesystem::path dir_;
};

#define SKIP_WITHOUT_DEVICE()                                                                              \
  if (!support::device_available()) GTEST_SKIP() << "this build's device is not available: "             \
                                                 << support::device_description()

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// n values drawn uniformly from [-1, 1).
inline std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace tessel::tools
