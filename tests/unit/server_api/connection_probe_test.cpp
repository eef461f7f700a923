// ConnectionProbe over a real loopback TCP connection: it finds the accepted socket by its
// addresses and reports the peer's close (and not before).
#include "server/connection_probe.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace lathe::server {
namespace {

struct Loopback {
  int listener = -1;
  int client = -1;
  int accepted = -1;
  int server_port = 0;
  int client_port = 0;

  Loopback() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener, 4), 0);
    socklen_t length = sizeof address;
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    server_port = ntohs(address.sin_port);
    client = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    accepted = accept(listener, nullptr, nullptr);
    sockaddr_in local{};
    length = sizeof local;
    getsockname(client, reinterpret_cast<sockaddr*>(&local), &length);
    client_port = ntohs(local.sin_port);
  }
  ~Loopback() {
    for (int fd : {listener, client, accepted}) {
      if (fd >= 0) close(fd);
    }
  }
};

bool eventually_closed(ConnectionProbe& probe) {
  for (int i = 0; i < 100; ++i) {
    if (probe.closed()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(ConnectionProbe, ReportsThePeerClosingAndNotBefore) {
  Loopback loop;
  ConnectionProbe probe("127.0.0.1", loop.server_port, "127.0.0.1", loop.client_port);
  EXPECT_FALSE(probe.closed());
  EXPECT_TRUE(probe.found());
  // Data from a live client (a pipelined request) is not a close.
  ASSERT_EQ(write(loop.client, "GET", 3), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(probe.closed());
  close(loop.client);
  loop.client = -1;
  EXPECT_TRUE(eventually_closed(probe));
}

TEST(ConnectionProbe, UnknownConnectionNeverReportsClosed) {
  Loopback loop;
  ConnectionProbe probe("127.0.0.1", loop.server_port, "127.0.0.1", 1);  // no such peer port
  EXPECT_FALSE(probe.closed());
  EXPECT_FALSE(probe.found());
  ConnectionProbe empty;
  EXPECT_FALSE(empty.closed());
}

}  // namespace
}  // namespace lathe::server
