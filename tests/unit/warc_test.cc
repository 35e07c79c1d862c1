#include "daemon/pipeline/warc.h"

#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "daemon/pipeline/input_file.h"

namespace newsflow::daemon {
namespace {

using Outcome = WarcRecord::Outcome;

constexpr char kPage[] =
    "<html><head><title>Caf\xE9</title></head><body><p>Un caf\xE9 au lait.</p></body></html>";

// A WARC record: the version line, the named fields (Content-Length last, `length` when it is
// to be wrong), the block and the blank line that ends it.
std::string record(const std::string& type, const std::string& block,
                   const std::string& fields = "", std::optional<std::size_t> length = {}) {
  return "WARC/1.1\r\nWARC-Type: " + type +
         "\r\nWARC-Record-ID: <urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427>\r\n"
         "WARC-Date: 2024-05-01T10:00:00Z\r\n" +
         fields + "Content-Length: " + std::to_string(length.value_or(block.size())) + "\r\n\r\n" +
         block + "\r\n\r\n";
}

// A `response` record of an HTTP response with header lines `head` (each ending in CRLF).
std::string response(const std::string& url, const std::string& head, const std::string& body,
                     const std::string& status = "200 OK") {
  return record(
      "response", "HTTP/1.1 " + status + "\r\n" + head + "\r\n" + body,
      "WARC-Target-URI: " + url + "\r\nContent-Type: application/http; msgtype=response\r\n");
}

std::string html_response(const std::string& url, const std::string& body = kPage,
                          const std::string& extra_head = "") {
  return response(url, "Content-Type: text/html; charset=iso-8859-1\r\n" + extra_head, body);
}

// zlib's deflate in a gzip (31), zlib (15) or raw (-15) wrapper.
std::string deflated(const std::string& data, int window_bits) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
std::string gzipped(const std::string& data) { return deflated(data, 31); }

std::string brotli(const std::string& data) {
  std::size_t size = BrotliEncoderMaxCompressedSize(data.size());
  std::string out(size, '\0');
  BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT,
                        data.size(), reinterpret_cast<const std::uint8_t*>(data.data()), &size,
                        reinterpret_cast<std::uint8_t*>(out.data()));
  out.resize(size);
  return out;
}

std::string chunked(const std::string& data, std::size_t chunk) {
  std::string out;
  char size[32];
  for (std::size_t i = 0; i < data.size(); i += chunk) {
    const std::string part = data.substr(i, chunk);
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    out += size + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}

// Every record of a file holding `bytes`, read as replay reads them.
std::vector<WarcRecord> read_all(const std::string& bytes, WarcOptions options = {}) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("newsflow_warc_" + std::to_string(::getpid()) + ".warc");
  std::ofstream(path, std::ios::binary) << bytes;
  auto file = InputFile::open(path);
  EXPECT_TRUE(file.has_value());
  EXPECT_TRUE(is_warc((*file)->peek(8)));
  WarcReader reader(**file, options);
  std::vector<WarcRecord> out;
  while (auto r = reader.next()) out.push_back(std::move(*r));
  EXPECT_EQ(reader.error(), "");
  std::filesystem::remove(path);
  return out;
}

std::string reason(const WarcRecord& r) { return r.parsed.failure ? r.parsed.failure->reason : ""; }
std::string detail(const WarcRecord& r) { return r.parsed.failure ? r.parsed.failure->detail : ""; }

TEST(Warc, DetectsWarcByItsVersionLine) {
  EXPECT_TRUE(is_warc("WARC/1.0\r\n"));
  EXPECT_TRUE(is_warc("WARC/1.1\r\n"));
  EXPECT_FALSE(is_warc("{\"url\":\"x\"}"));
  EXPECT_FALSE(is_warc("WARC/0.18"));
  EXPECT_FALSE(is_warc(""));
}

TEST(Warc, AnHtmlResponseBecomesAnInputOfRawBytes) {
  const std::string first = html_response("http://a.test/1");
  const auto records = read_all(first + html_response("http://a.test/2"));
  ASSERT_EQ(records.size(), 2u);
  const WarcRecord& r = records[0];
  ASSERT_EQ(r.outcome, Outcome::kDocument) << detail(r);
  EXPECT_EQ(r.offset, 0u);
  EXPECT_FALSE(r.member_offset);
  EXPECT_EQ(r.type, "response");
  EXPECT_EQ(r.parsed.input.url, "http://a.test/1");
  EXPECT_EQ(r.parsed.input.fetched_at, 1714557600);
  EXPECT_EQ(r.parsed.input.kind, BodyKind::kHtmlBytes);
  EXPECT_EQ(r.parsed.input.content_type, "text/html; charset=iso-8859-1");
  EXPECT_EQ(r.parsed.input.body, kPage);
  EXPECT_TRUE(r.parsed.input.id.empty());
  EXPECT_EQ(records[1].offset, first.size());
  EXPECT_EQ(records[1].parsed.input.url, "http://a.test/2");
}

TEST(Warc, WarcOneZeroAngleBracketsLfLineEndsAndFoldedFieldsAreRead) {
  const std::string block = "HTTP/1.0 200 OK\nContent-Type:\n text/html\n\n<p>x</p>";
  const std::string rec =
      "WARC/1.0\nWARC-Type: response\nWARC-Target-URI: <http://a.test/old>\n"
      "Content-Length: " +
      std::to_string(block.size()) + "\n\n" + block + "\n\n";
  const auto records = read_all(rec);
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].outcome, Outcome::kDocument) << detail(records[0]);
  EXPECT_EQ(records[0].parsed.input.url, "http://a.test/old");
  EXPECT_EQ(records[0].parsed.input.content_type, "text/html");
  EXPECT_EQ(records[0].parsed.input.body, "<p>x</p>");
  EXPECT_FALSE(records[0].parsed.input.fetched_at);
}

