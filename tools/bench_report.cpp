// tools/bench_report.cpp — table, progress line and JSON for tessel-bench.
#include "bench_report.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>

namespace tessel::tools {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string json_value(const value& v) {
  switch (v.kind) {
    case value::text: return json_string(v.s);
    case value::boolean: return v.d != 0 ? "true" : "false";
    case value::number: {
      if (!std::isfinite(v.d)) return "null";  // JSON has no inf/NaN
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.9g", v.d);
      return buf;
    }
    case value::null: break;
  }
  return "null";
}

std::string json_object(const record& r, const char* indent) {
  std::string out = "{";
  for (std::size_t i = 0; i < r.size(); ++i)
    out += std::string(i ? ",\n" : "\n") + indent + "  " + json_string(r[i].first) + ": " + json_value(r[i].second);
  return out + "\n" + indent + "}";
}

bool stderr_is_tty() { return isatty(2) == 1; }

}  // namespace

std::string bench_report::cell(const column& c, const record& r) const {
  for (const auto& [k, v] : r) {
    if (k != c.key) continue;
    if (v.kind == value::text) return v.s;
    if (v.kind == value::boolean) return v.d != 0 ? "yes" : "no";
    if (v.kind == value::null) return "-";
    if (std::isnan(v.d)) return "nan";
    if (std::isinf(v.d)) return v.d > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, c.format, v.d);
    return buf;
  }
  return "-";
}

void bench_report::begin_table(std::vector<column> columns) {
  columns_ = std::move(columns);
  end_progress();
  std::string head, rule;
  for (auto& c : columns_) {
    if (c.width < int(c.title.size())) c.width = int(c.title.size());
    char buf[256];
    std::snprintf(buf, sizeof buf, "%*s", c.width, c.title.c_str());
    head += std::string(head.empty() ? "" : "  ") + buf;
  }
  rule.assign(head.size(), '-');
  std::printf("%s\n%s\n", head.c_str(), rule.c_str());
  std::fflush(stdout);
}

void bench_report::add_row(record row) {
  end_progress();
  std::string line;
  for (const auto& c : columns_) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%*s", c.width, cell(c, row).c_str());
    line += std::string(line.empty() ? "" : "  ") + buf;
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  rows_.push_back(std::move(row));
}

void bench_report::progress(const std::string& line, bool milestone) {
  if (stderr_is_tty()) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    progress_shown_ = true;
  } else if (milestone) {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void bench_report::end_progress() {
  if (progress_shown_) std::fprintf(stderr, "\r\033[K");
  progress_shown_ = false;
  std::fflush(stderr);
}

std::string bench_report::json() const {
  std::string out = "{\n  \"meta\": " + json_object(meta_, "  ") + ",\n  \"rows\": [";
  for (std::size_t i = 0; i < rows_.size(); ++i) out += (i ? ",\n    " : "\n    ") + json_object(rows_[i], "    ");
  return out + (rows_.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::size_t b = colon + 1;
    while (b < line.size() && line[b] == ' ') ++b;
    return line.substr(b);
  }
  return "unknown CPU";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tessel::tools
