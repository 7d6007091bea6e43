#pragma once

namespace sreh::app {

/// `sreh replay RUN [--config FILE] [--node-id ID] [--data-dir DIR] [--json]`: replays a
/// finished run from the store of the node `--config` describes, on a scratch in-process node
/// with the recorded model answers and tool results (eval/replay.hpp), and prints the step by
/// step comparison. No model server and no node need to be up. Exit code: 0 the same steps and
/// end, 1 diverged, 2 usage, 3 the run could not be replayed (not found, not ended, ...).
int replay_command(int argc, char** argv);

} // namespace sreh::app