TEST(Warc, GzipPerRecordAndWholeFileGzipReadAsPlain) {
  const std::string a = html_response("http://a.test/1"),
                    b = record("request", "GET / HTTP/1.1\r\n\r\n"),
                    c = html_response("http://a.test/3");
  const std::string members = gzipped(a) + gzipped(b) + gzipped(c);
  const auto per_record = read_all(members);
  const auto whole = read_all(gzipped(a + b + c));
  ASSERT_EQ(per_record.size(), 3u);
  ASSERT_EQ(whole.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(per_record[i].outcome, whole[i].outcome);
    EXPECT_EQ(per_record[i].offset, whole[i].offset);
    EXPECT_EQ(per_record[i].parsed.input.body, whole[i].parsed.input.body);
    EXPECT_EQ(whole[i].member_offset, 0u);
  }
  EXPECT_EQ(per_record[2].offset, a.size() + b.size());
  // With one member per record, the member a record starts in is where to point zcat.
  EXPECT_EQ(per_record[0].member_offset, 0u);
  EXPECT_EQ(per_record[1].member_offset, gzipped(a).size());
  EXPECT_EQ(per_record[2].member_offset, gzipped(a).size() + gzipped(b).size());
  EXPECT_EQ(per_record[2].parsed.input.body, kPage);
}

TEST(Warc, ChunkedTransferCodingIsUndone) {
  const auto records = read_all(
      html_response("http://a.test/c", chunked(kPage, 7), "Transfer-Encoding: chunked\r\n") +
      html_response("http://a.test/e", "5;ext=1\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n",
                    "Transfer-Encoding: Chunked\r\n"));
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(records[0].outcome, Outcome::kDocument) << detail(records[0]);
  EXPECT_EQ(records[0].parsed.input.body, kPage);
  ASSERT_EQ(records[1].outcome, Outcome::kDocument) << detail(records[1]);
  EXPECT_EQ(records[1].parsed.input.body, "hello");
}

TEST(Warc, GzipDeflateAndBrContentCodingsAreUndone) {
  const std::string page = kPage;
  const auto records = read_all(
      html_response("http://a.test/gz", gzipped(page), "Content-Encoding: gzip\r\n") +
      html_response("http://a.test/zlib", deflated(page, 15), "Content-Encoding: deflate\r\n") +
      html_response("http://a.test/raw", deflated(page, -15), "Content-Encoding: deflate\r\n") +
      html_response("http://a.test/br", brotli(page), "Content-Encoding: br\r\n") +
      // Codings stack, last applied first undone; chunking goes on top.
      html_response("http://a.test/both", chunked(brotli(gzipped(page)), 10),
                    "Content-Encoding: gzip, br\r\nTransfer-Encoding: chunked\r\n") +
      html_response("http://a.test/id", page, "Content-Encoding: identity\r\n"));
  ASSERT_EQ(records.size(), 6u);
  for (const auto& r : records) {
    ASSERT_EQ(r.outcome, Outcome::kDocument) << r.parsed.input.url << ": " << detail(r);
    EXPECT_EQ(r.parsed.input.body, page) << r.parsed.input.url;
  }
}

TEST(Warc, ResourceRecordsOfHtmlAreTaken) {
  const auto records =
      read_all(record("resource", kPage,
                      "WARC-Target-URI: file:///site/index.html\r\nContent-Type: text/html\r\n") +
               record("resource", "\x89PNG....",
                      "WARC-Target-URI: file:///site/logo.png\r\nContent-Type: image/png\r\n") +
               // No type at all: an HTML document is told by its start.
               record("resource", "  <!DOCTYPE html><p>sniffed</p>",
                      "WARC-Target-URI: http://a.test/s\r\n"));
  ASSERT_EQ(records.size(), 3u);
  ASSERT_EQ(records[0].outcome, Outcome::kDocument) << detail(records[0]);
  EXPECT_EQ(records[0].parsed.input.url, "file:///site/index.html");
  EXPECT_EQ(records[0].parsed.input.body, kPage);
  EXPECT_EQ(records[0].parsed.input.content_type, "text/html");
  EXPECT_EQ(records[1].outcome, Outcome::kSkipped);
  EXPECT_EQ(records[1].skip_reason, "not_html");
  EXPECT_EQ(records[2].outcome, Outcome::kDocument) << detail(records[2]);
}

