#include "actors/evolve/candidate_service.hpp"

#include <fmt/format.h>

#include <future>
#include <thread>

#include "core/base/blocking.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/logger.hpp"
#include "core/base/sha256.hpp"

namespace sreh::actors {

using evolve::candidate;
using evolve::candidate_state;

namespace {

constexpr std::size_t max_reason_bytes = 4096;

sreh::error no_such(std::string_view id) {
  return {errc::not_found, fmt::format("no candidate '{}'", id)};
}

/// Why `c` cannot be voted on now ("" = it can).
std::string not_votable(const candidate& c) {
  switch (c.state) {
  case candidate_state::awaiting_approval:
    return "";
  case candidate_state::evaluating:
    return fmt::format("candidate {} is still being evaluated", c.id);
  case candidate_state::refused:
    return fmt::format("candidate {} was refused: {}", c.id,
                       c.regressions.empty() ? std::string{"its promotion was denied"}
                                             : c.regressions.front());
  case candidate_state::failed:
    return fmt::format("candidate {} could not be evaluated: {}", c.id, c.error);
  case candidate_state::promoted:
    return fmt::format("candidate {} is the current version already", c.id);
  default:
    return fmt::format("candidate {} is {}", c.id, to_string(c.state));
  }
}

/// A candidate "in play": evaluating, awaiting approval or current.
bool in_play(const candidate& c) {
  return c.state == candidate_state::evaluating || c.state == candidate_state::awaiting_approval ||
         c.state == candidate_state::promoted;
}

} // namespace

/// The evaluator thread, started and stopped by the node's service supervisor.
class candidate_service::worker final : public service {
 public:
  explicit worker(candidate_service& owner) : owner_(owner) {}
  [[nodiscard]] std::string name() const override { return "evolve"; }
  [[nodiscard]] sreh::error start(failure_handler failed) override {
    stop_ = false;
    thread_ = std::thread{[this, failed] {
      try {
        owner_.drain(stop_);
      } catch (const std::exception& e) {
        failed(fmt::format("the evaluator failed: {}", e.what()));
      }
    }};
    refresher_ = std::thread{[this, failed = std::move(failed)] {
      try {
        refresh();
      } catch (const std::exception& e) {
        failed(fmt::format("the refresher failed: {}", e.what()));
      }
    }};
    return {};
  }
  void stop() override {
    {
      std::lock_guard<std::mutex> lock{owner_.queue_mu_};
      stop_ = true;
    }
    owner_.queue_cv_.notify_all();
    for (auto* t : {&thread_, &refresher_})
      if (t->joinable())
        t->join();
  }

 private:
  /// Reconciles the versions each time a candidate changed (changed()), until stop.
  void refresh() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock{owner_.queue_mu_};
        owner_.queue_cv_.wait(lock, [&] { return stop_ || owner_.stale_; });
        if (stop_)
          return;
        owner_.stale_ = false;
      }
      if (auto err = owner_.reconcile())
        logger("evolve")->warn("cannot read the candidates: {}", err.message);
    }
  }

  candidate_service& owner_;
  std::atomic<bool> stop_{false};
  std::thread thread_, refresher_;
};

candidate_service::candidate_service(persistence::store& store, persistence::commit_queue& writes,
                                     const sreh::clock& clock, id_generator& ids,
                                     std::shared_ptr<version_registry> versions,
                                     gate_settings settings, gate_fn evaluate)
  : store_(store), writes_(writes), clock_(clock), ids_(ids), versions_(std::move(versions)),
    settings_(std::move(settings)), evaluate_(std::move(evaluate)),
    worker_(std::make_shared<worker>(*this)) {}

candidate_service::~candidate_service() {
  worker_->stop();
}

service_ptr candidate_service::evaluator() {
  return worker_;
}

sreh::error candidate_service::load() {
  auto all = store_.list_candidates(500);
  if (!all)
    return all.error();
  {
    std::lock_guard<std::mutex> lock{queue_mu_};
    for (const auto& c : *all) // oldest first: the list is newest first
      if (c.state == candidate_state::evaluating)
        queue_.push_front(c.id);
  }
  queue_cv_.notify_all();
  return reconcile();
}

