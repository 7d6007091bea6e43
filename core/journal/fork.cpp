#include "core/journal/fork.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::journal {

namespace {

sreh::error bad(std::string what) {
  return {errc::invalid_argument, std::move(what)};
}

sreh::error read_edit(const rapidjson::Value& v, std::size_t i, fork_edit& out) {
  auto field = fmt::format("edits[{}]", i);
  if (!v.IsObject())
    return bad(fmt::format("{}: expected an object {{\"step\", \"result\" or \"error\"}}, got {}",
                           field, json::type_of(v)));
  for (const auto& m : v.GetObject()) {
    std::string_view key{m.name.GetString(), m.name.GetStringLength()};
    if (key == "step") {
      if (!m.value.IsInt64())
        return bad(
          fmt::format("{}.step: expected an integer, got {}", field, json::type_of(m.value)));
      out.step = m.value.GetInt64();
    } else if (key == "result") {
      out.result = json::stringify(m.value);
    } else if (key == "error") {
      if (!m.value.IsString())
        return bad(
          fmt::format("{}.error: expected a string, got {}", field, json::type_of(m.value)));
      out.error = m.value.GetString();
    } else {
      return bad(
        fmt::format("{}: unknown field '{}' (expected step, result or error)", field, key));
    }
  }
  if (!json::member(v, "step"))
    return bad(fmt::format("{}.step: missing (the recorded tool step to amend)", field));
  return {};
}

/// `config.versions`: `{KIND: "cnd_..." | "config"}`, each kind once.
sreh::error read_versions(const rapidjson::Value& v, fork_request& out) {
  if (!v.IsObject())
    return bad(fmt::format("config.versions: expected an object {{KIND: \"cnd_...\"}}, got {}",
                           json::type_of(v)));
  for (const auto& m : v.GetObject()) {
    std::string_view key{m.name.GetString(), m.name.GetStringLength()};
    auto kind = evolve::parse_artefact(key);
    if (!kind)
      return bad(fmt::format("config.versions: unknown kind '{}' (expected knowledge_base, "
                             "policy, prompt, model_route)",
                             key));
    if (!m.value.IsString())
      return bad(fmt::format("config.versions.{}: expected a candidate id (cnd_...) or "
                             "\"config\", got {}",
                             key, json::type_of(m.value)));
    std::string version{m.value.GetString(), m.value.GetStringLength()};
    if (version != evolve::config_version && !version.starts_with("cnd_"))
      return bad(fmt::format("config.versions.{}: '{}' is not a candidate id (cnd_...) nor "
                             "\"config\"",
                             key, version));
    out.versions.emplace_back(*kind, std::move(version));
  }
  return {};
}

sreh::error read_config(const rapidjson::Value& v, fork_request& out) {
  if (!v.IsObject())
    return bad(fmt::format("config: expected an object, got {}", json::type_of(v)));
  for (const auto& m : v.GetObject()) {
    std::string_view key{m.name.GetString(), m.name.GetStringLength()};
    if (key == "policy") {
      if (m.value.IsString())
        out.policy = m.value.GetString();
      else if (m.value.IsObject()) // JSON is YAML: the policy file's text
        out.policy = json::stringify(m.value);
      else
        return bad(fmt::format("config.policy: expected a policy (YAML text or an object), got {}",
                               json::type_of(m.value)));
      if (out.policy.empty())
        return bad("config.policy: empty");
    } else if (key == "versions") {
      if (auto err = read_versions(m.value, out))
        return err;
    } else if (key == "model" || key == "model_route" || key == "knowledge_base" || key == "kb" ||
               key == "prompt") {
      return bad(fmt::format(
        "config.{}: a fork reasons with versions the node knows: propose the text as a candidate "
        "(`sreh evolve propose FILE --kind ...`) and fork with config.versions {{\"KIND\": "
        "\"cnd_...\"}} (`sreh fork RUN --from N --version cnd_...`)",
        key));
    } else {
      return bad(fmt::format("config: unknown field '{}' (expected policy, versions)", key));
    }
  }
  for (const auto& [kind, _] : out.versions)
    if (kind == evolve::artefact::policy && !out.policy.empty())
      return bad("config.versions.policy: the fork has a policy of its own (config.policy): "
                 "give one or the other");
  return {};
}

} // namespace

