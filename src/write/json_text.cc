#include "write/json_text.h"

#include <algorithm>
#include <charconv>

#include "model/time_value.h"

namespace jobviz {

namespace {

// Length of the valid UTF-8 sequence at `text[i]`, or 0 if invalid.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  // F5-FF never start a sequence (past U+10FFFF), nor C0, C1 (overlong).
  size_t length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xc2 && lead <= 0xdf ? 2 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  if (length == 3 && ((lead == 0xe0 && byte(i + 1) < 0xa0) || (lead == 0xed && byte(i + 1) > 0x9f))) return 0;
  if (length == 4 && ((lead == 0xf0 && byte(i + 1) < 0x90) || (lead == 0xf4 && byte(i + 1) > 0x8f))) return 0;
  return length;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t length = c < 0x80 ? 1 : Utf8SequenceLength(text, i);
    if (length > 0) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    out.push_back(static_cast<char>(0xc0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    ++i;
  }
  return out;
}

void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    size_t plain = i;  // a run that needs no escaping goes in at once
    while (plain < text.size() && IsPlainJsonByte(text[plain])) ++plain;
    out.append(text.substr(i, plain - i));
    i = plain;
    if (i == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length > 0) {
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
    }
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7f) {
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  out.push_back('"');
}

void AppendInt(std::string& out, std::int64_t value) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  (void)ec;
  out.append(buf, end);
}

std::string& JsonMembers::Key(std::string_view key) {
  if (!first_) out_ += ',';
  first_ = false;
  if (IsPlainJson(key)) {
    out_ += '"';
    out_ += key;
    out_ += '"';
  } else {
    AppendJsonString(out_, key);  // keys made from machine names
  }
  out_ += ':';
  return out_;
}

JsonMembers& JsonMembers::Int(std::string_view key, std::int64_t value) {
  AppendInt(Key(key), value);
  return *this;
}

JsonMembers& JsonMembers::String(std::string_view key, std::string_view value) {
  AppendJsonString(Key(key), value);
  return *this;
}

JsonMembers& JsonMembers::Micros(std::string_view key, std::int64_t nanos) {
  AppendMicros(Key(key), nanos);
  return *this;
}

JsonMembers& JsonMembers::Raw(std::string_view key, std::string_view json) {
  Key(key) += json;
  return *this;
}

std::string& JsonMembers::Object(std::string_view key) { return Key(key); }

std::string TerminalText(std::string_view text) {
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    const bool c0 = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
    const bool c1 = c == 0xc2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) <= 0x9f;  // U+0080..U+009F
    if (c0 || c1) {
      out += '?';
      i += c1;
      continue;
    }
    out += valid[i];
  }
  return out;
}

std::string MarkupText(const std::string& text) {
  std::string out;
  const std::string valid = ValidUtf8(text);
  for (size_t i = 0; i < valid.size(); ++i) {
    const char c = valid[i];
    // U+FFFE and U+FFFF (EF BF BE/BF) are no XML characters: a parser
    // refuses the document. They become U+FFFD, the replacement character.
    if (c == '\xef' && i + 2 < valid.size() && valid[i + 1] == '\xbf' && (valid[i + 2] == '\xbe' || valid[i + 2] == '\xbf')) {
      out += "\xef\xbf\xbd";
      i += 2;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? '?' : c;
    }
  }
  return out;
}

std::string BidiInert(std::string_view text) {
  constexpr std::string_view kFsi = "\xe2\x81\xa8", kPdi = "\xe2\x81\xa9";
  std::string out;
  size_t copied = 0;
  for (size_t at = text.find('\xe2'); at != std::string_view::npos && at + 2 < text.size(); at = text.find('\xe2', at + 1)) {
    const unsigned char second = static_cast<unsigned char>(text[at + 1]), third = static_cast<unsigned char>(text[at + 2]);
    const bool embedding = second == 0x80 && third >= 0xaa && third <= 0xae;  // LRE RLE PDF LRO RLO
    const bool isolate = second == 0x81 && third >= 0xa6 && third <= 0xa9;    // LRI RLI FSI PDI
    if (!embedding && !isolate) continue;
    out.append(text.substr(copied, at - copied));
    out.append(kFsi);
    out.append(text.substr(at, 3));
    if (embedding) out.append(kPdi);                         // closes it, and our FSI
    else if (third != 0xa9) out.append(kPdi).append(kPdi);  // closes the initiator, then ours
    // a PDI closes our FSI itself
    copied = at + 3;
    at += 2;
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

}  // namespace jobviz
