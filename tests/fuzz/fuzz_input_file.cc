// libFuzzer target: any bytes as a replay input file (plain or gzip, one or more members, cut or
// corrupt), read to the end through InputFile as replay and read_lines read them.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/pipeline/input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memfd_create("newsflow_fuzz_input", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  lseek(fd, 0, SEEK_SET);
  auto file = newsflow::daemon::InputFile::open("/proc/self/fd/" + std::to_string(fd));
  close(fd);
  if (!file) return 0;
  char buf[4096];
  std::size_t total = 0;
  std::ptrdiff_t n;
  while ((n = (*file)->read(buf, sizeof buf)) > 0) {
    total += static_cast<std::size_t>(n);
    if (total > (std::size_t{64} << 20)) break;  // a gzip bomb: enough is read
  }
  if (n < 0 && (*file)->error().empty()) __builtin_trap();  // an error always says which
  return 0;
}