TEST(Warc, EverythingElseIsSkippedWithAReason) {
  const auto records = read_all(
      record("warcinfo", "software: wget\r\n", "Content-Type: application/warc-fields\r\n") +
      record("request", "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
             "WARC-Target-URI: http://a.test/\r\n") +
      record("metadata", "outlink: http://b.test/\r\n", "WARC-Target-URI: http://a.test/\r\n") +
      record("revisit", "HTTP/1.1 200 OK\r\n\r\n", "WARC-Target-URI: http://a.test/\r\n") +
      record("Future-Type", "x") +
      response("http://a.test/img", "Content-Type: image/jpeg\r\n", "\xFF\xD8\xFF") +
      response("http://a.test/old", "Location: /new\r\nContent-Type: text/html\r\n", "",
               "301 Moved Permanently") +
      response("http://a.test/missing", "Content-Type: text/html\r\n", "<p>gone</p>",
               "404 Not Found") +
      record("response", "a.test. 300 IN A 192.0.2.1\r\n",
             "WARC-Target-URI: dns:a.test\r\nContent-Type: text/dns\r\n") +
      record("response", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>1</p>",
             "WARC-Target-URI: http://a.test/seg\r\nWARC-Segment-Number: 1\r\n"));
  const std::vector<std::string> reasons = {"warcinfo",   "request",  "metadata", "revisit",
                                            "other_type", "not_html", "http_3xx", "http_4xx",
                                            "not_http",   "segmented"};
  ASSERT_EQ(records.size(), reasons.size());
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    EXPECT_EQ(records[i].outcome, Outcome::kSkipped) << i << ": " << detail(records[i]);
    EXPECT_EQ(records[i].skip_reason, reasons[i]) << i;
  }
}

TEST(Warc, BadChunkSizeIsADeadLetterAndReadingGoesOn) {
  const std::string bad =
      html_response("http://a.test/bad", "5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n",
                    "Transfer-Encoding: chunked\r\n");
  const auto records = read_all(
      bad +
      html_response("http://a.test/past", "ff\r\nshort\r\n0\r\n\r\n",
                    "Transfer-Encoding: chunked\r\n") +
      html_response("http://a.test/nolast", "5\r\nhello\r\n", "Transfer-Encoding: chunked\r\n") +
      html_response("http://a.test/ok"));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].outcome, Outcome::kDeadLetter);
  EXPECT_EQ(reason(records[0]), "http_bad_chunking");
  EXPECT_NE(detail(records[0]).find("record at offset 0: bad chunk size 'zz'"), std::string::npos)
      << detail(records[0]);
  EXPECT_EQ(records[0].parsed.input.url, "http://a.test/bad");
  EXPECT_EQ(reason(records[1]), "http_bad_chunking");
  EXPECT_NE(detail(records[1]).find("record at offset " + std::to_string(bad.size())),
            std::string::npos)
      << detail(records[1]);
  EXPECT_NE(detail(records[1]).find("runs past its end"), std::string::npos);
  EXPECT_EQ(reason(records[2]), "http_bad_chunking");
  EXPECT_NE(detail(records[2]).find("without its last chunk"), std::string::npos);
  EXPECT_EQ(records[3].outcome, Outcome::kDocument);
}

TEST(Warc, ACutRecordIsADeadLetterNamingItsOffset) {
  const std::string good = html_response("http://a.test/1");
  const std::string cut = html_response("http://a.test/2");
  const auto records = read_all(good + cut.substr(0, cut.size() - 30));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].outcome, Outcome::kDocument);
  EXPECT_EQ(records[1].outcome, Outcome::kDeadLetter);
  EXPECT_EQ(reason(records[1]), "warc_truncated");
  EXPECT_EQ(records[1].offset, good.size());
  EXPECT_NE(detail(records[1])
                .find("record at offset " + std::to_string(good.size()) + ": Content-Length"),
            std::string::npos)
      << detail(records[1]);
  EXPECT_NE(detail(records[1]).find("runs past the end of the file"), std::string::npos);
  EXPECT_EQ(records[1].parsed.input.url, "http://a.test/2");

  // Cut inside the header, and a file whose last record lacks only its closing blank line.
  EXPECT_EQ(reason(read_all(good + cut.substr(0, 40)).back()), "warc_truncated");
  const auto no_trailer = read_all(good + cut.substr(0, cut.size() - 4));
  ASSERT_EQ(no_trailer.size(), 2u);
  EXPECT_EQ(no_trailer[1].outcome, Outcome::kDocument);
}

TEST(Warc, AWrongContentLengthIsADeadLetterAndTheNextRecordStillComesOut) {
  const std::string block =
      "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + std::string(kPage);
  const std::string fields = "WARC-Target-URI: http://a.test/w\r\n";
  for (const std::size_t length : {block.size() - 10, block.size() + 25, block.size() + 5000}) {
    const std::string wrong = record("response", block, fields, length);
    const auto records = read_all(wrong + html_response("http://a.test/next"));
    ASSERT_EQ(records.size(), 2u) << length;
    EXPECT_EQ(records[0].outcome, Outcome::kDeadLetter) << length;
    EXPECT_EQ(reason(records[0]),
              length > block.size() + 1000 ? "warc_truncated" : "warc_bad_length")
        << length;
    EXPECT_NE(detail(records[0]).find("record at offset 0"), std::string::npos);
    ASSERT_EQ(records[1].outcome, Outcome::kDocument) << length << ": " << detail(records[1]);
    EXPECT_EQ(records[1].parsed.input.url, "http://a.test/next");
    EXPECT_EQ(records[1].offset, wrong.size());
  }
}

