"""Flows on a real node (the definition side; running them is not built yet): `flows: DIR`
names a folder, the node loads and checks every flow at start (its tools against the node's
own), GET /v1/flows and /v1/flows/{name} show them with their graph, an unknown flow is a 404
problem, `sreh flows` / `sreh flow show|graph` print them, and `sreh config check` takes a flow
file: ok for a good one, FILE:LINE:COL for a broken one."""

import os
import shutil

from harness import Node, TempDir, run_tests, sreh_cli
from cluster_harness import SOURCE

EXAMPLES = os.path.join(SOURCE, "examples", "flows")
SCENARIO = os.path.join(SOURCE, "examples", "scenarios", "gpu-xid-train-llm.yaml")


def flows_dir(d):
    out = os.path.join(d, "flows")
    shutil.copytree(EXAMPLES, out)
    return out


def sandbox_node(d, fdir):
    return Node(d, config_extra=f"flows: {fdir}\nsandbox:\n  scenario: {SCENARIO}\n")


def test_the_node_serves_its_flows():
    with TempDir() as d:
        node = sandbox_node(d, flows_dir(d)).start()
        status, _, doc = node.json("GET", "/v1/flows")
        assert status == 200, doc
        listed = {f["name"]: f for f in doc["flows"]}
        assert sorted(listed) == ["cert-rotation", "disk-cleanup", "gpu-host-drain",
                                  "rollback-service"], listed
        rb = listed["rollback-service"]
        assert rb["steps"] == 5 and len(rb["version"]) == 16, rb
        assert [i["name"] for i in rb["inputs"]] == ["service", "max_error_rate"], rb
        assert rb["inputs"][0]["required"] and rb["inputs"][1]["default"] == 0.01, rb

        status, _, doc = node.json("GET", "/v1/flows/gpu-host-drain")
        assert status == 200, doc
        f = doc["flow"]
        assert [s["id"] for s in f["steps"]] == ["inspect", "approve", "cordon", "move", "drain",
                                                 "settle", "progressing", "escalate"], f["steps"]
        move = f["steps"][3]
        assert move["kind"] == "parallel" and move["join"] == "all", move
        assert [b["name"] for b in move["branches"]] == ["restart", "evidence"], move
        assert f["steps"][1]["approval"]["roles"] == ["approver", "admin"], f["steps"][1]
        assert f["steps"][6]["wait"]["deadline_ms"] == 900000, f["steps"][6]
        nodes = {n["id"]: n for n in f["graph"]["nodes"]}
        assert nodes["restart-job"]["parallel"] == "move", nodes
        edges = {(e["from"], e["to"], e["label"]) for e in f["graph"]["edges"]}
        assert ("move", "restart-job", "branch restart") in edges, edges
        assert ("restart-job", "drain", "join all") in edges, edges
        assert ("progressing", "escalate", "on failure") in edges, edges

        status, _, doc = node.json("GET", "/v1/flows/rollback")
        assert status == 404, doc
        assert doc["detail"].startswith("no flow 'rollback' (this node has: cert-rotation, "), doc

        code, out, err = sreh_cli(["config", "check", node.config])
        assert code == 0, err
        assert "flows in " in out and "cert-rotation disk-cleanup gpu-host-drain " \
            "rollback-service" in out, out

        server = ["--server", f"127.0.0.1:{node.port}"]
        code, out, err = sreh_cli(["flows"] + server)
        assert code == 0, err
        assert "gpu-host-drain" in out and "service:string*" in out, out
        code, out, err = sreh_cli(["flow", "graph", "gpu-host-drain"] + server)
        assert code == 0, err
        assert "branch restart" in out and "job.restart" in out and "on failure → escalate" in out, out
        # A long label (a goal step's goal) is wrapped, never cut.
        code, out, err = sreh_cli(["flow", "graph", "rollback-service"] + server)
        assert code == 0, err
        assert "..." not in out and "…" not in out and \
            "investigate goal: ${inputs.service} was rolled back from " \
            "${steps.before.output.version} but its error rate stayed above " \
            "${inputs.max_error_rate}: find out why and fix it" in " ".join(out.split()), out
        code, out, err = sreh_cli(["flow", "graph", "gpu-host-drain", "--dot"] + server)
        assert code == 0, err
        assert out.startswith('digraph "gpu-host-drain"') and \
            '"move" -> "restart-job" [label="branch restart"]' in out, out
        code, out, err = sreh_cli(["flow", "show", "cert-rotation"] + server)
        assert code == 0, err
        assert "restart_if_needed:bool=true" in out and "still-failing" in out, out
        code, out, err = sreh_cli(["flow", "show", "nope"] + server)
        assert code != 0 and "no flow 'nope'" in err, (code, out, err)
        node.stop()


