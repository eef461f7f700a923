#include "server/connection_probe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace lathe::server {
namespace {

// Numeric host and port of a socket address (IPv4 or IPv6); false for other families.
bool host_and_port(const sockaddr_storage& address, std::string& host, int& port) {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    if (!inet_ntop(AF_INET, &in.sin_addr, buffer, sizeof buffer)) return false;
    port = ntohs(in.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    if (!inet_ntop(AF_INET6, &in6.sin6_addr, buffer, sizeof buffer)) return false;
    port = ntohs(in6.sin6_port);
  } else {
    return false;
  }
  host = buffer;
  return true;
}

std::vector<int> open_descriptors() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return fds;
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    fds.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  return fds;
}

}  // namespace

void ConnectionProbe::find() {
  searched_ = true;
  if (local_port_ <= 0 || remote_port_ <= 0) return;
  int port_match = -1;  // a socket matching both ports but not the address text (unusual formats)
  for (const int fd : open_descriptors()) {
    struct stat info {};
    if (fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode)) continue;
    sockaddr_storage local{};
    sockaddr_storage peer{};
    socklen_t local_len = sizeof local;
    socklen_t peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;
    std::string local_host;
    std::string peer_host;
    int local_p = 0;
    int peer_p = 0;
    if (!host_and_port(local, local_host, local_p) || !host_and_port(peer, peer_host, peer_p)) continue;
    if (local_p != local_port_ || peer_p != remote_port_) continue;
    if (peer_host == remote_addr_ && (local_addr_.empty() || local_host == local_addr_)) {
      fd_ = fd;
      return;
    }
    port_match = fd;
  }
  fd_ = port_match;
}

bool ConnectionProbe::closed() {
  if (!searched_) find();
  if (fd_ < 0) return false;
  pollfd entry{};
  entry.fd = fd_;
  entry.events = POLLIN | POLLRDHUP;
  if (poll(&entry, 1, 0) <= 0) return false;
  if (entry.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  if (entry.revents & POLLIN) {
    // Readable: either a pipelined request (the client is alive) or end-of-file.
    char byte = 0;
    const ssize_t got = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0) return true;
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
  }
  return false;
}

}  // namespace lathe::server