TEST(Warc, ABadHeaderIsADeadLetterAndReadingResynchronises) {
  const std::string good = html_response("http://a.test/1");
  const std::string garbage = "this is not a record\r\nWARC/1.1 is mentioned mid-line\r\n\r\n";
  const std::string no_length = "WARC/1.1\r\nWARC-Type: response\r\n\r\nxyz\r\n\r\n";
  const std::string bad_length =
      "WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 12x\r\n\r\nxyz\r\n\r\n";
  const std::string second = html_response("http://a.test/2");
  const auto records = read_all(good + garbage + second + no_length + bad_length + good);
  // Two bad records in a row are one run of bytes that are no record: one dead letter.
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0].outcome, Outcome::kDocument);
  EXPECT_EQ(reason(records[1]), "warc_bad_header");
  EXPECT_EQ(records[1].offset, good.size());
  EXPECT_NE(detail(records[1]).find("expected a WARC/1.x line, found 'this is not a record"),
            std::string::npos)
      << detail(records[1]);
  EXPECT_NE(detail(records[1])
                .find(std::to_string(garbage.size()) + " bytes skipped from offset " +
                      std::to_string(good.size()) + " to the next record header, at offset " +
                      std::to_string(good.size() + garbage.size())),
            std::string::npos)
      << detail(records[1]);
  EXPECT_EQ(records[2].parsed.input.url, "http://a.test/2");
  EXPECT_EQ(reason(records[3]), "warc_bad_header");
  EXPECT_NE(detail(records[3]).find("no Content-Length"), std::string::npos);
  EXPECT_NE(detail(records[3])
                .find(std::to_string(no_length.size() + bad_length.size()) + " bytes skipped"),
            std::string::npos)
      << detail(records[3]);
  EXPECT_EQ(records[4].outcome, Outcome::kDocument);
  EXPECT_EQ(reason(read_all(bad_length + good)[0]), "warc_bad_header");
  EXPECT_NE(detail(read_all(bad_length + good)[0]).find("'12x' is not a number"),
            std::string::npos);
  // The last good record follows the two bad ones: a bad header costs only its own record.
  const auto again = read_all(no_length + good);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].outcome, Outcome::kDocument);
}

// Good records after a record whose Content-Length runs past them (skipped through, as it is
// larger than a page may be) or past the end of the file: each comes out, the bad record is
// one dead letter naming the bytes it covers, in a plain file and with one gzip member per
// record.
TEST(Warc, AContentLengthPastTheGoodRecordsCostsOnlyItsOwnRecord) {
  WarcOptions options;
  options.max_html_bytes = 1000;
  std::string goods;
  std::vector<std::string> members;
  for (int i = 0; i < 400; ++i) {
    const std::string r = html_response("http://a.test/" + std::to_string(i));
    goods += r;
    members.push_back(gzipped(r));
  }
  const std::string block = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>short</p>";
  const std::string fields = "WARC-Target-URI: http://a.test/liar\r\n";
  for (const std::uint64_t length :
       {std::uint64_t{goods.size() / 2 + 7}, std::uint64_t{10} << 30}) {
    const std::string bad = record("response", block, fields, length);
    for (const bool gzip : {false, true}) {
      std::string file = gzip ? gzipped(bad) : bad + goods;
      if (gzip) {
        for (const auto& m : members) file += m;
      }
      const auto records = read_all(file, options);
      ASSERT_EQ(records.size(), 401u) << length << (gzip ? " gzip" : " plain");
      EXPECT_EQ(reason(records[0]), length > goods.size() ? "warc_truncated" : "warc_bad_length");
      EXPECT_EQ(records[0].parsed.input.url, "http://a.test/liar");
      EXPECT_NE(detail(records[0])
                    .find(std::to_string(bad.size()) +
                          " bytes skipped from offset 0 to the next record header, "
                          "at offset " +
                          std::to_string(bad.size())),
                std::string::npos)
          << detail(records[0]);
      for (int i = 0; i < 400; ++i) {
        ASSERT_EQ(records[i + 1].outcome, Outcome::kDocument)
            << i << ": " << detail(records[i + 1]);
        EXPECT_EQ(records[i + 1].parsed.input.url, "http://a.test/" + std::to_string(i));
      }
    }
  }
  // Held up to the limit only: past it, the length is taken as wrong at once.
  options.max_held_bytes = 20000;
  const auto records =
      read_all(record("response", block, fields, goods.size() - 1000) + goods, options);
  ASSERT_EQ(records.size(), 401u);
  EXPECT_EQ(reason(records[0]), "warc_bad_length");
  EXPECT_NE(detail(records[0]).find("goes on for more than 20000 bytes after it"),
            std::string::npos)
      << detail(records[0]);
  EXPECT_EQ(records[400].parsed.input.url, "http://a.test/399");
}

