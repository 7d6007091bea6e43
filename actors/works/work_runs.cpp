// What a Work's runs start with: the request (the template's goal or flow), the labels, the
// context carried from the Work's story, and what its active run hears of what is said on it.

#include <fmt/format.h>

#include "actors/works/work_impl.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/conversation/steering.hpp"
#include "core/flows/inputs.hpp"
#include "core/flows/runner.hpp"

namespace sreh::actors::work_impl {

std::string run_labels(const work_actor_state& st) {
  std::map<std::string, std::string> labels;
  if (auto doc = json::parse(st.w.labels); doc && doc->IsObject())
    for (auto& m : doc->GetObject())
      if (m.value.IsString())
        labels[m.name.GetString()] = m.value.GetString();
  labels["work"] = st.w.id;
  labels["work_template"] = st.w.template_name;
  if (!st.t.policy_scope.empty())
    labels["policy_scope"] = st.t.policy_scope;
  return json::build([&](json::writer& w) {
    w.StartObject();
    for (const auto& [k, v] : labels)
      json::field(w, k, v);
    w.EndObject();
  });
}

expected<goal_request> run_request(const work_actor_state& st) {
  goal_request req;
  req.budget = st.env->rt->cfg.budget;
  if (st.t.flow.empty()) {
    auto goal = works::render(st.t.goal.text, st.values);
    if (!goal)
      return goal.error();
    req.goal = std::move(*goal);
    return req;
  }
  const flows::flow* f = nullptr;
  for (const auto& x : st.env->rt->cfg.flows.loaded)
    if (x.name == st.t.flow)
      f = &x;
  if (f == nullptr)
    return sreh::error{errc::not_found, fmt::format("no flow '{}' on this node", st.t.flow)};
  std::vector<std::pair<std::string, std::string>> rendered; // each input's name and JSON value
  for (const auto& [name, text] : st.t.flow_inputs) {
    auto v = works::render(text.text, st.values);
    if (!v)
      return sreh::error{v.error().code, fmt::format("inputs.{}: {}", name, v.error().message)};
    const auto* spec = f->input(name);
    rendered.emplace_back(name, spec ? flows::input_from_text(*spec, *v) : json::quote(*v));
  }
  auto inputs = flows::resolve_inputs(*f, json::build([&](json::writer& w) {
    w.StartObject();
    for (const auto& [name, value] : rendered)
      json::field(w, name, json::raw_text{value});
    w.EndObject();
  }));
  if (!inputs)
    return sreh::error{inputs.error().code,
                       fmt::format("flow {}: {}", f->name, inputs.error().message)};
  req.goal = "flow " + f->name;
  req.kind = "flow";
  req.spec = flows::pin(*f, *inputs);
  req.budget.max_steps = std::max<std::int64_t>(req.budget.max_steps, flows::max_run_steps);
  return req;
}

// -- the Work's conversation (docs/conversation.md, "Works") --------------------------------------

/// The most earlier runs whose conclusions a new run's context carries.
constexpr std::size_t context_runs = 5;

expected<work_history> read_history(persistence::store& s, const works::work& w, bool runs) {
  work_history h;
  auto evs = persistence::timeline_of(s, w.id);
  if (!evs)
    return evs.error();
  h.timeline = std::move(*evs);
  if (!runs)
    return h;
  auto from = w.runs.size() > context_runs ? w.runs.end() - context_runs : w.runs.begin();
  for (auto i = from; i != w.runs.end(); ++i) {
    auto r = s.get_run(*i);
    if (!r)
      return r.error();
    if (*r && is_terminal((*r)->state))
      h.runs.push_back({(*r)->id, to_string((*r)->state),
                        (*r)->state == run_state::succeeded ? (*r)->conclusion : (*r)->error});
  }
  return h;
}

void tell_active_run(work_self self) {
  auto& st = self->state;
  if (st.w.active_run.empty())
    return;
  auto rt = st.env->rt;
  read_store(
    work_actor{self}, st.calls, rt->store, rt->store_pool,
    [w = st.w](persistence::store& s) { return read_history(s, w, false); },
    [self, run_id = st.w.active_run](expected<work_history> h) {
      auto& st = self->state;
      if (!h) {
        st.env->log->warn("work {}: cannot read its timeline to tell run {}: {}", st.w.id, run_id,
                          h.error().message);
        return;
      }
      for (const auto& said : works::said_since(h->timeline, run_id)) {
        conversation::message m;
        m.run_id = run_id;
        m.author = said.by;
        m.text = said.text;
        m.idempotency_key = works::message_key(st.w, said.seq);
        self->request(st.env->kernel, std::chrono::seconds(30), say_atom::value, std::move(m))
          .then(
            [self, run_id, seq = said.seq](kernel_reply& rep) {
              auto& st = self->state;
              if (rep.err && rep.err.code != errc::conflict) // conflict: the run has ended
                st.env->log->warn("work {}: telling run {} what was said (entry {}) failed: {}",
                                  st.w.id, run_id, seq, rep.err.message);
              else if (!rep.err && rep.created)
                st.env->log->info("work {}: run {} heard entry {} as message {}", st.w.id, run_id,
                                  seq, rep.said.seq);
            },
            [self, run_id](caf::error& err) {
              self->state.env->log->warn("work {}: telling run {} failed: {}", self->state.w.id,
                                         run_id, self->system().render(err));
            });
      }
    });
}

std::string context_spec(const works::work& w, const work_history& h) {
  return json::object("context", works::run_context(w, works::said_on(h.timeline), h.runs));
}

std::vector<opening_message> standing_constraints(const work_history& h) {
  std::vector<opening_message> out;
  for (auto& s : works::said_on(h.timeline))
    if (conversation::read(s.text).what == conversation::form::constraint)
      out.push_back({std::move(s.by), std::move(s.text)});
  if (out.size() > max_standing)
    out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(max_standing));
  return out;
}

} // namespace sreh::actors::work_impl
