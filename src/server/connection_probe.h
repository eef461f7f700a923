#pragma once
// Tells whether the client of an in-flight HTTP request has gone away, without writing to it.
//
// cpp-httplib 0.11 does not hand request handlers their socket, and a disconnect is otherwise
// only noticed when a write fails, i.e. at the next token of a stream and never while a request
// waits in the queue or runs a long prefill, or for a whole (non-streamed) response. The probe
// finds the connection's socket once, by the addresses and ports httplib records in the Request
// (getsockname/getpeername over this process's descriptors), and then polls it: a peer that
// closed or reset the connection shows POLLRDHUP / POLLHUP / POLLERR, or reads as end-of-file.
// The descriptor stays valid while the handler runs (httplib closes it only after the handler
// and its content provider return). The search runs on the first closed() call, so requests that
// finish before their first poll never pay for it. Linux only; where no socket matches, closed()
// stays false and a disconnect is noticed at the next failed write.
#include <string>

namespace lathe::server {

class ConnectionProbe {
 public:
  ConnectionProbe() = default;
  // The connection whose local end is local_addr:local_port and remote end
  // remote_addr:remote_port (as httplib formats them: numeric host).
  ConnectionProbe(std::string local_addr, int local_port, std::string remote_addr, int remote_port)
      : local_addr_(std::move(local_addr)),
        remote_addr_(std::move(remote_addr)),
        local_port_(local_port),
        remote_port_(remote_port) {}

  // The peer has closed (or reset) the connection. Non-blocking. Not thread-safe.
  bool closed();
  // Whether the socket was found (after a closed() call).
  bool found() const { return fd_ >= 0; }

 private:
  void find();

  std::string local_addr_;
  std::string remote_addr_;
  int local_port_ = 0;
  int remote_port_ = 0;
  bool searched_ = false;
  int fd_ = -1;
};

}  // namespace lathe::server
