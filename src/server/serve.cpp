#include "server/serve.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/log.h"
#include "server/http_server.h"

namespace lathe::server {
namespace {

// Worker threads: every streaming request holds one for its whole life, and idle keep-alive
// connections hold one for up to httplib's keep-alive timeout (5 s); leave room for both.
int worker_threads(int32_t max_num_seqs) { return std::clamp(max_num_seqs + 64, 64, 1024); }

}  // namespace

int run_serve(const ServeOptions& options, const BackendFactory& make_backend) {
  const auto start = std::chrono::steady_clock::now();
  // A write to a socket the client closed must fail with EPIPE, not kill the process.
  signal(SIGPIPE, SIG_IGN);
  // SIGINT / SIGTERM are taken by one thread (sigtimedwait) so every other thread runs unbothered.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  HttpOptions http_options;
  http_options.api_key = options.api_key;
  http_options.max_body_bytes = options.max_body_bytes;
  http_options.worker_threads = worker_threads(options.max_num_seqs);
  HttpServer http(http_options);
  const int port = http.bind(options.host, options.port);
  spdlog::info("serve: listening on http://{}:{} (loading {}; /health answers 503 until ready)", options.host, port,
               options.model);

  std::atomic<bool> listener_done{false};
  std::thread listener([&] {
    http.listen();
    listener_done = true;
  });

  std::mutex mutex;
  std::condition_variable wake;
  bool stop_requested = false;
  std::atomic<bool> process_done{false};
  std::atomic<bool> ready{false};
  std::thread signal_thread([&] {
    const timespec timeout{0, 200 * 1000 * 1000};
    while (!process_done) {
      const int signal_number = sigtimedwait(&stop_signals, nullptr, &timeout);
      if (signal_number > 0 && !ready) {
        // Loading cannot be interrupted cleanly midway; nothing has been served yet.
        spdlog::info("serve: signal {} received while loading; exiting", signal_number);
        std::_Exit(128 + signal_number);
      }
      if (signal_number > 0) {
        spdlog::info("serve: {} received, shutting down", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
        std::lock_guard<std::mutex> lock(mutex);
        stop_requested = true;
        wake.notify_all();
      }
    }
  });

  auto close_down = [&](const std::shared_ptr<Service>& service) {
    if (service) service->shutdown();  // every request gets its final event; handlers return
    while (!listener_done) {           // stop() is a no-op until listen() has started
      http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    listener.join();
    process_done = true;
    signal_thread.join();
  };

  std::unique_ptr<ops::Backend> backend;
  std::shared_ptr<Service> service;
  try {
    BackendChoice choice = make_backend();
    backend = std::move(choice.backend);
    if (backend->kind() == ops::DeviceKind::kCpu && options.gpu_memory_utilization != 0.9) {
      spdlog::info("serve: --gpu-memory-utilization does not apply to the CPU backend (the KV cache is sized by "
                   "--num-kv-blocks)");
    }
    service = load_service(options, *backend, choice.kv_dtype);
  } catch (...) {
    close_down(nullptr);
    throw;
  }
  http.set_service(service);
  ready = true;
  spdlog::info("serve: ready on http://{}:{} after {:.2f} s", options.host, port,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

  {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stop_requested && !listener_done) wake.wait_for(lock, std::chrono::milliseconds(200));
  }
  close_down(service);
  http.set_service(nullptr);
  service.reset();  // the engine (and the model) before the backend
  backend.reset();
  spdlog::info("serve: stopped");
  return 0;
}

}  // namespace lathe::server
