#pragma once
// Private to the sandbox loader (world_file.cpp, scenario_file.cpp): the reads that worlds and
// scenarios share, on top of the one YAML reader (config/yaml/reader.hpp), whose errors name
// FILE:LINE:COLUMN and the field.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/yaml/reader.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox::detail {

using config::yaml::entry;
using config::yaml::load_error;
using config::yaml::reader;

/// The reader for a world or scenario file: strings are taken as written (no `${NAME}`).
[[nodiscard]] reader file_reader(const std::string& name);

/// The fields of mapping `f` by key; unknown keys (with a hint), duplicates and non-mappings
/// are errors. Keys in `required` must be present.
[[nodiscard]] std::map<std::string, entry>
fields(reader& r, const entry& f, std::initializer_list<std::string_view> allowed,
       std::initializer_list<std::string_view> required = {});

/// A string naming something: 1-128 characters, no spaces.
[[nodiscard]] std::string name(reader& r, const entry& f);
/// A non-negative number.
[[nodiscard]] double number(reader& r, const entry& f);
/// A duration like -10m (see parse_duration_s, core/base/duration.hpp).
[[nodiscard]] std::int64_t duration(reader& r, const entry& f, bool allow_negative);
/// One of `allowed`; anything else is an "unknown value" with a hint when one is close.
[[nodiscard]] std::string choice(reader& r, const entry& f,
                                 std::initializer_list<std::string_view> allowed);
/// A list of names, or a single name when `single_ok`; the entries keep their marks.
[[nodiscard]] std::vector<entry> name_list(reader& r, const entry& f, bool single_ok = false);
/// A mapping of string → string.
[[nodiscard]] std::map<std::string, std::string> string_map(reader& r, const entry& f);
/// A baseline mapping: metric → number, keys restricted to `metrics`.
[[nodiscard]] metric_map baseline(reader& r, const entry& f,
                                  const std::vector<std::string>& metrics);

/// The world part of loading, shared by load_world and inline worlds of load_scenario.
[[nodiscard]] world_model read_world(reader& r, const entry& top);

} // namespace sreh::plugins::sandbox::detail
