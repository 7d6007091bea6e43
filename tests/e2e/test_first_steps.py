"""What a newcomer meets first: `sreh --help` names every client command (`flow run` too); the
start banner's commands work as printed (the binary's path when `sreh` is not on PATH, the
server and token settings a non-default node needs, curl with the token header);
scripts/demo-live.sh says which port is busy instead of exiting silently; docs/ has an index of
every page, and the README and docs point at nothing outside the repository."""

import os
import re
import socket
import subprocess

from cluster_harness import SOURCE
from harness import Node, TempDir, run_tests, sreh_cli, wait_until

SCENARIO = os.path.join(SOURCE, "examples", "scenarios", "shop-checkout-bad-deploy.yaml")


def test_help_names_every_client_command():
    code, overview, _ = sreh_cli(["--help"], token=None)
    assert code == 0, overview
    code, client, _ = sreh_cli(["runs", "--help"], token=None)
    assert code == 0, client
    # Each "sreh CMD [SUB]" of the client usage, as the overview writes it ("flow show|graph").
    commands = re.findall(r"^  sreh (\w+)(?: (run|show|graph|create|check)\b)?", client, re.M)
    assert ("flow", "run") in commands, commands
    for cmd, sub in commands:
        pattern = rf"^  {cmd}\b" + (rf"(?: \S*\b{sub}\b)" if sub else "")
        assert re.search(pattern, overview, re.M), f"`sreh --help` lacks `{cmd} {sub}`:\n{overview}"


def banner_of(node):
    # The node answers /readyz once its front is supervised; the banner is written just after,
    # so it is awaited whole (its last line names /v1/events).
    def whole():
        text = node.log_text()
        at = text.find("sreh is up:")
        return text[at:] if at >= 0 and "/v1/events" in text[at:] else None

    return wait_until(whole, 10, "the start banner")


def test_banner_commands_work_as_printed():
    with TempDir() as d:
        # The node's own generated tokens (auth ""), a data dir and port that are not the CLI's
        # defaults, and the sandbox's hint.
        node = Node(d, f"sandbox: {{scenario: {SCENARIO}}}\n", auth="", testkit=False).start()
        banner = banner_of(node)
        token_file = os.path.join(node.data, "admin.token")
        header = f'-H "Authorization: Bearer $(cat {token_file})"'
        assert f"curl -N {header} http://127.0.0.1:{node.port}/v1/events" in banner, banner
        cd = re.search(r"in another terminal:  cd (\S+)", banner)
        exports = re.search(r"^ +export (.*)$", banner, re.M)
        runs = re.search(r"^ +(\S+) runs$", banner, re.M)
        submit = re.search(r"try:  (\S+) submit ", banner)
        assert cd and exports and runs and submit, banner
        assert f"SREH_SERVER=http://127.0.0.1:{node.port}" in exports.group(1), banner
        assert submit.group(1) == runs.group(1), banner
        # Pasted into a fresh shell without the harness's token: each works as printed.
        env = {k: v for k, v in os.environ.items() if k not in ("SREH_TOKEN", "SREH_SERVER")}
        shell = f"cd {cd.group(1)} && export {exports.group(1)} && "
        p = subprocess.run(["bash", "-c", shell + f"{runs.group(1)} runs"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr, banner)
        p = subprocess.run(["bash", "-c", shell + f"curl -sf {header} "
                            f"http://127.0.0.1:{node.port}/v1/runs"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and '"runs"' in p.stdout, (p.returncode, p.stdout, p.stderr)
        node.stop()


def test_demo_live_names_the_busy_port():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        p = subprocess.run([os.path.join(SOURCE, "scripts", "demo-live.sh")],
                           env=dict(os.environ, SREH_PORT=str(port)), capture_output=True,
                           text=True, timeout=60)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert f"port {port} (for sreh) is in use" in p.stderr and "SREH_PORT=PORT" in p.stderr, \
        p.stderr


def test_docs_index_lists_every_page_and_nothing_points_outside():
    docs = os.path.join(SOURCE, "docs")
    with open(os.path.join(docs, "README.md")) as f:
        index = f.read()
    pages = sorted(n for n in os.listdir(docs) if n.endswith(".md") and n != "README.md")
    missing = [n for n in pages if f"]({n})" not in index]
    assert not missing, f"docs/README.md does not list {missing}"
    for path in [os.path.join(SOURCE, "README.md")] + [os.path.join(docs, n) for n in pages]:
        with open(path) as f:
            text = f.read()
        assert "../shared/" not in text, f"{path} points outside the repository"
    with open(os.path.join(SOURCE, "README.md")) as f:
        assert "docs/scenarios.md" in f.read()


if __name__ == "__main__":
    run_tests([test_help_names_every_client_command, test_banner_commands_work_as_printed,
               test_demo_live_names_the_busy_port,
               test_docs_index_lists_every_page_and_nothing_points_outside])
