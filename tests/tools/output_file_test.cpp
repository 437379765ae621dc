// tests/tools/output_file_test.cpp — output files replaced whole or not at all
// (tools/output_file.hpp), in process and through the tools.
//
// A full disk is simulated with RLIMIT_FSIZE (`ulimit -f` for the tools):
// write() past the limit fails with EFBIG, through the same code path as
// ENOSPC, and SIGXFSZ is ignored so that the failure is an error, not a kill.
// /dev/full gives the real ENOSPC to write_all().
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "npy.hpp"
#include "output_file.hpp"
#include "tool_test.hpp"

namespace tessel::tools {
namespace {

class OutputFiles : public tool_test {
 protected:
  // What `f` throws as output_error (ADD_FAILURE if nothing).
  template <class F> std::string error_of(F f) {
    try {
      f();
    } catch (const output_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no output_error";
    return "";
  }
};

// While alive, files cannot grow past `bytes` in this process; SIGXFSZ is ignored.
class file_size_limit {
 public:
  explicit file_size_limit(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~file_size_limit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

TEST_F(OutputFiles, ReplacesWholeKeepingPermissionsAndLinks) {
  write_bytes("a.txt", "old contents of a");
  ASSERT_EQ(::chmod(path("a.txt").c_str(), 0640), 0);
  write_bytes("real.txt", "old contents of real");
  std::filesystem::create_symlink("real.txt", path("link.txt"));
  output_set out;
  out.add("--a", path("a.txt"));
  out.add("--link", path("link.txt"));
  out.add("--new", path("sub_new.txt"));
  EXPECT_EQ(hidden_files().size(), 3u);  // the temporaries exist from add() on
  EXPECT_EQ(read_bytes("a.txt"), "old contents of a");
  out.write("--a", "new a");
  out.write("--link", "new real");
  out.write("--new", "brand new");
  EXPECT_EQ(read_bytes("a.txt"), "old contents of a");  // nothing replaced before commit()
  out.commit();
  EXPECT_EQ(read_bytes("a.txt"), "new a");
  EXPECT_EQ(read_bytes("real.txt"), "new real");
  EXPECT_TRUE(std::filesystem::is_symlink(path("link.txt")));
  EXPECT_EQ(read_bytes("sub_new.txt"), "brand new");
  struct stat st {};
  ASSERT_EQ(::stat(path("a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(hidden_files(), std::vector<std::string>{});
}

TEST_F(OutputFiles, RefusesBadTargetsBeforeAnyWork) {
  write_bytes("file.txt", "x");
  std::filesystem::create_directories(path("dir"));
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink("missing-target", path("dangling"));
  const std::pair<std::string, std::string> cases[] = {
      {path("nodir/x.npy"), "folder '" + path("nodir") + "' does not exist"},
      {path("file.txt/x.npy"), "not a folder"},
      {path("dir"), "is a directory"},
      {path("dir") + "/", "names a folder"},
      {path("fifo"), "is not a regular file (a FIFO)"},
      {"/dev/null", "is not a regular file (a character device)"},
      {path("dangling"), "is a symbolic link to a missing file"},
      {"/proc/tessel-test.npy", "cannot create a file in folder '/proc'"},  // even for root
      {"", "empty path"},
  };
  for (const auto& [target, phrase] : cases) {
    const std::string p = target;  // (C++17 lambdas cannot capture a structured binding)
    SCOPED_TRACE(p);
    output_set out;
    const std::string w = error_of([&] { out.add("--out", p); });
    EXPECT_EQ(w.rfind("'--out' " + p + ": ", 0), 0u) << w;
    EXPECT_NE(w.find(phrase), std::string::npos) << w;
  }
  // Two options naming one file, by another spelling or through a link.
  std::filesystem::create_symlink("file.txt", path("alias.txt"));
  for (const std::string& other : {path("file.txt"), dir_.string() + "/./file.txt", path("alias.txt")}) {
    output_set out;
    out.add("--out", path("file.txt"));
    EXPECT_NE(error_of([&] { out.add("--lse", other); }).find("names the same file as '--out'"), std::string::npos);
  }
  output_set out;
  out.add("--out", path("new.npy"));
  EXPECT_NE(error_of([&] { out.add("--lse", dir_.string() + "/./new.npy"); }).find("names the same file"),
            std::string::npos);
  EXPECT_EQ(read_bytes("file.txt"), "x");
}

TEST_F(OutputFiles, AFailedWriteLeavesEveryTargetAsItWas) {
  write_bytes("first.npy", "first, old");
  write_bytes("second.npy", "second, old");
  {
    output_set out;
    out.add("--out", path("first.npy"));
    out.add("--lse", path("second.npy"));
    out.write("--out", "first, new (small)");
    const std::string big(64 * 1024, 'x');
    std::string w;
    {
      file_size_limit limit(4096);
      w = error_of([&] { out.write("--lse", big); });
    }
    EXPECT_NE(w.find("'--lse' " + path("second.npy") + ": write error: File too large"), std::string::npos) << w;
    EXPECT_THROW(out.commit(), std::logic_error);  // an output without contents is never renamed
  }
  EXPECT_EQ(read_bytes("first.npy"), "first, old");  // written to its temporary, never renamed
  EXPECT_EQ(read_bytes("second.npy"), "second, old");
  EXPECT_EQ(hidden_files(), std::vector<std::string>{});

  // A set destroyed before commit() (an exception unwinding) removes its temporaries.
  {
    output_set out;
    out.add("", path("first.npy"));
    out.write("", "never seen");
  }
  EXPECT_EQ(read_bytes("first.npy"), "first, old");
  EXPECT_EQ(hidden_files(), std::vector<std::string>{});
}

TEST_F(OutputFiles, WriteAllReportsAFullDevice) {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full";
  const std::string bytes(10000, 'x');
  EXPECT_EQ(write_all(fd, bytes.data(), bytes.size()), ENOSPC);
  ::close(fd);
}

// Through the tools: --lse into a missing folder, and a write that fails half
// way (the disk "full" after 8 KiB), leave an existing --out byte-identical.
TEST_F(OutputFiles, ToolsLeaveExistingOutputsOnFailure) {
  SKIP_WITHOUT_DEVICE();
  const std::string dtype = support::default_device().kind == device_kind::host ? "" : " --dtype bf16";
  const std::string seed3 = "attention --q-len 64 --heads 4 --seed 3" + dtype,
                    seed4 = "attention --q-len 64 --heads 4 --seed 4" + dtype;
  ASSERT_EQ(check(seed3 + " --out " + quoted("o.npy") + " --lse " + quoted("l.npy")).status, 0);
  const std::string o = read_bytes("o.npy"), l = read_bytes("l.npy");
  ASSERT_GT(o.size(), 64u * 1024);

  result r = check(seed4 + " --out " + quoted("o.npy") + " --lse " + quoted("missing/l.npy"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(count_lines(r.output), 1) << r.output;  // refused before the run
  EXPECT_NE(r.output.find("'--lse' " + path("missing/l.npy") + ": folder"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes("o.npy"), o);

  // dash's ulimit -f counts 512-byte blocks, bash's 1024: 16 is 8 or 16 KiB, under o.npy's 64 KiB.
  r = run(TESSEL_CHECK_EXE, seed4 + " --out " + quoted("o.npy") + " --lse " + quoted("l.npy"),
          "trap '' XFSZ; ulimit -f 16;");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("'--out' " + path("o.npy") + ": write error: File too large"), std::string::npos)
      << r.output;
  EXPECT_EQ(read_bytes("o.npy"), o);
  EXPECT_EQ(read_bytes("l.npy"), l);
  EXPECT_EQ(hidden_files(), std::vector<std::string>{});

  std::mt19937 rng(9);
  write_npy(path("a.npy"), npy_type::f32, {128, 64}, random_values(128 * 64, rng));
  write_npy(path("b.npy"), npy_type::f32, {64, 128}, random_values(64 * 128, rng));
  const std::string gemm = "gemm --a " + quoted("a.npy") + " --b " + quoted("b.npy") + " --out " + quoted("o.npy");
  r = run(TESSEL_CHECK_EXE, gemm, "trap '' XFSZ; ulimit -f 16;");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("write error"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes("o.npy"), o);
  EXPECT_EQ(check(gemm).status, 0);  // and without the limit it is replaced
  EXPECT_EQ(read_npy(path("o.npy")).shape, (std::vector<std::int64_t>{128, 128}));
  EXPECT_EQ(hidden_files(), std::vector<std::string>{});
}

TEST_F(OutputFiles, BenchChecksJsonBeforeTheRun) {
  const result r = bench("gemm --shape 8x8x8 --repeat 1 --json " + quoted("missing/b.json"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(count_lines(r.output), 1) << r.output;  // refused before the header or any timing
  EXPECT_NE(r.output.find("'--json' " + path("missing/b.json") + ": folder"), std::string::npos) << r.output;
  EXPECT_EQ(bench("gemm --shape 8x8x8 --repeat 1 --json /dev/null").status, 1);
}

}  // namespace
}  // namespace tessel::tools