// A record too large to be a page whose block holds a whole WARC record (a WARC file
// archived): its length is right, so it is one record, and the one inside is not read.
TEST(Warc, ARecordHeaderInsideARightLengthIsPartOfItsBlock) {
  WarcOptions options;
  options.max_html_bytes = 1000;
  const std::string inner = html_response("http://a.test/inner");
  const std::string archived = std::string(5000, 'a') + "\r\n" + inner + std::string(5000, 'b');
  const auto records = read_all(
      response("http://a.test/crawl.warc", "Content-Type: application/warc\r\n", archived) +
          html_response("http://a.test/after"),
      options);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].skip_reason, "not_html");
  EXPECT_EQ(records[1].parsed.input.url, "http://a.test/after");
}

// Runs of bytes that are no record: one dead letter each, with the bytes it covers, found in
// time linear in their size (version lines alone; a header that never ends; lines of text).
TEST(Warc, ARunOfJunkIsOneDeadLetterWithItsByteRange) {
  const std::string good = html_response("http://a.test/1");
  std::string fields_without_end = "WARC/1.0\r\n";
  for (int i = 0; i < 7000; ++i) fields_without_end += "WARC-X: " + std::to_string(i) + "\r\n";
  std::string lines;
  for (int i = 0; i < 50000; ++i) lines += "line " + std::to_string(i) + " of junk\r\n";
  std::string version_lines;
  for (int i = 0; i < 200000; ++i) version_lines += "WARC/1.0\r\n";
  for (const std::string& junk : {version_lines, fields_without_end + fields_without_end, lines}) {
    const auto started = std::chrono::steady_clock::now();
    const auto records = read_all(good + junk + good + junk);
    const auto took = std::chrono::steady_clock::now() - started;
    ASSERT_EQ(records.size(), 4u) << junk.substr(0, 20);
    EXPECT_EQ(records[0].outcome, Outcome::kDocument);
    EXPECT_EQ(reason(records[1]), "warc_bad_header");
    EXPECT_EQ(records[1].offset, good.size());
    EXPECT_NE(detail(records[1])
                  .find(std::to_string(junk.size()) + " bytes skipped from offset " +
                        std::to_string(good.size()) + " to the next record header, at offset " +
                        std::to_string(good.size() + junk.size())),
              std::string::npos)
        << detail(records[1]);
    EXPECT_EQ(records[2].outcome, Outcome::kDocument);
    EXPECT_NE(detail(records[3]).find("to the end of the input, where no record header follows"),
              std::string::npos)
        << detail(records[3]);
    EXPECT_LT(took, std::chrono::seconds(2)) << junk.substr(0, 20);
  }
}

TEST(Warc, CorruptOrUnsupportedContentCodingIsADeadLetter) {
  std::string gz = gzipped(std::string(kPage) + std::string(2000, 'x'));
  gz[gz.size() / 2] ^= 0x55;
  const std::string br = brotli(kPage);
  const auto records = read_all(
      html_response("http://a.test/gz", gz, "Content-Encoding: gzip\r\n") +
      html_response("http://a.test/br", br.substr(0, br.size() / 2), "Content-Encoding: br\r\n") +
      html_response("http://a.test/zz", "data", "Content-Encoding: zstd\r\n") +
      html_response("http://a.test/ok"));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(reason(records[0]), "http_bad_encoding");
  EXPECT_NE(detail(records[0]).find("gzip body is"), std::string::npos) << detail(records[0]);
  EXPECT_EQ(reason(records[1]), "http_bad_encoding");
  EXPECT_NE(detail(records[1]).find("br body is"), std::string::npos) << detail(records[1]);
  EXPECT_EQ(reason(records[2]), "http_unsupported_encoding");
  EXPECT_EQ(records[3].outcome, Outcome::kDocument);
}

TEST(Warc, AnOversizedRecordIsSkippedThroughWithoutBeingHeld) {
  WarcOptions options;
  options.max_html_bytes = 1000;
  const std::string big(200000, 'a');
  const auto records =
      read_all(html_response("http://a.test/big", "<html><body>" + big + "</body></html>") +
                   response("http://a.test/video", "Content-Type: video/mp4\r\n", big) +
                   // A small record that inflates past the limit: a bomb stops at the limit.
                   html_response("http://a.test/bomb", gzipped(big), "Content-Encoding: gzip\r\n") +
                   // Over the limit but within a header's room of it: read whole, then refused.
                   html_response("http://a.test/near", std::string(1500, 'n')) +
                   html_response("http://a.test/ok"),
               options);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(reason(records[0]), "too_large");
  EXPECT_NE(detail(records[0]).find("skipped without being held"), std::string::npos);
  EXPECT_EQ(records[0].parsed.input.url, "http://a.test/big");
  EXPECT_EQ(records[1].outcome, Outcome::kSkipped);
  EXPECT_EQ(records[1].skip_reason, "not_html");
  EXPECT_EQ(reason(records[2]), "too_large");
  EXPECT_NE(detail(records[2]).find("decoded payload is larger"), std::string::npos);
  EXPECT_EQ(reason(records[3]), "too_large");
  EXPECT_EQ(detail(records[3]).find("without being held"), std::string::npos);
  EXPECT_EQ(records[4].outcome, Outcome::kDocument);
}

