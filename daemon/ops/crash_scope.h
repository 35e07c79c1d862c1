#pragma once

#include <string>

namespace newsflow::daemon {

/// Names the input a fatal signal killed the process on. `install_crash_handler` sets handlers
/// for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT; a thread that crashes inside a `CrashScope`
/// has the scope's note written to stderr and appended, as one line, to `note_path` (when not
/// empty), and the process then dies of the signal as it would have. Each thread that enters a
/// scope gets an alternate signal stack, so a stack overflow is named too.
///
///   install_crash_handler(dir + "/crashed.jsonl");
///   { CrashScope scope(R"({"topic":"newsflow.pages","partition":2,"offset":41})"); parse(...); }
///
/// The daemon's crash guard reads the notes at start and dead-letters those inputs at once.
void install_crash_handler(const std::string& note_path);

/// The note for a linked page being extracted (`{"link": URL}`, one JSON line).
std::string link_crash_note(const std::string& url);

class CrashScope {
 public:
  explicit CrashScope(std::string note);
  ~CrashScope();
  CrashScope(const CrashScope&) = delete;
  CrashScope& operator=(const CrashScope&) = delete;

 private:
  std::string note_;
  const std::string* outer_;
};

}  // namespace newsflow::daemon
