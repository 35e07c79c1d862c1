#include <cctype>
#include <string>
#include <unordered_map>

#include "extractors/feed.h"

// The HTML named character references feeds use, made XML's (`xml_escape_html_entities`).

namespace newsflow::extractors {
namespace {

// HTML 4 named character references (the ones feeds use in practice) -> code points.
const std::unordered_map<std::string_view, char32_t>& html_entities() {
  static const std::unordered_map<std::string_view, char32_t> kTable = [] {
    std::unordered_map<std::string_view, char32_t> t;
    static constexpr const char* kLatin1[] = {
        "nbsp",   "iexcl",  "cent",   "pound",  "curren", "yen",    "brvbar", "sect",   "uml",
        "copy",   "ordf",   "laquo",  "not",    "shy",    "reg",    "macr",   "deg",    "plusmn",
        "sup2",   "sup3",   "acute",  "micro",  "para",   "middot", "cedil",  "sup1",   "ordm",
        "raquo",  "frac14", "frac12", "frac34", "iquest", "Agrave", "Aacute", "Acirc",  "Atilde",
        "Auml",   "Aring",  "AElig",  "Ccedil", "Egrave", "Eacute", "Ecirc",  "Euml",   "Igrave",
        "Iacute", "Icirc",  "Iuml",   "ETH",    "Ntilde", "Ograve", "Oacute", "Ocirc",  "Otilde",
        "Ouml",   "times",  "Oslash", "Ugrave", "Uacute", "Ucirc",  "Uuml",   "Yacute", "THORN",
        "szlig",  "agrave", "aacute", "acirc",  "atilde", "auml",   "aring",  "aelig",  "ccedil",
        "egrave", "eacute", "ecirc",  "euml",   "igrave", "iacute", "icirc",  "iuml",   "eth",
        "ntilde", "ograve", "oacute", "ocirc",  "otilde", "ouml",   "divide", "oslash", "ugrave",
        "uacute", "ucirc",  "uuml",   "yacute", "thorn",  "yuml"};
    for (std::size_t i = 0; i < std::size(kLatin1); ++i)
      t[kLatin1[i]] = static_cast<char32_t>(160 + i);
    static constexpr const char* kGreekUpper[] = {
        "Alpha", "Beta",   "Gamma",   "Delta", "Epsilon", "Zeta",    "Eta",  "Theta", "Iota",
        "Kappa", "Lambda", "Mu",      "Nu",    "Xi",      "Omicron", "Pi",   "Rho",   "",
        "Sigma", "Tau",    "Upsilon", "Phi",   "Chi",     "Psi",     "Omega"};
    for (std::size_t i = 0; i < std::size(kGreekUpper); ++i) {
      if (*kGreekUpper[i]) t[kGreekUpper[i]] = static_cast<char32_t>(913 + i);
    }
    static constexpr const char* kGreekLower[] = {
        "alpha", "beta",   "gamma",   "delta", "epsilon", "zeta",    "eta",  "theta", "iota",
        "kappa", "lambda", "mu",      "nu",    "xi",      "omicron", "pi",   "rho",   "sigmaf",
        "sigma", "tau",    "upsilon", "phi",   "chi",     "psi",     "omega"};
    for (std::size_t i = 0; i < std::size(kGreekLower); ++i)
      t[kGreekLower[i]] = static_cast<char32_t>(945 + i);
    static constexpr std::pair<const char*, char32_t> kOthers[] = {
        {"OElig", 338},   {"oelig", 339},   {"Scaron", 352},   {"scaron", 353},   {"Yuml", 376},
        {"fnof", 402},    {"circ", 710},    {"tilde", 732},    {"thetasym", 977}, {"upsih", 978},
        {"piv", 982},     {"ensp", 8194},   {"emsp", 8195},    {"thinsp", 8201},  {"zwnj", 8204},
        {"zwj", 8205},    {"lrm", 8206},    {"rlm", 8207},     {"ndash", 8211},   {"mdash", 8212},
        {"lsquo", 8216},  {"rsquo", 8217},  {"sbquo", 8218},   {"ldquo", 8220},   {"rdquo", 8221},
        {"bdquo", 8222},  {"dagger", 8224}, {"Dagger", 8225},  {"bull", 8226},    {"hellip", 8230},
        {"permil", 8240}, {"prime", 8242},  {"Prime", 8243},   {"lsaquo", 8249},  {"rsaquo", 8250},
        {"oline", 8254},  {"frasl", 8260},  {"euro", 8364},    {"image", 8465},   {"weierp", 8472},
        {"real", 8476},   {"trade", 8482},  {"alefsym", 8501}, {"larr", 8592},    {"uarr", 8593},
        {"rarr", 8594},   {"darr", 8595},   {"harr", 8596},    {"crarr", 8629},   {"lArr", 8656},
        {"uArr", 8657},   {"rArr", 8658},   {"dArr", 8659},    {"hArr", 8660},    {"forall", 8704},
        {"part", 8706},   {"exist", 8707},  {"empty", 8709},   {"nabla", 8711},   {"isin", 8712},
        {"notin", 8713},  {"ni", 8715},     {"prod", 8719},    {"sum", 8721},     {"minus", 8722},
        {"lowast", 8727}, {"radic", 8730},  {"prop", 8733},    {"infin", 8734},   {"ang", 8736},
        {"and", 8743},    {"or", 8744},     {"cap", 8745},     {"cup", 8746},     {"int", 8747},
        {"there4", 8756}, {"sim", 8764},    {"cong", 8773},    {"asymp", 8776},   {"ne", 8800},
        {"equiv", 8801},  {"le", 8804},     {"ge", 8805},      {"sub", 8834},     {"sup", 8835},
        {"nsub", 8836},   {"sube", 8838},   {"supe", 8839},    {"oplus", 8853},   {"otimes", 8855},
        {"perp", 8869},   {"sdot", 8901},   {"lceil", 8968},   {"rceil", 8969},   {"lfloor", 8970},
        {"rfloor", 8971}, {"lang", 9001},   {"rang", 9002},    {"loz", 9674},     {"spades", 9824},
        {"clubs", 9827},  {"hearts", 9829}, {"diams", 9830}};
    for (const auto& [name, cp] : kOthers) t[name] = cp;
    return t;
  }();
  return kTable;
}

}  // namespace

std::string xml_escape_html_entities(std::string_view xml) {
  std::string out;
  out.reserve(xml.size() + 64);
  std::size_t i = 0;
  while (i < xml.size()) {
    if (xml.substr(i, 9) == "<![CDATA[") {
      const std::size_t end = xml.find("]]>", i + 9);
      const std::size_t stop = end == std::string_view::npos ? xml.size() : end + 3;
      out.append(xml.substr(i, stop - i));
      i = stop;
      continue;
    }
    const char c = xml[i];
    if (c != '&') {
      out += c;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < xml.size() && j - i <= 32 &&
           (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == '#')) {
      ++j;
    }
    const std::string_view name = xml.substr(i + 1, j - i - 1);
    if (j < xml.size() && xml[j] == ';' && !name.empty()) {
      if (name.starts_with("#X")) {  // HTML accepts &#X41; XML only &#x41;
        out += "&#x";
        out.append(name.substr(2));
        out += ';';
      } else if (name[0] == '#' || name == "amp" || name == "lt" || name == "gt" ||
                 name == "quot" || name == "apos") {
        out.append(xml.substr(i, j + 1 - i));
      } else if (auto it = html_entities().find(name); it != html_entities().end()) {
        out += "&#" + std::to_string(static_cast<std::uint32_t>(it->second)) + ";";
      } else {
        out += "&amp;";
        out.append(name);
        out += ';';
      }
      i = j + 1;
      continue;
    }
    out += "&amp;";  // a bare ampersand
    ++i;
  }
  return out;
}

}  // namespace newsflow::extractors