long max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(Warc, RecordsLargerThanTheLimitAreReadInBoundedMemory) {
  // 96 MiB records (a video and an HTML page over the limit) are skipped through; the peak
  // memory of the process grows by far less than one of them.
  const auto path = std::filesystem::temp_directory_path() /
                    ("newsflow_warc_big_" + std::to_string(::getpid()) + ".warc");
  constexpr std::size_t kBig = std::size_t{96} << 20;
  {
    std::ofstream out(path, std::ios::binary);
    const std::string mib(std::size_t{1} << 20, 'v');
    for (const char* type : {"video/mp4", "text/html"}) {
      const std::string head = std::string("HTTP/1.1 200 OK\r\nContent-Type: ") + type + "\r\n\r\n";
      out << "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.test/big\r\n"
          << "Content-Length: " << head.size() + kBig << "\r\n\r\n"
          << head;
      for (std::size_t i = 0; i < kBig; i += mib.size()) out << mib;
      out << "\r\n\r\n";
    }
    out << html_response("http://a.test/after");
  }
  const long before = max_rss_kib();
  auto file = InputFile::open(path);
  ASSERT_TRUE(file.has_value());
  WarcReader reader(**file, {});
  std::vector<WarcRecord> records;
  while (auto r = reader.next()) records.push_back(std::move(*r));
  const long grown_kib = max_rss_kib() - before;
  std::filesystem::remove(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].skip_reason, "not_html");
  EXPECT_EQ(reason(records[1]), "too_large");
  EXPECT_EQ(records[2].outcome, Outcome::kDocument);
  EXPECT_LT(grown_kib, 16 * 1024) << "KiB";
}

TEST(Warc, ADamagedGzipMemberIsADeadLetterAndTheNextMemberIsRead) {
  const std::string a = html_response("http://a.test/1"), b = html_response("http://a.test/2"),
                    c = html_response("http://a.test/3");
  std::string bad = gzipped(b);
  bad[bad.size() / 2] ^= 0x55;
  const auto records = read_all(gzipped(a) + bad + gzipped(c));
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(records.front().outcome, Outcome::kDocument);
  EXPECT_EQ(records.back().outcome, Outcome::kDocument);
  EXPECT_EQ(records.back().parsed.input.url, "http://a.test/3");
  EXPECT_EQ(records.back().member_offset, gzipped(a).size() + bad.size());
  std::size_t dead = 0;
  for (const auto& r : records) {
    if (r.outcome != Outcome::kDeadLetter) continue;
    ++dead;
    EXPECT_EQ(reason(r), "warc_gzip_error");
    EXPECT_NE(detail(r).find("gzip member at file offset " + std::to_string(gzipped(a).size())),
              std::string::npos)
        << detail(r);
  }
  EXPECT_EQ(dead, 1u);

  // A .warc.gz cut short: the record it cuts is a dead letter, the ones before come out.
  const std::string whole = gzipped(a) + gzipped(b);
  const auto cut = read_all(whole.substr(0, whole.size() - 20));
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].outcome, Outcome::kDocument);
  EXPECT_EQ(reason(cut[1]), "warc_truncated");
  EXPECT_NE(detail(cut[1]).find("gzip data is truncated"), std::string::npos) << detail(cut[1]);
}

TEST(Warc, ABadTimestampOrAMissingUrlIsADeadLetter) {
  const auto records = read_all(
      record("response", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>",
             "WARC-Target-URI: http://a.test/t\r\n") +
      "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Date: yesterday\r\nWARC-Target-URI: "
      "http://a.test/d\r\nContent-Type: text/html\r\nContent-Length: 8\r\n\r\n<p>x</p>\r\n\r\n" +
      record("resource", "<p>x</p>", "Content-Type: text/html\r\n"));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].outcome, Outcome::kDocument);
  EXPECT_EQ(reason(records[1]), "invalid_timestamp");
  EXPECT_EQ(reason(records[2]), "missing_url");
}

// ARC files, in the shapes warcio's test archives have (version 1 as the Internet Archive
// writes it: a file description record, then one record per capture), written here.

// An ARC record: its header line and `content` (for http URLs the HTTP response as received),
// then the newline that separates records. `length`, when given, is the one to write.
std::string arc_record(const std::string& url, const std::string& type, const std::string& content,
                       std::optional<std::size_t> length = {}) {
  return url + " 93.184.216.119 20140216050221 " + type + " " +
         std::to_string(length.value_or(content.size())) + "\n" + content + "\n";
}

std::string arc_file_description() {
  const std::string block =
      "1 0 LiveWeb Capture\nURL IP-address Archive-date Content-type "
      "Archive-length\n";
  return "filedesc://example.arc.gz 127.0.0.1 20140216050221 text/plain " +
         std::to_string(block.size()) + "\n" + block + "\n";
}

