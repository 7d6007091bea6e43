#include "core/model/run.hpp"

#include <fmt/format.h>

#include <array>

namespace sreh {

namespace {

constexpr std::array<const char*, 6> run_state_names{"pending",   "running", "waiting",
                                                     "succeeded", "failed",  "cancelled"};
constexpr std::array<const char*, 6> wait_reason_names{"none",  "approval", "timer",
                                                       "model", "tool",     "runs"};
constexpr std::array<const char*, 7> run_input_names{"start", "wait",   "resume", "succeed",
                                                     "fail",  "cancel", "recover"};

template <class Enum, std::size_t N>
const char* name_of(const std::array<const char*, N>& names, Enum e) {
  auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<const char*, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i)
    if (s == names[i])
      return static_cast<Enum>(i);
  return std::nullopt;
}

/// The allowed transitions; nullopt where the input is not allowed in the state.
std::optional<run_state> next_state(run_state from, run_input in) {
  using s = run_state;
  using i = run_input;
  if (is_terminal(from))
    return std::nullopt;
  switch (in) {
  case i::start:
    return from == s::pending ? std::optional{s::running} : std::nullopt;
  case i::wait:
    return from == s::running ? std::optional{s::waiting} : std::nullopt;
  case i::resume:
    return from == s::waiting ? std::optional{s::running} : std::nullopt;
  case i::succeed:
    return from == s::running ? std::optional{s::succeeded} : std::nullopt;
  case i::fail:
    return s::failed;
  case i::cancel:
    return s::cancelled;
  case i::recover:
    return from; // pending, running and waiting stay where they were
  }
  return std::nullopt;
}

} // namespace

const char* to_string(run_state s) {
  return name_of(run_state_names, s);
}

const char* to_string(wait_reason w) {
  return name_of(wait_reason_names, w);
}

const char* to_string(run_input i) {
  return name_of(run_input_names, i);
}

std::optional<run_state> parse_run_state(std::string_view s) {
  return parse_name<run_state>(run_state_names, s);
}

std::optional<wait_reason> parse_wait_reason(std::string_view s) {
  return parse_name<wait_reason>(wait_reason_names, s);
}

bool is_terminal(run_state s) {
  return s == run_state::succeeded || s == run_state::failed || s == run_state::cancelled;
}

expected<run_state> transition(run_state from, run_input in) {
  if (auto next = next_state(from, in))
    return *next;
  return error{errc::conflict, fmt::format("run is {}; cannot {}", to_string(from), to_string(in))};
}

} // namespace sreh
