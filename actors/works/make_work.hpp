#pragma once

#include "actors/works/messages.hpp"
#include "actors/works/orchestrator.hpp"
#include "core/base/expected.hpp"
#include "core/works/template.hpp"
#include "core/works/work.hpp"

namespace sreh::actors {

/// The Work `req` asks for, made from template `t`: its fields resolved and typed, its title and
/// labels rendered, its done-criteria checked to parse with these fields. Not yet stored.
[[nodiscard]] expected<works::work> make_work(const works_env& env, const works::work_template& t,
                                              const new_work& req);

} // namespace sreh::actors