def test_a_flow_calling_a_tool_the_node_lacks_stops_it():
    """Without the sandbox the node has none of the tools the examples call."""
    with TempDir() as d:
        fdir = flows_dir(d)
        node = Node(d, config_extra=f"flows: {fdir}\n")
        out = node.start_fails()
        assert "sreh exited with 1" in out, out
        where = os.path.join(fdir, "cert-rotation.yaml") + ":11:11: steps[0].tool: unknown tool " \
            "'cert.rotate'"
        assert where in out, out
        code, out, err = sreh_cli(["config", "check", node.config])
        assert code == 1 and where in err, (code, out, err)


def test_the_tools_the_node_will_offer_decide():
    """world.get is there on a node whose tools have world sources; a disabled tool is not."""
    with TempDir() as d:
        fdir = os.path.join(d, "flows")
        os.makedirs(fdir)
        path = os.path.join(fdir, "look.yaml")
        with open(path, "w") as f:
            f.write("flow: look\nsteps:\n  - {id: world, tool: world.get}\n"
                    "  - {id: host, tool: host.describe, args: {host: g1}}\n")
        sandbox = f"flows: {fdir}\nsandbox:\n  scenario: {SCENARIO}\n"
        code, out, err = sreh_cli(["config", "check", Node(d, config_extra=sandbox).config])
        assert code == 0 and "flows in " in out, (code, out, err)
        off = Node(d, testkit=False, config_extra=sandbox + "tools:\n  disable: [host.describe]\n")
        code, out, err = sreh_cli(["config", "check", off.config])
        assert code == 1 and f"{path}:4:22: steps[1].tool: unknown tool 'host.describe'" in err, \
            (code, out, err)
        out = off.start_fails()
        assert f"{path}:4:22: steps[1].tool: unknown tool 'host.describe'" in out, out


def test_a_broken_flow_stops_the_node_naming_the_place():
    with TempDir() as d:
        fdir = flows_dir(d)
        path = os.path.join(fdir, "disk-cleanup.yaml")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("then: cleanup", "then: clenup"))
        out = sandbox_node(d, fdir).start_fails()
        assert "sreh exited with 1" in out, out
        assert f"{path}:16:15: steps[1].condition[0].then: unknown step 'clenup' (did you mean " \
            "'cleanup'?)" in out, out
        code, out, err = sreh_cli(["config", "check", path])
        assert code == 1 and f"{path}:16:15:" in err and "unknown step 'clenup'" in err, \
            (code, out, err)


def test_config_check_takes_a_flow():
    path = os.path.join(EXAMPLES, "gpu-host-drain.yaml")
    code, out, err = sreh_cli(["config", "check", path])
    assert code == 0, err
    assert "ok (flow 'gpu-host-drain', 2 inputs, 10 steps, version " in out, out


if __name__ == "__main__":
    run_tests([
        test_the_node_serves_its_flows,
        test_a_flow_calling_a_tool_the_node_lacks_stops_it,
        test_the_tools_the_node_will_offer_decide,
        test_a_broken_flow_stops_the_node_naming_the_place,
        test_config_check_takes_a_flow,
    ])
