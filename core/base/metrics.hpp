#pragma once
// Metrics in the Prometheus text exposition format (version 0.0.4), for `GET /metrics`.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sreh::metrics {

/// A count that only goes up. Thread-safe and lock-free.
class counter {
 public:
  void inc(std::uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

/// A value that goes up and down. Thread-safe and lock-free.
class gauge {
 public:
  void set(double x) { v_.store(x, std::memory_order_relaxed); }
  void add(double x);
  [[nodiscard]] double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

/// Observations counted into cumulative buckets (`le` upper bounds, +Inf implied), with their
/// sum and count. Thread-safe and lock-free; a scrape may see a count one observation ahead of
/// the sum (as Prometheus clients allow).
class histogram {
 public:
  /// `bounds` ascending; +Inf is added implicitly.
  explicit histogram(std::vector<double> bounds);
  void observe(double x);

  struct snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative; // one per bound, then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  [[nodiscard]] snapshot read() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_; // per bucket, not cumulative
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

/// Buckets for latencies in seconds: 0.5 ms to 10 s.
[[nodiscard]] std::vector<double> latency_buckets();

enum class kind { counter, gauge, histogram };

/// One metric name with its help text and label names; its children are the label-value
/// combinations seen so far. `with(...)` is thread-safe; a child lives as long as the registry,
/// so callers may keep the reference it returns (the cheap path for hot code).
template <class Metric>
class family {
 public:
  family(std::string name, std::string help, std::vector<std::string> labels,
         std::function<std::unique_ptr<Metric>()> make)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)),
      make_(std::move(make)) {}

  /// The child for these label values (as many as the family has label names).
  Metric& with(std::vector<std::string> values) {
    std::lock_guard lock{mu_};
    auto& slot = children_[std::move(values)];
    if (!slot)
      slot = make_();
    return *slot;
  }

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& help() const { return help_; }
  [[nodiscard]] const std::vector<std::string>& labels() const { return labels_; }

  /// Calls `f(values, metric)` for every child, in label order, under the family's lock.
  template <class F>
  void each(F&& f) const {
    std::lock_guard lock{mu_};
    for (const auto& [values, m] : children_)
      f(values, *m);
  }

 private:
  std::string name_, help_;
  std::vector<std::string> labels_;
  std::function<std::unique_ptr<Metric>()> make_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;
};

/// What a collector reports at scrape time: values read from elsewhere (the store's run counts,
/// a queue's depth) rather than kept by the code that changes them.
struct sample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};
struct collected {
  std::string name, help;
  kind type = kind::gauge; // counter or gauge
  std::vector<sample> samples;
};

/// The metrics of one process. Families are created once (at start, or on first use) and live
/// as long as the registry; names must follow Prometheus conventions (checked: a bad name or a
/// second family of one name with another type is a programming error and throws
/// std::invalid_argument). Thread-safe.
class registry {
 public:
  family<metrics::counter>& counter(const std::string& name, const std::string& help,
                                    std::vector<std::string> labels = {});
  family<metrics::gauge>& gauge(const std::string& name, const std::string& help,
                                std::vector<std::string> labels = {});
  family<metrics::histogram>& histogram(const std::string& name, const std::string& help,
                                        std::vector<std::string> labels = {},
                                        std::vector<double> bounds = latency_buckets());

  /// Adds a function called at every scrape; returns its id for `remove_collector`.
  std::uint64_t add_collector(std::function<std::vector<collected>()> f);
  void remove_collector(std::uint64_t id);

  /// Every metric in the text format, families sorted by name.
  [[nodiscard]] std::string expose() const;

 private:
  struct entry {
    kind type;
    std::unique_ptr<family<metrics::counter>> c;
    std::unique_ptr<family<metrics::gauge>> g;
    std::unique_ptr<family<metrics::histogram>> h;
  };
  entry& find_or_add(const std::string& name, kind type);
  mutable std::mutex mu_;
  std::map<std::string, entry> families_;
  std::map<std::uint64_t, std::function<std::vector<collected>()>> collectors_;
  std::uint64_t next_collector_ = 1;
};

/// The process's registry (what `GET /metrics` serves).
[[nodiscard]] registry& process_registry();

/// True for a valid metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`) or label name (no ':' and not
/// starting with "__").
[[nodiscard]] bool valid_metric_name(std::string_view s);
[[nodiscard]] bool valid_label_name(std::string_view s);

} // namespace sreh::metrics
