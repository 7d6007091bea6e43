#include "persistence/store/data_dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace sreh::persistence {

namespace {

/// What the holder wrote into the lock file ("pid 1234, node 'node-1'"), or "" if unreadable.
std::string holder_of(int fd) {
  char buf[256];
  auto n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return {};
  std::string s(buf, static_cast<std::size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
    s.pop_back();
  return s;
}

} // namespace

expected<std::unique_ptr<data_dir_lock>> data_dir_lock::acquire(const std::string& data_dir,
                                                                const std::string& node_id) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec)
    return sreh::error{errc::invalid_argument,
                       "cannot create data dir '" + data_dir + "': " + ec.message()};
  auto path = (std::filesystem::path{data_dir} / "LOCK").string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return sreh::error{errc::unavailable, "cannot open " + path + ": " + std::strerror(errno)};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    auto holder = holder_of(fd);
    ::close(fd);
    if (e == EWOULDBLOCK)
      return sreh::error{errc::conflict,
                         "data dir '" + data_dir + "' is in use by another node (" +
                           (holder.empty() ? std::string{"holder unknown"} : holder) + ", lock " +
                           path + "): stop it, or give this node its own data_dir"};
    return sreh::error{errc::unavailable, "cannot lock " + path + ": " + std::strerror(e)};
  }
  auto text = "pid " + std::to_string(::getpid()) + ", node '" + node_id + "'\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    int e = errno;
    ::close(fd);
    return sreh::error{errc::unavailable, "cannot write " + path + ": " + std::strerror(e)};
  }
  return std::unique_ptr<data_dir_lock>{new data_dir_lock(fd, std::move(path))};
}

data_dir_lock::~data_dir_lock() {
  // Leave the file (another node may already be waiting to open it); the lock goes with the fd.
  ::close(fd_);
}

} // namespace sreh::persistence
