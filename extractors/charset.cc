#include "extractors/charset.h"

#include <errno.h>
#include <iconv.h>
#include <uchardet/uchardet.h>

#include <memory>

#include "extractors/text.h"

namespace newsflow::extractors {
namespace {

std::string trim_label(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '"' || s.front() == '\'')) {
    s.remove_prefix(1);
  }
  std::size_t end = 0;
  while (end < s.size() && s[end] != '"' && s[end] != '\'' && s[end] != ';' && s[end] != ' ' &&
         s[end] != '>' && s[end] != '/' && s[end] != ',') {
    ++end;
  }
  return ascii_lower(s.substr(0, end));
}

// WHATWG encoding labels that iconv spells differently or that browsers widen.
std::string canonical_charset(std::string label) {
  if (label == "latin1" || label == "iso-8859-1" || label == "iso8859-1" || label == "l1" ||
      label == "ascii" || label == "us-ascii" || label == "iso_8859-1" || label == "cp1252" ||
      label == "x-cp1252") {
    return "windows-1252";
  }
  if (label == "utf8" || label == "unicode-1-1-utf-8") return "utf-8";
  if (label == "gb2312" || label == "gbk" || label == "x-gbk") return "gb18030";
  if (label == "shift_jis" || label == "sjis" || label == "x-sjis") return "shift_jis";
  if (label == "ks_c_5601-1987" || label == "euc-kr") return "euc-kr";
  return label;
}

std::string convert(std::string_view bytes, const std::string& charset, bool& ok) {
  ok = true;
  if (charset == "utf-8") return sanitize_utf8(bytes);
  iconv_t cd = iconv_open("UTF-8", charset.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    ok = false;
    return {};
  }
  std::unique_ptr<void, int (*)(iconv_t)> guard(cd, iconv_close);
  std::string out;
  out.resize(bytes.size() * 2 + 16);
  char* in = const_cast<char*>(bytes.data());
  std::size_t in_left = bytes.size();
  std::size_t produced = 0;
  while (in_left > 0) {
    if (out.size() - produced < 16) out.resize(out.size() * 2);
    char* dst = out.data() + produced;
    std::size_t dst_left = out.size() - produced;
    const std::size_t rc = iconv(cd, &in, &in_left, &dst, &dst_left);
    produced = out.size() - dst_left;
    if (rc != static_cast<std::size_t>(-1)) break;
    if (errno == E2BIG) {
      out.resize(out.size() * 2);
    } else {  // EILSEQ or EINVAL: replace one byte and go on
      if (out.size() - produced < 3) out.resize(out.size() * 2);
      out.replace(produced, 3, "\xEF\xBF\xBD");
      produced += 3;
      ++in;
      --in_left;
      iconv(cd, nullptr, nullptr, nullptr, nullptr);
    }
  }
  out.resize(produced);
  return out;
}

}  // namespace

std::string charset_from_content_type(std::string_view content_type) {
  const std::string lower = ascii_lower(content_type);
  const auto pos = lower.find("charset=");
  if (pos == std::string::npos) return {};
  return trim_label(std::string_view(lower).substr(pos + 8));
}

std::string charset_from_meta(std::string_view html_head) {
  const std::string lower = ascii_lower(html_head.substr(0, 4096));
  std::size_t pos = 0;
  while ((pos = lower.find("<meta", pos)) != std::string::npos) {
    const auto end = lower.find('>', pos);
    const std::string_view tag = std::string_view(lower).substr(
        pos, end == std::string::npos ? std::string::npos : end - pos);
    if (const auto c = tag.find("charset"); c != std::string::npos) {
      std::size_t v = c + 7;
      while (v < tag.size() && (tag[v] == ' ' || tag[v] == '=')) ++v;
      std::string label = trim_label(tag.substr(v));
      if (!label.empty()) return label;
    }
    pos += 5;
  }
  return {};
}

