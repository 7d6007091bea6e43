#pragma once
// Work template files (YAML; docs/works.md): loaded and validated with FILE:LINE:COL errors.

#include <string>
#include <vector>

#include "core/base/expected.hpp"
#include "core/works/kinds.hpp"
#include "core/works/template.hpp"

namespace sreh::config {

struct template_options {
  /// The kinds a template may have and what each asks of it: the builtin ones and those plugins
  /// register (null: the builtin ones).
  const works::kind_registry* kinds = nullptr;
};

/// Loads one template file. Errors read `FILE:LINE:COLUMN: path: what`: unknown keys (with a
/// hint), wrong types, an unknown kind or field type, a field its kind requires missing, a default
/// of the wrong type, a placeholder naming no field, a done-criteria that does not parse, a bad
/// duration or double-texting policy.
[[nodiscard]] expected<works::work_template> load_template_file(const std::string& path,
                                                                const template_options& o = {});
/// Same, from text (`name` stands for the file in messages).
[[nodiscard]] expected<works::work_template> load_template_string(const std::string& text,
                                                                  const std::string& name,
                                                                  const template_options& o = {});

/// Every `*.yaml` / `*.yml` of `dir` (not recursive), in name order; two templates of one name
/// are an error naming both files.
[[nodiscard]] expected<std::vector<works::work_template>>
load_template_dir(const std::string& dir, const template_options& o = {});

/// Whether `text` is a Work template (a top-level `template:` key), for `sreh config check`.
[[nodiscard]] bool looks_like_template(const std::string& text);

} // namespace sreh::config
