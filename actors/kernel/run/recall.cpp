// A goal run's recall (docs/memory.md, "In reasoning"): before its first step the run asks
// long-term memory for the cases nearest its goal, labels and alert, through the node's tool of
// capability `recall` (memory.search). What came back is the run's first step — a tool step
// journaled with its outcome at once — so the reasoner reads it as it reads any observation, a
// model gets it in its context, replay and recovery see the same memories, and the journal says
// which entries (ids, versions, scores) the run was shown. Finding nothing journals nothing; a
// failed search is logged and the run goes on without memory.

#include <fmt/format.h>

#include "actors/kernel/run/actor_impl.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/text.hpp"

namespace sreh::actors::run_impl {

namespace {

/// The most of the goal and labels a recall sends as its query (memory.search takes 1 KiB).
constexpr std::size_t memory_query_bytes = 1024;

/// The arguments of the recall, in the tool's own argument names (its capability says which
/// argument plays which role): the goal and the values of the run's labels as the query — an
/// alert's service and name find a past case told in other words ("the storefront is failing"
/// against "frontend 5xx") — and the labels themselves as the case's labels, for the ranking.
std::string recall_args(const run& r, const obs::capability& cap, int limit) {
  std::string query = r.goal;
  if (auto labels = json::parse(r.labels); labels && labels->IsObject())
    for (const auto& m : labels->GetObject())
      if (m.value.IsString())
        query.append(" ").append(m.value.GetString(), m.value.GetStringLength());
  query = std::string{utf8_prefix(query, memory_query_bytes)};
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  json::fields(w, cap.argument(obs::role::query).value_or("query"), query);
  if (auto near = cap.argument(obs::role::near); near && !r.labels.empty() && r.labels != "{}") {
    w.Key(near->c_str());
    json::raw(w, r.labels);
  }
  if (auto l = cap.argument(obs::role::limit))
    json::fields(w, *l, limit);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::size_t cases_in(const obs::observations& seen) {
  std::size_t n = 0;
  for (const auto& o : seen)
    if (const auto* p = std::get_if<obs::past_cases>(&o))
      n += p->cases.size();
  return n;
}

} // namespace

bool wants_recall(self_ptr self) {
  auto& st = self->state;
  const auto& j = st.journal;
  return !st.recalled && j.steps.empty() && j.r.kind != "flow" && st.rt->cfg.memory.recall > 0;
}

void recall(self_ptr self) {
  auto& st = self->state;
  st.recalled = true;
  auto found = st.rt->tools.providing(obs::capability_kind::recall);
  if (found.empty())
    return advance(self);
  auto [tool, cap] = found.front();
  const auto& r = st.journal.r;
  auto args = recall_args(r, cap, static_cast<int>(st.rt->cfg.memory.recall));
  auto parsed = tool->parse_args(args);
  if (!parsed) {
    st.rt->log->warn("run {}: no recall ({} does not take the recall's arguments: {})", r.id,
                     tool->name(), parsed.error().message);
    return advance(self);
  }
  tool_call call{r.id, args, fmt::format("{}:recall", r.id), st.cancel.get_token(),
                 std::move(*parsed)};
  call_on(
    self, st.rt->pool, [tool, call] { return tool->execute(call); },
    [self, tool, args](tool_result res) {
      auto& st = self->state;
      auto& j = st.journal;
      if (st.cancel.stop_requested() || !j.steps.empty())
        return advance(self);
      if (!res.ok) {
        st.rt->log->warn("run {}: recall failed, going on without memory: {}", j.r.id, res.error);
        return advance(self);
      }
      auto seen = tool->observe(args, res.result);
      auto n = cases_in(seen);
      if (n == 0)
        return advance(self);
      j.add_recall(tool->name(), args, std::move(res.result),
                   fmt::format("recall: {} {} from long-term memory for this goal", n,
                               n == 1 ? "memory" : "memories"));
      commit(self, after_commit::advance);
    });
}

} // namespace sreh::actors::run_impl