std::string arc_html(const std::string& url, const std::string& body = kPage) {
  return arc_record(url, "text/html",
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=iso-8859-1\r\n"
                    "Content-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body);
}

std::vector<WarcRecord> read_arc(const std::string& bytes, WarcOptions options = {}) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("newsflow_arc_" + std::to_string(::getpid()) + ".arc");
  std::ofstream(path, std::ios::binary) << bytes;
  auto file = InputFile::open(path);
  EXPECT_TRUE(file.has_value());
  EXPECT_TRUE(is_arc((*file)->peek(11)));
  EXPECT_FALSE(is_warc((*file)->peek(8)));
  ArcReader reader(**file, options);
  std::vector<WarcRecord> out;
  while (auto r = reader.next()) out.push_back(std::move(*r));
  EXPECT_EQ(reader.error(), "");
  std::filesystem::remove(path);
  return out;
}

TEST(Arc, HtmlResponsesBecomePagesAndTheRestIsSkipped) {
  const std::string arc =
      arc_file_description() + arc_html("http://example.com/") +
      arc_record("dns:example.com", "text/dns", "20140216050221\nexample.com. 3600 IN A 1.2.3.4") +
      arc_record("http://example.com/logo.png", "image/png",
                 "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG") +
      arc_record("http://example.com/old", "text/html",
                 "HTTP/1.1 301 Moved\r\nLocation: http://example.com/\r\n\r\n") +
      arc_html("https://example.com/second");
  const auto records = read_arc(arc);
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[0].skip_reason, "filedesc");
  ASSERT_EQ(records[1].outcome, Outcome::kDocument);
  const Input& page = records[1].parsed.input;
  EXPECT_EQ(page.url, "http://example.com/");
  EXPECT_EQ(page.body, kPage);
  EXPECT_EQ(page.kind, BodyKind::kHtmlBytes);
  EXPECT_EQ(page.content_type, "text/html; charset=iso-8859-1");
  ASSERT_TRUE(page.fetched_at);
  EXPECT_EQ(*page.fetched_at, 1392526941);  // 2014-02-16T05:02:21Z
  EXPECT_EQ(records[2].skip_reason, "not_http");
  EXPECT_EQ(records[3].skip_reason, "not_html");
  EXPECT_EQ(records[4].skip_reason, "http_3xx");
  EXPECT_EQ(records[5].outcome, Outcome::kDocument);
  EXPECT_EQ(records[1].offset, arc_file_description().size());
}

// A record longer than one read of the file: its header's fields outlive the buffer growing
// under them (they once pointed into it: a crash, or a date read from freed memory).
TEST(Arc, ARecordLongerThanOneReadIsReadWhole) {
  const std::string body = "<p>" + std::string(300 << 10, 'w') + "</p>";
  const auto records = read_arc(arc_file_description() + arc_html("http://example.com/long", body) +
                                arc_html("http://example.com/next"));
  ASSERT_EQ(records.size(), 3u);
  ASSERT_EQ(records[1].outcome, Outcome::kDocument) << detail(records[1]);
  EXPECT_EQ(records[1].parsed.input.url, "http://example.com/long");
  EXPECT_EQ(records[1].parsed.input.body, body);
  ASSERT_TRUE(records[1].parsed.input.fetched_at);
  EXPECT_EQ(*records[1].parsed.input.fetched_at, 1392526941);
  EXPECT_EQ(records[2].parsed.input.url, "http://example.com/next");
}

TEST(Arc, GzipPerRecordReadsAsPlain) {
  const std::string plain = arc_file_description() + arc_html("http://example.com/");
  const std::string gz =
      deflated(arc_file_description(), 31) + deflated(arc_html("http://example.com/"), 31);
  const auto a = read_arc(plain);
  const auto b = read_arc(gz);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].outcome, Outcome::kDocument);
  EXPECT_EQ(b[1].parsed.input.body, a[1].parsed.input.body);
  EXPECT_EQ(b[1].parsed.input.url, a[1].parsed.input.url);
}

TEST(Arc, BadHeaderLinesAndTruncatedRecordsAreDeadLettersWithTheirOffsets) {
  // A header line that is not one: a dead letter, and the next line is tried as a header.
  std::string arc =
      arc_file_description() + "this is not a header\n" + arc_html("http://example.com/a");
  auto records = read_arc(arc);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(reason(records[1]), "arc_bad_header");
  EXPECT_NE(detail(records[1]).find("offset " + std::to_string(arc_file_description().size())),
            std::string::npos)
      << detail(records[1]);
  EXPECT_EQ(records[2].outcome, Outcome::kDocument);
  // The file ends inside a record.
  arc = arc_file_description() + arc_html("http://example.com/a");
  arc.resize(arc.size() - 20);
  records = read_arc(arc);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(reason(records[1]), "arc_truncated");
  EXPECT_EQ(records[1].parsed.input.url, "http://example.com/a");
  // A record larger than a page may be: read through, not held, and the next one is read.
  WarcOptions small;
  small.max_html_bytes = 100;
  const std::string big(200 << 10, 'x');
  arc = arc_file_description() + arc_html("http://example.com/big", "<p>" + big + "</p>") +
        arc_html("http://example.com/small", "<p>small</p>");
  records = read_arc(arc, small);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(reason(records[1]), "too_large");
  EXPECT_EQ(records[2].outcome, Outcome::kDocument);
  EXPECT_EQ(records[2].parsed.input.url, "http://example.com/small");
  // A bad Archive-date.
  const std::string response = "HTTP/1.1 200 OK\r\n\r\n<p>hello</p>";
  arc = arc_file_description() + "http://example.com/ 1.2.3.4 yesterday text/html " +
        std::to_string(response.size()) + "\n" + response + "\n";
  records = read_arc(arc);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(reason(records[1]), "invalid_timestamp");
}

