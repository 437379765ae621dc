// tools/cli.hpp — command-line parsing shared by tessel-check and tessel-bench.
//
// Contract: parse_args() takes the words after the sub-command and a table of
// the options it accepts (each a flag or an option with a value, possibly
// repeatable). An unknown option, a missing value, a repeated non-repeatable
// option, or a value that does not parse as the number asked for throws
// usage_error with a one-line message; the tools print it with their usage
// text and exit 2. "--opt=value" and "--opt value" are both accepted.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/tensor.hpp"

namespace tessel::tools {

class usage_error : public std::runtime_error {
 public:
  explicit usage_error(const std::string& what) : std::runtime_error(what) {}
};

struct option_spec {
  const char* name;  // "--m"
  bool takes_value;
  bool repeatable = false;
};

class parsed_args {
 public:
  std::vector<std::string> positional;

  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::vector<std::string>& all(const std::string& name) const;
  std::string str(const std::string& name, const std::string& fallback = "") const;
  double number(const std::string& name, double fallback) const;
  std::int64_t integer(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;

 private:
  friend parsed_args parse_args(const std::vector<std::string>&, const std::vector<option_spec>&);
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, int> flags_;
};

parsed_args parse_args(const std::vector<std::string>& words, const std::vector<option_spec>& spec);

// Strict conversions: the whole word must be the number; throw usage_error naming `what`.
double parse_number(const std::string& word, const std::string& what);
std::int64_t parse_integer(const std::string& word, const std::string& what, std::int64_t lo, std::int64_t hi);
// "fp32" | "fp16" | "bf16" -> the element type; anything else throws usage_error naming --dtype.
dtype parse_dtype(const std::string& word);
// "a,b,c" -> {"a","b","c"} (empty items refused).
std::vector<std::string> split(const std::string& word, char sep, const std::string& what);

// Call from a catch (...) block of a tool's main: prints the exception in flight
// as one line prefixed by `tool` and returns the exit code 1. (Usage errors,
// exit 2, are each tool's own, since they print its usage.)
int report_failure(const char* tool);

}  // namespace tessel::tools
