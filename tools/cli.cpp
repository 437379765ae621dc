// tools/cli.cpp — command-line parsing (see cli.hpp).
#include "cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "tessel/error.hpp"

namespace tessel::tools {

const std::vector<std::string>& parsed_args::all(const std::string& name) const {
  static const std::vector<std::string> none;
  auto it = values_.find(name);
  return it == values_.end() ? none : it->second;
}

std::string parsed_args::str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

double parsed_args::number(const std::string& name, double fallback) const {
  return has(name) ? parse_number(str(name), name) : fallback;
}

std::int64_t parsed_args::integer(const std::string& name, std::int64_t fallback, std::int64_t lo,
                                  std::int64_t hi) const {
  return has(name) ? parse_integer(str(name), name, lo, hi) : fallback;
}

parsed_args parse_args(const std::vector<std::string>& words, const std::vector<option_spec>& spec) {
  parsed_args out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-' || (w[1] >= '0' && w[1] <= '9') || w[1] == '.') {
      out.positional.push_back(w);  // also negative numbers given as positionals
      continue;
    }
    std::string name = w, value;
    bool inline_value = false;
    if (const auto eq = w.find('='); eq != std::string::npos) {
      name = w.substr(0, eq);
      value = w.substr(eq + 1);
      inline_value = true;
    }
    const option_spec* s = nullptr;
    for (const auto& o : spec)
      if (name == o.name) s = &o;
    if (!s) throw usage_error("unknown option '" + name + "'");
    if (!s->takes_value) {
      if (inline_value) throw usage_error("option '" + name + "' takes no value");
      if (out.flags_[name]++ && !s->repeatable) throw usage_error("option '" + name + "' given twice");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= words.size()) throw usage_error("option '" + name + "' needs a value");
      value = words[++i];
    }
    if (value.empty()) throw usage_error("option '" + name + "' needs a value");
    auto& v = out.values_[name];
    if (!v.empty() && !s->repeatable) throw usage_error("option '" + name + "' given twice");
    v.push_back(value);
  }
  return out;
}

dtype parse_dtype(const std::string& word) {
  if (word == "fp32") return dtype::f32;
  if (word == "fp16") return dtype::f16;
  if (word == "bf16") return dtype::bf16;
  throw usage_error("'--dtype' expects fp32, fp16 or bf16, got '" + word + "'");
}

double parse_number(const std::string& word, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(word.c_str(), &end);
  if (word.empty() || end != word.c_str() + word.size() || errno == ERANGE || !std::isfinite(v))
    throw usage_error("'" + what + "' expects a finite number, got '" + word + "'");
  return v;
}

std::int64_t parse_integer(const std::string& word, const std::string& what, std::int64_t lo, std::int64_t hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(word.c_str(), &end, 10);
  if (word.empty() || end != word.c_str() + word.size() || errno == ERANGE)
    throw usage_error("'" + what + "' expects an integer, got '" + word + "'");
  if (v < lo || v > hi)
    throw usage_error("'" + what + "' expects an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                      "], got " + word);
  return v;
}

std::vector<std::string> split(const std::string& word, char sep, const std::string& what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = word.find(sep, start);
    const std::string item = word.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (item.empty()) throw usage_error("'" + what + "': empty item in '" + word + "'");
    out.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

int report_failure(const char* tool) {
  std::fflush(stdout);  // the report so far, then the error after it
  try {
    throw;
  } catch (const tessel::Error& e) {
    std::fprintf(stderr, "%s: tessel refused the call: %s\n", tool, e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", tool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: error: unknown exception\n", tool);
  }
  return 1;
}

}  // namespace tessel::tools
