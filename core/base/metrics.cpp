#include "core/base/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sreh::metrics {

namespace {

void add_to(std::atomic<double>& a, double x) {
  auto cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + x, std::memory_order_relaxed)) {
  }
}

std::string number(double x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "+Inf" : "-Inf";
  if (x == std::floor(x) && std::fabs(x) < 1e15)
    return fmt::format("{}", static_cast<std::int64_t>(x));
  return fmt::format("{}", x);
}

/// Label values escape backslash, double quote and newline; help text backslash and newline.
std::string escape(std::string_view s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (quote && c == '"')
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

using label_list = std::vector<std::pair<std::string, std::string>>;

std::string labels_text(const label_list& labels) {
  if (labels.empty())
    return {};
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i)
    out +=
      fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escape(labels[i].second, true));
  return out + "}";
}

label_list zip(const std::vector<std::string>& names, const std::vector<std::string>& values) {
  label_list out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out.emplace_back(names[i], i < values.size() ? values[i] : std::string{});
  return out;
}

void header(std::string& out, const std::string& name, const std::string& help, kind type) {
  const char* t = type == kind::counter ? "counter" : type == kind::gauge ? "gauge" : "histogram";
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape(help, false), name, t);
}

void check_names(const std::string& name, const std::vector<std::string>& labels) {
  if (!valid_metric_name(name))
    throw std::invalid_argument("metric name '" + name + "' is not a Prometheus name");
  for (const auto& l : labels)
    if (!valid_label_name(l) || l == "le")
      throw std::invalid_argument("label name '" + l + "' of " + name + " is not allowed");
}

} // namespace

void gauge::add(double x) {
  add_to(v_, x);
}

histogram::histogram(std::vector<double> bounds)
  : bounds_(std::move(bounds)), buckets_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()))
    throw std::invalid_argument("histogram bounds must ascend");
  for (std::size_t i = 0; i <= bounds_.size(); ++i)
    buckets_[i].store(0, std::memory_order_relaxed);
}

void histogram::observe(double x) {
  auto i =
    static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), x) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  add_to(sum_, x);
  count_.fetch_add(1, std::memory_order_relaxed);
}

histogram::snapshot histogram::read() const {
  snapshot s;
  s.bounds = bounds_;
  std::uint64_t run = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    run += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(run);
  }
  s.count = run; // consistent with the buckets, whatever count_ says this instant
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> latency_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

registry::entry& registry::find_or_add(const std::string& name, kind type) {
  auto [it, added] = families_.try_emplace(name);
  if (!added && it->second.type != type)
    throw std::invalid_argument("metric " + name + " exists with another type");
  it->second.type = type;
  return it->second;
}

family<counter>& registry::counter(const std::string& name, const std::string& help,
                                   std::vector<std::string> labels) {
  check_names(name, labels);
  std::lock_guard lock{mu_};
  auto& e = find_or_add(name, kind::counter);
  if (!e.c)
    e.c = std::make_unique<family<metrics::counter>>(
      name, help, std::move(labels), [] { return std::make_unique<metrics::counter>(); });
  return *e.c;
}

family<gauge>& registry::gauge(const std::string& name, const std::string& help,
                               std::vector<std::string> labels) {
  check_names(name, labels);
  std::lock_guard lock{mu_};
  auto& e = find_or_add(name, kind::gauge);
  if (!e.g)
    e.g = std::make_unique<family<metrics::gauge>>(
      name, help, std::move(labels), [] { return std::make_unique<metrics::gauge>(); });
  return *e.g;
}

family<histogram>& registry::histogram(const std::string& name, const std::string& help,
                                       std::vector<std::string> labels,
                                       std::vector<double> bounds) {
  check_names(name, labels);
  std::lock_guard lock{mu_};
  auto& e = find_or_add(name, kind::histogram);
  if (!e.h)
    e.h = std::make_unique<family<metrics::histogram>>(name, help, std::move(labels), [bounds] {
      return std::make_unique<metrics::histogram>(bounds);
    });
  return *e.h;
}

std::uint64_t registry::add_collector(std::function<std::vector<collected>()> f) {
  std::lock_guard lock{mu_};
  collectors_.emplace(next_collector_, std::move(f));
  return next_collector_++;
}

void registry::remove_collector(std::uint64_t id) {
  std::lock_guard lock{mu_};
  collectors_.erase(id);
}

std::string registry::expose() const {
  // Collectors run outside the lock (they may read a store); families are read under it.
  std::vector<std::function<std::vector<collected>()>> fs;
  {
    std::lock_guard lock{mu_};
    for (const auto& [id, f] : collectors_)
      fs.push_back(f);
  }
  std::map<std::string, std::string> blocks; // by name: one block per family, sorted
  for (const auto& f : fs)
    for (auto& c : f()) {
      if (!valid_metric_name(c.name) || blocks.count(c.name))
        continue; // a collector may not shadow a family or another collector
      std::string out;
      header(out, c.name, c.help, c.type);
      for (const auto& s : c.samples)
        out += c.name + labels_text(s.labels) + " " + number(s.value) + "\n";
      blocks[c.name] = std::move(out);
    }
  std::lock_guard lock{mu_};
  for (const auto& kv : families_) {
    // Named, not bound: lambdas may not capture structured bindings before C++20's P1091.
    const auto& name = kv.first;
    const auto& e = kv.second;
    std::string out;
    if (e.type == kind::counter) {
      header(out, name, e.c->help(), kind::counter);
      e.c->each([&](const auto& values, const metrics::counter& m) {
        out +=
          name + labels_text(zip(e.c->labels(), values)) + " " + std::to_string(m.value()) + "\n";
      });
    } else if (e.type == kind::gauge) {
      header(out, name, e.g->help(), kind::gauge);
      e.g->each([&](const auto& values, const metrics::gauge& m) {
        out += name + labels_text(zip(e.g->labels(), values)) + " " + number(m.value()) + "\n";
      });
    } else {
      header(out, name, e.h->help(), kind::histogram);
      e.h->each([&](const auto& values, const metrics::histogram& m) {
        auto s = m.read();
        auto labels = zip(e.h->labels(), values);
        for (std::size_t i = 0; i <= s.bounds.size(); ++i) {
          auto with_le = labels;
          with_le.emplace_back("le", i < s.bounds.size() ? number(s.bounds[i]) : "+Inf");
          out +=
            name + "_bucket" + labels_text(with_le) + " " + std::to_string(s.cumulative[i]) + "\n";
        }
        out += name + "_sum" + labels_text(labels) + " " + number(s.sum) + "\n";
        out += name + "_count" + labels_text(labels) + " " + std::to_string(s.count) + "\n";
      });
    }
    blocks[name] = std::move(out);
  }
  std::string all;
  for (auto& [name, text] : blocks)
    all += text;
  return all;
}

registry& process_registry() {
  static registry r;
  return r;
}

bool valid_metric_name(std::string_view s) {
  if (s.empty())
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok)
      return false;
  }
  return true;
}

bool valid_label_name(std::string_view s) {
  return valid_metric_name(s) && s.find(':') == std::string_view::npos && s.rfind("__", 0) != 0;
}

} // namespace sreh::metrics