expected<fork_request> parse_fork_request(std::string_view body, int max_depth) {
  auto doc = json::parse(body, max_depth);
  if (!doc)
    return doc.error();
  if (!doc->IsObject())
    return bad(fmt::format("the body: expected an object {{\"from_step\", \"config\"?, "
                           "\"edits\"?}}, got {}",
                           json::type_of(*doc)));
  fork_request req;
  bool has_step = false;
  for (const auto& m : doc->GetObject()) {
    std::string_view key{m.name.GetString(), m.name.GetStringLength()};
    if (key == "from_step") {
      if (!m.value.IsInt64())
        return bad(fmt::format("from_step: expected an integer, got {}", json::type_of(m.value)));
      req.from_step = m.value.GetInt64();
      has_step = true;
    } else if (key == "config") {
      if (auto err = read_config(m.value, req))
        return err;
    } else if (key == "edits") {
      if (!m.value.IsArray())
        return bad(fmt::format("edits: expected an array, got {}", json::type_of(m.value)));
      for (const auto& e : m.value.GetArray()) {
        fork_edit edit;
        if (auto err = read_edit(e, req.edits.size(), edit))
          return err;
        req.edits.push_back(std::move(edit));
      }
    } else {
      return bad(fmt::format("unknown field '{}' (expected from_step, config, edits)", key));
    }
  }
  if (!has_step)
    return bad("from_step: missing (the first step the fork runs live; steps before it are "
               "copied)");
  return req;
}

sreh::error check_fork(const run& source, const std::vector<step>& steps, const fork_request& req) {
  const auto& id = source.id;
  if (!is_terminal(source.state))
    return {errc::conflict,
            fmt::format("run {} is {}: only a finished run can be forked (wait for it, or "
                        "cancel it first)",
                        id, to_string(source.state))};
  if (source.kind != "goal")
    return {errc::conflict, fmt::format("run {} is a {} run: only goal runs can be forked (a "
                                        "flow run's steps come from its flow; run it again)",
                                        id, source.kind)};
  const auto last = static_cast<std::int64_t>(steps.size());
  if (req.from_step < 1)
    return bad(fmt::format("from_step: {} is not a step; steps are numbered from 1 (from_step "
                           "1 starts the fork with no recorded step)",
                           req.from_step));
  if (req.from_step > last)
    return bad(fmt::format("from_step: run {} has {} step{}, so the fork can start from step 1 "
                           "to {}, not {}",
                           id, last, last == 1 ? "" : "s", last, req.from_step));
  for (std::int64_t n = 1; n < req.from_step; ++n) {
    const auto& s = steps[static_cast<std::size_t>(n - 1)];
    if (s.state == step_state::intent || s.state == step_state::in_doubt)
      return bad(fmt::format("from_step: step {} of run {} is {} (its outcome is not known), "
                             "so the fork can start from step {} at the latest",
                             n, id, to_string(s.state), n));
  }
  std::vector<std::int64_t> seen;
  for (std::size_t i = 0; i < req.edits.size(); ++i) {
    const auto& e = req.edits[i];
    auto field = fmt::format("edits[{}]", i);
    if (e.step < 1 || e.step >= req.from_step)
      return bad(fmt::format("{}.step: {} is not a recorded step the fork starts with (1 to {})",
                             field, e.step, req.from_step - 1));
    const auto& s = steps[static_cast<std::size_t>(e.step - 1)];
    if (s.kind != step_kind::tool)
      return bad(fmt::format("{}.step: step {} is a {} step; only tool results can be amended",
                             field, e.step, to_string(s.kind)));
    if (e.result.empty() == e.error.empty())
      return bad(fmt::format("{}: give either a result (the tool's answer, JSON) or an error "
                             "(a non-empty message)",
                             field));
    if (!e.result.empty())
      if (auto doc = json::parse(e.result); !doc)
        return bad(fmt::format("{}.result: not JSON: {}", field, doc.error().message));
    if (std::find(seen.begin(), seen.end(), e.step) != seen.end())
      return bad(fmt::format("{}.step: step {} is amended twice", field, e.step));
    seen.push_back(e.step);
  }
  return {};
}

std::vector<step> forked_steps(const std::vector<step>& steps, const fork_request& req,
                               const std::string& fork_id) {
  std::vector<step> out(steps.begin(), steps.begin() + (req.from_step - 1));
  for (auto& s : out) {
    s.run_id = fork_id;
    if (!s.idempotency_key.empty())
      s.idempotency_key = fmt::format("{}:{}", fork_id, s.n);
  }
  for (const auto& e : req.edits) {
    auto& s = out[static_cast<std::size_t>(e.step - 1)];
    s.result_truncated = false;
    if (!e.result.empty()) {
      s.state = step_state::succeeded;
      s.result = e.result;
      s.error.clear();
    } else {
      s.state = step_state::failed;
      s.result = "{}";
      s.error = e.error;
    }
  }
  return out;
}

std::string fork_spec(const fork_request& req, std::string_view original_spec) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    w.Key("forked_from");
    json::write_object(w, "run", req.run_id, "step", req.from_step);
    w.Key("edits");
    w.StartArray();
    for (const auto& e : req.edits)
      w.Int64(e.step);
    w.EndArray();
    if (!req.policy.empty())
      json::field(w, "policy", req.policy);
    auto from = json::parse_object(original_spec.empty() ? "{}" : original_spec);
    for (const char* key : {"context", "follow_up_of", "priors"})
      if (const auto* v = from ? json::member(*from, key) : nullptr) {
        w.Key(key);
        v->Accept(w);
      }
    w.EndObject();
  });
}

} // namespace sreh::journal
