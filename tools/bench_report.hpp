// tools/bench_report.hpp — what tessel-bench prints and writes, for any op.
//
// Contract: an op declares its table columns (a key, a title, a printf
// format for numbers) and adds rows of key -> value; add_row() prints the row
// at once (so a long sweep shows results as they come) after clearing the
// progress line, and keeps it for the JSON file. json() is the file's text,
//   {"meta": {key: value, ...}, "rows": [{key: value, ...}, ...]}
// with every key of every row (also those not shown in the table); tessel-bench
// writes it through output_file.hpp. progress()
// writes a status line on stderr: rewritten in place on a terminal, one line
// per call otherwise.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tessel::tools {

struct value {
  enum kind_t { null, text, number, boolean } kind = null;
  std::string s;
  double d = 0;
  value() = default;
  value(const char* v) : kind(text), s(v) {}
  value(std::string v) : kind(text), s(std::move(v)) {}
  value(double v) : kind(number), d(v) {}
  value(int v) : kind(number), d(v) {}
  value(long long v) : kind(number), d(double(v)) {}
  value(bool v) : kind(boolean), d(v) {}
};

using record = std::vector<std::pair<std::string, value>>;

struct column {
  std::string key;
  std::string title;
  const char* format = "%s";  // printf format for numbers ("%.3f"); text is printed as is
  int width = 0;              // 0: the title's width
};

class bench_report {
 public:
  void add_meta(const std::string& key, value v) { meta_.emplace_back(key, std::move(v)); }
  const record& meta() const { return meta_; }

  // Starts a table (prints its header); a report may hold several tables.
  void begin_table(std::vector<column> columns);
  void add_row(record row);
  // `milestone`: also shown when stderr is not a terminal (one line each); others only on a terminal.
  void progress(const std::string& line, bool milestone = false);
  void end_progress();

  std::string json() const;

 private:
  std::string cell(const column& c, const record& r) const;
  record meta_;
  std::vector<record> rows_;
  std::vector<column> columns_;
  bool progress_shown_ = false;
};

// Host facts for the header: the CPU model from /proc/cpuinfo ("unknown CPU"
// elsewhere), the UTC date in ISO 8601.
std::string cpu_model();
std::string utc_now();

}  // namespace tessel::tools
