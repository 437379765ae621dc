// tools/output_file.hpp — the tools' output files, replaced whole or not at all.
//
// Contract: output_set::add(option, path) checks at once, before any work is
// done, that `path` can be replaced: its folder exists and is a folder, the
// path is not a folder or another non-regular file (device, FIFO, socket), no
// earlier output of the set names the same file, and a file can be created in
// the folder — the temporary the output will be written to is created there
// now (".NAME.tmp-XXXXXX", with the target's permissions, or 0666 less the
// umask). A symbolic link is followed: the file it names is replaced, the
// link kept. Any problem throws output_error, one line naming the option and
// the path.
//
// write(option, bytes) writes an output's temporary in full and fsyncs it;
// commit() renames every temporary over its target and fsyncs the folders.
// Give every output its bytes before commit(): a failed write (disk full,
// quota, I/O error) throws and leaves every existing target as it was, and
// nothing is renamed until all temporaries are written. The temporaries of a
// set destroyed before commit() (an exception unwinding past it) are removed.
// A rename that fails after others succeeded (not seen in practice: same
// folder, files already created) is reported naming the outputs replaced.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::tools {

class output_error : public std::runtime_error {
 public:
  explicit output_error(const std::string& what) : std::runtime_error(what) {}
};

class output_set {
 public:
  output_set();
  output_set(const output_set&) = delete;
  output_set& operator=(const output_set&) = delete;
  ~output_set();

  // `option` names the output in messages ("--out"); empty: the path alone.
  void add(const std::string& option, const std::string& path);
  bool has(const std::string& option) const { return find(option) != nullptr; }
  void write(const std::string& option, const std::string& bytes);
  void commit();

 private:
  struct entry;
  entry* find(const std::string& option) const;
  std::vector<std::unique_ptr<entry>> entries_;
};

// What a stat() mode that is not a regular file names: "a FIFO", "a character device", ...
const char* special_file_kind(unsigned mode);

// Writes all of `bytes` to `fd` (retrying short writes and EINTR); returns
// 0, or the errno of the failing write.
int write_all(int fd, const char* bytes, std::size_t n);

// Writes `bytes` to `path` through an output_set of one: replaced whole or not at all.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace tessel::tools