sreh::error candidate_service::reconcile() {
  std::lock_guard<std::mutex> lock{mu_};
  auto all = store_.list_candidates(500);
  if (!all)
    return all.error();
  for (const auto& c : *all)
    if (auto err = versions_->add(c))
      logger("evolve")->error("{}", err.message); // its pinned runs fail, naming it
  for (auto kind : evolve::all_artefacts) {
    const auto* cur = evolve::current_of(*all, kind);
    auto id = cur && versions_->has(kind, cur->id) ? cur->id : std::string{evolve::config_version};
    if (id == versions_->current(kind))
      continue;
    versions_->make_current(kind, id);
    logger("evolve")->info("{} {} is current (as the store says)", to_string(kind), id);
  }
  return {};
}

sreh::error candidate_service::make_available(std::string_view id, evolve::artefact kind) {
  auto c = store_.get_candidate(id);
  if (!c)
    return c.error();
  if (!*c)
    return {errc::not_found, fmt::format("candidate {} not found", id)};
  if ((*c)->kind != kind)
    return {errc::invalid_argument, fmt::format("candidate {} is a {} candidate, not a {} one", id,
                                                to_string((*c)->kind), to_string(kind))};
  auto err = versions_->add(**c);
  return err ? sreh::error{errc::invalid_argument, err.message} : sreh::error{};
}

void candidate_service::changed() {
  {
    std::lock_guard<std::mutex> lock{queue_mu_};
    stale_ = true;
  }
  queue_cv_.notify_all();
}

std::string candidate_service::current(evolve::artefact kind) const {
  return versions_->current(kind);
}

expected<candidate> candidate_service::get(std::string_view id) {
  auto c = store_.get_candidate(id);
  if (!c)
    return c.error();
  if (!*c)
    return no_such(id);
  return std::move(**c);
}

expected<std::vector<candidate>> candidate_service::list(int limit) {
  return store_.list_candidates(limit);
}

expected<std::optional<candidate>> candidate_service::promoted(evolve::artefact kind) {
  auto all = store_.list_candidates(500);
  if (!all)
    return all.error();
  const auto* c = evolve::current_of(*all, kind);
  return c ? std::optional<candidate>{*c} : std::nullopt;
}

sreh::error candidate_service::commit(std::vector<candidate*> cs,
                                      const std::vector<std::string>& kinds,
                                      const std::vector<std::string>& data) {
  check_may_block("evolve", "commit");
  persistence::write_batch b;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    auto& c = *cs[i];
    ++c.revision;
    event ev;
    ev.id = ids_.next("evt");
    ev.run_id = c.id;
    ev.run_seq = c.revision;
    ev.kind = kinds.at(i);
    ev.at = clock_.now_us();
    ev.data = data.at(i);
    b.events.push_back(std::move(ev));
    b.candidates.push_back(c);
  }
  std::promise<sreh::error> done;
  auto result = done.get_future();
  writes_.submit(std::move(b),
                 [&done](persistence::commit_result r) { done.set_value(std::move(r.err)); });
  auto err = result.get();
  if (err)
    logger("evolve")->warn("candidate {}: {}", cs.front()->id, err.message);
  return err;
}

