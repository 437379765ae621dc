// tools/output_file.cpp — outputs written to a temporary beside the target, then renamed (see output_file.hpp).
#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace tessel::tools {

namespace {

std::string err(int e) { return std::strerror(e); }

std::string dev_ino(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

mode_t default_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; a folder that cannot be opened cannot be synced either
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

struct output_set::entry {
  std::string option, label;  // label: how messages name the output
  std::string target;         // the file replaced (a symbolic link resolved)
  std::string folder;
  std::string key;            // identifies the target file: "device:inode/name"
  std::string tmp;            // the temporary's path; empty once renamed or removed
  int fd = -1;
  mode_t mode = 0;
  bool written = false;

  [[noreturn]] void fail(const std::string& problem) const { throw output_error(label + ": " + problem); }
  void resolve(const std::string& path);
  void create_temporary();
  void discard() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (!tmp.empty()) ::unlink(tmp.c_str());
    tmp.clear();
  }
};

// Fills target, folder, key and mode from the path as given, or throws.
void output_set::entry::resolve(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) fail("empty path");
  if (fs::path(path).filename().empty() || path.back() == '/') fail("names a folder, not a file");
  struct stat lst {}, st {};
  target = path;
  mode = default_mode();
  bool exists = false;
  if (::lstat(path.c_str(), &lst) == 0) {
    if (::stat(path.c_str(), &st) != 0) {
      const int saved = errno;
      fail(saved == ENOENT ? std::string("is a symbolic link to a missing file")
                           : "is a symbolic link that cannot be followed: " + err(saved));
    }
    if (S_ISDIR(st.st_mode)) fail("is a directory, not a file");
    if (!S_ISREG(st.st_mode))
      fail(std::string("is not a regular file (") + special_file_kind(st.st_mode) +
           "); outputs are written to a temporary file and renamed over the target");
    if (S_ISLNK(lst.st_mode)) {
      char* real = ::realpath(path.c_str(), nullptr);
      if (!real) fail("cannot resolve the symbolic link: " + err(errno));
      target = real;
      std::free(real);
    }
    mode = st.st_mode & 07777;
    exists = true;
  } else if (errno == ENOTDIR) {
    fail("a component of the path is not a folder");
  } else if (errno != ENOENT) {
    fail("cannot examine: " + err(errno));
  }
  const fs::path t(target);
  folder = t.has_parent_path() ? t.parent_path().string() : ".";
  struct stat fst {};
  if (::stat(folder.c_str(), &fst) != 0) {
    const int saved = errno;
    fail(saved == ENOENT ? "folder '" + folder + "' does not exist"
                         : "cannot examine folder '" + folder + "': " + err(saved));
  }
  if (!S_ISDIR(fst.st_mode)) fail("'" + folder + "' is not a folder");
  key = exists ? dev_ino(st) : dev_ino(fst) + "/" + t.filename().string();
}

// Creates the temporary beside the target, with the target's permissions.
void output_set::entry::create_temporary() {
  std::string name = std::filesystem::path(target).filename().string();
  if (name.size() > 200) name.resize(200);  // room for the suffix within NAME_MAX
  std::string tmpl = folder + "/." + name + ".tmp-XXXXXX";
  fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) fail("cannot create a file in folder '" + folder + "': " + err(errno));
  tmp = tmpl;
  if (::fchmod(fd, mode) != 0) {
    const int saved = errno;
    discard();
    fail("cannot set the permissions of a new file in '" + folder + "': " + err(saved));
  }
}

const char* special_file_kind(unsigned mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "an unknown kind of file";
}

int write_all(int fd, const char* bytes, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, bytes, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    bytes += w;
    n -= std::size_t(w);
  }
  return 0;
}

output_set::output_set() = default;

output_set::~output_set() {
  for (auto& e : entries_) e->discard();
}

output_set::entry* output_set::find(const std::string& option) const {
  for (const auto& e : entries_)
    if (e->option == option) return e.get();
  return nullptr;
}

void output_set::add(const std::string& option, const std::string& path) {
  auto e = std::make_unique<entry>();
  e->option = option;
  e->label = option.empty() ? path : "'" + option + "' " + path;
  if (find(option)) e->fail("given twice");
  e->resolve(path);
  for (const auto& other : entries_)
    if (other->key == e->key) e->fail("names the same file as " + other->label);
  e->create_temporary();
  entries_.push_back(std::move(e));
}

void output_set::write(const std::string& option, const std::string& bytes) {
  entry* e = find(option);
  if (!e) throw std::logic_error("output_set::write: no output '" + option + "' was added");
  if (e->written || e->fd < 0) throw std::logic_error("output_set::write: '" + option + "' written twice");
  int code = write_all(e->fd, bytes.data(), bytes.size());
  if (code == 0 && ::fsync(e->fd) != 0) code = errno;
  const int closed = ::close(e->fd);  // the descriptor is released even when close() fails
  if (code == 0 && closed != 0) code = errno;
  e->fd = -1;
  if (code != 0) {
    e->discard();
    e->fail("write error: " + err(code) + " (the file was left as it was)");
  }
  e->written = true;
}

void output_set::commit() {
  for (const auto& e : entries_)
    if (!e->written) throw std::logic_error("output_set::commit: " + e->label + " was given no contents");
  std::string replaced;
  for (const auto& e : entries_) {
    if (::rename(e->tmp.c_str(), e->target.c_str()) != 0) {
      const int saved = errno;
      e->fail("cannot replace the file: " + err(saved) +
              (replaced.empty() ? std::string(" (no output was replaced)") : " (already replaced:" + replaced + ")"));
    }
    e->tmp.clear();
    replaced += " " + e->label;
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen = seen || entries_[j]->folder == entries_[i]->folder;
    if (!seen) sync_folder(entries_[i]->folder);
  }
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  output_set out;
  out.add("", path);
  out.write("", bytes);
  out.commit();
}

}  // namespace tessel::tools
