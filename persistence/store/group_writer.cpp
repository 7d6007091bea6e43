#include "persistence/store/group_writer.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/base/logger.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence {

namespace {

std::uint64_t rows_of(const write_batch& b) {
  return (b.create ? 1u : 0u) + (b.update ? 1u : 0u) + b.steps.size() + b.approvals.size() +
         (b.create_work ? 1u : 0u) + (b.update_work ? 1u : 0u) + b.templates.size() +
         b.entities.size() + b.memories.size() + b.candidates.size() + b.messages.size() +
         b.taken.size() + b.events.size();
}

std::uint64_t bytes_of(const write_batch& b) {
  std::uint64_t n = 0;
  for (const auto* r : {b.create ? &*b.create : nullptr, b.update ? &*b.update : nullptr})
    if (r != nullptr)
      n += r->checkpoint.size() + r->labels.size() + r->goal.size() + r->spec.size();
  for (const auto& s : b.steps)
    n += s.args.size() + s.decision.size() + s.result.size();
  for (const auto& a : b.approvals)
    n += a.args.size() + a.reason.size();
  for (const auto& m : b.memories)
    n += m.text.size();
  for (const auto& c : b.candidates)
    n += c.body.size() + c.report.size();
  for (const auto& m : b.messages)
    n += m.text.size();
  for (const auto& e : b.events)
    n += e.data.size();
  return n;
}

} // namespace

struct group_writer::impl {
  impl(committer& s, group_writer_options o) : st(s), opts(o) {
    if (opts.max_batches_per_commit == 0)
      opts.max_batches_per_commit = 1;
  }

  committer& st;
  group_writer_options opts;

  std::mutex mtx;
  std::condition_variable cv;
  std::vector<write_batch> pending;                // guarded by mtx
  std::vector<callback> callbacks;                 // guarded by mtx, parallel to `pending`
  bool started = false;                            // guarded by mtx
  bool stopping = false;                           // guarded by mtx
  std::shared_ptr<const events_listener> listener; // guarded by mtx
  std::thread thread;

  std::atomic<std::uint64_t> commits{0}, batches{0}, rows{0}, bytes{0}, failures{0};
  std::atomic<std::size_t> waiting{0}; // pending.size(), readable without the lock

  void loop();
  void process(std::vector<write_batch>& bs, std::vector<callback>& cbs, const events_listener* l);
  std::vector<commit_result> commit_isolating(std::vector<write_batch>& bs);
};

void group_writer::impl::loop() {
  std::vector<write_batch> bs;
  std::vector<callback> cbs;
  for (;;) {
    std::shared_ptr<const events_listener> l;
    {
      std::unique_lock lk{mtx};
      cv.wait(lk, [this] { return !pending.empty() || stopping; });
      if (pending.empty())
        return; // stopping and drained
      if (pending.size() <= opts.max_batches_per_commit) {
        bs.swap(pending);
        cbs.swap(callbacks);
      } else {
        const auto n = static_cast<std::ptrdiff_t>(opts.max_batches_per_commit);
        bs.assign(std::make_move_iterator(pending.begin()),
                  std::make_move_iterator(pending.begin() + n));
        cbs.assign(std::make_move_iterator(callbacks.begin()),
                   std::make_move_iterator(callbacks.begin() + n));
        pending.erase(pending.begin(), pending.begin() + n);
        callbacks.erase(callbacks.begin(), callbacks.begin() + n);
      }
      waiting.store(pending.size());
      l = listener;
    }
    try {
      process(bs, cbs, l.get());
    } catch (const std::exception& ex) { // only allocation failures get here
      logger("store")->error("group writer: dropped {} batches: {}", bs.size(), ex.what());
    }
    bs.clear(); // keeps the capacity for the next swap
    cbs.clear();
  }
}

std::vector<commit_result> group_writer::impl::commit_isolating(std::vector<write_batch>& bs) {
  auto results = st.commit(bs);
  if (!results.empty() && !results.front().err) {
    ++commits;
    return results;
  }
  ++failures;
  // A batch that fails as a bug or for its own reason (a run this node no longer owns: conflict),
  // not an outage, must not take its neighbours down with it: commit them one by one so only
  // that batch fails.
  const auto code = results.empty() ? errc::ok : results.front().err.code;
  if (bs.size() < 2 || results.size() != bs.size() ||
      (code != errc::internal && code != errc::conflict))
    return results;
  for (std::size_t i = 0; i < bs.size(); ++i) {
    std::vector<write_batch> one;
    one.push_back(std::move(bs[i]));
    auto r = st.commit(one);
    results[i] = r.empty() ? commit_result{{errc::internal, "store returned no result"}, {}, {}, {}}
                           : std::move(r.front());
    bs[i] = std::move(one.front());
    if (results[i].err)
      ++failures;
    else
      ++commits;
  }
  return results;
}

