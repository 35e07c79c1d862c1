#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/pipeline/input.h"
#include "daemon/pipeline/pipeline.h"

namespace newsflow::daemon {

class InputFile;

/// Whether `first_bytes`, the start of an input after decompression, are a WARC 1.x record's
/// (`WARC/1.`).
bool is_warc(std::string_view first_bytes);

/// Whether they are an ARC file's: its first record, the file description (`filedesc://`).
bool is_arc(std::string_view first_bytes);

/// What the WARC reader takes; `replay` and `produce` fill it from the configuration.
struct WarcOptions {
  /// An HTML payload larger than this, before or after undoing its codings, is a dead letter
  /// (`too_large`); its bytes are skipped without being held.
  std::size_t max_html_bytes = 8 * 1024 * 1024;
};

/// One record of a WARC file and what became of it.
struct WarcRecord {
  enum class Outcome {
    kDocument,    ///< an HTML page: `parsed.input` (raw bytes, charset still to detect)
    kSkipped,     ///< not a page (`skip_reason`): counted, nothing else
    kDeadLetter,  ///< truncated, corrupt or too large: `parsed.failure`, `parsed.input.url`
  };
  Outcome outcome = Outcome::kDocument;
  /// Where the record starts (its `WARC/1.` line) in the decompressed stream: for a plain file
  /// the file offset.
  std::uint64_t offset = 0;
  /// For gzip input, the file offset of the gzip member the record starts in (with one member
  /// per record, where `zcat` or `warcio` can be pointed at it).
  std::optional<std::uint64_t> member_offset;
  std::string type;  ///< WARC-Type as written; empty when the header could not be read
  /// Why a record was skipped, a short label: a record type (`request`, `warcinfo`,
  /// `metadata`, `revisit`, ...), `not_http`, `not_html`, `http_3xx` (the status class),
  /// `segmented`.
  std::string skip_reason;
  ParsedInput parsed;
};

/// Reads WARC 1.0 and 1.1 records (ISO 28500) from a plain or gzip file, whole-file or one
/// gzip member per record, one record at a time: `response` records whose HTTP payload is HTML
/// (2xx status; chunked transfer coding and gzip, deflate and br content codings undone) and
/// `resource` records of HTML become inputs with the page's raw bytes (`BodyKind::kHtmlBytes`,
/// its Content-Type and charset in `content_type`), the URL from `WARC-Target-URI` and
/// `fetched_at` from `WARC-Date`. Everything else is skipped with a reason.
///
/// Memory is one record: the header block is read, then exactly Content-Length bytes; a record
/// whose payload cannot be an input under `max_html_bytes` is skipped through without being
/// held. A truncated or corrupt record (bad header, Content-Length past the end or not followed
/// by the blank line that ends a record, bad chunk sizes, corrupt content coding, a damaged
/// gzip member) is a dead letter whose detail names its offset; reading goes on at the next
/// line starting `WARC/1.` (after a damaged gzip member, at the next member). Not thread-safe.
///
///     WarcReader reader(**file, {config.extract.max_html_bytes});
///     while (auto record = reader.next()) {
///       if (record->outcome == WarcRecord::Outcome::kDocument)
///       pipeline.process(record->parsed.input);
///     }
///     if (!reader.error().empty()) ...  // a read error: the input ends early
class WarcReader {
 public:
  /// `file` must outlive the reader; the reader sets it to resume after damaged gzip members.
  WarcReader(InputFile& file, const WarcOptions& options);

  /// The next record, or nothing at the end of the input (or on a read error: `error()`).
  std::optional<WarcRecord> next();

  /// A read error that ended the input early; empty otherwise.
  const std::string& error() const { return error_; }

 private:
  struct Header;
  bool fill();                             // reads more of the file into buf_
  bool ensure(std::size_t n);              // at least n bytes from pos_, if the input has them
  void drop_before(std::size_t k);         // forgets buf_[0, k)
  std::uint64_t discard(std::uint64_t n);  // skips n bytes without holding them
  bool resync();                           // to the next `WARC/1.` line from resync_from_
  bool version_line_at(std::size_t at, std::size_t* line_end) const;
  std::optional<std::size_t> trailer_length(std::size_t at) const;
  WarcRecord dead_letter(WarcRecord record, std::string reason, const std::string& detail);
  WarcRecord damaged_segment(WarcRecord record, bool in_record);
  WarcRecord classify(WarcRecord record, const Header& header, std::string_view block, bool whole);

  InputFile& file_;
  WarcOptions options_;
  std::string buf_;         // bytes [base_, base_ + buf_.size()) of the decompressed stream
  std::size_t pos_ = 0;     // the next byte to read in buf_
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool end_ = false;        // no more bytes in this segment: the end, or a damaged member
  bool resync_ = false;     // look for the next `WARC/1.` line first
  std::size_t resync_from_ = 0;
  std::uint64_t line_start_ = 0;  // a stream offset that begins a line whatever precedes it
  std::string error_;
};

/// Reads ARC files, the Internet Archive's format before WARC (version 1 as it writes them, and
/// version 2's longer header lines), plain or gzip (whole or one member per record), into the
/// same records as `WarcReader`: a record is a header line `URL IP-address Archive-date
/// Content-type Archive-length` and Archive-length bytes, for http(s) URLs the HTTP response
/// as it was received. Responses whose payload is HTML (2xx; codings undone as for WARC) become
/// pages with the URL and `fetched_at` from the Archive-date; the file description
/// (`filedesc`), other schemes (`not_http`), other statuses and types are skipped with a
/// reason; a header line that is not one (`arc_bad_header`, reading goes on at the next line),
/// a record cut by the end of the file (`arc_truncated`) or too large (`too_large`, read
/// through without being held) are dead letters naming their offset. Not thread-safe.
class ArcReader {
 public:
  /// `file` must outlive the reader.
  ArcReader(InputFile& file, const WarcOptions& options);

  /// The next record, or nothing at the end of the input (or on a read error: `error()`).
  std::optional<WarcRecord> next();

  /// A read error that ended the input early; empty otherwise.
  const std::string& error() const { return error_; }

 private:
  bool fill();
  bool ensure(std::size_t n);
  WarcRecord dead_letter(WarcRecord record, std::string reason, const std::string& detail);
  WarcRecord classify(WarcRecord record, std::string_view date, std::string_view arc_type,
                      std::string_view block);

  InputFile& file_;
  WarcOptions options_;
  std::string buf_;
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool end_ = false;
  std::string error_;
};

}  // namespace newsflow::daemon