expected<candidate> candidate_service::propose(evolve::artefact kind, std::string body,
                                               std::string reason, std::string_view who) {
  if (body.empty())
    return sreh::error{errc::invalid_argument, "body: empty: a candidate needs the new version"};
  if (body.size() > evolve::max_body_bytes)
    return sreh::error{errc::invalid_argument, fmt::format("body: {} bytes, at most {}",
                                                           body.size(), evolve::max_body_bytes)};
  if (reason.size() > max_reason_bytes)
    return sreh::error{errc::invalid_argument, fmt::format("reason: {} bytes, at most {}",
                                                           reason.size(), max_reason_bytes)};
  if (auto err = versions_->check(kind, body, "body"))
    return sreh::error{err.code == errc::conflict ? errc::conflict : errc::invalid_argument,
                       err.message};
  std::lock_guard<std::mutex> lock{mu_};
  auto sha = sha256_hex(body);
  auto all = store_.list_candidates(500);
  if (!all)
    return all.error();
  for (const auto& o : *all)
    if (o.kind == kind && o.sha256 == sha && in_play(o))
      return sreh::error{errc::conflict, fmt::format("the same {} is candidate {} ({})",
                                                     to_string(kind), o.id, to_string(o.state))};
  candidate c;
  c.id = ids_.next("cnd");
  c.kind = kind;
  c.proposer = std::string{who};
  c.reason = std::move(reason);
  c.body = std::move(body);
  c.sha256 = sha;
  c.base = versions_->current(kind);
  c.created_at = clock_.now_us();
  c.revision = 0; // the proposal is revision 1
  if (auto err = commit({&c}, {"candidate.proposed"},
                        {json::object("candidate", c.id, "kind", to_string(kind), "proposer",
                                      c.proposer, "sha256", c.sha256, "base", c.base)}))
    return err;
  logger("evolve")->info("candidate {} ({}) proposed by {} against {}", c.id, to_string(kind),
                         c.proposer, c.base);
  {
    std::lock_guard<std::mutex> q{queue_mu_};
    queue_.push_back(c.id);
  }
  queue_cv_.notify_all();
  return c;
}

void candidate_service::drain(const std::atomic<bool>& stop) {
  for (;;) {
    std::string id;
    {
      std::unique_lock<std::mutex> lock{queue_mu_};
      queue_cv_.wait(lock, [&] { return stop || !queue_.empty(); });
      if (stop)
        return;
      id = queue_.front();
      queue_.pop_front();
    }
    auto c = get(id);
    if (!c || c->state != candidate_state::evaluating)
      continue;
    auto base = versions_->current(c->kind);
    logger("evolve")->info("candidate {}: evaluating against {}", id, base);
    auto r = evaluate_(*c, base, stop);
    if (stop)
      return; // interrupted: evaluated again after the restart
    finish(id, base, std::move(r));
  }
}

void candidate_service::finish(const std::string& id, const std::string& base, gate_result r) {
  std::lock_guard<std::mutex> lock{mu_};
  auto got = get(id);
  if (!got || got->state != candidate_state::evaluating)
    return;
  auto c = std::move(*got);
  c.base = base;
  c.report = std::move(r.report);
  c.regressions = std::move(r.regressions);
  c.error = std::move(r.error);
  c.evaluated_at = clock_.now_us();
  if (!c.error.empty())
    c.state = candidate_state::failed;
  else if (!c.regressions.empty())
    c.state = candidate_state::refused;
  else {
    c.state = candidate_state::awaiting_approval;
    approval a;
    a.id = ids_.next("apr");
    a.run_id = c.id;
    a.tool = "evolve.promote";
    a.args = json::object("candidate", c.id, "kind", to_string(c.kind));
    a.reason = fmt::format("promote {} {} over {}", to_string(c.kind), c.id, c.base);
    a.required = settings_.approvals;
    a.roles = settings_.roles;
    a.requester = c.proposer;
    a.created_at = c.evaluated_at;
    c.promotion = std::move(a);
  }
  if (auto err =
        commit({&c}, {"candidate.evaluated"},
               {json::object("candidate", c.id, "state", to_string(c.state), "regressions",
                             static_cast<std::int64_t>(c.regressions.size()), "base", c.base)}))
    return; // stays evaluating in the store: evaluated again after a restart
  logger("evolve")->info("candidate {}: {} ({} regression(s){}{})", c.id, to_string(c.state),
                         c.regressions.size(), c.error.empty() ? "" : ": ", c.error);
}

