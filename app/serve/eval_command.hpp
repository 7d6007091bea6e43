#pragma once

namespace sreh::app {

/// `sreh eval [--json FILE] [--markdown FILE] [--mode autonomous|review] [--kb FILE]
/// [--config FILE] DIR|FILE...`: runs each scenario in a fresh in-process node with the builtin
/// reasoner (or the model route of the node config FILE) and scores it
/// (docs/scenarios.md). A DIR means every *.yaml directly in it that has a top-level
/// `scenario:` key, sorted. Progress goes to stderr, the Markdown table and the median wall time
/// to stdout. Exit code: 0 every scenario passed, 1 some did not (or a report could not be
/// written), 2 usage.
int eval_command(int argc, char** argv);

} // namespace sreh::app