namespace {

tl::expected<Decoded, ExtractError> decode(std::string_view bytes, std::string_view content_type,
                                           bool trust_declarations) {
  using namespace std::string_view_literals;
  // Byte order marks win over every declaration.
  if (bytes.starts_with("\xEF\xBB\xBF"sv)) {
    return Decoded{sanitize_utf8(bytes.substr(3)), "utf-8", "bom", {}};
  }
  std::string charset;
  std::string source;
  std::size_t skip = 0;
  if (bytes.starts_with("\xFF\xFE\x00\x00"sv)) {
    charset = "utf-32le", source = "bom", skip = 4;
  } else if (bytes.starts_with("\x00\x00\xFE\xFF"sv)) {
    charset = "utf-32be", source = "bom", skip = 4;
  } else if (bytes.starts_with("\xFF\xFE"sv)) {
    charset = "utf-16le", source = "bom", skip = 2;
  } else if (bytes.starts_with("\xFE\xFF"sv)) {
    charset = "utf-16be", source = "bom", skip = 2;
  } else if (bytes.starts_with("<\0\0\0"sv)) {  // XML 1.0 appendix F: "<" without a BOM
    charset = "utf-32le", source = "xml_autodetect";
  } else if (bytes.starts_with("\0\0\0<"sv)) {
    charset = "utf-32be", source = "xml_autodetect";
  } else if (bytes.starts_with("<\0?\0"sv) || bytes.starts_with("<\0!\0"sv)) {
    charset = "utf-16le", source = "xml_autodetect";
  } else if (bytes.starts_with("\0<\0?"sv) || bytes.starts_with("\0<\0!"sv)) {
    charset = "utf-16be", source = "xml_autodetect";
  }
  if (charset.empty() && trust_declarations) {
    if (charset = canonical_charset(charset_from_content_type(content_type)); !charset.empty()) {
      source = "content_type";
    } else if (charset = canonical_charset(charset_from_xml_declaration(bytes)); !charset.empty()) {
      source = "xml_declaration";
    } else if (charset = canonical_charset(charset_from_meta(bytes)); !charset.empty()) {
      source = "meta";
    }
  }
  auto result = [](std::string text, std::string cs, std::string src) {
    Decoded d{std::move(text), std::move(cs), std::move(src), {}};
    if (d.source == "detected") {
      d.warning = "charset not declared; read as " + d.charset + " by detection";
    }
    return d;
  };
  if (charset.empty() || charset == "utf-16" || charset == "utf-32") {
    // A declared UTF-16 without a BOM in an ASCII-compatible stream is a lie; detect instead.
    charset.clear();
    if (is_valid_utf8(bytes)) return result(std::string(bytes), "utf-8", "utf8");
    std::unique_ptr<std::remove_pointer_t<uchardet_t>, void (*)(uchardet_t)> det(uchardet_new(),
                                                                                 uchardet_delete);
    const std::string_view sample = bytes.substr(0, 256 * 1024);
    uchardet_handle_data(det.get(), sample.data(), sample.size());
    uchardet_data_end(det.get());
    charset = canonical_charset(ascii_lower(uchardet_get_charset(det.get())));
    source = "detected";
    if (charset.empty()) charset = "windows-1252";
  }
  bool ok = false;
  std::string text = convert(bytes.substr(skip), charset, ok);
  if (!ok) {
    // An unknown declared label falls back to detection rather than failing the document.
    if (source == "content_type" || source == "meta" || source == "xml_declaration") {
      auto fallback = decode(bytes, content_type, false);
      if (fallback) {
        fallback->warning =
            "declared charset '" + charset + "' is unknown; read as " + fallback->charset;
      }
      return fallback;
    }
    return tl::unexpected(
        ExtractError{ExtractReason::kCharset, "no converter for charset '" + charset + "'"});
  }
  return result(std::move(text), charset, source);
}

}  // namespace

std::string charset_from_xml_declaration(std::string_view head) {
  std::size_t start = 0;
  while (start < head.size() && start < 16 &&
         (head[start] == ' ' || head[start] == '\n' || head[start] == '\r' || head[start] == '\t'))
    ++start;
  if (head.substr(start, 5) != "<?xml") return {};
  const auto end = head.find("?>", start);
  const std::string decl =
      ascii_lower(head.substr(start, end == std::string_view::npos ? 256 : end - start));
  const auto pos = decl.find("encoding");
  if (pos == std::string::npos) return {};
  std::size_t v = pos + 8;
  while (v < decl.size() && (decl[v] == ' ' || decl[v] == '=')) ++v;
  return trim_label(std::string_view(decl).substr(v));
}

tl::expected<Decoded, ExtractError> decode_to_utf8(std::string_view bytes,
                                                   std::string_view content_type) {
  return decode(bytes, content_type, true);
}

}  // namespace newsflow::extractors
