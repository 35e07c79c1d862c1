// libFuzzer target: any bytes as a WARC file and as an ARC file (plain or gzip, whole or per
// record, broken in any way) read to the end through the WarcReader and the ArcReader as replay
// and produce read them. Every record ends as a page with a URL, a skip with a reason, or a dead
// letter that names its offset; offsets never go back; reading always ends.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/pipeline/input_file.h"
#include "daemon/pipeline/warc.h"

namespace {

template <typename Reader>
void read_to_the_end(Reader& reader) {
  using newsflow::daemon::WarcRecord;
  std::uint64_t last_offset = 0;
  std::size_t records = 0;
  while (auto r = reader.next()) {
    if (r->offset < last_offset) __builtin_trap();
    last_offset = r->offset;
    switch (r->outcome) {
      case WarcRecord::Outcome::kDocument:
        if (r->parsed.input.url.empty() || r->parsed.failure) __builtin_trap();
        if (r->parsed.input.body.size() > 4096) __builtin_trap();
        break;
      case WarcRecord::Outcome::kSkipped:
        if (r->skip_reason.empty()) __builtin_trap();
        break;
      case WarcRecord::Outcome::kDeadLetter:
        if (!r->parsed.failure || r->parsed.failure->reason.empty() ||
            r->parsed.failure->detail.rfind("record at offset " + std::to_string(r->offset), 0) !=
                0) {
          __builtin_trap();
        }
        break;
    }
    // Each record takes at least one byte of the decompressed stream (a gzip bomb may give
    // many records; 64 MiB of them is enough).
    if (++records > (std::size_t{64} << 20)) break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memfd_create("newsflow_fuzz_warc", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // A small limit, so oversized records and bombs are reached with small inputs.
  for (const bool arc : {false, true}) {
    lseek(fd, 0, SEEK_SET);
    auto file = newsflow::daemon::InputFile::open(path);
    if (!file) break;
    (*file)->peek(11);  // as replay tells the format, whatever it is
    if (arc) {
      newsflow::daemon::ArcReader reader(**file, {4096});
      read_to_the_end(reader);
    } else {
      newsflow::daemon::WarcReader reader(**file, {4096});
      read_to_the_end(reader);
    }
  }
  close(fd);
  return 0;
}