expected<candidate> candidate_service::promote(std::string_view id, approval_vote vote) {
  std::lock_guard<std::mutex> lock{mu_};
  auto got = get(id);
  if (!got)
    return got.error();
  auto c = std::move(*got);
  if (auto why = not_votable(c); !why.empty())
    return sreh::error{errc::conflict, why};
  if (!c.promotion)
    return sreh::error{errc::internal, fmt::format("candidate {} has no approval", c.id)};
  if (vote.by == c.proposer)
    return sreh::error{
      errc::forbidden,
      fmt::format("you proposed candidate {}: another person must approve it", c.id)};
  if (auto now = versions_->current(c.kind); now != c.base)
    return sreh::error{errc::conflict,
                       fmt::format("candidate {} was evaluated against {}, but {} is current now: "
                                   "propose it again",
                                   c.id, c.base, now)};
  if (auto err = apply_vote(*c.promotion, vote))
    return sreh::error{err.code, fmt::format("candidate {}: {}", c.id, err.message)};
  std::vector<candidate*> changed{&c};
  std::vector<std::string> kinds{"candidate.voted"};
  std::vector<std::string> data{json::object("candidate", c.id, "by", vote.by, "approve",
                                             vote.approve, "comment", vote.comment)};
  auto before = promoted(c.kind);
  if (!before)
    return before.error();
  if (c.promotion->state == approval_state::denied) {
    c.state = candidate_state::refused;
    c.regressions.push_back(fmt::format("its promotion was denied by {}{}{}", vote.by,
                                        vote.comment.empty() ? "" : ": ", vote.comment));
  } else if (c.promotion->state == approval_state::approved) {
    if (auto err = versions_->add(c))
      return err;
    c.state = candidate_state::promoted;
    c.promoted_at = clock_.now_us();
    c.replaced = *before ? (*before)->id : std::string{evolve::config_version};
    if (*before) {
      (*before)->state = candidate_state::superseded;
      (*before)->ended_at = c.promoted_at;
      changed.push_back(&**before);
      kinds.emplace_back("candidate.superseded");
      data.push_back(json::object("candidate", (*before)->id, "by", c.id));
    }
    kinds.front() = "candidate.promoted";
  }
  if (auto err = commit(changed, kinds, data))
    return err;
  if (c.state == candidate_state::promoted) {
    versions_->make_current(c.kind, c.id);
    logger("evolve")->info("candidate {} promoted (approved by {}); it replaces {}", c.id, vote.by,
                           c.replaced);
  }
  return c;
}

expected<candidate> candidate_service::rollback(evolve::artefact kind, std::string_view who) {
  std::lock_guard<std::mutex> lock{mu_};
  auto cur = promoted(kind);
  if (!cur)
    return cur.error();
  if (!*cur)
    return sreh::error{
      errc::conflict,
      fmt::format("no candidate {} is current: the config's version is", to_string(kind))};
  auto c = std::move(**cur);
  c.state = candidate_state::rolled_back;
  c.ended_by = std::string{who};
  c.ended_at = clock_.now_us();
  std::vector<candidate*> changed{&c};
  std::optional<candidate> restored;
  if (c.replaced != evolve::config_version && !c.replaced.empty()) {
    auto prev = get(c.replaced);
    if (!prev)
      return prev.error();
    restored = std::move(*prev);
    restored->state = candidate_state::promoted;
    restored->ended_at = 0;
    changed.push_back(&*restored);
  }
  auto back = restored ? restored->id : std::string{evolve::config_version};
  std::vector<std::string> kinds{"candidate.rolled_back"};
  std::vector<std::string> data{
    json::object("candidate", c.id, "by", c.ended_by, "restored", back)};
  if (restored) {
    kinds.emplace_back("candidate.restored");
    data.push_back(json::object("candidate", back, "by", c.ended_by));
  }
  if (auto err = commit(changed, kinds, data))
    return err;
  versions_->make_current(kind, back);
  logger("evolve")->info("candidate {} rolled back by {}; {} is current again", c.id, c.ended_by,
                         back);
  return c;
}

} // namespace sreh::actors
