#include "daemon/ops/crash_scope.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

namespace newsflow::daemon {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Read by the handler: fixed at install, before any scope is entered.
char note_path[4096];

// The scope the thread is in (null: none). Initial-exec TLS of the executable: safe to read in
// a signal handler.
thread_local const std::string* current = nullptr;

// Large enough for the handler's few calls; a stack overflow runs the handler here.
constexpr std::size_t kAltStackBytes = 64 * 1024;

struct AltStack {
  AltStack() {
    memory = std::malloc(kAltStackBytes);
    if (!memory) return;
    stack_t ss{};
    ss.ss_sp = memory;
    ss.ss_size = kAltStackBytes;
    if (sigaltstack(&ss, &previous) != 0) {
      std::free(memory);
      memory = nullptr;
    }
  }
  ~AltStack() {
    if (!memory) return;
    sigaltstack(&previous, nullptr);
    std::free(memory);
  }
  void* memory = nullptr;
  stack_t previous{};
};

void write_all(int fd, const char* s, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_fatal_signal(int sig) {
  if (const std::string* note = current) {
    const char* name = sig == SIGSEGV  ? "SIGSEGV"
                       : sig == SIGBUS ? "SIGBUS"
                       : sig == SIGFPE ? "SIGFPE"
                       : sig == SIGILL ? "SIGILL"
                                       : "SIGABRT";
    constexpr char kHead[] = "newsflow: fatal signal ";
    constexpr char kWhile[] = " while processing ";
    write_all(STDERR_FILENO, kHead, sizeof kHead - 1);
    write_all(STDERR_FILENO, name, std::strlen(name));
    write_all(STDERR_FILENO, kWhile, sizeof kWhile - 1);
    write_all(STDERR_FILENO, note->data(), note->size());
    write_all(STDERR_FILENO, "\n", 1);
    if (note_path[0] != '\0') {
      const int fd = ::open(note_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd >= 0) {
        write_all(fd, note->data(), note->size());
        write_all(fd, "\n", 1);
        ::fsync(fd);
        ::close(fd);
      }
    }
  }
  // Dies of the signal as it would have (the handler was reset: SA_RESETHAND): delivered
  // when the handler returns.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

std::string link_crash_note(const std::string& url) {
  return nlohmann::json{{"link", url}}.dump(-1, ' ', false,
                                            nlohmann::json::error_handler_t::replace);
}

void install_crash_handler(const std::string& path) {
  const std::size_t n = std::min(path.size(), sizeof note_path - 1);
  std::memcpy(note_path, path.data(), n);
  note_path[n] = '\0';
  struct sigaction sa {};
  sa.sa_handler = &on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (const int sig : kSignals) ::sigaction(sig, &sa, nullptr);
}

CrashScope::CrashScope(std::string note) : note_(std::move(note)), outer_(current) {
  thread_local AltStack alt_stack;
  (void)alt_stack;
  current = &note_;
}

CrashScope::~CrashScope() { current = outer_; }

}  // namespace newsflow::daemon
