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
struct NotAPage;

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
  /// Of a block too large to be a page and skipped through, the bytes from the first record
  /// header found inside it are held, so that reading can go on there if the block's length
  /// proves wrong; past this many, the length is taken as wrong without waiting for its end.
  std::size_t max_held_bytes = std::size_t{64} << 20;
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

/// The buffer both archive readers read their file through, and what they do alike when a
/// record cannot be read as it claims: one dead letter for it and the bytes after it up to the
/// next record header found (`skip_to_next_record`), and a block too large to hold skipped
/// through while looking inside it for such a header (`skip_block`). Each reader says what a
/// record header is (`find_header`). Not thread-safe.
class ArchiveReader {
 public:
  virtual ~ArchiveReader() = default;
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  /// The next record, or nothing at the end of the input (or on a read error: `error()`).
  virtual std::optional<WarcRecord> next() = 0;

  /// A read error that ended the input early; empty otherwise.
  const std::string& error() const { return error_; }

 protected:
  ArchiveReader(InputFile& file, const WarcOptions& options) : file_(file), options_(options) {}

  /// Where the first record header that starts in buf_[*from, limit) begins, if one reads there
  /// as a whole. Otherwise nothing, and *from says where to look again once more bytes are
  /// read (every header before it is ruled out; buf_[*from - 1] is kept to tell a line start).
  /// At the end of the input every candidate is judged on what there is.
  virtual std::optional<std::size_t> find_header(std::size_t* from, std::size_t limit) const = 0;

  bool fill();                      // reads more of the file into buf_
  bool ensure(std::size_t n);       // at least n bytes from pos_, if the input has them
  void drop_before(std::size_t k);  // forgets buf_[0, k)
  void forget_read();               // forgets what was read, when that costs no more than it frees
  bool resync(std::size_t from);    // pos_ to the next record header from buf_[from] on
  WarcRecord dead_letter(WarcRecord record, std::string reason, const std::string& detail) const;
  // The record skipped, or a dead letter, as `why` says (http_response.h).
  WarcRecord not_a_page(WarcRecord record, NotAPage why) const;
  static WarcRecord as_skipped(WarcRecord record, std::string reason);
  // The record as a page: `body` its raw bytes, the charset still to detect.
  static WarcRecord as_page(WarcRecord record, std::string content_type, std::string body);
  // One dead letter for `record` and the bytes after it up to the next record header found from
  // buf_[from] on, where reading goes on: its detail ends with the byte range it covers.
  WarcRecord skip_to_next_record(WarcRecord record, std::string reason, std::string detail,
                                 std::size_t from);

  // A block skipped through (`skip_block`): how many of its bytes there were, where the first
  // record header inside it starts (a stream offset; buf_ holds the bytes from there on), and
  // whether skipping stopped early, more than `max_held_bytes` after that header.
  // `look_from` is where to look for the next record header if the length proves wrong: the
  // header found, or where looking stopped.
  struct Skipped {
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> header;
    std::uint64_t look_from = 0;
    bool held_too_much = false;
  };
  Skipped skip_block(std::uint64_t length);  // `length` bytes from pos_; pos_ ends after them

  InputFile& file_;
  WarcOptions options_;
  std::string buf_;         // bytes [base_, base_ + buf_.size()) of the decompressed stream
  std::size_t pos_ = 0;     // the next byte to read in buf_
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool end_ = false;        // no more bytes in this segment: the end, or a damaged member
  std::string error_;
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
/// held (but for the bytes after a record header inside it, up to `max_held_bytes`). A
/// truncated or corrupt record (bad header, Content-Length past the end or not followed by the
/// blank line that ends a record, bad chunk sizes, corrupt content coding, a damaged gzip
/// member) is a dead letter whose detail names its offset. When its length cannot be trusted,
/// the one dead letter also covers the bytes up to the next record header found after the
/// record's header (a `WARC/1.x` line starting a line, then named fields with a Content-Length
/// and a WARC-Type up to a blank line), where reading goes on; so does a run of bytes that are
/// no record. After a damaged gzip member, reading goes on at the next member. Linear in the
/// input. Not thread-safe.
///
///     WarcReader reader(**file, {config.extract.max_html_bytes});
///     while (auto record = reader.next()) {
///       if (record->outcome == WarcRecord::Outcome::kDocument)
///       pipeline.process(record->parsed.input);
///     }
///     if (!reader.error().empty()) ...  // a read error: the input ends early
class WarcReader : public ArchiveReader {
 public:
  /// `file` must outlive the reader; the reader sets it to resume after damaged gzip members.
  WarcReader(InputFile& file, const WarcOptions& options);