void group_writer::impl::process(std::vector<write_batch>& bs, std::vector<callback>& cbs,
                                 const events_listener* l) {
  std::vector<std::uint64_t> batch_rows(bs.size()), batch_bytes(bs.size());
  for (std::size_t i = 0; i < bs.size(); ++i) {
    batch_rows[i] = rows_of(bs[i]);
    batch_bytes[i] = bytes_of(bs[i]);
  }
  if (opts.batches_per_commit != nullptr)
    opts.batches_per_commit->observe(static_cast<double>(bs.size()));
  std::vector<commit_result> results;
  try {
    results = commit_isolating(bs);
    if (results.size() != bs.size())
      throw std::runtime_error("store returned " + std::to_string(results.size()) +
                               " results for " + std::to_string(bs.size()) + " batches");
  } catch (const std::exception& ex) {
    results.assign(bs.size(), commit_result{{errc::internal, ex.what()}, {}, {}, {}});
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].err)
      continue;
    ++batches;
    if (!met_held_key(results[i])) {
      rows += batch_rows[i];
      bytes += batch_bytes[i];
    }
  }
  std::vector<event> committed;
  if (l != nullptr)
    for (const auto& r : results)
      if (!r.err)
        committed.insert(committed.end(), r.events.begin(), r.events.end());
  for (std::size_t i = 0; i < cbs.size(); ++i) {
    try {
      cbs[i](std::move(results[i]));
    } catch (const std::exception& ex) {
      logger("store")->error("group writer: a commit callback threw: {}", ex.what());
    } catch (...) {
      logger("store")->error("group writer: a commit callback threw");
    }
  }
  if (l != nullptr && !committed.empty()) {
    try {
      (*l)(std::move(committed));
    } catch (const std::exception& ex) {
      logger("store")->error("group writer: the events listener threw: {}", ex.what());
    } catch (...) {
      logger("store")->error("group writer: the events listener threw");
    }
  }
}

// -- public face ---------------------------------------------------------------------------------

group_writer::group_writer(committer& s, group_writer_options opts)
  : impl_(std::make_unique<impl>(s, opts)) {}

group_writer::~group_writer() {
  stop();
}

void group_writer::set_events_listener(events_listener l) {
  auto p = std::make_shared<const events_listener>(std::move(l));
  std::lock_guard lk{impl_->mtx};
  impl_->listener = std::move(p);
}

void group_writer::start() {
  std::lock_guard lk{impl_->mtx};
  if (impl_->started || impl_->stopping)
    return;
  impl_->started = true;
  impl_->thread = std::thread([this] { impl_->loop(); });
}

void group_writer::stop() {
  {
    std::lock_guard lk{impl_->mtx};
    if (impl_->stopping && !impl_->thread.joinable())
      return;
    impl_->stopping = true;
  }
  impl_->cv.notify_one();
  if (impl_->thread.joinable())
    impl_->thread.join();
  else
    impl_->loop(); // never started: commit what was submitted here, then return
}

void group_writer::submit(write_batch b, callback cb) {
  {
    std::lock_guard lk{impl_->mtx};
    if (!impl_->stopping) {
      impl_->pending.push_back(std::move(b));
      impl_->callbacks.push_back(std::move(cb));
      impl_->waiting.store(impl_->pending.size());
      if (impl_->pending.size() == 1)
        impl_->cv.notify_one();
      return;
    }
  }
  cb(commit_result{{errc::unavailable, "writer stopped"}, {}, {}, {}});
}

std::size_t group_writer::backlog() const {
  return impl_->waiting.load();
}

group_writer_stats group_writer::stats() const {
  return {impl_->commits.load(), impl_->batches.load(), impl_->rows.load(), impl_->bytes.load(),
          impl_->failures.load()};
}

} // namespace sreh::persistence