// Records after a bad one are all read: a line of more than 16 KiB where a header should be
// (minified HTML), an Archive-length too long (held, or skipped through) or past the end of the
// file, one too short, a length that is not a number; each is one dead letter up to the next
// header line.
TEST(Arc, ABadRecordCostsOnlyItselfAndReadingGoesOnAtTheNextHeaderLine) {
  WarcOptions small;
  small.max_html_bytes = 1000;
  std::string goods;
  for (int i = 0; i < 300; ++i) goods += arc_html("http://example.com/" + std::to_string(i));
  const std::string page = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>bad</p>";
  const std::string desc = arc_file_description();
  struct Case {
    std::string name, bad, reason;
    WarcOptions options;
  };
  const std::vector<Case> cases = {
      {"long line", "<html>" + std::string(20 << 10, 'x') + "</html>\n", "arc_bad_header", {}},
      {"too long, held",
       arc_record("http://example.com/bad", "text/html", page, goods.size() / 2 + 7),
       "arc_bad_length",
       {}},
      {"too long, skipped through",
       arc_record("http://example.com/bad", "text/html", page, goods.size() / 2 + 7),
       "arc_bad_length", small},
      {"past the end",
       arc_record("http://example.com/bad", "text/html", page, goods.size() * 2),
       "arc_truncated",
       {}},
      {"past the end, skipped through",
       arc_record("http://example.com/bad", "text/html", page, std::uint64_t{10} << 30),
       "arc_truncated", small},
      {"too short",
       arc_record("http://example.com/bad", "text/html", page, page.size() - 20),
       "arc_bad_length",
       {}},
      {"not a number",
       "http://example.com/bad 1.2.3.4 20140216050221 text/html 12x\n" + page + "\n" + page + "\n",
       "arc_bad_header",
       {}},
  };
  for (const Case& c : cases) {
    const auto records = read_arc(desc + c.bad + goods, c.options);
    ASSERT_EQ(records.size(), 302u) << c.name;
    EXPECT_EQ(records[0].skip_reason, "filedesc");
    EXPECT_EQ(reason(records[1]), c.reason) << c.name;
    EXPECT_NE(detail(records[1])
                  .find(std::to_string(c.bad.size()) + " bytes skipped from offset " +
                        std::to_string(desc.size()) + " to the next record header, at offset " +
                        std::to_string(desc.size() + c.bad.size())),
              std::string::npos)
        << c.name << ": " << detail(records[1]);
    for (int i = 0; i < 300; ++i) {
      ASSERT_EQ(records[i + 2].outcome, Outcome::kDocument) << c.name << " " << i;
      EXPECT_EQ(records[i + 2].parsed.input.url, "http://example.com/" + std::to_string(i));
    }
  }
  // At the end of the file, the bad record covers the rest.
  const auto last =
      read_arc(desc + arc_record("http://example.com/bad", "text/html", page, 1 << 20) + page);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(reason(last[1]), "arc_truncated");
  EXPECT_NE(detail(last[1]).find("to the end of the input"), std::string::npos) << detail(last[1]);
}

// A run of lines that are no header is one dead letter, found in time linear in its size.
TEST(Arc, ARunOfJunkLinesIsOneDeadLetter) {
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk += "junk line " + std::to_string(i) + "\n";
  const std::string desc = arc_file_description(), good = arc_html("http://example.com/a");
  const auto started = std::chrono::steady_clock::now();
  const auto records = read_arc(desc + junk + good + junk);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(reason(records[1]), "arc_bad_header");
  EXPECT_NE(detail(records[1]).find(std::to_string(junk.size()) + " bytes skipped"),
            std::string::npos)
      << detail(records[1]);
  EXPECT_EQ(records[2].outcome, Outcome::kDocument);
  EXPECT_EQ(reason(records[3]), "arc_bad_header");
}

// A header line inside a record whose length is right (an ARC index archived, a page quoting
// one) is part of its block, whether the block is held or skipped through.
TEST(Arc, AHeaderLineInsideARightLengthIsPartOfItsBlock) {
  WarcOptions small;
  small.max_html_bytes = 100;
  const std::string quoted = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" +
                             std::string(2 << 20, 'q') + "\n" +
                             arc_record("http://example.com/quoted", "text/html", "x");
  for (const WarcOptions& options : {WarcOptions{}, small}) {
    const auto records =
        read_arc(arc_file_description() + arc_record("http://example.com/i", "text/plain", quoted) +
                     arc_html("http://example.com/after"),
                 options);
    ASSERT_EQ(records.size(), 3u);
    // Held, it is read as any record; skipped through, too large whatever its type.
    EXPECT_EQ(records[1].outcome == Outcome::kSkipped ? records[1].skip_reason : reason(records[1]),
              options.max_html_bytes == 100 ? "too_large" : "not_html");
    EXPECT_EQ(records[2].parsed.input.url, "http://example.com/after");
  }
}

}  // namespace
}  // namespace newsflow::daemon
