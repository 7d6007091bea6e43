#pragma once
// A Work's conversation (docs/conversation.md, "Works"): what people said on its timeline — its
// comments and the texts of its triggers — which its active run hears as messages, and the
// context a new run of the Work starts with: the Work, what was said on it and what its earlier
// runs concluded. Pure: the Work's actor reads the timeline and the runs.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/event.hpp"
#include "core/works/work.hpp"

namespace sreh::works {

/// What a person said on a Work's timeline: a comment, or the text of a trigger.
struct said {
  std::int64_t seq = 0; // the timeline entry's run_seq
  std::string kind;     // work.comment | work.triggered
  std::string by;
  std::string text;
  timestamp_us at = 0;
};

/// Everything said on `timeline` (a Work's events, oldest first), in order; a trigger without
/// text says nothing.
[[nodiscard]] std::vector<said> said_on(const std::vector<event>& timeline);

/// What was said after the run `run_id` started (its `work.run_started` entry) for it to hear:
/// the comments, and the texts of the triggers it took (`attach`, double_texting join; the
/// others start a run of their own). Empty when the timeline does not show it starting.
[[nodiscard]] std::vector<said> said_since(const std::vector<event>& timeline,
                                           std::string_view run_id);

/// The idempotency key of the message a timeline entry becomes on the active run
/// ("work:<id>:<seq>"): telling the run again, after a crash or a takeover, makes no second one.
[[nodiscard]] std::string message_key(const work& w, std::int64_t seq);

/// An earlier run of the Work and how it ended.
struct earlier_run {
  std::string id;
  std::string state;      // succeeded | failed | cancelled
  std::string conclusion; // or the error it failed with
};

/// The context a new run of `w` starts with (a model sees it as the current state): the Work —
/// id, kind, title, state, severity, fields —, what was said on it, and what the earlier runs
/// concluded, newest last. At most `max_bytes`: the oldest words and runs are left out first,
/// and the text says how many.
[[nodiscard]] std::string run_context(const work& w, const std::vector<said>& said,
                                      const std::vector<earlier_run>& runs,
                                      std::size_t max_bytes = 8192);

} // namespace sreh::works