  std::optional<WarcRecord> next() override;

 private:
  struct Header;
  std::optional<std::size_t> find_header(std::size_t* from, std::size_t limit) const override;
  bool version_line_at(std::size_t at, std::size_t* line_end) const;
  std::optional<std::size_t> trailer_length(std::size_t at) const;
  WarcRecord damaged_segment(WarcRecord record, bool in_record);
  // A record from its version line on, and its block held whole (when it may become an input)
  // or skipped through; nothing on a read error.
  std::optional<WarcRecord> read_record(WarcRecord record);
  std::optional<WarcRecord> read_held_block(WarcRecord record, const Header& header);
  std::optional<WarcRecord> read_skipped_block(WarcRecord record, const Header& header);
  WarcRecord classify(WarcRecord record, const Header& header, std::string_view block, bool whole);

  bool resync_ = false;           // look for the next record header first (after damage)
  std::uint64_t line_start_ = 0;  // a stream offset that begins a line whatever precedes it
};

/// Reads ARC files, the Internet Archive's format before WARC (version 1 as it writes them, and
/// version 2's longer header lines), plain or gzip (whole or one member per record), into the
/// same records as `WarcReader`: a record is a header line `URL IP-address Archive-date
/// Content-type Archive-length` and Archive-length bytes, for http(s) URLs the HTTP response
/// as it was received. Responses whose payload is HTML (2xx; codings undone as for WARC) become
/// pages with the URL and `fetched_at` from the Archive-date; the file description
/// (`filedesc`), other schemes (`not_http`), other statuses and types are skipped with a
/// reason; a header line that is not one (`arc_bad_header`), a record cut by the end of the file
/// (`arc_truncated`), one whose length is wrong (`arc_bad_length`: its block is neither followed
/// by the next header line nor by a newline, or by junk while a header line starts inside it)
/// or too large (`too_large`, read through without being held) are dead letters naming their
/// offset. A bad record, or a run of lines that are no header, is one dead letter up to the
/// next header line found after it (a URL with its scheme, four or more fields, a numeric
/// length last), where reading goes on. Linear in the input. Not thread-safe.
class ArcReader : public ArchiveReader {
 public:
  /// `file` must outlive the reader.
  ArcReader(InputFile& file, const WarcOptions& options);

  std::optional<WarcRecord> next() override;

 private:
  std::optional<std::size_t> find_header(std::size_t* from, std::size_t limit) const override;
  // What follows a block, from buf_[at] on: the end, or (after newlines) a header line, lines
  // that are no header after a newline, or no newline at all.
  enum class After { kEnd, kHeader, kJunkAfterNewline, kJunk };
  After after_block(std::size_t at);
  // The block after a header line: read through without being held (larger than any page may
  // be) or held whole; nothing on a read error.
  std::optional<WarcRecord> read_skipped_block(WarcRecord record, std::uint64_t length);
  std::optional<WarcRecord> read_held_block(WarcRecord record, const std::string& date,
                                            const std::string& arc_type, std::uint64_t length);
  WarcRecord classify(WarcRecord record, std::string_view date, std::string_view arc_type,
                      std::string_view block);
};

}  // namespace newsflow::daemon
